#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Generate the kernel-sized x86_64 benchmark images for bench/run.sh.

Deterministic (fixed seed): the same generator gives the same images, byte for
byte.  Each image is a statically linked ET_EXEC, its .text at the kernel's
0xffffffff81000000, built from GNU as sources assembled with `as -g` (so the
DWARF is real: one CU per source, with .debug_line rows for every instruction
and .debug_aranges) and linked with ld:

  * N functions (`.type f,@function` / `.size`), each `endbr64; call
    __fentry__` then a body of varied real instructions (prologue, loads,
    stores, lea, ALU, cmp/test + jcc to labels in the same function, direct
    calls to other functions, imul, SSE moves, shifts, cmov, lock cmpxchg,
    indirect calls, the odd 5-byte NOP, epilogue, ret).  Body sizes follow a
    log-normal distribution averaging about 280 bytes (15 MB of text for
    50,000 functions); functions are 16-byte aligned as in the kernel, so the
    padding is real NOPs too.
  * about 5% of the functions are notrace: no call to __fentry__.
  * `__fentry__` itself, a function that returns.
  * data objects (`.type o,@object` / `.size`) in .data, .bss and .rodata,
    enough for a kernel-sized symbol table (110,000+ entries for 50k
    functions), some of them referenced by RIP-relative loads and leas.
  * a `__mcount_loc` section listing every site, emitted next to each call as
    gcc -mrecord-mcount does (`.pushsection __mcount_loc; .quad 1b`).

A real vmlinux of this size is mostly DWARF.  The assembler's DWARF here is
only line tables, so the file is brought up to the size of a kernel image
(345 MB) with a NON-LOADED section, `.debug_bench_pad`, of incompressible
pseudo-random bytes (objcopy --add-section), standing in for the rest of the
vmlinux DWARF.  No tool should need to read it; that is the point: the cost of
`record` must follow the functions, not the file size.

Images (written to bench/out/, cached; regenerated when this file changes):

  vmlinux-50k            50,000 functions, padded to 345 MB     (the target)
  vmlinux-5k             5,000 functions (and 1/10 of the data objects),
                         padded to the same 345 MB
  vmlinux-50k-nopad      the 50,000-function image without the padding
  vmlinux-50k-findings   vmlinux-50k with 100 __mcount_loc entries replaced by
                         addresses that are not sites (100 stale entries, 100
                         missing sites), padded to 345 MB: `audit` reports
                         findings and attributes them through libdw (DWARF)

Each image gets IMAGE.json beside it: functions, sites, text size, symbols,
file size.

