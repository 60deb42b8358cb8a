#!/usr/bin/python3
"""An ordinary PyTorch DataLoader program, written with no knowledge of the
harness (no points client): N forked workers, a sharing strategy, and
optionally a main process that SIGKILLs itself at a batch (what a user's
`kill -9` or an OOM kill does to a training loop).

    loader_plain.py --workers 16 --strategy file_system [--kill-at 5] [--batches 40]
"""
import argparse
import os
import signal
import sys
import time

import torch
import torch.multiprocessing as tmp
from torch.utils.data import DataLoader, Dataset


class Items(Dataset):
    def __init__(self, n, numel, delay):
        self.n, self.numel, self.delay = n, numel, delay

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.delay)
        return torch.full((self.numel,), float(i))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--strategy", default="file_descriptor")
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--kill-at", type=int, default=0)
    args = ap.parse_args()
    tmp.set_sharing_strategy(args.strategy)
    data = Items(args.batches * args.batch_size, 16384, 0.01)
    loader = DataLoader(data, batch_size=args.batch_size, num_workers=args.workers)
    for i, batch in enumerate(loader, 1):
        if i == args.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.02)
    print("done: %d batches" % i, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
