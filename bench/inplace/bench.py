#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Time `patchsite record --in-place` beside the kernel's scripts/sorttable
on one kernel-sized image, interleaved (bench/inplace/run.sh builds
sorttable and calls this).

    bench.py --patchsite P --sorttable S --image VMLINUX --work DIR [--runs 7]
             [--before OLD_PATCHSITE]

Each round runs every contender once, in an order rotated round by round,
each on its own copy of the image in DIR (made once, by copy_file_range):

  sorttable            (not with --sorttable none: bench/gen.py's images
                       have no ORC tables, which sorttable requires)
                       scripts/sorttable IMAGE, on a copy whose mcount table
                       is put back in a shuffled order before each run (a
                       small write, outside the timing), so it sorts for real;
                       __ex_table and ORC are sorted as the link left them
  nm + sorttable -s    the whole step of 6.12.117's link-vmlinux.sh:
                       nm -S IMAGE > nm-sort; sorttable -s nm-sort IMAGE
  record --in-place    patchsite record --in-place IMAGE, on a copy whose
                       table is cleared (zeros, a small write outside the
                       timing) before each run, so every run writes it
                       (and the addends of the .rela.dyn entries that cover
                       the slots, in a relocatable arm64 image)
  record --in-place --fsync
  record               patchsite record IMAGE > /dev/null (no write: the
                       memory yardstick)
  before --in-place    (with --before) an older build's record --in-place,
                       table cleared the same way

Wall time is taken around fork/exec/wait; CPU and peak RSS come from
wait4()'s rusage of that child alone (for the nm step, nm's and sorttable's
summed, RSS the larger).  Medians of --runs; every patchsite run must exit 0
and leave the table as the first run wrote it (checked each round).
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time


def run(argv, stdout=subprocess.DEVNULL):
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
        (os.POSIX_SPAWN_OPEN, 1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if isinstance(stdout, str) else (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)])
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    return rc, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def sections(path):
    """(name, addr, offset, size) of every section with bytes in the file."""
    secs = []
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True,
                         check=True).stdout
    for ln in out.splitlines():
        f = ln.replace("[ ", "[").split()
        if len(f) > 6 and f[0].startswith("[") and f[0] != "[Nr]" and f[2] != "NOBITS":
            secs.append((f[1], int(f[3], 16), int(f[4], 16), int(f[5], 16)))
    return secs


def table_ranges(path):
    """The table's slots and, where .rela.dyn covers them, the span of those
    entries: [(offset, cleared bytes)], each written back before a run."""
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    syms = {}
    for ln in out.splitlines():
        f = ln.split()
        if len(f) == 3 and f[2] in ("__start_mcount_loc", "__stop_mcount_loc"):
            syms[f[2]] = int(f[0], 16)
    start, stop = syms["__start_mcount_loc"], syms["__stop_mcount_loc"]
    secs = sections(path)
    ranges = []
    for name, addr, off, size in secs:
        if addr and addr <= start and stop <= addr + size:
            ranges.append((off + (start - addr), bytes(stop - start)))
            break
    else:
        sys.exit("bench: no section holds __start_mcount_loc..__stop_mcount_loc in %s" % path)
    for name, addr, off, size in secs:
        if name != ".rela.dyn":
            continue
        rel = bytearray(get(path, off, size))
        lo = hi = None
        for i in range(0, size - 23, 24):
            r_offset = int.from_bytes(rel[i:i + 8], "little")
            if start <= r_offset < stop:
                rel[i + 16:i + 24] = bytes(8)	# the addend: cleared
                lo = i if lo is None else lo
                hi = i + 24
        if lo is not None:
            ranges.append((off + lo, bytes(rel[lo:hi])))
    return ranges


def put(path, off, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, off)
    finally:
        os.close(fd)


