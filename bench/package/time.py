#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Time a package audit beside decompressing its modules, interleaved.

    time.py RUNS PATCHSITE VMLINUX MODULES-DIR MODULES-LIST

Each round runs the three commands in a rotated order; wall time from fork
to wait, CPU time from the rusage of the waited children.  The audit's exit
status must be 0 or 1 (findings); xz's 0.  Prints medians and ratios.
"""
import os
import statistics
import subprocess
import sys
import time


def timed(argv, ok, stdin_list=None):
    t0 = time.perf_counter()
    r0 = os.times()
    if stdin_list is not None:
        # xz -dc of every module in one process, on one core
        p = subprocess.run(["taskset", "-c", "0", "xargs", "-a", stdin_list, "xz", "-dc"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    else:
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    r1 = os.times()
    if p.returncode not in ok:
        sys.exit("time.py: %s: exit %d: %s" % (" ".join(argv), p.returncode, p.stderr.decode()[-500:]))
    return dt, (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)


def main():
    runs, ps, vml, mdir, mlist = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
    cmds = [
        ("xz -dc, every module, 1 core", ["xz", "-dc", "..."], (0,), mlist),
        ("patchsite audit vmlinux modules/", [ps, "audit", vml, mdir], (0, 1), None),
        ("patchsite audit -j1 vmlinux modules/", [ps, "audit", "-j1", vml, mdir], (0, 1), None),
    ]
    res = {c[0]: [] for c in cmds}
    for i in range(runs):
        for k in range(len(cmds)):
            name, argv, ok, lst = cmds[(i + k) % len(cmds)]
            res[name].append(timed(argv, ok, lst))
    base = statistics.median(w for w, _ in res[cmds[0][0]])
    print("| command | wall (median of %d) | CPU | wall / xz's |" % runs)
    print("| --- | --- | --- | --- |")
    for name, *_ in cmds:
        w = statistics.median(x for x, _ in res[name])
        c = statistics.median(y for _, y in res[name])
        print("| %s | %.3f s | %.3f s | %.2fx |" % (name, w, c, w / base))


main()
