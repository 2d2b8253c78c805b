#!/usr/bin/env python3
"""Byte-for-byte comparison of two patchsite binaries over every fixture.

Run through tests/compare-outputs.sh; see the note at the top of that script.

    compare_outputs.py OLD NEW [--bench] [--keep DIR] [-j N] [--filter STR]
                       [--corpus] [--deb DIR]... [--deb-every N] [--allocfail N]
                       [--no-fixtures]

For each input image and each command that applies to it, OLD runs, then
NEW runs, in the same scratch directory (same path, same file names), and
their exit status, stdout, stderr and every file left in the scratch
directory (written outputs, temporaries, the input copy a command may have
rewritten) are compared byte for byte, with the file modes.  Nothing is
normalised: the two runs see identical paths, so any difference is real.

Exit status: 0 nothing differs, 1 something differs, 2 setup error.
"""

import argparse
import concurrent.futures
import difflib
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Every fixture directory, with the command that builds it.  A missing or
# empty one is a setup error, never a skip.
FIXTURE_DIRS = [
    ("fixtures/out", "make -C fixtures"),
    ("fixtures/minikernel/out", "make -C fixtures/minikernel"),
    ("fixtures/nearmiss/out", "make -C fixtures/nearmiss"),
    ("fixtures/embed/out", "make -C fixtures/embed"),
    ("fixtures/repad/out", "make -C fixtures/repad"),
]
BENCH_DIR = ("bench/out", "python3 bench/gen.py")
# --corpus: the hostile corpus (made by tests/hostile/mkcorpus.py from
# fixtures/out into the work directory) and the fuzzers' seeds and
# regressions; every file is an input, ELF or not (a refusal's one line and
# exit status are compared too).
CORPUS_DIRS = ["fuzz/seeds", "fuzz/regressions"]
# --deb DIR: Debian's kernel packages unpacked under DIR/ARCH: every vmlinux
# and vmlinuz, and every --deb-every'th module (.ko, .ko.xz) in path order.
DEB_KERNEL_RE = re.compile(r"/(vmlinux|vmlinuz)[^/]*$")
DEB_MODULE_RE = re.compile(r"\.ko(\.xz|\.zst|\.gz)?$")
# --allocfail N: these images (those of tests/e2e/allocfail.sh), each of
# ALLOC_COMMANDS run N times with the Nth allocation failing
# (tests/hostile/allocshim.c; the plain builds, not ASan's): the error
# paths' messages and what they leave behind, byte for byte.
ALLOC_IMAGES = [
    "fixtures/out/x86_64-fentry/exec", "fixtures/out/x86_64-fentry/vmlinux.o",
    "fixtures/out/aarch64-callops/exec", "fixtures/out/riscv64-mcount/lib.o",
    "fixtures/out/riscv64-callops-c/exec", "fixtures/minikernel/out/x86_64-pad.elf",
    "fixtures/minikernel/out/riscv64.elf",
]
ALLOC_COMMANDS = ("record", "record --format=json", "record --in-place -o",
                  "record --in-place", "audit", "audit --format=json")

EM_X86_64, EM_AARCH64, EM_RISCV = 62, 183, 243
ET_REL, ET_EXEC, ET_DYN = 1, 2, 3

TIMEOUT = 600          # seconds per patchsite run
DIFF_LINES = 8         # lines of diff shown per differing stream/file
LINE_WIDTH = 160


class SetupError(Exception):
    pass


# ---------------------------------------------------------------- inputs

def elf_header(path):
    """(e_type, e_machine) of an ELF file, or None when it is not ELF."""
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return None
    if len(h) < 20 or h[:4] != b"\x7fELF":
        return None
    end = "<" if h[5] == 1 else ">"
    e_type, e_machine = struct.unpack(end + "HH", h[16:20])
    return e_type, e_machine


def scan_dir(rel, how, bench=False):
    """ELF images under ROOT/rel, sorted; and the non-ELF files left out."""
    top = os.path.join(ROOT, rel)
    if not os.path.isdir(top):
        raise SetupError(f"{rel}: missing (build it: {how})")
    images, others = [], []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if not os.path.isfile(path):
                others.append(path)
                continue
            if bench and name.endswith(".json"):
                others.append(path)
                continue
            eh = elf_header(path)
            if eh is None:
                others.append(path)
            else:
                images.append((os.path.relpath(path, ROOT), eh))
    if not images:
        raise SetupError(f"{rel}: no ELF image in it (build it: {how})")
    return images, others


