"""Run a command and print its peak RSS: ``python -S maxrss.py ARGV...``.

Linux carries a process's memory high-water mark across fork and exec: a child forked
by a big parent (the benchmark, ~20 MiB) reports at least the parent's RSS in
``ru_maxrss``, however small it is. So the benchmark starts this small launcher, which
forks and execs ``ARGV`` (stdout to /dev/null, stderr inherited) and takes ``ru_maxrss``
from ``os.wait4``; the floor it adds is its own RSS at the fork (a few MiB, reported by
the benchmark as the floor measured with ``/bin/true``).

Prints ``MAXRSS_KIB EXIT_STATUS`` on stdout; exits 0 unless it could not run at all.
"""

from __future__ import annotations

import os
import sys


def measure(argv: list[str]) -> tuple[int, int]:
    """Run ``argv`` to completion; its peak RSS in KiB and its exit status."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(devnull, 1)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.close(devnull)
    _, status, usage = os.wait4(pid, 0)
    return usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def main() -> int:
    """Entry point; see the module docstring."""
    if len(sys.argv) < 2:
        print("usage: python -S maxrss.py ARGV...", file=sys.stderr)
        return 2
    maxrss_kib, status = measure(sys.argv[1:])
    print(maxrss_kib, status)
    return 0


if __name__ == "__main__":
    sys.exit(main())
