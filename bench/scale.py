#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Memory and time against the number of functions (issue 6, "Scale").

Run by bench/run.sh (`make bench`) after bench.py; alone:

    PATCHSITE=./patchsite python3 bench/scale.py

For N in SCALE_SIZES (default 125000 250000 500000 1000000) it makes an
x86-64 image of N functions with tests/hostile/mkfuncs.py (`call __fentry__;
ret` each, as + ld, cached in bench/out/scale-N), then measures, side by side
in this run:

  patchsite record IMAGE                 peak RSS and wall time
  patchsite record --format=json IMAGE   peak RSS and wall time
  patchsite audit IMAGE                  peak RSS and wall time
  objdump -d IMAGE | grep -c __fentry__  the baseline (fewer runs)

Peak RSS is GNU time's %M, wall time time.perf_counter(); each figure is the
median of SCALE_RUNS runs (5; SCALE_RUNS_OBJDUMP, 1, for the baseline).
record must print exactly N sites and objdump count N calls, else this fails.

Linearity: a least-squares line RSS = a + b*N through the points; b is the
memory per function, and every point must lie within 10% of the line
(otherwise this fails: memory would not be growing linearly).  The report
goes to stdout and is appended to bench/out/results.md.
"""
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
PATCHSITE = os.environ.get("PATCHSITE", os.path.join(ROOT, "patchsite"))
SIZES = [int(x) for x in os.environ.get("SCALE_SIZES", "125000 250000 500000 1000000").split()]
RUNS = int(os.environ.get("SCALE_RUNS", "5"))
RUNS_OBJ = int(os.environ.get("SCALE_RUNS_OBJDUMP", "1"))
TIME = "/usr/bin/time"
PY = sys.executable
TOLERANCE = 0.10

report = []


def say(s=""):
    print(s, flush=True)
    report.append(s)


def die(msg):
    print("\nbench/scale: FAIL: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


def image(n):
    d = os.path.join(OUT, "scale-%d" % n)
    img = os.path.join(d, "image")
    if os.path.exists(img):
        return img
    os.makedirs(d, exist_ok=True)
    src, obj = os.path.join(d, "f.s"), os.path.join(d, "f.o")
    subprocess.run([PY, os.path.join(ROOT, "tests", "hostile", "mkfuncs.py"), str(n), src], check=True)
    subprocess.run(["as", "--64", "-o", obj, src], check=True)
    subprocess.run(["ld", "-static", "-e", "_start", "-o", img + ".tmp", obj], check=True)
    os.rename(img + ".tmp", img)
    os.unlink(src)
    os.unlink(obj)
    return img


def run_once(argv, out_path, shell=False):
    """One run under GNU time: (wall seconds, peak RSS KiB, stdout)."""
    rss = out_path + ".rss"
    cmd = [TIME, "-f", "%M", "-o", rss] + (["sh", "-c", argv] if shell else argv)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        die("%s: exit %d: %s" % (argv, p.returncode, p.stderr.decode(errors="replace")[-400:]))
    with open(rss) as f:
        kib = int(f.read().split()[-1])
    return wall, kib, p.stdout


def measure(argv, runs, out_path, shell=False):
    walls, rsss, last = [], [], b""
    for _ in range(runs):
        w, r, last = run_once(argv, out_path, shell)
        walls.append(w)
        rsss.append(r)
    return statistics.median(walls), statistics.median(rsss), last


def fit(xs, ys):
    """Least-squares y = a + b*x."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main():
    if not os.access(PATCHSITE, os.X_OK):
        die("%s not built" % PATCHSITE)
    rows = {}
    for n in SIZES:
        img = image(n)
        tmp = os.path.join(OUT, "scale-%d" % n, "run")
        subprocess.run(["cat", img], stdout=subprocess.DEVNULL, check=True)   # warm the cache
        rec = measure([PATCHSITE, "record", img], RUNS, tmp)
        sites = rec[2].count(b"\n")
        if sites != n:
            die("record of %d functions printed %d sites" % (n, sites))
        js = measure([PATCHSITE, "record", "--format=json", img], RUNS, tmp)
        au = measure([PATCHSITE, "audit", img], RUNS, tmp)
        obj = measure("objdump -d '%s' | grep -c 'call.*<__fentry__>'" % img, RUNS_OBJ, tmp, shell=True)
        if int(obj[2].strip() or b"0") != n:
            die("objdump counted %s calls in the %d-function image" % (obj[2].strip(), n))
        rows[n] = (rec, js, au, obj)
        print("scale: %d functions measured" % n, file=sys.stderr, flush=True)

    say("## Scale: memory and time against the number of functions")
    say()
    say("Images: tests/hostile/mkfuncs.py N (x86-64, `call __fentry__; ret` per function).")
    say("Median of %d runs (objdump: %d); peak RSS is GNU time's %%M.  Command:" % (RUNS, RUNS_OBJ))
    say("`PATCHSITE=%s python3 bench/scale.py`." % os.path.relpath(PATCHSITE, ROOT))
    say()
    say("| functions | record | record --format=json | audit | objdump -d \\| grep | record / objdump (time) | record / objdump (RSS) |")
    say("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    def cell(m):
        return "%.1f MB, %.3f s" % (m[1] / 1024.0, m[0])

    for n in SIZES:
        rec, js, au, obj = rows[n]
        say("| {:,} | {} | {} | {} | {} | {:.1f}x faster | {:.2f}x |".format(
            n, cell(rec), cell(js), cell(au), cell(obj), obj[0] / rec[0], rec[1] / obj[1]))
    say()
    xs = [float(n) for n in SIZES]
    worst = []
    for label, k in (("record", 0), ("record --format=json", 1), ("audit", 2)):
        ys = [rows[n][k][1] * 1024.0 for n in SIZES]
        a, b = fit(xs, ys)
        dev = max(abs(y - (a + b * x)) / y for x, y in zip(xs, ys))
        worst.append((label, dev))
        say("- %s: %.0f bytes per function (least squares), %.1f MB fixed; largest"
            " deviation from the line %.1f%%" % (label, b, a / 1048576.0, dev * 100))
    say()
    bad = [(l, d) for l, d in worst if d > TOLERANCE]
    if bad:
        die("memory is not linear in the number of functions: " +
            ", ".join("%s deviates %.1f%%" % (l, d * 100) for l, d in bad))
    say("Every point is within %d%% of its line: memory grows linearly." % int(TOLERANCE * 100))
    with open(os.path.join(OUT, "results.md"), "a") as f:
        f.write("\n" + "\n".join(report) + "\n")


if __name__ == "__main__":
    main()