def get(path, off, n):
    with open(path, "rb") as f:
        f.seek(off)
        return f.read(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--patchsite", required=True)
    ap.add_argument("--sorttable", required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--before")
    a = ap.parse_args()

    os.makedirs(a.work, exist_ok=True)
    ranges = table_ranges(a.image)
    off, size = ranges[0][0], len(ranges[0][1])
    print("# image %s: %d bytes, table of %d slots at file offset 0x%x%s" %
          (a.image, os.path.getsize(a.image), size // 8, off,
           ", its .rela.dyn entries in %d bytes at 0x%x" % (len(ranges[1][1]), ranges[1][0])
           if len(ranges) > 1 else ""), flush=True)
    # the copies, made once
    copies = {}
    names = (["sort", "sortnm"] if a.sorttable != "none" else []) + ["ip", "ipfsync", "rec"] + \
        (["before"] if a.before else [])
    for n in names:
        copies[n] = os.path.join(a.work, n + ".img")
        shutil.copyfile(a.image, copies[n])
    orig = get(a.image, off, size)
    slots = [orig[i:i + 8] for i in range(0, size, 8)]
    random.Random(17).shuffle(slots)
    shuffled = b"".join(slots)
    nmfile = os.path.join(a.work, "nm-sort")
    nm = shutil.which("nm")

    def t_sort():
        put(copies["sort"], off, shuffled)
        return run([a.sorttable, copies["sort"]])

    def t_sortnm():
        put(copies["sortnm"], off, shuffled)
        r1 = run([nm, "-S", copies["sortnm"]], stdout=nmfile)
        r2 = run([a.sorttable, "-s", nmfile, copies["sortnm"]])
        return (r1[0] or r2[0], r1[1] + r2[1], r1[2] + r2[2], max(r1[3], r2[3]))

    def clear(path):
        for o, b in ranges:
            put(path, o, b)

    def state(path):
        return [get(path, o, len(b)) for o, b in ranges]

    def inplace(name, binary, extra):
        def t():
            clear(copies[name])
            return run([binary, "record", "--in-place"] + extra + [copies[name]])
        return t

    def t_rec():
        return run([a.patchsite, "record", copies["rec"]])

    contenders = [("sorttable IMAGE", t_sort),
                  ("nm -S + sorttable -s (6.12.117's step)", t_sortnm)]
    if a.sorttable == "none":
        contenders = []		# an image sorttable refuses (bench/gen.py's have no ORC)
    contenders += [("patchsite record --in-place", inplace("ip", a.patchsite, [])),
                  ("patchsite record --in-place --fsync", inplace("ipfsync", a.patchsite,
                                                                  ["--fsync"])),
                  ("patchsite record (no write)", t_rec)]
    if a.before:
        contenders.append(("before: record --in-place", inplace("before", a.before, [])))
    # one warm-up round (page cache), not counted; it also fixes the expected table
    for _, f in contenders:
        f()
    want = state(copies["ip"])
    if want == [b for _, b in ranges]:
        sys.exit("bench: record --in-place left the table cleared")
    res = {n: [] for n, _ in contenders}
    for r in range(a.runs):
        order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]
        for name, f in order:
            rc, wall, cpu, rss = f()
            if rc != 0:
                sys.exit("bench: %s exited %d in round %d" % (name, rc, r))
            res[name].append((wall, cpu, rss))
        for n in ("ip", "ipfsync"):
            if state(copies[n]) != want:
                sys.exit("bench: round %d: %s's table differs from the first run's" % (r, n))
            if os.path.exists(copies[n] + ".patchsite-journal"):
                sys.exit("bench: round %d: a journal was left beside %s" % (r, n))
    med = {n: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v),
               statistics.median(x[2] for x in v), max(x[2] for x in v))
           for n, v in res.items()}
    bname = "sorttable IMAGE" if "sorttable IMAGE" in med else "patchsite record (no write)"
    base = med[bname]
    print("| %d runs, interleaved | median wall | median CPU | peak RSS, median (max) | "
          "wall / %s |" % (a.runs, bname.split(" (")[0]))
    print("| --- | ---: | ---: | ---: | ---: |")
    for n, _ in contenders:
        w, c, m, mx = med[n]
        print("| %s | %.1f ms | %.1f ms | %.1f (%.1f) MiB | %.2fx |" %
              (n, w * 1e3, c * 1e3, m / 1024, mx / 1024, w / base[0]))
    ip, rec = med["patchsite record --in-place"], med["patchsite record (no write)"]
    print("# in-place / %s: %.2fx wall, %.2fx CPU (goal against sorttable: at most 5x); peak "
          "RSS (median) in-place %d KiB, record %d KiB: %+d KiB (goal: no more)" %
          (bname, ip[0] / base[0], ip[1] / base[1], ip[2], rec[2], ip[2] - rec[2]))
    fs = med["patchsite record --in-place --fsync"]
    print("# --fsync costs %.1f ms (median wall, %.2fx of in-place without it)" %
          ((fs[0] - ip[0]) * 1e3, fs[0] / ip[0]))
    if a.before:
        b = med["before: record --in-place"]
        print("# before / after (record --in-place): %.2fx wall, %.2fx peak RSS" %
              (b[0] / ip[0], b[2] / ip[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
