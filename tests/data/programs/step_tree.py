#!/usr/bin/python3
"""A process tree with one process reparented away from it, each process
writing the signals it gets to LOG: what a Slurm step's cleanup reaches.

    step_tree.py LOG

The top process R starts M, which starts W2 and exits (W2 is reparented,
as a DataLoader worker whose rank died), then two children W1a and W1b that
stay attached. Once all are in place R writes "ready" to LOG (so the tree
holds 4 processes from then on, never before). On SIGTERM each process
writes "ROLE PID SIGTERM" and exits 0. W2 exits by itself 3 s after it was
reparented ("W2 PID gone by itself"), so nothing outlives a run for long.
"""
import os
import signal
import sys
import time

LOG = sys.argv[1]


def write(text):
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (text + "\n").encode())
    os.close(fd)


def on_term(role):
    def handler(signum, frame):
        write("%s %d SIGTERM" % (role, os.getpid()))
        os._exit(0)
    signal.signal(signal.SIGTERM, handler)


def main():
    on_term("R")
    r, w = os.pipe()
    m = os.fork()
    if m == 0:
        if os.fork() == 0:
            on_term("W2")
            deadline = time.monotonic() + 10
            while os.getppid() != 1 and os.getppid() == m and time.monotonic() < deadline:
                time.sleep(0.01)
            os.write(w, b"x")
            write("W2 %d reparented" % os.getpid())
            end = time.monotonic() + 3
            while time.monotonic() < end:
                time.sleep(0.05)
            write("W2 %d gone by itself" % os.getpid())
            os._exit(0)
        os._exit(0)
    os.waitpid(m, 0)
    os.read(r, 1)
    for role in ("W1a", "W1b"):
        if os.fork() == 0:
            on_term(role)
            while True:
                time.sleep(0.05)
    write("ready")
    while True:
        time.sleep(0.05)


if __name__ == "__main__":
    main()
