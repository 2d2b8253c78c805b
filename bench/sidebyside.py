#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Two patchsite builds timed side by side, runs interleaved.

    python3 bench/sidebyside.py [-n RUNS] [-c COMMAND] IMAGE[,IMAGE...] BEFORE AFTER

bench/bench.py times each build in a block of its own; on a machine shared
with other work the load moves between the blocks and the comparison moves
with it.  Here the two builds alternate run by run (BEFORE, AFTER, then
AFTER, BEFORE, ...), so that both see the same load.  Each run is a fork and
exec of `BUILD COMMAND IMAGE` (default command: record), stdout and stderr
to /dev/null; wall time from the fork to wait4, CPU time (user + sys), peak
RSS and minor page faults from wait4's rusage.  Prints the medians (peak
RSS: the largest) per image and build, and the wall-time ratio.
"""
import argparse
import os
import statistics
import time


def run(argv):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    dt = time.perf_counter() - t0
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) not in (0, 1):
        raise SystemExit("sidebyside: %s failed (status %#x)" % (" ".join(argv), status))
    return dt, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, ru.ru_minflt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=31, help="runs per build and image (31)")
    ap.add_argument("-c", default="record", help="patchsite command (record)")
    ap.add_argument("images")
    ap.add_argument("before")
    ap.add_argument("after")
    a = ap.parse_args()
    builds = [os.path.abspath(a.before), os.path.abspath(a.after)]
    print("| image | build | median wall ms | median CPU ms | peak RSS MiB | minor faults |")
    print("|---|---|---:|---:|---:|---:|")
    for img in a.images.split(","):
        res = {b: [] for b in builds}
        for b in builds:
            run([b, a.c, img])          # untimed warm-up
        for i in range(a.n):
            for b in (builds if i % 2 == 0 else builds[::-1]):
                res[b].append(run([b, a.c, img]))
        med = {}
        for label, b in (("before", builds[0]), ("after", builds[1])):
            r = res[b]
            med[label] = statistics.median(x[0] for x in r)
            print("| %s | %s | %.1f | %.1f | %.1f | %d |" % (
                os.path.basename(img), label, 1e3 * med[label],
                1e3 * statistics.median(x[1] for x in r), max(x[2] for x in r) / 1024,
                statistics.median(x[3] for x in r)))
        print("| %s | before/after wall | %.2fx | | | |" % (os.path.basename(img),
                                                           med["before"] / med["after"]))


if __name__ == "__main__":
    main()
