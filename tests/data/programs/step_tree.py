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
SIGTERM is blocked across each fork until the child has its own handler: a
signal sent as the fourth process appears is written under that process's
role (it would otherwise run its parent's handler and write "R").
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


def fork_as(role):
    """fork(); the child handles SIGTERM as `role` before it can get one."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    pid = os.fork()
    if pid == 0 and role:
        on_term(role)
    if pid != 0 or role:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    return pid


def main():
    on_term("R")
    r, w = os.pipe()
    m = fork_as(None)
    if m == 0:  # M, with SIGTERM blocked: it forks W2 and ends
        if os.fork() == 0:
            on_term("W2")
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
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
        if fork_as(role) == 0:
            while True:
                time.sleep(0.05)
    write("ready")
    while True:
        time.sleep(0.05)


if __name__ == "__main__":
    main()