def scan_all(top):
    """Every regular file under top (ELF or not), sorted: hostile inputs."""
    if not os.path.isdir(top):
        raise SetupError(f"{top}: missing")
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path) and name != "MANIFEST":
                out.append((os.path.relpath(path, ROOT) if path.startswith(ROOT + "/")
                            else path, elf_header(path) or (0, 0)))
    if not out:
        raise SetupError(f"{top}: no file in it")
    return out


def scan_deb(top, every):
    """The kernels and every every'th module under top (symlinks followed
    once: a file reached by two names is one input)."""
    if not os.path.isdir(top):
        raise SetupError(f"--deb {top}: missing")
    kernels, modules, seen = [], [], set()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if not os.path.isfile(path):
                continue
            real = os.path.realpath(path)
            if real in seen:
                continue
            if DEB_KERNEL_RE.search(path):
                seen.add(real)
                kernels.append(path)
            elif DEB_MODULE_RE.search(name):
                seen.add(real)
                modules.append(path)
    modules = modules[::every]
    if not kernels or not modules:
        raise SetupError(f"--deb {top}: no vmlinux/vmlinuz or no module under it")
    packages = [os.path.join(top, "lib/modules")] if os.path.isdir(
        os.path.join(top, "lib/modules")) else []
    return ([(p, elf_header(p) or (0, 0)) for p in kernels + modules]
            + [(p, PACKAGE) for p in packages], len(kernels))


def is_embed_program(relpath, eh):
    """The arm64 programs of fixtures/embed/out (not its shared libraries)."""
    e_type, e_machine = eh
    return (relpath.startswith("fixtures/embed/out/") and e_machine == EM_AARCH64
            and e_type in (ET_EXEC, ET_DYN) and ".so" not in os.path.basename(relpath))


# A command: (label, argv after the binary, copy).  IN is the input image,
# OUT a file the command writes.  copy=True: the command writes, so it gets
# its own copy of the input, in/NAME in the scratch directory (compared
# afterwards like every other file there); otherwise it reads the fixture in
# place, by its absolute path, which is the same for both runs.
IN, OUT_O, OUT = "{IN}", "out.o", "out"


# A package: a directory audit walks (recordsites/batch.c), not an image.
PACKAGE = (-1, -1)


def commands_for(relpath, eh):
    if eh == PACKAGE:
        return [("audit DIR", ["audit", "-j", "2", IN], False),
                ("audit -v --format=json DIR", ["audit", "-v", "--format=json", "-j", "2", IN],
                 False)]
    e_type, e_machine = eh
    cmds = [
        ("record", ["record", IN], False),
        ("record --symbolize", ["record", "--symbolize", IN], False),
        ("record --format=json", ["record", "--format=json", IN], False),
        ("record --format=asm", ["record", "--format=asm", IN], False),
        ("record --format=elf -o", ["record", "--format=elf", "-o", OUT_O, IN], True),
        ("record --in-place -o", ["record", "--in-place", "-o", OUT, IN], True),
        ("record --in-place", ["record", "--in-place", IN], True),
        ("audit", ["audit", IN], False),
        ("audit --format=json", ["audit", "--format=json", IN], False),
    ]
    if e_type == ET_REL:
        cmds.append(("repad -o", ["repad", IN, "-o", OUT_O], True))
        if e_machine == EM_RISCV:
            cmds.append(("pin --dry-run", ["pin", "--dry-run", IN], True))
            cmds.append(("pin", ["pin", IN], True))
    if is_embed_program(relpath, eh):
        cmds.append(("embed -o", ["embed", IN, "-o", OUT], True))
    return cmds


# ---------------------------------------------------------------- running

