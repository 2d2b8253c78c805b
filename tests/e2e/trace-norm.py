#!/usr/bin/env python3
"""What uftrace 0.13 (the real client, the oracle) makes of a data
directory, in a form two directories can be compared in, and checks of
`patchsite trace`'s other outputs.  Used by tests/e2e/trace-*.sh.

    trace-norm.py tree FUNCS DIR       uftrace replay -f tid: per thread (in
                                       order of first appearance), one line
                                       per call of a function in FUNCS, its
                                       indentation and name
    trace-norm.py counts FUNCS DIR     uftrace report -f call: NAME CALLS
    trace-norm.py graph FUNCS DIR      uftrace graph -f none, the first node
                                       (the program's name) left out
    trace-norm.py flame FUNCS DIR ORACLE   uftrace dump --flame-graph of DIR:
                                       not empty, and every stack is a call
                                       path of ORACLE's replay
    trace-norm.py chrome-ok DIR        uftrace dump --chrome parses as JSON
    trace-norm.py chrome FILE COUNTS   our Chrome JSON: parses; per tid, B and
                                       E nest (same name), ts never goes back;
                                       B per name equal COUNTS (NAME CALLS;
                                       -: any, at least one)
    trace-norm.py summary FILE COUNTS  the --summary table: calls equal
                                       COUNTS; self <= total; min <= max;
                                       avg (us) * calls = total (ms)

FUNCS: a file of the program's function names, one a line (from nm): only
their calls are compared (uftrace also records what patchsite does not
trace: library calls, unless --no-libcall).  Exit 0 and the normal form on
stdout, or 1 and why.
"""
import json
import re
import subprocess
import sys


def uftrace(*args):
    r = subprocess.run(["uftrace", *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("uftrace %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()[:300]))
    return r.stdout


def funcs(path):
    with open(path) as f:
        return {line.strip() for line in f if line.strip()}


LINE = re.compile(r"^\s*\[\s*(\d+)\] \| ( *)([^\s(){}/][^(]*)\(\)")


def tree(fn, d):
    threads = {}
    for line in uftrace("replay", "-d", d, "-f", "tid", "--no-event").splitlines():
        m = LINE.match(line)
        if not m or m.group(3) not in fn:
            continue
        threads.setdefault(m.group(1), []).append("%d %s" % (len(m.group(2)) // 2, m.group(3)))
    out = []
    for k, (tid, calls) in enumerate(threads.items()):
        out.append("thread %d" % k)
        out.extend(calls)
    return out


def counts(fn, d):
    out = []
    for line in uftrace("report", "-d", d, "-f", "call").splitlines():
        p = line.split()
        if len(p) == 2 and p[0].isdigit() and p[1] in fn:
            out.append("%s %s" % (p[1], p[0]))
    return sorted(out)


def graph(fn, d):
    lines = uftrace("graph", "-d", d, "-f", "none").splitlines()
    out = []
    for line in lines:
        if line.startswith("#") or line.startswith("=") or not line.strip():
            continue
        out.append(line.rstrip())
    return out[1:]  # the first node is the program's file name


def flame(fn, d, oracle):
    paths = set()
    for_thread = []
    for line in tree(fn, oracle):
        if line.startswith("thread "):
            for_thread = []
            continue
        depth, name = line.split()
        for_thread[int(depth):] = [name]
        paths.add(";".join(for_thread))
    got, bad = 0, []
    for line in uftrace("dump", "-d", d, "--flame-graph").splitlines():
        stack = ";".join(s for s in line.rsplit(" ", 1)[0].split(";") if s in fn)
        if stack:
            got += 1
            if stack not in paths:
                bad.append("not a call path of %s: %s" % (oracle, stack))
    return bad if got else ["no stack"]


def read_counts(path):
    want = {}
    with open(path) as f:
        for line in f:
            name, n = line.split()
            want[name] = int(n)
    return want


def chrome(path, counts_file):
    with open(path) as f:
        doc = json.load(f)
    want = read_counts(counts_file) if counts_file != "-" else None
    stacks, last, got = {}, {}, {}
    for e in doc["traceEvents"]:
        tid, ts = e["tid"], float(e["ts"])
        if ts < last.get(tid, 0):
            return ["tid %s: ts goes back at %s" % (tid, e)]
        last[tid] = ts
        st = stacks.setdefault(tid, [])
        if e["ph"] == "B":
            st.append(e["name"])
            got[e["name"]] = got.get(e["name"], 0) + 1
        elif e["ph"] == "E":
            if not st or st[-1] != e["name"]:
                return ["tid %s: E %s does not close %s" % (tid, e["name"], st[-1:] or "nothing")]
            st.pop()
    bad = ["tid %s: %d calls never closed" % (t, len(s)) for t, s in stacks.items() if s]
    if not got:
        bad.append("no B event")
    for name in sorted(set(want or {}) | set(got)) if want is not None else []:
        if want.get(name) != got.get(name):
            bad.append("%s: %s B events, %s calls" % (name, got.get(name), want.get(name)))
    return bad


def summary(path, counts_file):
    want = read_counts(counts_file)
    got, bad = {}, []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != 7 or not p[0].isdigit():
                continue
            calls, total, self_, avg, mn, mx = int(p[0]), *map(float, p[1:6])
            got[p[6]] = calls
            if self_ > total + 1e-9 or mn > mx or abs(avg * calls / 1e3 - total) > 1e-3 * (calls + 1):
                bad.append("%s: self %s total %s min %s avg %s max %s" % (p[6], self_, total, mn, avg, mx))
    for name in sorted(set(want) | set(got)):
        if want.get(name) != got.get(name):
            bad.append("%s: %s calls in the summary, %s by uftrace" % (name, got.get(name), want.get(name)))
    return bad


def main():
    cmd = sys.argv[1]
    if cmd in ("chrome", "summary"):
        bad = (chrome if cmd == "chrome" else summary)(sys.argv[2], sys.argv[3])
        print("\n".join(bad))
        return 1 if bad else 0
    if cmd == "chrome-ok":
        json.loads(uftrace("dump", "-d", sys.argv[2], "--chrome"))
        return 0
    fn = funcs(sys.argv[2])
    if cmd == "flame":
        bad = flame(fn, sys.argv[3], sys.argv[4])
        print("\n".join(bad))
        return 1 if bad else 0
    out = {"tree": tree, "counts": counts, "graph": graph}[cmd](fn, sys.argv[3])
    print("\n".join(out))
    return 0 if out else 1


if __name__ == "__main__":
    sys.exit(main())
