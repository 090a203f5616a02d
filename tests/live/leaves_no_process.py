#!/usr/bin/env python3
"""Runs a test with TMPDIR set to a directory of its own, then fails if any process whose command
line names that directory is still alive: a test must end every process it starts, even when it
fails. (The live tests keep their files under TMPDIR, so every process they start names it.)
Ends whatever it finds. Exits with the test's own status otherwise (and keeps its directory when
that is a failure).

Usage: leaves_no_process.py COMMAND [ARG...]
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile


def survivors(directory):
    """(pid, command line) of every live process whose command line names `directory`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        if directory in cmdline:
            found.append((int(entry), cmdline.strip()))
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    directory = tempfile.mkdtemp(prefix="relaysim-test-")
    code = subprocess.call(sys.argv[1:], env=dict(os.environ, TMPDIR=directory))
    left = survivors(directory)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if left:
        print(f"leaves_no_process: FAIL: the test (exit {code}) left {len(left)} processes running:", flush=True)
        for pid, cmdline in left:
            print(f"  {pid}: {cmdline}", flush=True)
        sys.exit(1)
    if code == 0:
        shutil.rmtree(directory, ignore_errors=True)  # a failed test's files are kept, to be looked at
    else:
        print(f"leaves_no_process: the test's files are in {directory}", flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
