#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run patchsite on every file of a mkcorpus.py corpus and judge the result.

    runcorpus.py --patchsite BIN CORPUS [--jobs N] [--timeout S]

For each file, `record`, `record --format=json` and `audit` run under a
timeout with the sanitizers' leak checker on.  Each must either
  - exit 2 with exactly one line on stderr, starting `patchsite: ` and
    naming the file, and nothing on stdout; or
  - exit 0 (audit: 0 or 1) with a well-formed result, and nothing on
    stderr (silent on success):
    addresses one a line, sorted and unique; JSON that parses, with site_count
    equal to the number of sites; an audit whose summary matches its
    findings and its exit status;
and never die of a signal, print a sanitizer report, or hang.  The
MANIFEST's EXPECT column narrows that: `error` must exit 2, `same` must give
exactly the output of the unmodified base image, `count=N` exactly N sites.

Every `--overlap-` file (sections laid over each other or over the
headers) and every `--base` file is also written: `record --in-place` of a
copy.  It must exit 2 with the one line naming the copy and the copy
byte-identical, or exit 0 having changed only bytes that belong to the
patch-site table or a relocation section and to nothing else (not the ELF,
program or section headers, not a section the hostile headers lay over
them, not .text through an address the table shares with it): a write
never changes bytes that were not decoded as the table's.  A `--base` file
with a table section must be written (exit 0).

Prints `ok - hostile NAME` / `not ok - hostile NAME` (with the reason) in
manifest order; exit 1 if any failed.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mkcorpus import Image  # noqa: E402  (the corpus's own ELF reader)

TABLES = ("__mcount_loc", "__patchable_function_entries")
SHT_RELA, SHT_NOBITS = 4, 8

COMMANDS = [("record", ["record"]), ("json", ["record", "--format=json"]), ("audit", ["audit"])]
SAN_RE = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:|"
                    r"==\d+==ERROR")
ADDR_RE = re.compile(r"^(0x[0-9a-f]+|[^\s+]+\+0x[0-9a-f]+)$")
SUMMARY_RE = re.compile(r"^summary: (.*)$")

ENV = dict(os.environ)
ENV.update({
    "ASAN_OPTIONS": "detect_leaks=1:exitcode=86:allocator_may_return_null=0",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87",
    "LC_ALL": "C",
})


