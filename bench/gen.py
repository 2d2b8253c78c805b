#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Generate the kernel-sized benchmark images for bench/run.sh.

Deterministic (fixed seed): the same generator gives the same images, byte for
byte.  Each x86_64 image is a statically linked ET_EXEC, its .text at the
kernel's 0xffffffff81000000, built from GNU as sources and linked with ld:

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
  * DWARF as GCC writes it for a kernel, at a kernel's size (see gcc_dwarf()):
    a unit per 25 functions, each with DW_AT_producer (GCC's flags),
    DW_AT_ranges, a tree of type and declaration DIEs, a subprogram per
    function; ~150-entry abbreviation tables; .debug_aranges; line tables
    from .loc directives.  About 320 MB, which makes the files 345 MB, the
    size of a distribution's vmlinux with its DWARF.

Images (written to bench/out/, cached; regenerated when this file changes):

  vmlinux-50k            50,000 functions, 345 MB with its DWARF (the target)
  vmlinux-50k-nodebug    the same, objcopy --strip-debug (what record must
                         cost the same on)
  vmlinux-5k             5,000 functions (and 1/10 of the data objects),
                         200 units with bigger type trees: the same 345 MB
  vmlinux-50k-findings   vmlinux-50k with 100 __mcount_loc entries replaced by
                         addresses that are not sites (100 stale entries, 100
                         missing sites): `audit` reports findings and names
                         each one's unit and producer (DWARF)

  vmlinux-arm64-50k      an arm64 relocatable kernel (CONFIG_RELOCATABLE):
                         50,000 functions laid out as GCC does with
                         -fpatchable-function-entry=4,2 -falign-functions=8
                         (CALL_OPS), assembled with aarch64-linux-gnu-as and
                         linked with aarch64-linux-gnu-ld `-shared
                         -Bsymbolic -z notext --no-apply-dynamic-relocs` and
                         a linker script shaped like arch/arm64's
                         vmlinux.lds.S, .text at 0xffff800080000000; ~186,000
                         symbols; the same kind of DWARF, 345 MB.  See
                         gen_cu_arm64().
  vmlinux-arm64-50k-nodebug  the same, objcopy --strip-debug

Each image gets IMAGE.json beside it: functions, sites, text size, symbols,
file size, DWARF size.

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
FUNCS_PER_CU = 500
BODY_MEAN = 273                 # average bytes between the fentry call and ret
NOTRACE_PCT = 5
OBJECTS_PER_FUNC = 1.2          # 60,000 data objects for 50,000 functions
FINDINGS = 100                  # stale entries in the -findings variant
TREE_50K = 157_000              # bytes of type DIEs per unit: 2,000 units, a 345 MB file
TREE_5K = 1_700_000             # 200 units, the same 345 MB
X86_FUNCS_PER_UNIT = 25         # DWARF units: 2,000 for 50,000 functions
# GCC 12's producer for an x86_64 kernel unit built with -pg -mfentry (Debian 6.12's, less
# its call padding)
X86_PRODUCER = ("GNU C11 12.2.0 -mno-sse -mno-mmx -mno-sse2 -mno-3dnow -mno-avx -m64 "
                "-mno-80387 -mno-fp-ret-in-387 -mpreferred-stack-boundary=3 -mskip-rax-setup "
                "-mtune=generic -mno-red-zone -mcmodel=kernel -mindirect-branch=thunk-extern "
                "-mindirect-branch-register -mindirect-branch-cs-prefix "
                "-mfunction-return=thunk-extern -mharden-sls=all -mrecord-mcount -mfentry "
                "-march=x86-64 -g -O2 -std=gnu11 -p -fshort-wchar -funsigned-char -fno-common "
                "-fno-PIE -fno-strict-aliasing -fcf-protection=branch -falign-jumps=1 "
                "-falign-loops=1 -fno-asynchronous-unwind-tables -fno-jump-tables "
                "-fno-delete-null-pointer-checks -fno-allow-store-data-races "
                "-fstack-protector-strong -ftrivial-auto-var-init=zero "
                "-fno-stack-clash-protection -falign-functions=16 -fno-strict-overflow "
                "-fstack-check=no -fconserve-stack")

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
    cu, lo, hi, olo, ohi, nfuncs, nobjs, workdir, tree_bytes = args
    rng = random.Random(SEED * 1000003 + cu)
    cu_funcs = [func_name(i) for i in range(lo, hi)]
    global_funcs = [func_name(i) for i in range(0, nfuncs, 11) if not is_static_func(i)]
    cu_objs = [obj_name(i) for i in range(olo, ohi)]
    global_objs = [obj_name(i) for i in range(0, nobjs, 13) if not is_static_obj(i)]
    body = Body(rng, cu_funcs, global_funcs, cu_objs, global_objs)
    mu = math.log(BODY_MEAN) - 0.8 ** 2 / 2
    units = sorted({i // X86_FUNCS_PER_UNIT for i in range(lo, hi)})
    out = []
    w = out.append
    for u in units:
        w("\t.file %d \"%s\"\n" % (u - units[0] + 1, unit_name(u)))
    w("\t.section __mcount_loc, \"a\", @progbits\n\t.p2align 3\n")
    w("\t.text\n")
    sites = 0
    line = 1
    for i in range(lo, hi):
        name = func_name(i)
        u = i // X86_FUNCS_PER_UNIT
        fno = u - units[0] + 1
        if i == lo or i % X86_FUNCS_PER_UNIT == 0:
            if i != lo:
                w(".Lu%d_hi:\n" % (u - 1))
            w("\t.p2align 4\n.Lu%d_lo:\n" % u)
            line = 1
        w("\t.p2align 4\n")
        if not is_static_func(i):
            w("\t.globl %s\n" % name)
        w("\t.type %s, @function\n%s:\n.LFB%d:\n" % (name, name, i))
        line += 2
        w("\t.loc %d %d\n" % (fno, line))
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
        for ins in pro:
            w("\t%s\n" % ins)
        size = 4 + 2 * len(saved) + (4 if frame else 0)
        lab_at = sorted(rng.sample(range(1, 10 ** 6), nlab))
        li = 0
        while size < target - 8:
            # place labels roughly uniformly along the body
            while li < nlab and lab_at[li] * target // 10 ** 6 <= size:
                w("%s:\n" % labels[li])
                li += 1
            lines, n = body.insn(labels)
            line += 1
            w("\t.loc %d %d\n" % (fno, line))
            for ins in lines:
                w("\t%s\n" % ins)
            size += n
        while li < nlab:
            w("%s:\n" % labels[li])
            li += 1
        if frame:
            w("\tadd $0x%x, %%rsp\n" % frame)
        for s in reversed(saved):
            w("\tpop %%%s\n" % s)
        w("\tpop %rbp\n\tret\n")
        w(".LFE%d:\n\t.size %s, .-%s\n" % (i, name, name))
    w(".Lu%d_hi:\n" % units[-1])
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
    w(gcc_dwarf(units, lo, hi, X86_FUNCS_PER_UNIT, lambda u: X86_PRODUCER, tree_bytes,
                ".8byte"))
    src = os.path.join(workdir, "cu%04d.s" % cu)
    obj = os.path.join(workdir, "cu%04d.o" % cu)
    with open(src, "w") as f:
        f.write("".join(out))
    # Relative names: the DWARF does not depend on where the checkout is.
    subprocess.run(["as", "--64", "-o", os.path.basename(obj), os.path.basename(src)],
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


# ---------------------------------------------------------------------------
# arm64: a relocatable (CONFIG_RELOCATABLE) CALL_OPS kernel.
#
# Every traced function is laid out as GCC 12 lays it out with
# -fpatchable-function-entry=4,2 -falign-functions=8 (the arm64 kernel's
# CALL_OPS flags; see the .s of any C file built that way):
#
#       .p2align 3,,7
#       .section __patchable_function_entries,"awo",@progbits,FIRST
#       .align 3
#       .8byte .LPFEn
#       .text
#   .LPFEn:
#       nop                     <- func-8: the ops literal, the recorded site
#       nop
#       .type func, %function
#   func:
#       bti c                   (30%)
#       nop
#       nop
#       paciasp                 (half the non-leaf functions; autiasp before ret)
#       stp x29, x30, [sp, #-F]! ...  body of varied real instructions ... ret
#
# (FIRST: GCC names the CU's first function as the link-order symbol of every
# __patchable_function_entries entry in the CU; they all live in .text.)
# Notrace functions (5%) have no NOPs at all; a fifth of them begin with one
# `nop` (after the optional bti c), as a static-key branch would.
#
# The link is the one arch/arm64/Makefile does for CONFIG_RELOCATABLE:
# `-shared -Bsymbolic -z notext --no-apply-dynamic-relocs`, with a linker
# script shaped like vmlinux.lds.S: .dynsym/.dynstr/.hash discarded, every
# input's __patchable_function_entries (and __mcount_loc) between
# __start_mcount_loc and __stop_mcount_loc in .init.data (MCOUNT_REC), then
# .rela.dyn.  The table's `.8byte .LPFEn` become R_AARCH64_RELATIVE relocations
# whose addends are the addresses; --no-apply-dynamic-relocs leaves the slots
# themselves zero.  Data objects hold function pointers too (ops tables), so
# .rela.dyn also has RELATIVE relocations outside the table.
# ---------------------------------------------------------------------------
ARM_TEXT_BASE = 0xFFFF800080000000      # KIMAGE_VADDR since v6.6
ARM_OBJECTS_PER_FUNC = 2.72             # ~186,000 symbols in all for 50,000 functions
ARM_BTI_PCT = 30
ARM_PAC_PCT = 50                        # of the non-leaf functions
ARM_LEAF_PCT = 25
ARM_STATIC_KEY_PCT = 20                 # of the notrace functions
ARM_NOTRACE_PCT = 3                     # notrace functions in traced units ...
ARM_NOTRACE_UNIT_PCT = 2                # ... and whole notrace units (CFLAGS_REMOVE)
ARM_FUNCS_PER_UNIT = 25                 # DWARF units: 2,000 for 50,000 functions
ARM_CFLAGS = ("-mlittle-endian -mgeneral-regs-only -mabi=lp64 "
              "-mbranch-protection=pac-ret+bti -mstack-protector-guard=sysreg "
              "-mstack-protector-guard-reg=sp_el0 -mstack-protector-guard-offset=1440 "
              "-g -gdwarf-5 -O2 -std=gnu11 -fshort-wchar -funsigned-char -fno-common "
              "-fno-PIE -fno-strict-aliasing -fno-asynchronous-unwind-tables "
              "-fno-unwind-tables -fno-delete-null-pointer-checks "
              "-fno-allow-store-data-races -fstack-protector-strong "
              "-fno-omit-frame-pointer -fno-optimize-sibling-calls "
              "-ftrivial-auto-var-init=zero -fno-stack-clash-protection "
              "%s-falign-functions=8 -fstrict-flex-arrays=3 -fno-strict-overflow "
              "-fstack-check=no -fconserve-stack")
ARM_PRODUCER = "GNU C11 12.2.0 " + ARM_CFLAGS % "-fpatchable-function-entry=4,2 "
ARM_PRODUCER_NOTRACE = "GNU C11 12.2.0 " + ARM_CFLAGS % ""
ARM_AS = "aarch64-linux-gnu-as"
ARM_LD = "aarch64-linux-gnu-ld"
ARM_OBJCOPY = "aarch64-linux-gnu-objcopy"

AREGS = ["x%d" % n for n in list(range(0, 18)) + list(range(19, 29))]
ACOND = ["eq", "ne", "gt", "ge", "lt", "le", "hi", "hs", "lo", "ls", "mi", "pl"]
AALU = ["add", "sub", "and", "orr", "eor", "bic"]
ALOGIMM = ["0x1", "0x3", "0x7", "0xf", "0xff", "0xfff", "0xffff", "0xff00", "0x3f",
           "0xfffffffffffffff0", "0xfffffffffffff000", "0x8000000000000000",
           "0x7fffffffffffffff", "0x5555555555555555", "0xf0f0f0f0f0f0f0f0"]


def arm_notrace_unit(u):
    return mix(u, 17) % 100 < ARM_NOTRACE_UNIT_PCT


def arm_notrace(i):
    """notrace: a function of a notrace unit, or marked notrace in a traced one."""
    return i > 0 and (arm_notrace_unit(i // ARM_FUNCS_PER_UNIT) or
                      mix(i, 18) % 100 < ARM_NOTRACE_PCT)


def arm_bti(i):
    return mix(i, 11) % 100 < ARM_BTI_PCT


def arm_leaf(i):
    return mix(i, 12) % 100 < ARM_LEAF_PCT


def arm_pac(i):
    return not arm_leaf(i) and mix(i, 13) % 100 < ARM_PAC_PCT


def arm_static_key(i):
    return arm_notrace(i) and mix(i, 14) % 100 < ARM_STATIC_KEY_PCT


class Arm64Body(Body):
    """arm64 instruction templates; every instruction is 4 bytes."""

    def x(self, *avoid):
        while True:
            r = self.r.choice(AREGS)
            if r not in avoid:
                return r

    def w(self, *avoid):
        return "w" + self.x(*avoid)[1:]

    def insn(self, labels, leaf=False):
        r = self.r
        k = r.randrange(100)
        if k < 9:
            return ["mov %s, %s" % (self.x(), self.x())], 4
        if k < 20:
            if r.random() < 0.7:
                return ["ldr %s, [%s, #%d]" % (self.x(), self.x(), 8 * r.randrange(0, 64))], 4
            return ["ldr %s, [%s, #%d]" % (self.w(), self.x(), 4 * r.randrange(0, 256))], 4
        if k < 27:
            if r.random() < 0.7:
                return ["str %s, [%s, #%d]" % (self.x(), self.x(), 8 * r.randrange(0, 64))], 4
            return ["str %s, [%s, #%d]" % (self.w(), self.x(), 4 * r.randrange(0, 256))], 4
        if k < 31:
            a = self.x()
            b = self.x(a)
            return ["%s %s, %s, [%s, #%d]" % (r.choice(["ldp", "stp"]), a, b, self.x(a, b),
                                               8 * r.randrange(-8, 32))], 4
        if k < 33:
            op = r.choice(["ldrb", "strb", "ldrh", "strh", "ldrsw"])
            d = self.x() if op == "ldrsw" else self.w()
            scale = {"ldrb": 1, "strb": 1, "ldrh": 2, "strh": 2, "ldrsw": 4}[op]
            return ["%s %s, [%s, #%d]" % (op, d, self.x(), scale * r.randrange(0, 128))], 4
        if k < 35:
            return ["ldr %s, [%s, %s, lsl #3]" % (self.x(), self.x(), self.x())], 4
        if k < 42:
            return ["%s %s, %s, #%d" % (r.choice(["add", "sub"]), self.x(), self.x(),
                                        r.choice([1, 8, 16, 0x40, 0x100, r.randrange(0, 4096)]))], 4
        if k < 47:
            sh = ", lsl #%d" % r.randrange(1, 6) if r.random() < 0.3 else ""
            return ["%s %s, %s, %s%s" % (r.choice(AALU), self.x(), self.x(), self.x(), sh)], 4
        if k < 50:
            return ["%s %s, %s, #%s" % (r.choice(["and", "orr", "eor"]), self.x(), self.x(),
                                        r.choice(ALOGIMM))], 4
        if k < 57:
            if r.random() < 0.6:
                cmp = "cmp %s, #%d" % (self.x(), r.randrange(0, 64))
            else:
                cmp = "cmp %s, %s" % (self.x(), self.x())
            return [cmp, "b.%s %s" % (r.choice(ACOND), r.choice(labels))], 8
        if k < 61:
            return ["%s %s, %s" % (r.choice(["cbz", "cbnz"]), self.x(), r.choice(labels))], 4
        if k < 63:
            return ["%s %s, #%d, %s" % (r.choice(["tbz", "tbnz"]), self.w(), r.randrange(0, 32),
                                        r.choice(labels))], 4
        if k < 70:
            if leaf:
                return ["add %s, %s, %s" % (self.x(), self.x(), self.x())], 4
            return ["bl %s" % self.func_target()], 4
        if k < 74:
            a = self.x()
            o = self.obj_target()
            return ["adrp %s, %s" % (a, o), "add %s, %s, :lo12:%s" % (a, a, o)], 8
        if k < 77:
            a = self.x()
            o = self.obj_target()
            return ["adrp %s, %s" % (a, o), "ldr %s, [%s, :lo12:%s]" % (self.x(), a, o)], 8
        if k < 80:
            a = self.x()
            return ["mov %s, #0x%x" % ("w" + a[1:], r.randrange(0, 0x10000)),
                    "movk %s, #0x%x, lsl #%d" % (a, r.randrange(0, 0x10000),
                                                 r.choice([16, 32, 48]))], 8
        if k < 83:
            return ["%s %s, %s, #%d" % (r.choice(["lsl", "lsr", "asr"]), self.x(), self.x(),
                                        r.randrange(1, 63))], 4
        if k < 86:
            return ["%s %s, %s, %s, %s" % (r.choice(["csel", "csinc", "csneg"]), self.x(),
                                           self.x(), self.x(), r.choice(ACOND))], 4
        if k < 87:
            return ["cset %s, %s" % (self.w(), r.choice(ACOND))], 4
        if k < 89:
            return ["madd %s, %s, %s, %s" % (self.x(), self.x(), self.x(), self.x())], 4
        if k < 90:
            return ["%s %s, %s, #%d, #%d" % (r.choice(["ubfx", "sbfx"]), self.x(), self.x(),
                                             r.randrange(0, 32), r.randrange(1, 32))], 4
        if k < 91:
            b = self.x()
            v = self.x(b)
            s = self.w(b, v)
            return ["ldaxr %s, [%s]" % (v, b), "add %s, %s, #1" % (v, v),
                    "stlxr %s, %s, [%s]" % (s, v, b)], 12
        if k < 92:
            return ["%s %s, [%s]" % (r.choice(["ldar", "stlr"]), self.x(), self.x())], 4
        if k < 93:
            if leaf:
                return ["sub %s, %s, %s" % (self.x(), self.x(), self.x())], 4
            return ["blr %s" % self.x()], 4
        if k < 94:
            return ["b %s" % r.choice(labels)], 4
        if k < 95:
            return ["prfm pldl1keep, [%s, #%d]" % (self.x(), 8 * r.randrange(0, 64))], 4
        if k < 96:
            return ["%s q%d, [%s, #%d]" % (r.choice(["ldr", "str"]), r.randrange(32), self.x(),
                                           16 * r.randrange(0, 64))], 4
        if k < 97:
            return ["sxtw %s, %s" % (self.x(), self.w())], 4
        if k < 98:
            return ["udiv %s, %s, %s" % (self.x(), self.x(), self.x())], 4
        if k < 99:
            return ["ccmp %s, #%d, #%d, %s" % (self.x(), r.randrange(0, 32), r.randrange(0, 16),
                                               r.choice(ACOND))], 4
        return ["dmb ish"], 4


def gen_cu_arm64(args):
    """Write and assemble one arm64 source: functions [lo, hi), objects
    [olo, ohi).  Its DWARF is written as GCC writes it, one unit per
    ARM_FUNCS_PER_UNIT functions, as if each were a C file (patchsite reads
    the layout from DW_AT_producer: `as -g` would say "GNU AS", that is
    hand-written code, which has no NOP areas)."""
    cu, lo, hi, olo, ohi, nfuncs, nobjs, workdir, tree_bytes = args
    rng = random.Random(SEED * 1000033 + cu)
    cu_funcs = [func_name(i) for i in range(lo, hi)]
    global_funcs = [func_name(i) for i in range(0, nfuncs, 11) if not is_static_func(i)]
    cu_objs = [obj_name(i) for i in range(olo, ohi)]
    global_objs = [obj_name(i) for i in range(0, nobjs, 13) if not is_static_obj(i)]
    body = Arm64Body(rng, cu_funcs, global_funcs, cu_objs, global_objs)
    mu = math.log(BODY_MEAN) - 0.8 ** 2 / 2
    first = cu_funcs[0]
    units = sorted({i // ARM_FUNCS_PER_UNIT for i in range(lo, hi)})
    out = []
    w = out.append
    for u in units:
        w("\t.file %d \"%s\"\n" % (u - units[0] + 1, unit_name(u)))
    w("\t.text\n")
    sites = 0
    line = 1
    for i in range(lo, hi):
        u = i // ARM_FUNCS_PER_UNIT
        fno = u - units[0] + 1
        if i == lo or i % ARM_FUNCS_PER_UNIT == 0:
            if i != lo:
                w(".Lu%d_hi:\n" % (u - 1))
            w("\t.p2align 3,,7\n.Lu%d_lo:\n" % u)
            line = 1
        name = func_name(i)
        traced = not arm_notrace(i)
        w("\t.p2align 3,,7\n")
        if not is_static_func(i):
            w("\t.globl %s\n" % name)
        if traced:
            w("\t.section __patchable_function_entries,\"awo\",@progbits,%s\n" % first)
            w("\t.align 3\n\t.8byte .LPFE%d\n\t.text\n.LPFE%d:\n\tnop\n\tnop\n" % (i, i))
            sites += 1
        w("\t.type %s, %%function\n%s:\n.LFB%d:\n" % (name, name, i))
        line += 2
        w("\t.loc %d %d\n" % (fno, line))
        if arm_bti(i):
            w("\tbti c\n")
        if traced:
            w("\tnop\n\tnop\n")
        elif arm_static_key(i):
            w("\tnop\n")
        leaf, pac = arm_leaf(i), arm_pac(i)
        target = min(max(int(rng.lognormvariate(mu, 0.8)), 24), 6000)
        nlab = max(2, target // 60)
        labels = [".L%d_%d" % (i, k) for k in range(nlab)]
        pro, epi = [], []
        if pac:
            pro.append("paciasp")
        if not leaf:
            npairs = rng.randrange(0, 4)
            frame = 16 + 16 * npairs + 16 * rng.randrange(0, 6)
            pro += ["stp x29, x30, [sp, #-%d]!" % frame, "mov x29, sp"]
            for p in range(npairs):
                pro.append("stp x%d, x%d, [sp, #%d]" % (19 + 2 * p, 20 + 2 * p, 16 + 16 * p))
                epi.insert(0, "ldp x%d, x%d, [sp, #%d]" % (19 + 2 * p, 20 + 2 * p, 16 + 16 * p))
            epi.append("ldp x29, x30, [sp], #%d" % frame)
        if pac:
            epi.append("autiasp")
        epi.append("ret")
        for ins in pro:
            w("\t%s\n" % ins)
        size = 4 * len(pro)
        lab_at = sorted(rng.sample(range(1, 10 ** 6), nlab))
        li = 0
        while size < target - 4 * len(epi):
            while li < nlab and lab_at[li] * target // 10 ** 6 <= size:
                w("%s:\n" % labels[li])
                li += 1
            lines, n = body.insn(labels, leaf)
            line += 1
            w("\t.loc %d %d\n" % (fno, line))
            for ins in lines:
                w("\t%s\n" % ins)
            size += n
        while li < nlab:
            w("%s:\n" % labels[li])
            li += 1
        line += 1
        w("\t.loc %d %d\n" % (fno, line))
        for ins in epi:
            w("\t%s\n" % ins)
        w(".LFE%d:\n\t.size %s, .-%s\n" % (i, name, name))
    w(".Lu%d_hi:\n" % units[-1])
    # data objects; a third of the .data and .rodata ones of 8 bytes or more
    # are tables of function pointers (R_AARCH64_RELATIVE outside the table)
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
            w("\t.type %s, %%object\n%s:\n" % (name, name))
            if kind == 1:
                w("\t.zero %d\n" % sz)
            elif sz >= 8 and mix(i, 15) % 3 == 0:
                for k in range(sz // 8):
                    w("\t.8byte %s\n" % cu_funcs[mix(i * 8 + k, 16) % len(cu_funcs)])
            else:
                w("\t.fill %d, 1, 0x%x\n" % (sz, mix(i, 6) & 0xff))
            w("\t.size %s, %d\n" % (name, sz))
    w(gcc_dwarf(units, lo, hi, ARM_FUNCS_PER_UNIT,
                lambda u: ARM_PRODUCER_NOTRACE if arm_notrace_unit(u) else ARM_PRODUCER,
                tree_bytes, ".8byte"))
    src = os.path.join(workdir, "a%04d.s" % cu)
    obj = os.path.join(workdir, "a%04d.o" % cu)
    with open(src, "w") as f:
        f.write("".join(out))
    subprocess.run([ARM_AS, "-o", os.path.basename(obj), os.path.basename(src)],
                   check=True, cwd=workdir)
    os.unlink(src)
    return obj, sites


def unit_name(u):
    return "%s/%s_%s.c" % (PREFIXES[u % len(PREFIXES)], NOUNS[(u // 3) % len(NOUNS)], u)


# --- DWARF as GCC writes it, at a kernel's size -----------------------------
#
# A distribution's vmlinux is mostly DWARF: Debian's 6.12 x86_64 one carries
# 200 MB of .debug_info in 2,401 units (80 KB each on average: the types of
# every header a file includes), 6 MB of .debug_abbrev (a table of ~150
# entries per unit, the unit's own entry near the end, as GCC numbers them by
# use), 30 MB of location lists, 4 MB of range lists.  The images carry the
# same: per unit a DW_TAG_compile_unit (DW_AT_producer naming the flags,
# DW_AT_name and DW_AT_comp_dir in .debug_line_str, DW_AT_low_pc 0 and
# DW_AT_ranges into .debug_rnglists, DW_AT_stmt_list), a tree of type and
# declaration DIEs (structures and their members, typedefs, pointers,
# function declarations and their parameters, variables), then a
# DW_TAG_subprogram per function; .debug_aranges; a line table from the .loc
# directives.  The type trees are binary (.incbin), one of DWARF_BLOBS per
# unit, sized so that the file is about 345 MB.

DWARF_FILL_ABBREVS = 140        # entries before the ones used, as in GCC's tables
DWARF_BLOBS = 8                 # distinct type trees

# (attribute, form) pairs of the entries no DIE here uses (the table's bulk)
_FILL_ATTRS = [(0x03, 0x0e), (0x03, 0x08), (0x3a, 0x0b), (0x3b, 0x05), (0x39, 0x0b),
               (0x49, 0x13), (0x38, 0x0b), (0x02, 0x18), (0x02, 0x17), (0x2137, 0x17),
               (0x11, 0x01), (0x12, 0x07), (0x31, 0x13), (0x7d, 0x01), (0x7f, 0x13),
               (0x7e, 0x18), (0x1c, 0x0d), (0x3f, 0x19), (0x27, 0x19), (0x34, 0x19),
               (0x01, 0x13), (0x2f, 0x0b), (0x87, 0x19), (0x20, 0x0b)]
_FILL_TAGS = [0x0d, 0x05, 0x34, 0x0b, 0x1d, 0x48, 0x49, 0x16, 0x13, 0x17, 0x04, 0x28,
              0x01, 0x21, 0x0f, 0x26, 0x35, 0x15, 0x2e, 0x0a, 0x18, 0x1d]

# the entries the type trees use, after the filler: (tag, children, [(attr, form)])
_T = DWARF_FILL_ABBREVS
AB_BASE, AB_STRUCT, AB_MEMBER, AB_TYPEDEF, AB_PTR, AB_FDECL, AB_PARM, AB_VAR, AB_CONST = \
    range(_T + 1, _T + 10)
AB_SUB_EXT, AB_SUB_STATIC, AB_CU = _T + 10, _T + 11, _T + 12
_TREE_ABBREVS = [
    (AB_BASE, 0x24, 0, [(0x0b, 0x0b), (0x3e, 0x0b), (0x03, 0x08)]),
    (AB_STRUCT, 0x13, 1, [(0x03, 0x08), (0x0b, 0x05), (0x3a, 0x0b), (0x3b, 0x05),
                          (0x39, 0x0b), (0x01, 0x13)]),
    (AB_MEMBER, 0x0d, 0, [(0x03, 0x08), (0x3a, 0x0b), (0x3b, 0x05), (0x39, 0x0b),
                          (0x49, 0x13), (0x38, 0x05)]),
    (AB_TYPEDEF, 0x16, 0, [(0x03, 0x08), (0x3a, 0x0b), (0x3b, 0x05), (0x39, 0x0b),
                           (0x49, 0x13)]),
    (AB_PTR, 0x0f, 0, [(0x0b, 0x21, 8), (0x49, 0x13)]),
    (AB_FDECL, 0x2e, 1, [(0x3f, 0x19), (0x03, 0x08), (0x3a, 0x0b), (0x3b, 0x05),
                         (0x39, 0x0b), (0x27, 0x19), (0x49, 0x13), (0x3c, 0x19),
                         (0x01, 0x13)]),
    (AB_PARM, 0x05, 0, [(0x49, 0x13)]),
    (AB_VAR, 0x34, 0, [(0x03, 0x08), (0x3a, 0x0b), (0x3b, 0x05), (0x39, 0x0b),
                       (0x49, 0x13), (0x3f, 0x19), (0x3c, 0x19)]),
    (AB_CONST, 0x26, 0, [(0x49, 0x13)]),
]
# header (12) + the unit DIE: code (2), producer, language, name, comp_dir,
# ranges, low_pc, stmt_list: where the type tree starts in every unit
DWARF_TREE_AT = 12 + 2 + 4 + 1 + 4 + 4 + 4 + 8 + 4


def _uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def dwarf_abbrev_table():
    """One unit's .debug_abbrev table, as bytes (the same for every unit)."""
    rng = random.Random(SEED + 99)
    out = bytearray()
    for code in range(1, DWARF_FILL_ABBREVS + 1):
        out += _uleb(code) + _uleb(rng.choice(_FILL_TAGS)) + bytes([rng.randrange(2)])
        for at, form in rng.sample(_FILL_ATTRS, rng.randrange(2, 9)):
            out += _uleb(at) + _uleb(form)
        if rng.randrange(6) == 0:       # an implicit constant, as GCC uses them
            out += _uleb(0x3a) + _uleb(0x21) + _sleb(rng.randrange(-3, 200))
        out += b"\0\0"
    for ent in _TREE_ABBREVS:
        code, tag, ch, attrs = ent
        out += _uleb(code) + _uleb(tag) + bytes([ch])
        for a in attrs:
            out += _uleb(a[0]) + _uleb(a[1])
            if a[1] == 0x21:
                out += _sleb(a[2])
        out += b"\0\0"
    # subprograms (external, static): name strp, low_pc addr, high_pc data8
    for code, ext in ((AB_SUB_EXT, True), (AB_SUB_STATIC, False)):
        out += _uleb(code) + _uleb(0x2e) + b"\0"
        if ext:
            out += _uleb(0x3f) + _uleb(0x19)
        out += _uleb(0x03) + _uleb(0x0e) + _uleb(0x11) + _uleb(0x01) + \
            _uleb(0x12) + _uleb(0x07) + b"\0\0"
    # the unit: producer strp, language data1, name line_strp, comp_dir
    # line_strp, ranges sec_offset, low_pc addr, stmt_list sec_offset
    out += _uleb(AB_CU) + _uleb(0x11) + b"\1"
    for at, form in ((0x25, 0x0e), (0x13, 0x0b), (0x03, 0x1f), (0x1b, 0x1f), (0x55, 0x17),
                     (0x11, 0x01), (0x10, 0x17)):
        out += _uleb(at) + _uleb(form)
    out += b"\0\0\0"
    return bytes(out)


def dwarf_tree(k, size):
    """Type tree k: DIEs of about `size` bytes, their references relative to a
    unit whose tree starts at DWARF_TREE_AT."""
    rng = random.Random(SEED * 7 + k * 1000 + size)
    out = bytearray()
    types = []

    def at():
        return DWARF_TREE_AT + len(out)

    def name(*parts):
        return ("_".join(parts) + "\0").encode()

    def u32(v):
        return struct.pack("<I", v)

    for nm, sz, enc in (("char", 1, 8), ("int", 4, 5), ("long int", 8, 5),
                        ("long unsigned int", 8, 7), ("_Bool", 1, 2), ("short int", 2, 5)):
        types.append(at())
        out += _uleb(AB_BASE) + bytes([sz, enc]) + nm.encode() + b"\0"
    n = 0
    while len(out) < size:
        n += 1
        kind = rng.randrange(10)
        noun, pre = rng.choice(NOUNS), rng.choice(PREFIXES)
        if kind < 4:
            # struct with members; DW_AT_sibling is patched once its end is known
            start = len(out)
            types.append(at())
            out += _uleb(AB_STRUCT) + name(pre, noun, str(n)) + struct.pack(
                "<HBHB", rng.randrange(8, 4096), rng.randrange(1, 20),
                rng.randrange(1, 3000), rng.randrange(1, 60))
            sib = len(out)
            out += u32(0)
            off = 0
            for m in range(rng.randrange(3, 24)):
                out += _uleb(AB_MEMBER) + name(rng.choice(NOUNS), str(m)) + struct.pack(
                    "<BHB", rng.randrange(1, 20), rng.randrange(1, 3000),
                    rng.randrange(1, 60)) + u32(rng.choice(types)) + struct.pack("<H", off)
                off += 8
            out += b"\0"
            struct.pack_into("<I", out, sib, DWARF_TREE_AT + len(out))
            del start
        elif kind < 6:
            t = rng.choice(types)
            types.append(at())
            out += _uleb(AB_PTR if kind == 4 else AB_CONST) + u32(t)
        elif kind == 6:
            types.append(at())
            out += _uleb(AB_TYPEDEF) + name(pre, noun, "t", str(n)) + struct.pack(
                "<BHB", rng.randrange(1, 20), rng.randrange(1, 3000),
                rng.randrange(1, 60)) + u32(rng.choice(types))
        elif kind < 9:
            out += _uleb(AB_FDECL) + name(pre, rng.choice(VERBS), noun, str(n)) + struct.pack(
                "<BHB", rng.randrange(1, 20), rng.randrange(1, 3000),
                rng.randrange(1, 60)) + u32(rng.choice(types))
            sib = len(out)
            out += u32(0)
            for _ in range(rng.randrange(0, 5)):
                out += _uleb(AB_PARM) + u32(rng.choice(types))
            out += b"\0"
            struct.pack_into("<I", out, sib, DWARF_TREE_AT + len(out))
        else:
            out += _uleb(AB_VAR) + name(pre, noun, "var", str(n)) + struct.pack(
                "<BHB", rng.randrange(1, 20), rng.randrange(1, 3000),
                rng.randrange(1, 60)) + u32(rng.choice(types))
    return bytes(out)


def write_dwarf_inputs(workdir, tree_bytes):
    """The abbreviation table and the type trees, for .incbin."""
    with open(os.path.join(workdir, "abbrev.bin"), "wb") as f:
        f.write(dwarf_abbrev_table())
    for k in range(DWARF_BLOBS):
        with open(os.path.join(workdir, "tree%d_%d.bin" % (k, tree_bytes)), "wb") as f:
            f.write(dwarf_tree(k, tree_bytes))


def gcc_dwarf(units, lo, hi, funcs_per_unit, producer_of, tree_bytes, addr_op):
    """The DWARF sections of one source, its units as GCC writes them (see
    above).  units: the unit numbers; functions [lo, hi); producer_of(u); the
    labels .Lu<u>_lo/.Lu<u>_hi around each unit's code and .LFB<i>/.LFE<i>
    around each function are in the source."""
    out = []
    w = out.append
    strs, lstrs = {}, {}

    def strp(text, table, prefix):
        if text not in table:
            table[text] = ".L%s%d" % (prefix, len(table))
        return "\t.4byte %s\n" % table[text]

    w("\t.section .debug_line,\"\",@progbits\n.Ldebug_line0:\n")
    w("\t.section .debug_abbrev,\"\",@progbits\n")
    for u in units:
        w(".Labbrev%d:\n\t.incbin \"abbrev.bin\"\n" % u)
    w("\t.section .debug_info,\"\",@progbits\n")
    for u in units:
        f0 = max(lo, u * funcs_per_unit)
        f1 = min(hi, (u + 1) * funcs_per_unit)
        w(".Lcu%d:\n\t.4byte .Lcu%d_e-.Lcu%d_s\n.Lcu%d_s:\n" % (u, u, u, u))
        w("\t.2byte 5\n\t.byte 1\n\t.byte 8\n\t.4byte .Labbrev%d\n" % u)
        w("\t.uleb128 %d\n" % AB_CU)
        w(strp(producer_of(u), strs, "ASF"))
        w("\t.byte 0x1d\n")
        w(strp(unit_name(u), lstrs, "LASF"))
        w(strp("/bench/linux", lstrs, "LASF"))
        w("\t.4byte .Lrng%d\n\t.8byte 0\n\t.4byte .Ldebug_line0\n" % u)
        w("\t.incbin \"tree%d_%d.bin\"\n" % (u % DWARF_BLOBS, tree_bytes))
        for i in range(f0, f1):
            w("\t.uleb128 %d\n" % (AB_SUB_STATIC if is_static_func(i) else AB_SUB_EXT))
            w(strp(func_name(i), strs, "ASF"))
            w("\t.8byte .LFB%d\n\t.8byte .LFE%d-.LFB%d\n" % (i, i, i))
        w("\t.byte 0\n.Lcu%d_e:\n" % u)
    # two ranges per unit, split at its middle function (a kernel unit's
    # .text and .init.text, say): DW_AT_ranges, not low_pc/high_pc
    w("\t.section .debug_rnglists,\"\",@progbits\n")
    w("\t.4byte .Lrl_e-.Lrl_s\n.Lrl_s:\n\t.2byte 5\n\t.byte 8\n\t.byte 0\n\t.4byte 0\n")
    spans = {}
    for u in units:
        f0 = max(lo, u * funcs_per_unit)
        f1 = min(hi, (u + 1) * funcs_per_unit)
        mid = ".LFB%d" % ((f0 + f1) // 2)
        spans[u] = ((".Lu%d_lo" % u, mid), (mid, ".Lu%d_hi" % u))
        w(".Lrng%d:\n" % u)
        for a, b in spans[u]:
            w("\t.byte 6\n\t%s %s\n\t%s %s\n" % (addr_op, a, addr_op, b))
        w("\t.byte 0\n")
    w(".Lrl_e:\n")
    w("\t.section .debug_aranges,\"\",@progbits\n")
    for u in units:
        w("\t.4byte 0x3c\n\t.2byte 2\n\t.4byte .Lcu%d\n\t.byte 8\n\t.byte 0\n"
          "\t.2byte 0\n\t.2byte 0\n" % u)
        for a, b in spans[u]:
            w("\t%s %s\n\t%s %s-%s\n" % (addr_op, a, addr_op, b, a))
        w("\t.8byte 0\n\t.8byte 0\n")
    w("\t.section .debug_str,\"MS\",@progbits,1\n")
    for text, lab in strs.items():
        w("%s:\n\t.string \"%s\"\n" % (lab, text))
    w("\t.section .debug_line_str,\"MS\",@progbits,1\n")
    for text, lab in lstrs.items():
        w("%s:\n\t.string \"%s\"\n" % (lab, text))
    return "".join(out)


ARM_ALT_FUNCS = 16
# Hand-written code that begins with BTI C and two NOPs (the kernel's
# alternatives): the area after the symbol without the literal before it.  Only
# the DWARF (the assembler's unit) says it is no site; record reads it here as on
# a distribution's arm64 vmlinux.
ARM_RT_SRC = """\
	.section .head.text, "ax"
	.globl primary_entry
	.type primary_entry, %function
primary_entry:
	bti c
	b primary_entry
	.size primary_entry, .-primary_entry
	.text
	.p2align 3
	.globl ftrace_caller
	.type ftrace_caller, %function
ftrace_caller:
	bti c
	stp x29, x30, [sp, #-16]!
	mov x29, sp
	ldp x29, x30, [sp], #16
	ret x9
	.size ftrace_caller, .-ftrace_caller
""" + "".join("""\
	.p2align 3
	.globl el1_alt_%d
	.type el1_alt_%d, %%function
el1_alt_%d:
	bti c
	nop
	nop
	ret
	.size el1_alt_%d, .-el1_alt_%d
""" % ((k,) * 5) for k in range(ARM_ALT_FUNCS))

# The parts of arch/arm64/kernel/vmlinux.lds.S that matter here.
ARM_LDS = """\
OUTPUT_ARCH(aarch64)
ENTRY(_text)
SECTIONS
{
	/DISCARD/ : {
		*(.interp .dynamic)
		*(.dynsym .dynstr .hash .gnu.hash)
		*(.note.GNU-stack) *(.comment)
	}
	. = 0x%x;
	.head.text : { _text = .; KEEP(*(.head.text)) }
	.text : ALIGN(0x10000) {
		_stext = .;
		*(.text .text.*)
	}
	. = ALIGN(0x10000);
	_etext = .;
	.rodata : ALIGN(4096) { __start_rodata = .; *(.rodata .rodata.*) }
	. = ALIGN(0x10000);
	__init_begin = .;
	.init.data : ALIGN(16) {
		. = ALIGN(8);
		__start_mcount_loc = .;
		KEEP(*(__mcount_loc))
		KEEP(*(__patchable_function_entries))
		__stop_mcount_loc = .;
	}
	.rela.dyn : ALIGN(8) {
		__rela_start = .;
		*(.rela .rela*)
		__rela_end = .;
	}
	. = ALIGN(0x10000);
	__init_end = .;
	_data = .;
	_sdata = .;
	.data : ALIGN(4096) { *(.data .data.*) }
	_edata = .;
	.bss : ALIGN(4096) { __bss_start = .; *(.bss .bss.*) *(COMMON) __bss_stop = .; }
	_end = .;
}
"""


def build_arm64(nfuncs, workdir, out_elf, jobs, tree_bytes):
    """Assemble and link the arm64 relocatable image; return its site count."""
    nobjs = int(nfuncs * ARM_OBJECTS_PER_FUNC)
    ncu = (nfuncs + FUNCS_PER_CU - 1) // FUNCS_PER_CU
    tasks = []
    for cu in range(ncu):
        lo, hi = cu * FUNCS_PER_CU, min(nfuncs, (cu + 1) * FUNCS_PER_CU)
        olo, ohi = nobjs * cu // ncu, nobjs * (cu + 1) // ncu
        tasks.append((cu, lo, hi, olo, ohi, nfuncs, nobjs, workdir, tree_bytes))
    write_dwarf_inputs(workdir, tree_bytes)
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        res = list(ex.map(gen_cu_arm64, tasks))
    with open(os.path.join(workdir, "rt.s"), "w") as f:
        f.write(ARM_RT_SRC)
    run([ARM_AS, "-g", "--debug-prefix-map", workdir + "=/bench", "-o", "rt.o", "rt.s"],
        cwd=workdir)
    lds = os.path.join(workdir, "vmlinux.lds")
    with open(lds, "w") as f:
        f.write(ARM_LDS % ARM_TEXT_BASE)
    objs = [os.path.join(workdir, "rt.o")] + [o for o, _ in res]
    run([ARM_LD, "-EL", "-maarch64elf", "--no-undefined", "-X", "-shared", "-Bsymbolic",
         "-z", "notext", "--no-apply-dynamic-relocs", "--no-warn-rwx-segments",
         "-T", lds, "-o", out_elf] + objs)
    for o in objs:
        os.unlink(o)
    for n in ("rt.s", "vmlinux.lds"):
        os.unlink(os.path.join(workdir, n))
    return sum(s for _, s in res)


def check_arm64(path, nfuncs):
    """Check the arm64 image with readelf: every slot of __start_mcount_loc ..
    __stop_mcount_loc is 0 in the file and covered by exactly one
    R_AARCH64_RELATIVE in .rela.dyn, and the addends are func-8 of exactly the
    traced functions, sorted.  Returns facts for IMAGE.json."""
    out = subprocess.run(["readelf", "-sW", path], check=True, capture_output=True,
                         text=True).stdout
    syms = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 8 and p[0].endswith(":") and p[0][:-1].isdigit():
            syms.setdefault(p[7], (int(p[1], 16), p[3]))
    start, stop = syms["__start_mcount_loc"][0], syms["__stop_mcount_loc"][0]
    nslots = (stop - start) // 8
    secs = sections(path)
    sec = [(n, v) for n, v in secs.items() if v[0] <= start < v[0] + v[2] and v[0]]
    if len(sec) != 1:
        raise SystemExit("gen.py: %s: no single section holds __start_mcount_loc" % path)
    secname, (saddr, soff, _) = sec[0]
    with open(path, "rb") as f:
        f.seek(soff + start - saddr)
        slots = f.read(stop - start)
    nonzero = sum(1 for k in range(nslots) if slots[8 * k:8 * k + 8] != bytes(8))
    out = subprocess.run(["readelf", "-rW", path], check=True, capture_output=True,
                         text=True).stdout
    relative, in_table, other = 0, {}, 0
    cur = None
    for line in out.splitlines():
        if line.startswith("Relocation section"):
            cur = line.split("'")[1]
            continue
        p = line.split()
        if cur != ".rela.dyn" or len(p) < 4 or not p[0].isalnum() or p[0] == "Offset":
            continue
        if p[2] != "R_AARCH64_RELATIVE":
            other += 1
            continue
        relative += 1
        off = int(p[0], 16)
        a = p[-1]
        add = (-int(a[1:], 16) if a.startswith("-") else int(a.lstrip("+"), 16)) & (2 ** 64 - 1)
        if start <= off < stop:
            if (off - start) % 8 or off in in_table:
                raise SystemExit("gen.py: %s: bad relocation at 0x%x" % (path, off))
            in_table[off] = add
    want = sorted(syms[func_name(i)][0] - 8 for i in range(nfuncs) if not arm_notrace(i))
    got = [in_table.get(start + 8 * k) for k in range(nslots)]
    problems = []
    if nonzero:
        problems.append("%d of %d slots are not 0" % (nonzero, nslots))
    if len(in_table) != nslots:
        problems.append("%d of %d slots have an R_AARCH64_RELATIVE" % (len(in_table), nslots))
    if other:
        problems.append("%d .rela.dyn relocations are not R_AARCH64_RELATIVE" % other)
    if got != want:
        problems.append("the addends are not func-8 of the %d traced functions, in order"
                        % len(want))
    if problems:
        raise SystemExit("gen.py: %s: %s" % (path, "; ".join(problems)))
    return {"table": "__start_mcount_loc..__stop_mcount_loc in %s" % secname,
            "table_addr": "0x%x" % start, "mcount_loc_entries": nslots,
            "table_slots_zero": True,
            "rela_dyn_relative": relative,
            "rela_dyn_relative_in_table": len(in_table),
            "traced_functions": len(want)}


def run(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def build_base(nfuncs, workdir, out_elf, jobs, tree_bytes):
    """Assemble and link an image with nfuncs functions; return its site count."""
    nobjs = int(nfuncs * OBJECTS_PER_FUNC)
    ncu = (nfuncs + FUNCS_PER_CU - 1) // FUNCS_PER_CU
    tasks = []
    for cu in range(ncu):
        lo, hi = cu * FUNCS_PER_CU, min(nfuncs, (cu + 1) * FUNCS_PER_CU)
        olo, ohi = nobjs * cu // ncu, nobjs * (cu + 1) // ncu
        tasks.append((cu, lo, hi, olo, ohi, nfuncs, nobjs, workdir, tree_bytes))
    write_dwarf_inputs(workdir, tree_bytes)
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


def strip_debug(src, dst, objcopy="objcopy"):
    """dst = src without its DWARF (objcopy --strip-debug), as a distribution
    ships the image beside its -dbg package."""
    tmp = dst + ".tmp"
    run([objcopy, "--strip-debug", src, tmp])
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
    dbg = sum(v[2] for k, v in secs.items() if k.startswith(".debug_"))
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
        "mcount_loc_entries": secs["__mcount_loc"][2] // 8 if "__mcount_loc" in secs else None,
        "dwarf_bytes": dbg,
        "debug_info_bytes": secs.get(".debug_info", (0, 0, 0))[2],
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
    names = ["vmlinux-50k", "vmlinux-50k-nodebug", "vmlinux-5k", "vmlinux-50k-findings",
             "vmlinux-arm64-50k", "vmlinux-arm64-50k-nodebug"]
    if not a.force and os.path.exists(stampfile) and open(stampfile).read().strip() == stamp \
            and all(os.path.exists(os.path.join(a.out, n)) for n in names):
        print("gen.py: images in %s are up to date" % a.out)
        return 0
    if os.path.exists(stampfile):
        os.unlink(stampfile)
    for n in os.listdir(a.out):         # the images of an older gen.py
        if n.startswith("vmlinux-") or n.startswith("base-"):
            os.unlink(os.path.join(a.out, n))

    t0 = time.perf_counter()
    work = os.path.join(a.out, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    o = lambda n: os.path.join(a.out, n)

    print("gen.py: assembling 50,000 functions and %d MB of DWARF (%d jobs)..."
          % (TREE_50K * 2000 // 10 ** 6, a.jobs), flush=True)
    sites50 = build_base(50000, work, o("vmlinux-50k"), a.jobs, TREE_50K)
    print("gen.py: %.1f s; assembling 5,000 functions..." % (time.perf_counter() - t0),
          flush=True)
    sites5 = build_base(5000, work, o("vmlinux-5k"), a.jobs, TREE_5K)
    print("gen.py: %.1f s; assembling 50,000 arm64 functions (%s, %d jobs)..."
          % (time.perf_counter() - t0, ARM_AS, a.jobs), flush=True)
    sites_arm = build_arm64(50000, work, o("vmlinux-arm64-50k"), a.jobs, TREE_50K)
    arm_facts = check_arm64(o("vmlinux-arm64-50k"), 50000)
    if arm_facts["traced_functions"] != sites_arm:
        raise SystemExit("gen.py: arm64: %d sites emitted, %d traced functions"
                         % (sites_arm, arm_facts["traced_functions"]))
    print("gen.py: %.1f s; the stripped twins and the findings..."
          % (time.perf_counter() - t0), flush=True)
    make_findings(o("vmlinux-50k"), o("vmlinux-50k-findings"), work)
    strip_debug(o("vmlinux-50k"), o("vmlinux-50k-nodebug"))
    strip_debug(o("vmlinux-arm64-50k"), o("vmlinux-arm64-50k-nodebug"), ARM_OBJCOPY)
    shutil.rmtree(work)

    note = ("DWARF as GCC writes it (gen.py's gcc_dwarf): 2,000 units (5k: 200) with "
            "producer, ranges, a type tree and a subprogram per function")
    nodebug = "the image above, objcopy --strip-debug"
    describe(o("vmlinux-50k"), 50000, sites50, {"note": note})
    describe(o("vmlinux-50k-nodebug"), 50000, sites50, {"note": nodebug})
    describe(o("vmlinux-5k"), 5000, sites5, {"note": note})
    describe(o("vmlinux-50k-findings"), 50000, sites50,
             {"note": note, "stale_entries": FINDINGS, "missing_sites": FINDINGS})
    arm_facts.update({
        "arch": "arm64", "type": "ET_DYN (relocatable kernel)",
        "link": "%s -shared -Bsymbolic -z notext --no-apply-dynamic-relocs -T vmlinux.lds"
                % ARM_LD,
        "layout": "-fpatchable-function-entry=4,2 -falign-functions=8 (CALL_OPS)",
        "asm_alt_functions": ARM_ALT_FUNCS,
        "dwarf_units": (50000 + ARM_FUNCS_PER_UNIT - 1) // ARM_FUNCS_PER_UNIT + 1,
        "note": note})
    describe(o("vmlinux-arm64-50k"), 50000, sites_arm, arm_facts)
    # stripping must not have moved anything: check the stripped file again
    arm_facts = check_arm64(o("vmlinux-arm64-50k-nodebug"), 50000)
    arm_facts.update({"note": nodebug, "asm_alt_functions": ARM_ALT_FUNCS})
    describe(o("vmlinux-arm64-50k-nodebug"), 50000, sites_arm, arm_facts)
    with open(stampfile, "w") as f:
        f.write(stamp + "\n")
    print("gen.py: done in %.1f s" % (time.perf_counter() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