usage: bench/gen.py [--out DIR] [--jobs N] [--force]
"""
import argparse
import hashlib
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

SEED = 20240601
TEXT_BASE = 0xFFFFFFFF81000000
PAD_TO = 345_000_000            # bytes; "345 MB" (decimal MB)
FUNCS_PER_CU = 500
BODY_MEAN = 273                 # average bytes between the fentry call and ret
NOTRACE_PCT = 5
OBJECTS_PER_FUNC = 1.2          # 60,000 data objects for 50,000 functions
FINDINGS = 100                  # stale entries in the -findings variant

REGS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10",
        "r11", "r12", "r13", "r14", "r15"]
R32 = {"rax": "eax", "rbx": "ebx", "rcx": "ecx", "rdx": "edx", "rsi": "esi",
       "rdi": "edi", "rbp": "ebp", "r8": "r8d", "r9": "r9d", "r10": "r10d",
       "r11": "r11d", "r12": "r12d", "r13": "r13d", "r14": "r14d", "r15": "r15d"}
BASES = ["rdi", "rsi", "rbx", "rbp", "r12", "r13", "r14", "r15", "rax", "rdx"]
JCC = ["je", "jne", "jg", "jge", "jl", "jle", "ja", "jae", "jb", "jbe", "js", "jns"]
ALU = ["add", "sub", "and", "or", "xor"]
CMOV = ["cmove", "cmovne", "cmovg", "cmovl", "cmova", "cmovb"]

PREFIXES = ["ext4", "btrfs", "xfs", "nfs", "tcp", "udp", "ip6", "netif", "skb",
            "sched", "rcu", "mm", "page", "slab", "vfs", "dentry", "inode",
            "blk", "scsi", "nvme", "pci", "usb", "drm", "i915", "amdgpu", "kvm",
            "x86", "irq", "timer", "hrtimer", "cgroup", "bpf", "perf", "sock",
            "crypto", "acpi", "dma", "iommu", "sysfs", "proc", "tty", "input"]
VERBS = ["init", "exit", "alloc", "free", "get", "put", "lookup", "insert",
         "remove", "update", "flush", "sync", "read", "write", "open", "release",
         "map", "unmap", "attach", "detach", "queue", "dequeue", "submit",
         "complete", "handle", "process", "parse", "validate", "commit", "reset"]
NOUNS = ["entry", "page", "buffer", "request", "node", "context", "state",
         "table", "work", "event", "map", "range", "desc", "ring", "port", "dev",
         "ops", "attr", "cache", "lock", "list", "queue", "block", "extent"]


def func_name(i):
    return "%s_%s_%s_%d" % (PREFIXES[i % len(PREFIXES)],
                            VERBS[(i // 3) % len(VERBS)],
                            NOUNS[(i // 7) % len(NOUNS)], i)


def obj_name(i):
    return "%s_%s_%d" % (PREFIXES[(i * 7) % len(PREFIXES)],
                         NOUNS[(i // 5) % len(NOUNS)], i)


def mix(i, salt):
    """A stable per-index pseudo-random number in [0, 2^32)."""
    h = hashlib.blake2b(b"%d:%d:%d" % (SEED, salt, i), digest_size=4).digest()
    return struct.unpack("<I", h)[0]


def is_notrace(i):
    return i > 0 and mix(i, 1) % 100 < NOTRACE_PCT


def is_static_func(i):
    return i > 0 and mix(i, 2) % 5 == 0      # ~20% local, like kernel statics


def is_static_obj(i):
    return mix(i, 3) % 3 == 0


class Body:
    """Instruction templates; each returns (lines, estimated bytes)."""

    def __init__(self, rng, cu_funcs, global_funcs, cu_objs, global_objs):
        self.r = rng
        self.cu_funcs = cu_funcs
        self.global_funcs = global_funcs
        self.cu_objs = cu_objs
        self.global_objs = global_objs

    def reg(self):
        return self.r.choice(REGS)

    def base(self):
        return self.r.choice(BASES)

    def disp(self):
        r = self.r.random()
        if r < 0.6:
            return 8 * self.r.randrange(0, 16)
        if r < 0.9:
            return 8 * self.r.randrange(16, 256)
        return self.r.randrange(0x400, 0x4000)

    def imm(self):
        return self.r.choice([0, 1, 2, 4, 8, 0x10, 0x20, 0x40, 0xff, 0x100,
                              0x1000, self.r.randrange(0, 0x7fffffff)])

    def func_target(self):
        if self.r.random() < 0.5:
            return self.r.choice(self.cu_funcs)
        return self.r.choice(self.global_funcs)

    def obj_target(self):
        if self.r.random() < 0.5 and self.cu_objs:
            return self.r.choice(self.cu_objs)
        return self.r.choice(self.global_objs)

    def insn(self, labels):
        r = self.r
        k = r.randrange(100)
        if k < 10:
            return ["mov %%%s, %%%s" % (self.reg(), self.reg())], 3
        if k < 22:
            d = self.disp()
            return ["mov 0x%x(%%%s), %%%s" % (d, self.base(), self.reg())], 4 if d < 128 else 7
        if k < 30:
            d = self.disp()
            return ["mov %%%s, 0x%x(%%%s)" % (self.reg(), d, self.base())], 4 if d < 128 else 7
        if k < 33:
            return ["movl $0x%x, %%%s" % (self.imm(), R32[self.reg()])], 5
        if k < 36:
            return ["movq $0x%x, 0x%x(%%%s)" % (r.randrange(0, 0x10000), self.disp(),
                                                self.base())], 10
        if k < 41:
            return ["lea 0x%x(%%%s,%%%s,%d), %%%s" % (self.disp(), self.base(), self.reg(),
                                                     r.choice([1, 2, 4, 8]), self.reg())], 6
        if k < 45:
            return ["lea %s(%%rip), %%%s" % (self.obj_target(), self.reg())], 7
        if k < 49:
            return ["mov %s(%%rip), %%%s" % (self.obj_target(), self.reg())], 7
        if k < 56:
            return ["%sq $0x%x, %%%s" % (r.choice(ALU), r.randrange(0, 0x80), self.reg())], 4
        if k < 61:
            return ["%s %%%s, %%%s" % (r.choice(ALU), self.reg(), self.reg())], 3
        if k < 68:
            if r.random() < 0.5:
                cmp = "cmpq $0x%x, %%%s" % (r.randrange(0, 0x80), self.reg())
            else:
                cmp = "test %%%s, %%%s" % ((self.reg(),) * 2)
            return [cmp, "%s %s" % (r.choice(JCC), r.choice(labels))], 7
        if k < 71:
            return ["cmpb $0x%x, 0x%x(%%%s)" % (r.randrange(0, 0x80), self.disp(), self.base()),
                    "%s %s" % (r.choice(JCC), r.choice(labels))], 8
        if k < 74:
            return ["imul $0x%x, %%%s, %%%s" % (r.randrange(2, 0x1000), self.reg(),
                                                self.reg())], 7
        if k < 81:
            return ["call %s" % self.func_target()], 5
        if k < 84:
            return ["movdqu 0x%x(%%%s), %%xmm%d" % (self.disp(), self.base(), r.randrange(16))], 6
        if k < 86:
            return ["movups %%xmm%d, 0x%x(%%%s)" % (r.randrange(16), self.disp(), self.base())], 5
        if k < 87:
            x = r.randrange(16)
            return ["pxor %%xmm%d, %%xmm%d" % (x, x)], 4
        if k < 88:
            return ["movq %%xmm%d, %%%s" % (r.randrange(16), self.reg())], 5
        if k < 90:
            return ["movzbl 0x%x(%%%s), %%%s" % (self.disp(), self.base(), R32[self.reg()])], 5
        if k < 91:
            return ["movslq 0x%x(%%%s), %%%s" % (self.disp(), self.base(), self.reg())], 5
        if k < 93:
            return ["%sq $%d, %%%s" % (r.choice(["shl", "shr", "sar"]), r.randrange(1, 63),
                                       self.reg())], 4
        if k < 95:
            return ["%s %%%s, %%%s" % (r.choice(CMOV), self.reg(), self.reg())], 4
        if k < 96:
            return ["lock cmpxchg %%%s, 0x%x(%%%s)" % (self.reg(), self.disp(), self.base())], 6
        if k < 97:
            return ["call *0x%x(%%%s)" % (8 * r.randrange(0, 32), self.base())], 3
        if k < 98:
            return ["jmp %s" % r.choice(labels)], 3
        if k < 99:
            return ["btq $%d, %%%s" % (r.randrange(0, 63), self.reg())], 5
        return [".byte 0x0f, 0x1f, 0x44, 0x00, 0x00	# nopl 0x0(%rax,%rax,1)"], 5


def gen_cu(args):
    """Write and assemble one CU: functions [lo, hi), objects [olo, ohi)."""
    cu, lo, hi, olo, ohi, nfuncs, nobjs, workdir = args
    rng = random.Random(SEED * 1000003 + cu)
    cu_funcs = [func_name(i) for i in range(lo, hi)]
    global_funcs = [func_name(i) for i in range(0, nfuncs, 11) if not is_static_func(i)]
    cu_objs = [obj_name(i) for i in range(olo, ohi)]
    global_objs = [obj_name(i) for i in range(0, nobjs, 13) if not is_static_obj(i)]
    body = Body(rng, cu_funcs, global_funcs, cu_objs, global_objs)
    mu = math.log(BODY_MEAN) - 0.8 ** 2 / 2
    out = []
    w = out.append
    w("\t.section __mcount_loc, \"a\", @progbits\n\t.p2align 3\n")
    w("\t.text\n")
    sites = 0
    for i in range(lo, hi):
        name = func_name(i)
        w("\t.p2align 4\n")
        if not is_static_func(i):
            w("\t.globl %s\n" % name)
        w("\t.type %s, @function\n%s:\n" % (name, name))
        w("\tendbr64\n")
        if not is_notrace(i):
            w("1:\tcall __fentry__\n")
            w("\t.pushsection __mcount_loc, \"a\", @progbits\n\t.quad 1b\n\t.popsection\n")
            sites += 1
        target = min(max(int(rng.lognormvariate(mu, 0.8)), 24), 6000)
        nlab = max(2, target // 60)
        labels = [".L%d_%d" % (i, k) for k in range(nlab)]
        # prologue
        pro = ["push %rbp", "mov %rsp, %rbp"]
        saved = rng.sample(["rbx", "r12", "r13", "r14", "r15"], rng.randrange(0, 4))
        pro += ["push %%%s" % s for s in saved]
        frame = 8 * rng.randrange(0, 16)
        if frame:
            pro.append("sub $0x%x, %%rsp" % frame)
        for line in pro:
            w("\t%s\n" % line)
        size = 4 + 2 * len(saved) + (4 if frame else 0)
        lab_at = sorted(rng.sample(range(1, 10 ** 6), nlab))
        li = 0
        while size < target - 8:
            # place labels roughly uniformly along the body
            while li < nlab and lab_at[li] * target // 10 ** 6 <= size:
                w("%s:\n" % labels[li])
                li += 1
            lines, n = body.insn(labels)
            for line in lines:
                w("\t%s\n" % line)
            size += n
        while li < nlab:
            w("%s:\n" % labels[li])
            li += 1
        if frame:
            w("\tadd $0x%x, %%rsp\n" % frame)
        for s in reversed(saved):
            w("\tpop %%%s\n" % s)
        w("\tpop %rbp\n\tret\n")
        w("\t.size %s, .-%s\n" % (name, name))
    # data objects
    for sec, kind in ((".data", 0), (".bss", 1), (".section .rodata", 2)):
        w("\t%s\n" % sec)
        for i in range(olo, ohi):
            if mix(i, 4) % 10 not in ((0, 1, 2, 3, 4, 5), (6, 7, 8), (9,))[kind]:
                continue
            name = obj_name(i)
            sz = 4 << (mix(i, 5) % 5)
            w("\t.p2align 3\n")
            if not is_static_obj(i):
                w("\t.globl %s\n" % name)
            w("\t.type %s, @object\n%s:\n" % (name, name))
            if kind == 1:
                w("\t.zero %d\n" % sz)
            else:
                w("\t.fill %d, 1, 0x%x\n" % (sz, mix(i, 6) & 0xff))
            w("\t.size %s, %d\n" % (name, sz))
    src = os.path.join(workdir, "cu%04d.s" % cu)
    obj = os.path.join(workdir, "cu%04d.o" % cu)
    with open(src, "w") as f:
        f.write("".join(out))
    # Relative names and a fixed prefix map: the DWARF does not depend on
    # where the checkout is.
    subprocess.run(["as", "--64", "-g", "--debug-prefix-map", workdir + "=/bench",
                    "-o", os.path.basename(obj), os.path.basename(src)],
                   check=True, cwd=workdir)
    os.unlink(src)
    return obj, sites


RT_SRC = """\
	.text
	.p2align 4
	.globl __fentry__
	.type __fentry__, @function
