#!/usr/bin/python3
"""An ordinary DDP training script for torchrun, written with no knowledge of
the harness: gloo on loopback, a DataLoader with forked workers per rank,
all_reduce every step, destroy_process_group at the end.

    torchrun --nproc_per_node 2 ddp_plain.py [--workers 2] [--steps 20] [--step-time 0.05]
        [--strategy file_system]
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Items(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        return torch.full((8,), float(i))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--step-time", type=float, default=0.05)
    ap.add_argument("--strategy", choices=["file_descriptor", "file_system"])
    args = ap.parse_args()
    if args.strategy:
        torch.multiprocessing.set_sharing_strategy(args.strategy)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    data = Items()
    loader = DataLoader(data, batch_size=4, num_workers=args.workers,
                        sampler=DistributedSampler(data, shuffle=False))
    for step, batch in enumerate(loader, 1):
        t = batch.sum().reshape(1)
        dist.all_reduce(t)
        time.sleep(args.step_time)
        if step >= args.steps:
            break
    dist.barrier()
    del loader
    dist.destroy_process_group()
    print("rank %d done" % rank, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
