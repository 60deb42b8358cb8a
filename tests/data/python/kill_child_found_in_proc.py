"""Starts a child, finds it again by its command line in /proc (or with
psutil.process_iter), SIGKILLs it by the pid found there, and reports how that
went. Written the way cleanup code in the wild is: it trusts that the pids
in /proc are its own.

    kill_child_found_in_proc.py [--find proc|psutil]

Prints one line "self=<pid of /proc/self> getpid=<os.getpid()> found=<pid>
outcome=<word>" and exits with:
  0  the child was found, killed by that pid, and died by SIGKILL
  3  the kill failed with ProcessLookupError (psutil: NoSuchProcess)
  4  no process with the child's command line was found
  5  the kill went through but the child did not die by it
The child sleeps at most 60 s, and is killed through its own handle on every
path that does not kill it, so nothing outlives this program.
"""

import os
import secrets
import signal
import subprocess
import sys


def find_in_proc(marker):
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if marker.encode() in args:
            return int(name)
    return None


def find_with_psutil(marker):
    import psutil
    for p in psutil.process_iter(["cmdline"]):
        if marker in (p.info["cmdline"] or []):
            return p
    return None


def main():
    how = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--find" else "proc"
    # A name no other process has, even if this program runs twice at once.
    marker = "proc-view-child-" + secrets.token_hex(8)
    # The child says when it runs: its command line is in /proc from then on.
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)", marker],
        stdout=subprocess.PIPE)
    child.stdout.readline()
    code, outcome, found = 5, "survived", None
    try:
        if how == "psutil":
            import psutil
            p = find_with_psutil(marker)
            found = p.pid if p else None
            if p:
                try:
                    p.kill()
                except psutil.NoSuchProcess:
                    code, outcome = 3, "NoSuchProcess"
        else:
            found = find_in_proc(marker)
            if found:
                try:
                    os.kill(found, signal.SIGKILL)
                except ProcessLookupError:
                    code, outcome = 3, "ProcessLookupError"
        if found is None:
            code, outcome = 4, "not-found"
        elif code == 5:
            try:
                if child.wait(timeout=10) == -signal.SIGKILL:
                    code, outcome = 0, "killed"
            except subprocess.TimeoutExpired:
                pass
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    print("self=%s getpid=%d found=%s outcome=%s" %
          (os.readlink("/proc/self"), os.getpid(), found, outcome), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