__fentry__:
	ret
	.size __fentry__, .-__fentry__
	.p2align 4
	.globl startup_64
	.type startup_64, @function
startup_64:
	endbr64
	jmp startup_64
	.size startup_64, .-startup_64
"""


def run(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def build_base(nfuncs, workdir, out_elf, jobs):
    """Assemble and link an image with nfuncs functions; return its site count."""
    nobjs = int(nfuncs * OBJECTS_PER_FUNC)
    ncu = (nfuncs + FUNCS_PER_CU - 1) // FUNCS_PER_CU
    tasks = []
    for cu in range(ncu):
        lo, hi = cu * FUNCS_PER_CU, min(nfuncs, (cu + 1) * FUNCS_PER_CU)
        olo, ohi = nobjs * cu // ncu, nobjs * (cu + 1) // ncu
        tasks.append((cu, lo, hi, olo, ohi, nfuncs, nobjs, workdir))
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        res = list(ex.map(gen_cu, tasks))
    rt_s = os.path.join(workdir, "rt.s")
    rt_o = os.path.join(workdir, "rt.o")
    with open(rt_s, "w") as f:
        f.write(RT_SRC)
    run(["as", "--64", "-g", "--debug-prefix-map", workdir + "=/bench",
         "-o", "rt.o", "rt.s"], cwd=workdir)
    objs = [rt_o] + [o for o, _ in res]
    run(["ld", "-m", "elf_x86_64", "-static", "-nostdlib", "--no-warn-rwx-segments",
         "-Ttext=0x%x" % TEXT_BASE, "-e", "startup_64", "-o", out_elf] + objs)
    for o in objs:
        os.unlink(o)
    os.unlink(rt_s)
    return sum(s for _, s in res)


def sections(path):
    """name -> (addr, offset, size) from readelf -SW."""
    out = subprocess.run(["readelf", "-SW", path], check=True, capture_output=True,
                         text=True).stdout
    res = {}
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("["):
            continue
        parts = line[line.index("]") + 1:].split()
        if len(parts) < 6 or parts[0] == "Name":
            continue
        try:
            res[parts[0]] = (int(parts[2], 16), int(parts[3], 16), int(parts[4], 16))
        except ValueError:
            pass
    return res


def count_symbols(path):
    out = subprocess.run(["readelf", "-sW", path], check=True, capture_output=True,
                         text=True).stdout
    nsym = nfunc = nobj = 0
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 8 and p[0].endswith(":") and p[0][:-1].isdigit():
            nsym += 1
            nfunc += p[3] == "FUNC"
            nobj += p[3] == "OBJECT"
    return nsym, nfunc, nobj


def pad(src, dst, workdir, pad_bytes_cache):
    """dst = src + a non-loaded .debug_bench_pad section, file size ~PAD_TO."""
    base = os.path.getsize(src)
    n = PAD_TO - base - 4096        # objcopy adds a header entry and alignment
    if n <= 0:
        raise SystemExit("gen.py: %s is already %d bytes" % (src, base))
    padfile = os.path.join(workdir, "pad.bin")
    with open(padfile, "wb") as f:
        f.write(memoryview(pad_bytes_cache)[:n])
    tmp = dst + ".tmp"
    run(["objcopy", "--add-section", ".debug_bench_pad=" + padfile,
         "--set-section-flags", ".debug_bench_pad=contents,readonly", src, tmp])
    os.unlink(padfile)
    os.replace(tmp, dst)


def make_findings(src, dst, workdir):
    """Copy src with FINDINGS __mcount_loc entries pointing at non-sites."""
    secs = sections(src)
    addr, off, size = secs["__mcount_loc"]
    with open(src, "rb") as f:
        f.seek(off)
        tbl = bytearray(f.read(size))
    n = size // 8
    rng = random.Random(SEED + 7)
    for k in sorted(rng.sample(range(n), FINDINGS)):
        v = struct.unpack_from("<Q", tbl, 8 * k)[0]
        # 5 bytes on: the first instruction after the call, not a site
        struct.pack_into("<Q", tbl, 8 * k, v + 5)
    tf = os.path.join(workdir, "mcount_loc.bin")
    with open(tf, "wb") as f:
        f.write(tbl)
    run(["objcopy", "--update-section", "__mcount_loc=" + tf, src, dst])
    os.unlink(tf)


def describe(path, nfuncs_gen, sites, extra):
    secs = sections(path)
    nsym, nfunc, nobj = count_symbols(path)
    dbg = sum(v[2] for k, v in secs.items() if k.startswith(".debug_") and k != ".debug_bench_pad")
    info = {
        "image": os.path.basename(path),
        "file_bytes": os.path.getsize(path),
        "functions": nfunc,
        "functions_generated": nfuncs_gen,
        "objects": nobj,
        "symbols": nsym,
        "text_bytes": secs[".text"][2],
        "text_addr": "0x%x" % secs[".text"][0],
        "sites": sites,
        "mcount_loc_entries": secs["__mcount_loc"][2] // 8,
        "dwarf_bytes": dbg,
        "pad_bytes": secs.get(".debug_bench_pad", (0, 0, 0))[2],
    }
    info.update(extra)
    with open(path + ".json", "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    return info


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "out"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args()
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)

    with open(os.path.abspath(__file__), "rb") as f:
        stamp = hashlib.sha256(f.read()).hexdigest()
    stampfile = os.path.join(a.out, "STAMP")
    names = ["vmlinux-50k", "vmlinux-5k", "vmlinux-50k-nopad", "vmlinux-50k-findings"]
    if not a.force and os.path.exists(stampfile) and open(stampfile).read().strip() == stamp \
            and all(os.path.exists(os.path.join(a.out, n)) for n in names):
        print("gen.py: images in %s are up to date" % a.out)
        return 0
    if os.path.exists(stampfile):
        os.unlink(stampfile)

    t0 = time.perf_counter()
    work = os.path.join(a.out, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    o = lambda n: os.path.join(a.out, n)

    print("gen.py: assembling 50,000 functions (as -g, %d jobs)..." % a.jobs, flush=True)
    sites50 = build_base(50000, work, o("vmlinux-50k-nopad"), a.jobs)
    print("gen.py: assembling 5,000 functions...", flush=True)
    sites5 = build_base(5000, work, o("base-5k"), a.jobs)
    print("gen.py: %.1f s; padding to %d bytes..." % (time.perf_counter() - t0, PAD_TO),
          flush=True)
    padbytes = hashlib.shake_128(b"patchsite-bench-pad:%d" % SEED).digest(PAD_TO)
    make_findings(o("vmlinux-50k-nopad"), o("base-50k-findings"), work)
    pad(o("vmlinux-50k-nopad"), o("vmlinux-50k"), work, padbytes)
    pad(o("base-5k"), o("vmlinux-5k"), work, padbytes)
    pad(o("base-50k-findings"), o("vmlinux-50k-findings"), work, padbytes)
    del padbytes
    for n in ("base-5k", "base-50k-findings"):
        os.unlink(o(n))
    shutil.rmtree(work)

    note = ("padded with a non-loaded .debug_bench_pad section of pseudo-random bytes "
            "standing in for the rest of a vmlinux's DWARF")
    describe(o("vmlinux-50k"), 50000, sites50, {"note": note})
    describe(o("vmlinux-5k"), 5000, sites5, {"note": note})
    describe(o("vmlinux-50k-nopad"), 50000, sites50, {"note": "no padding"})
    describe(o("vmlinux-50k-findings"), 50000, sites50,
             {"note": note, "stale_entries": FINDINGS, "missing_sites": FINDINGS})
    with open(stampfile, "w") as f:
        f.write(stamp + "\n")
    print("gen.py: done in %.1f s" % (time.perf_counter() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