def alloc_points(binary, argv, copy, src, work, env, shim, n):
    """Which allocations to fail, n of them: every one up to n, else n
    spread evenly over all that a run of binary makes (allocshim counts)."""
    tag = f"count.{len(os.listdir(work))}"
    count_file = os.path.join(work, tag + ".txt")
    run_one(binary, argv, copy, src, os.path.join(work, tag), os.path.join(work, tag + ".res"),
            dict(env, LD_PRELOAD=shim, ALLOCSHIM_COUNT=count_file))
    with open(count_file) as f:
        total = max(int(l) for l in f.read().split())
    shutil.rmtree(os.path.join(work, tag + ".res"))
    if total <= n:
        return list(range(1, total + 1))
    return sorted({1 + (i * (total - 1)) // (n - 1) for i in range(n)}) if n > 1 else [1]


def file_id(path):
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode)


def run_one(binary, argv, copy, src, scratch, resdir, env):
    """Run once in scratch; move its results to resdir.  Returns a dict."""
    os.makedirs(scratch)
    if copy:
        os.makedirs(os.path.join(scratch, "in"))
        inarg = os.path.join("in", os.path.basename(src))
        shutil.copy2(src, os.path.join(scratch, inarg))
    else:
        inarg = src
    args = [binary] + [inarg if a == IN else a for a in argv]
    before = None if copy else file_id(src)
    os.makedirs(resdir)
    out_p, err_p = os.path.join(resdir, "stdout"), os.path.join(resdir, "stderr")
    t0 = time.monotonic()
    with open(out_p, "wb") as fo, open(err_p, "wb") as fe:
        try:
            p = subprocess.run(args, cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                               stdout=fo, stderr=fe, timeout=TIMEOUT)
            rc = str(p.returncode)
        except subprocess.TimeoutExpired:
            rc = f"timeout after {TIMEOUT} s"
        except OSError as e:
            raise SetupError(f"cannot run {binary}: {e}")
    secs = time.monotonic() - t0
    input_changed = (not copy) and file_id(src) != before
    os.rename(scratch, os.path.join(resdir, "tree"))
    return {"rc": rc, "dir": resdir, "secs": secs, "input_changed": input_changed}


def tree_listing(top):
    """{relpath: (kind, mode)} of everything under top."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, top)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("symlink -> " + os.readlink(path), 0)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("other", stat.S_IMODE(st.st_mode))
    return out


def same_bytes(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


# ---------------------------------------------------------------- showing a difference

def clip(s):
    return s if len(s) <= LINE_WIDTH else s[:LINE_WIDTH] + "..."


def clip_at(line, col):
    """line (with its diff marker) clipped to LINE_WIDTH around column col."""
    start = max(0, col - 60) if len(line) > LINE_WIDTH else 0
    if start < 20:
        return clip(line)
    return clip(line[0] + "..." + line[1 + start:])


def text_diff(a, b):
    """The first lines of a unified diff of the first differing region."""
    la = a.decode("utf-8", "backslashreplace").splitlines()
    lb = b.decode("utf-8", "backslashreplace").splitlines()
    # Strip the common head and tail so that difflib sees a small window
    # even on a 50,000-line bench listing.
    head = 0
    while head < len(la) and head < len(lb) and la[head] == lb[head]:
        head += 1
    tail = 0
    while (tail < len(la) - head and tail < len(lb) - head
           and la[-1 - tail] == lb[-1 - tail]):
        tail += 1
    w0 = max(0, head - 1)
    wa = la[w0:min(len(la) - tail, head + 200)]
    wb = lb[w0:min(len(lb) - tail, head + 200)]
    lines = [f"first difference at line {head + 1} ({len(la)} vs {len(lb)} lines)"]
    body = [l for l in difflib.unified_diff(wa, wb, "old", "new", lineterm="", n=1)][2:]
    # Hunk headers in the lines of the whole output, not of the window
    # (their counts stay those of the window, 200 lines at most).
    body = [re.sub(r"^@@ -(\d+)(\S*) \+(\d+)",
                   lambda m: f"@@ -{int(m[1]) + w0}{m[2]} +{int(m[3]) + w0}", l)
            if l.startswith("@@") else l for l in body]
    # Long lines (the one-line summaries) are shown from a little before the
    # first column where the first removed and first added line differ.
    rem = next((l[1:] for l in body if l.startswith("-")), "")
    add = next((l[1:] for l in body if l.startswith("+")), "")
    col = 0
    while col < len(rem) and col < len(add) and rem[col] == add[col]:
        col += 1
    lines += [clip_at(l, col) for l in body[:DIFF_LINES]]
    if len(body) > DIFF_LINES:
        lines.append("...")
    return lines


def elf_section_at(f, off):
    """Name of the part of an ELF64-LE file (open f) that holds offset off."""
    def rd(pos, fmt):
        f.seek(pos)
        b = f.read(struct.calcsize(fmt))
        return struct.unpack(fmt, b)
    try:
        f.seek(0)
        h = f.read(64)
        if h[:4] != b"\x7fELF" or h[4] != 2 or h[5] != 1:
            return None
        e_phoff, e_shoff = struct.unpack_from("<QQ", h, 32)
        e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx = \
            struct.unpack_from("<HHHHHH", h, 52)
        if off < e_ehsize:
            return "ELF header"
        if e_phnum and e_phoff <= off < e_phoff + e_phnum * e_phentsize:
            return "program headers"
        if e_shnum and e_shoff <= off < e_shoff + e_shnum * e_shentsize:
            return "section headers"
        secs = [rd(e_shoff + i * e_shentsize, "<IIQQQQ") for i in range(e_shnum)]
        for i, (nm, typ, flags, addr, soff, size) in enumerate(secs):
            if typ != 8 and soff <= off < soff + size:  # not SHT_NOBITS
                name = f"section {i}"
                if e_shstrndx < e_shnum:
                    f.seek(secs[e_shstrndx][4] + nm)
                    s = f.read(256).split(b"\0")[0]
                    if s:
                        name = "section " + s.decode("ascii", "backslashreplace")
                return f"{name}+{off - soff:#x}"
    except (struct.error, ValueError, IndexError, OSError):
        return None
    return None


def bytes_diff(pa, pb):
    sa, sb = os.path.getsize(pa), os.path.getsize(pb)
    with open(pa, "rb") as fa, open(pb, "rb") as fb:
        ha, hb = fa.read(8192), fb.read(8192)
        if b"\0" not in ha and b"\0" not in hb and sa < (64 << 20) and sb < (64 << 20):
            fa.seek(0)
            fb.seek(0)
            return text_diff(fa.read(), fb.read())
        fa.seek(0)
        fb.seek(0)
        off, ndiff, first = 0, abs(sa - sb), None
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if not x or not y:
                break
            if x != y:
                n = min(len(x), len(y))
                if first is None:
                    first = off + next(i for i in range(n) if x[i] != y[i]) \
                        if x[:n] != y[:n] else off + n
                ndiff += sum(1 for i in range(n) if x[i] != y[i])
            off += min(len(x), len(y))
        if first is None:
            first = off
        where = elf_section_at(fa, first) or elf_section_at(fb, first)
    return [f"binary, {sa} vs {sb} bytes, {ndiff} bytes differ, first at offset "
            f"{first:#x}" + (f" ({where})" if where else "")]


# The one thing that differs between any two runs: the name mkostemp gave
# the temporary beside an output, which a message about a failure while
# writing it names (seen only with --allocfail).
TEMP_NAME = re.compile(rb"/\.patchsite\.[A-Za-z0-9]{6}\b")


def same_but_temp(pa, pb):
    """Whether two small stderr files differ only in a temporary's name."""
    if os.path.getsize(pa) > 65536 or os.path.getsize(pb) > 65536:
        return False
    with open(pa, "rb") as fa, open(pb, "rb") as fb:
        x, y = fa.read(), fb.read()
    mask = b"/.patchsite.XXXXXX"
    return TEMP_NAME.sub(mask, x) == TEMP_NAME.sub(mask, y)


def compare(old, new):
    """List of (what, detail lines) that differ between two runs."""
    diffs = []
    # patchsite exits 0, 1 (audit findings) or 2 (bad input): anything else
    # (a signal, a sanitizer's exit code, a timeout) fails, even when both
    # binaries do it alike
    for side, r in (("old", old), ("new", new)):
        if r["rc"] not in ("0", "1", "2"):
            diffs.append(("exit status", [f"{side} {r['rc']}: not 0, 1 or 2 (a crash or a hang)"]))
    if old["rc"] != new["rc"]:
        diffs.append(("exit status", [f"old {old['rc']}, new {new['rc']}"]))
    for stream in ("stdout", "stderr"):
        pa, pb = os.path.join(old["dir"], stream), os.path.join(new["dir"], stream)
        if not same_bytes(pa, pb) and not (stream == "stderr" and same_but_temp(pa, pb)):
            diffs.append((stream, bytes_diff(pa, pb)))
    for side, r in (("old", old), ("new", new)):
        if r["input_changed"]:
            diffs.append(("input", [f"{side} modified the fixture it only reads "
                                    "(rebuild the fixtures)"]))
    ta, tb = os.path.join(old["dir"], "tree"), os.path.join(new["dir"], "tree")
    la, lb = tree_listing(ta), tree_listing(tb)
    for rel in sorted(set(la) | set(lb)):
        if rel not in lb:
            diffs.append((f"file {rel}", [f"written by old only ({la[rel][0]})"]))
        elif rel not in la:
            diffs.append((f"file {rel}", [f"written by new only ({lb[rel][0]})"]))
        elif la[rel] != lb[rel]:
            diffs.append((f"file {rel}", [f"old {la[rel][0]} mode {la[rel][1]:o}, "
                                          f"new {lb[rel][0]} mode {lb[rel][1]:o}"]))
        elif la[rel][0] == "file":
            pa, pb = os.path.join(ta, rel), os.path.join(tb, rel)
            if not same_bytes(pa, pb):
                diffs.append((f"file {rel}", bytes_diff(pa, pb)))
    return diffs


# ---------------------------------------------------------------- main

def check_binary(path, label):
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise SetupError(f"{label} {path}: not an executable file")
    try:
        p = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SetupError(f"{label} {path}: cannot run it: {e}")
    v = (p.stdout or p.stderr).decode("utf-8", "replace").strip().splitlines()
    return v[0] if v else f"(--version: exit {p.returncode}, no output)"


def main():
    ap = argparse.ArgumentParser(prog="tests/compare-outputs.sh",
                                 description="compare two patchsite binaries byte for byte")
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--bench", action="store_true", help="also the bench/out images")
    ap.add_argument("--corpus", action="store_true",
                    help="also the hostile corpus (tests/hostile/mkcorpus.py) and "
                         "fuzz/seeds, fuzz/regressions")
    ap.add_argument("--deb", metavar="DIR", action="append", default=[],
                    help="also the kernels and modules of Debian's packages "
                         "unpacked in DIR (repeatable)")
    ap.add_argument("--deb-every", metavar="N", type=int, default=10,
                    help="with --deb: every N'th module (default 10)")
    ap.add_argument("--allocfail", metavar="N", type=int, default=0,
                    help="also run record/audit on a few fixtures with each of the "
                         "first N allocations failing (tests/hostile/allocshim.c; "
                         "give the plain builds)")
    ap.add_argument("--no-fixtures", action="store_true",
                    help="leave the fixture directories out (with --corpus/--deb)")
    ap.add_argument("--keep", metavar="DIR",
                    help="work in DIR (new or empty) and keep it: both runs of "
                         "every comparison that differs, and report.txt")
    ap.add_argument("-j", "--jobs", type=int, default=max(2, os.cpu_count() or 2))
    ap.add_argument("--filter", metavar="STR", default="",
                    help="only images whose path contains STR (for development; "
                         "the count line says how many were left out)")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)

    t_start = time.monotonic()
    cleanup = []
    old_bin, new_bin = os.path.abspath(a.old), os.path.abspath(a.new)
    try:
        if a.jobs < 1:
            raise SetupError(f"-j {a.jobs}: must be at least 1")
        vo = check_binary(old_bin, "OLD")
        vn = check_binary(new_bin, "NEW")
        dirs = ([] if a.no_fixtures else FIXTURE_DIRS) + ([BENCH_DIR] if a.bench else [])
        images = []
        print(f"OLD {old_bin}: {vo}")
        print(f"NEW {new_bin}: {vn}")
        for rel, how in dirs:
            imgs, others = scan_dir(rel, how, bench=(rel, how) == BENCH_DIR)
            images += imgs
            kinds = {}
            for o in others:
                ext = os.path.splitext(o)[1] or os.path.basename(o)
                kinds[ext] = kinds.get(ext, 0) + 1
            print(f"{rel}: {len(imgs)} ELF images" + (
                f"; not ELF, so not inputs: {len(others)} files (" + ", ".join(
                    f"{v} {k}" for k, v in sorted(kinds.items())) + ")" if others else ""))
        if not a.bench:
            print("bench/out: not compared (no --bench)")
        if a.no_fixtures:
            print("fixtures: not compared (--no-fixtures)")
        if a.corpus:
            hostile = tempfile.mkdtemp(prefix="patchsite-hostile.")
            cleanup.append(hostile)
            p = subprocess.run([sys.executable, os.path.join(ROOT, "tests/hostile/mkcorpus.py"),
                                "--fixtures", os.path.join(ROOT, "fixtures/out"), hostile],
                               stdin=subprocess.DEVNULL, capture_output=True)
            if p.returncode:
                raise SetupError("tests/hostile/mkcorpus.py failed: "
                                 + p.stderr.decode("utf-8", "replace").strip()[-400:])
            for top in [hostile] + [os.path.join(ROOT, d) for d in CORPUS_DIRS]:
                imgs = scan_all(top)
                images += imgs
                print(f"{top if top == hostile else os.path.relpath(top, ROOT)}: "
                      f"{len(imgs)} files, {sum(1 for _, eh in imgs if eh != (0, 0))} ELF")
        if a.deb_every < 1:
            raise SetupError(f"--deb-every {a.deb_every}: must be at least 1")
        for top in a.deb:
            imgs, nk = scan_deb(os.path.abspath(top), a.deb_every)
            images += imgs
            npk = sum(1 for _, eh in imgs if eh == PACKAGE)
            print(f"{top}: {nk} kernels, {len(imgs) - nk - npk} modules (every "
                  f"{a.deb_every}th), {npk} package directories (audit DIR)")
        if a.filter:
            total_imgs = len(images)
            images = [im for im in images if a.filter in im[0]]
            print(f"--filter {a.filter!r}: {len(images)} of {total_imgs} images, "
                  f"{total_imgs - len(images)} left out")
            if not images:
                raise SetupError(f"--filter {a.filter!r} matches no image")
        if a.keep:
            work = os.path.abspath(a.keep)
            if os.path.exists(work) and (not os.path.isdir(work) or os.listdir(work)):
                raise SetupError(f"--keep {a.keep}: exists and is not an empty directory")
            os.makedirs(work, exist_ok=True)
        else:
            work = tempfile.mkdtemp(prefix="patchsite-compare.")
    except SetupError as e:
        for d in cleanup:
            shutil.rmtree(d, ignore_errors=True)
        print(f"compare-outputs: {e}", file=sys.stderr)
        sys.exit(2)

    # A fixed environment; the two runs get the same one.
    env = dict(os.environ, LC_ALL="C", LANG="C", TZ="UTC")
    env.pop("LANGUAGE", None)
    shim = None
    if a.allocfail:
        shim = os.path.join(work, "allocshim.so")
        p = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim,
                            os.path.join(ROOT, "tests/hostile/allocshim.c"), "-ldl"],
                           stdin=subprocess.DEVNULL, capture_output=True)
        missing = [r for r in ALLOC_IMAGES if not os.path.isfile(os.path.join(ROOT, r))]
        if p.returncode or missing:
            print("compare-outputs: " + ("allocshim.c does not build: "
                  + p.stderr.decode("utf-8", "replace")[-400:] if p.returncode else
                  f"--allocfail: missing {missing[0]} (make fixtures)"), file=sys.stderr)
            if not a.keep:
                shutil.rmtree(work, ignore_errors=True)
            for d in cleanup:
                shutil.rmtree(d, ignore_errors=True)
            sys.exit(2)
        print(f"--allocfail {a.allocfail}: {len(ALLOC_IMAGES)} images, "
              f"{len(ALLOC_COMMANDS)} commands, each allocation 1..{a.allocfail} failing")
    jobs = []
    for relpath, eh in images:
        for label, argv, copy in commands_for(relpath, eh):
            jobs.append((len(jobs), relpath, label, argv, copy, None))
    if a.allocfail:
        for relpath in ALLOC_IMAGES:
            eh = elf_header(os.path.join(ROOT, relpath))
            for label, argv, copy in commands_for(relpath, eh):
                if label not in ALLOC_COMMANDS:
                    continue
                for nth in alloc_points(old_bin, argv, copy, os.path.join(ROOT, relpath),
                                        work, env, shim, a.allocfail):
                    jobs.append((len(jobs), relpath, f"{label} [allocation {nth} fails]",
                                 argv, copy, {"LD_PRELOAD": shim, "ALLOCSHIM_NTH": str(nth)}))

    results = {}
    lock = threading.Lock()
    done = [0]
    setup_error = []

    def work_one(job):
        idx, relpath, label, argv, copy, extra = job
        if setup_error:
            return
        if extra:
            run_env = dict(env, **extra)
        else:
            run_env = env
        src = os.path.join(ROOT, relpath)
        scratch = os.path.join(work, "scratch", str(idx))
        res = os.path.join(work, "res", str(idx))
        try:
            r_old = run_one(old_bin, argv, copy, src, scratch, os.path.join(res, "old"), run_env)
            r_new = run_one(new_bin, argv, copy, src, scratch, os.path.join(res, "new"), run_env)
            diffs = compare(r_old, r_new)
        except SetupError as e:
            setup_error.append(str(e))
            return
        if not diffs:
            shutil.rmtree(res)
        with lock:
            results[idx] = (relpath, label, diffs, r_old, r_new)
            done[0] += 1
            if sys.stderr.isatty() and done[0] % 50 == 0:
                print(f"\r{done[0]}/{len(jobs)}", end="", file=sys.stderr, flush=True)

    try:
        os.makedirs(os.path.join(work, "scratch"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            list(ex.map(work_one, jobs))
        if sys.stderr.isatty():
            print("\r", end="", file=sys.stderr)
        if setup_error:
            print(f"compare-outputs: {setup_error[0]}", file=sys.stderr)
            sys.exit(2)

        report = []
        per_cmd = {}
        for idx in sorted(results):
            relpath, label, diffs, r_old, r_new = results[idx]
            if not diffs:
                continue
            per_cmd[label] = per_cmd.get(label, 0) + 1
            report.append(f"DIFFER {relpath} :: {label} :: "
                          + (f"[res/{idx}] " if a.keep else "")
                          + ", ".join(w for w, _ in diffs))
            for what, lines in diffs:
                report.append(f"    {what}:")
                report += [f"        {l}" for l in lines]
        n, m = len(results), sum(1 for r in results.values() if r[2])
        secs_old = sum(r[3]["secs"] for r in results.values())
        secs_new = sum(r[4]["secs"] for r in results.values())
        # What the comparisons exercised: NEW's exit statuses per command
        # (a command that only ever fails compares only its error message).
        st = {}
        for idx in sorted(results):
            relpath, label, diffs, r_old, r_new = results[idx]
            c = st.setdefault(re.sub(r"\[allocation \d+ fails\]", "[allocation k fails]",
                                     label), {})
            c[r_new["rc"]] = c.get(r_new["rc"], 0) + 1
        report.append("exit status of NEW per command: " + "; ".join(
            f"{label} " + " ".join(f"{rc}:{n}" for rc, n in sorted(c.items()))
            for label, c in st.items()))
        if per_cmd:
            report.append("differing comparisons per command: " + "; ".join(
                f"{k} {v}" for k, v in sorted(per_cmd.items(), key=lambda kv: -kv[1])))
        report.append(f"{len(images)} images, patchsite run time old {secs_old:.1f} s, "
                      f"new {secs_new:.1f} s, wall {time.monotonic() - t_start:.1f} s "
                      f"(-j {a.jobs})")
        report.append(f"{n} comparisons, {m} differ")
        print("\n".join(report))
        if a.keep:
            shutil.rmtree(os.path.join(work, "scratch"), ignore_errors=True)
            with open(os.path.join(work, "report.txt"), "w") as f:
                f.write("\n".join(report) + "\n")
            print(f"kept: {work} (res/N/old, res/N/new of each differing comparison)")
        sys.exit(1 if m else 0)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        for d in cleanup:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
