"""A pytest suite with one planted leak per test but the first, for the
per-test attribution (tests/e2e/pytest_test.cc): aftermath must name exactly
test_keeps_loader_iterator, test_orphans_loader_workers,
test_leaks_shm_segment, test_leaves_zombie and test_daemon_grandchild.

Every test passes in pytest's eyes; what they leave is invisible to it. They
plant real leaks, so they run only under aftermath (AFTERMATH_EVENTS set),
which cleans them up; elsewhere they skip.
"""
import os
import secrets
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not os.environ.get("AFTERMATH_EVENTS"),
                                reason="plants real leaks: run it under aftermath")

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "programs")


def test_clean():
    # Starts and waits for a child of its own: a process is no leak.
    subprocess.run([sys.executable, "-c", "pass"], check=True)


_kept = []


def test_keeps_loader_iterator():
    # A DataLoader iterator kept in a module global: its two workers stay
    # alive past the test's end and end only when the session does (the
    # iterator is collected at exit). They are this test's, whatever runs
    # next.
    from torch.utils.data import DataLoader
    it = iter(DataLoader(range(8), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1]
    _kept.append(it)


def test_orphans_loader_workers():
    # The training loop SIGKILLed at its sixth batch: its two DataLoader
    # workers, idle then (an item takes 10 ms, the loop 20 ms a batch of
    # one), are re-parented and live on until their watchdog's next look
    # (MP_STATUS_CHECK_INTERVAL, 5 s), past the test's end.
    r = subprocess.run([sys.executable, os.path.join(PROGRAMS, "loader_plain.py"),
                        "--workers", "2", "--batch-size", "1", "--batches", "40", "--kill-at", "6"])
    assert r.returncode == -9


def test_leaks_shm_segment():
    # What the file_system sharing strategy leaves when its owner dies before
    # unlinking: /dev/shm/torch_<pid>_<rand>_<n>.
    path = "/dev/shm/torch_%d_%s_0" % (os.getpid(), secrets.token_hex(5))
    with open(path, "wb") as f:
        f.write(b"\0" * 65536)


def test_leaves_zombie(never_waited):
    # A child that exits at once and is never waited for: a zombie until the
    # process that runs the test exits (conftest.py keeps it 2 s more).
    pid = os.posix_spawn("/bin/true", ["true"], dict(os.environ))
    never_waited.append(pid)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # until it has exited; not reaped


def test_daemon_grandchild():
    # The daemon pattern: a child forks a grandchild and exits at once, so the
    # grandchild is re-parented before any sample can see it under its
    # parent. It lives on 3 s, past the test's end. The kernel's fork events
    # make it this test's, whatever test runs when it is first seen.
    r = subprocess.run([sys.executable, "-c",
                        "import os, time\n"
                        "if os.fork() == 0:\n"
                        "    time.sleep(3)\n"
                        "    os._exit(0)\n"])
    assert r.returncode == 0
