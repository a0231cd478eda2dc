#!/usr/bin/env python3
"""max-rss.py - runs a command (its stdout to /dev/null) and prints its peak
resident memory in KiB; exits with the command's status when it fails.

    max-rss.py CMD [ARG...]

Under AddressSanitizer the freed-memory quarantine is turned off, so that
the peak measures what the program holds, not what ASan keeps back."""
import os
import sys

env = dict(os.environ)
env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0"
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.execvpe(sys.argv[1], sys.argv[1:], env)
_, status, usage = os.wait4(pid, 0)
code = os.waitstatus_to_exitcode(status)
if code:
    sys.exit(code if code > 0 else 1)
print(usage.ru_maxrss)