def run(binary, args, path, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run([binary] + args + [path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, env=ENV)
    except subprocess.TimeoutExpired:
        return None, b"", b"", timeout
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def check_list(out):
    lines = out.decode("utf-8", "replace").splitlines()
    for ln in lines:
        if not ADDR_RE.match(ln):
            return "bad line %r" % ln[:80]
    if len(set(lines)) != len(lines):
        return "duplicate addresses"
    nums = [int(ln, 16) for ln in lines if ln.startswith("0x")]
    if len(nums) == len(lines) and nums != sorted(nums):
        return "addresses not sorted"
    return None


def check_json(out):
    try:
        j = json.loads(out.decode("utf-8"))
    except ValueError as e:
        return "json does not parse: %s" % e
    for k in ("schema", "machine", "type", "flavours", "site_count", "sites"):
        if k not in j:
            return "json lacks %r" % k
    if j["site_count"] != len(j["sites"]):
        return "count %s but %d sites" % (j["site_count"], len(j["sites"]))
    seen = set()
    for s in j["sites"]:
        for k in ("address", "function", "offset", "flavour", "misaligned"):
            if k not in s:
                return "site lacks %r" % k
        seen.add(s["flavour"])
    if set(j["flavours"]) != seen:
        return "flavours %s but sites have %s" % (j["flavours"], sorted(seen))
    return None


def check_audit(out, rc):
    lines = out.decode("utf-8", "replace").splitlines()
    if not lines:
        return "audit printed nothing"
    m = SUMMARY_RE.match(lines[-1])
    if not m:
        return "last line is not the summary: %r" % lines[-1][:80]
    counts = [int(x) for x in re.findall(r"(\d+) [a-z]+", m.group(1))]
    findings = len(lines) - 2
    if sum(counts) != findings:
        return "summary counts %d findings, %d printed" % (sum(counts), findings)
    if (rc == 1) != (findings > 0):
        return "exit %d with %d findings" % (rc, findings)
    return None


def judge(name, expect, path, results, base):
    """Return None if fine, else a reason."""
    for (cmd, _), (rc, out, err, secs) in zip(COMMANDS, results):
        e = err.decode("utf-8", "replace")
        if rc is None:
            return "%s: no answer in %.0f s, nor in %.0f s alone (hang)" % (cmd, secs / 3, secs)
        if rc < 0:
            return "%s: killed by signal %d\n%s" % (cmd, -rc, e[-1500:])
        if SAN_RE.search(e):
            return "%s: sanitizer report (exit %d)\n%s" % (cmd, rc, e[:3000])
        if rc == 2:
            lines = e.splitlines()
            if len(lines) != 1 or not e.endswith("\n"):
                return "%s: exit 2 with %d lines on stderr:\n%s" % (cmd, len(lines), e[:1500])
            if not e.startswith("patchsite: "):
                return "%s: stderr does not start with 'patchsite: ': %s" % (cmd, e)
            if path not in e:
                return "%s: stderr does not name the file: %s" % (cmd, e)
            if out:
                return "%s: exit 2 but printed on stdout" % cmd
            continue
        if expect == "error":
            return "%s: exit %d, expected an error (exit 2); stdout %r" % (cmd, rc, out[:200])
        if rc not in ((0, 1) if cmd == "audit" else (0,)):
            return "%s: exit status %d\n%s" % (cmd, rc, e[:1500])
        if err:
            # silent on success, as binutils are
            return "%s: exit %d with stderr: %s" % (cmd, rc, e[:1500])
        why = (check_list(out) if cmd == "record" else check_json(out) if cmd == "json"
               else check_audit(out, rc))
        if why:
            return "%s: %s" % (cmd, why)
    if expect.startswith("count="):
        n = int(expect[6:])
        rc, out = results[0][0], results[0][1]
        got = len(out.splitlines())
        if rc != 0 or got != n:
            return "record: exit %s with %d sites, expected exit 0 with %d" % (rc, got, n)
        try:
            jc = json.loads(results[1][1].decode())["site_count"]
        except (ValueError, KeyError):
            jc = None
        if jc != n:
            return "json: count %s, expected %d" % (jc, n)
    if expect == "same" and base is not None:
        for (cmd, _), got, want in zip(COMMANDS, results, base):
            if got[0] != want[0] or got[1] != want[1]:
                return "%s: differs from the base image (exit %s vs %s)" % (cmd, got[0], want[0])
    return None


def owners(img, off):
    """What holds file offset off, by the input's headers: a list of names."""
    e, got = img.e, []
    if off < e["e_ehsize"]:
        got.append("the ELF header")
    if e["e_phoff"] <= off < e["e_phoff"] + e["e_phnum"] * e["e_phentsize"]:
        got.append("the program headers")
    if e["e_shoff"] <= off < e["e_shoff"] + e["e_shnum"] * e["e_shentsize"]:
        got.append("the section headers")
    for i, sh in enumerate(img.shdrs):
        if i and sh["type"] != SHT_NOBITS and sh["offset"] <= off < sh["offset"] + sh["size"]:
            got.append(sh["sname"])
    return got


def judge_write(binary, name, path, timeout):
    """record --in-place of a copy of path: None if fine, else a reason."""
    with open(path, "rb") as f:
        before = f.read()
    try:
        img = Image(before)
    except (ValueError, IndexError, KeyError, UnicodeDecodeError) as ex:
        return "the corpus file does not parse with mkcorpus.py's reader: %s" % ex
    d = tempfile.mkdtemp(prefix="hostile-write.")
    try:
        copy = os.path.join(d, name)
        shutil.copyfile(path, copy)
        rc, out, err, _ = run(binary, ["record", "--in-place"], copy, timeout)
        with open(copy, "rb") as f:
            after = f.read()
        left = sorted(set(os.listdir(d)) - {name})
    finally:
        shutil.rmtree(d)
    e = err.decode("utf-8", "replace")
    if rc is None or rc < 0 or SAN_RE.search(e):
        return "record --in-place: exit %s\n%s" % (rc, e[:1500])
    if left:
        return "record --in-place left %s beside the image" % left
    if rc == 2:
        if len(e.splitlines()) != 1 or not e.startswith("patchsite: ") or copy not in e:
            return "record --in-place: exit 2 without the one line naming the file: %s" % e
        if after != before:
            return "record --in-place: exit 2, but the image changed"
        if name.endswith("--base") and any(sh["sname"] in TABLES for sh in img.shdrs):
            return "record --in-place of the unmodified fixture, which has a table, failed: %s" % e
        return None
    if rc != 0:
        return "record --in-place: exit %d\n%s" % (rc, e[:1500])
    if len(after) != len(before):
        return "record --in-place: the image's size changed (%d -> %d)" % (len(before), len(after))
    if after == before:
        return None
    for off in (k for k in range(len(before)) if before[k] != after[k]):
        held = owners(img, off)
        kinds = [h for h in held if h in TABLES or h.startswith(".rela")]
        if not kinds or len(held) != 1:
            return ("record --in-place: exit 0, and it changed byte 0x%x, which is %s" %
                    (off, " and ".join(held) or "in no section"))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--patchsite", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("corpus")
    a = ap.parse_args()
    rows = []
    with open(os.path.join(a.corpus, "MANIFEST")) as f:
        for ln in f:
            name, expect, what = ln.rstrip("\n").split("\t")
            rows.append((name, expect, what))

    def one(row):
        path = os.path.join(a.corpus, row[0])
        return [run(a.patchsite, args, path, a.timeout) for _, args in COMMANDS]

    retried = []

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        results = list(ex.map(one, rows))
    # A timeout may be a load spike on a shared machine: run it again, alone,
    # with three times the time.  A real hang (minutes) still fails.
    for k, (row, res) in enumerate(zip(rows, results)):
        for c, r in enumerate(res):
            if r[0] is None:
                path = os.path.join(a.corpus, row[0])
                again = run(a.patchsite, COMMANDS[c][1], path, 3 * a.timeout)
                retried.append("%s %s: %s" % (row[0], COMMANDS[c][0],
                                              "hang" if again[0] is None else "%.1f s" % again[3]))
                res[c] = again
    for note in retried:
        print("# timed out once, run again alone: %s" % note)
    bases = {}
    for row, res in zip(rows, results):
        if row[0].endswith("--base"):
            bases[row[0].split("--")[0]] = res
    failed = 0
    slowest = (0, "")
    for (name, expect, what), res in zip(rows, results):
        path = os.path.join(a.corpus, name)
        base = bases.get(name.split("--")[0])
        why = judge(name, expect, path, res, base)
        if why is None and ("--overlap-" in name or name.endswith("--base")):
            why = judge_write(a.patchsite, name, path, 3 * a.timeout)
        for r in res:
            if r[3] > slowest[0]:
                slowest = (r[3], name)
        if why is None:
            print("ok - hostile %s" % name)
        else:
            failed += 1
            print("not ok - hostile %s (%s)" % (name, what))
            for ln in why.splitlines()[:40]:
                print("#   " + ln)
    print("# corpus: %d files, %d failed, %.1f s (slowest run %.2f s: %s)" %
          (len(rows), failed, time.monotonic() - t0, slowest[0], slowest[1]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
