#!/bin/bash
# tests/kernel/ppc64le.sh - issue 19's proof: a powerpc64le kernel, its
# table cleared and written back by patchsite, against the kernel's own
# table and objdump as the oracles, booted under qemu-system-ppc64.
#
# The kernel: Debian's linux-source-6.12 cross-built with Debian's GCC 12
# (gcc-powerpc64le-linux-gnu), out of tree (KERNEL_WORK/powerpc), lib.sh's
# ppc64le_config (every option asserted =y): 64-bit little-endian Book3S,
# pseries, RELOCATABLE (linked -pie: the table's values are also the
# addends of R_PPC64_RELATIVE relocations in .rela.dyn), ftrace with the
# start-up tests.  Debian's GCC 12 fails the kernel's
# -fpatchable-function-entry check, so the flavour is -pg -mprofile-kernel:
# `mflr r0; bl _mcount` at each function's local entry point (after the two
# instructions of the global entry point's TOC setup where it has one),
# the table written by objtool, sorted at boot (no BUILDTIME_MCOUNT_SORT).
#
#   0. the flavour, from objdump alone: every `bl _mcount` inside a sized
#      function is a table entry and every table entry is one, each right
#      after `mflr r0`, that `mflr r0` at its function's local entry point
#      (readelf's localentry);
#   1. as built, record and audit against the kernel's table under the
#      sorttable rule (tests/kernel/mcounttab.py, not patchsite):
#      tests/kernel/ppc64le-table.sh, which `make kernel-check` runs on
#      this kernel (KERNEL_WORK/powerpc/vmlinux) right after this script;
#   2. the table cleared (slots and .rela.dyn addends zero): audit names
#      every site missing, nothing stale (exit 1); record --in-place
#      refills it (exit 0):
#      the kernel as built but for the table and its relocations, where it
#      holds the sites in ascending order (the built table is in link
#      order: the kernel sorts it at boot), then a zero slot, its relocation
#      R_PPC64_NONE and addend 0, for each weak leftover; the values in
#      place and as the addends (ld writes both: powerpc64le's policy in
#      arch/powerpc64le.c); audit of it is clean, and
#      record --in-place again changes nothing; on the kernel as built,
#      record --in-place writes the same table with the values in place and
#      changes nothing else;
#   3. a wrong table (every entry moved 4 bytes back, onto the `mflr r0`):
#      audit names every site missing (exit 1).
# Booted under qemu-system-ppc64 -M pseries (TCG, qemu's VOF firmware,
# -kernel vmlinux) with an initramfs whose /init (tests/kernel/tracefs-init.c)
# switches the function tracer on over every function and counts
# enabled_functions (lib.sh's initramfs):
#   4. as built: the ftrace self tests PASSED, none FAILED, no ftrace bug,
#      thousands of functions enabled, and available_filter_functions is
#      every table entry outside .init.text (the kernel takes its table as
#      built, weak leftovers and all);
#   5. cleared and refilled by record --in-place: the same self tests
#      PASSED, no ftrace bug, and available_filter_functions and
#      enabled_functions are both the kernel's sites outside .init.text;
#   6. the wrong table: the kernel logs "ftrace bug" (ftrace_init_nop finds
#      no `mflr r0` before the entry), fails its self tests and enables no
#      function (so this test can fail).
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/ppc64le.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
X=$W/powerpc

proof_start "$OUT/ppc64le"

# --- the kernel -------------------------------------------------------------
# (configured again when the cached configuration misses an option)
kernel_configured ppc64le "$X" "$PPC64LE_CONFIG_WANT" "$KERNEL_TRIM_OFF" ppc64le_config "$X"
kernel_built ppc64le ppc64le powerpc "$X" vmlinux
V=$T/built.vmlinux
cp "$X/vmlinux" "$V"
[ "$(readelf -h "$V" | sed -n 's/^ *Machine: *//p')" = "PowerPC64" ] || die "$V is not a PowerPC64 image"

table_oracle "$V" "$T/built.values"

# 0. the flavour, from objdump and readelf
powerpc64le-linux-gnu-objdump -d --no-show-raw-insn "$V" >"$T/disasm" || die "objdump -d failed"
readelf -sW "$V" >"$T/symbols" || die "readelf -s failed"
if python3 - "$T/disasm" "$T/symbols" "$T/oracle" >"$T/flavour" 2>&1 <<'EOF'; then
import bisect, re, sys
insn = {}
for l in open(sys.argv[1]):
    m = re.match(r"\s*([0-9a-f]+):\s+(\S.*?)\s*$", l)
    if m:
        insn[int(m.group(1), 16)] = m.group(2)
funcs = []                     # (start, size, local entry offset)
for l in open(sys.argv[2]):
    f = l.split()
    if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[2], 0) > 0:
        m = re.search(r"\[<localentry>: (\d+)\]", l)
        funcs.append((int(f[1], 16), int(f[2], 0), int(m.group(1)) if m else 0))
funcs.sort()
starts = [a for a, _, _ in funcs]
def func(v):                   # the sized function v is in, or None
    i = bisect.bisect_right(starts, v) - 1
    while i >= 0:
        a, n, _ = funcs[i]
        if a <= v < a + n:
            return funcs[i]
        if a + n + (1 << 20) < v:
            return None
        i -= 1
    return None
oracle = set(int(l, 16) for l in open(sys.argv[3]))
calls = set(a for a, t in insn.items() if re.fullmatch(r"bl\s+[0-9a-f]+ <_mcount>", t) and func(a))
bad = []
if calls != oracle:
    bad.append("bl _mcount not in the table: %d, table entries not bl _mcount: %d (%s)" % (
        len(calls - oracle), len(oracle - calls),
        ", ".join(hex(a) for a in sorted(calls ^ oracle)[:5])))
toc = 0
for s in sorted(oracle):
    a, _, le = func(s)
    if insn.get(s - 4) != "mflr    r0":
        bad.append("%#x: no mflr r0 before it (%s)" % (s, insn.get(s - 4)))
    elif s - 4 != a + le:
        bad.append("%#x: mflr r0 at func+%d, local entry +%d" % (s, s - 4 - a, le))
    else:
        toc += le == 8
if bad:
    print("\n".join(bad[:12]))
    sys.exit(1)
print("%d %d" % (len(oracle), toc))
EOF
	read -r nf ntoc <"$T/flavour"
	ok "ppc64le flavour (objdump): each of the $nf bl _mcount in a function is a table entry and each entry is one, after mflr r0 at its local entry point ($ntoc after a TOC setup)"
else
	not_ok "ppc64le flavour (objdump): the table is every mflr r0; bl _mcount at a local entry point" "$T/flavour"
fi

# how many of the values in FILE lie outside .init.text (freed after boot:
# the kernel lists none of its sites)
init_range=$(readelf -SW "$V" | sed -n 's/.* \.init\.text *PROGBITS *\([0-9a-f]*\) [0-9a-f]* \([0-9a-f]*\) .*/\1 \2/p')
[ -n "$init_range" ] || die "no .init.text in the kernel"
live() { # FILE
	python3 -c '
import sys
a, n = (int(x, 16) for x in sys.argv[2].split())
print(sum(1 for l in open(sys.argv[1]) if not a <= int(l, 16) < a + n))' "$1" "$init_range"
}
nlive_built=$(live "$T/built.values")
nlive=$(live "$T/oracle")
# listed LOG N: the boot in LOG listed N functions (available_filter_functions;
# what differs is appended to the log)
listed() {
	[ "$(tracefs_field "$1" available_filter_functions)" = "$2" ] && return 0
	echo "available_filter_functions $(tracefs_field "$1" available_filter_functions), want $2" >>"$1"
	return 1
}

# 2. cleared, refilled
table_cleared "$V" "$T/cleared.vmlinux" "$T/cleared.values"
! cmp -s "$V" "$T/cleared.vmlinux" || die "clearing the table changed nothing"
audit_missing "ppc64le table cleared" "$T/cleared.vmlinux" "$T/cleared.audit" ", nothing stale" \
	"^summary: 0 misaligned, 0 stale, $n missing,"
# table_check IMAGE: IMAGE is the kernel as built ($V) but for the table
# and the .rela.dyn entries of its slots, where it holds the $n sites
# ascending, then a zero slot whose relocation is R_PPC64_NONE with addend 0
# for each entry left (the weak leftovers); each site's relocation
# R_PPC64_RELATIVE with the site as addend, and its value in place too
# (what ld writes: the kernel as built has every value in place).
# Prints "BYTES-CHANGED ZERO-SLOTS", or what is wrong.
table_check() { # IMAGE
	python3 - "$V" "$1" "$T/oracle" <<'PY'
import struct, sys
sys.path.insert(0, "tests/kernel")
import mcounttab
built, image = mcounttab.Image(sys.argv[1]), mcounttab.Image(sys.argv[2])
oracle = [int(l, 16) for l in open(sys.argv[3])]
slots = list(built.slots())
bad = []
may = set()       # the slots, and the r_info and r_addend of their relocations
for s in slots:
    o = built.file_off(s)
    may.update(range(o, o + 8))
    if s in built.relas:
        may.update(range(built.relas[s] + 8, built.relas[s] + 24))
a, b = built.data, image.data
if len(a) != len(b):
    bad.append("size %d, built %d" % (len(b), len(a)))
diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
out = [i for i in diff if i not in may]
if out:
    bad.append("%d bytes differ outside the table and its relocations, the first at file offset %#x"
               % (len(out), out[0]))
want = oracle + [0] * (len(slots) - len(oracle))
for s, v in zip(slots, want):
    if s not in built.relas:
        bad.append("slot %#x has no relocation in the kernel as built" % s)
        break
    info, add = struct.unpack_from("<QQ", b, built.relas[s] + 8)
    if (v and (info & 0xFFFFFFFF != mcounttab.R_PPC64_RELATIVE or add != v)) or (not v and (info & 0xFFFFFFFF or add)):
        bad.append("slot %d (%#x): relocation type %d addend %#x, want %s" % (
            slots.index(s), s, info & 0xFFFFFFFF, add,
            "R_PPC64_RELATIVE %#x (the sites ascending)" % v if v else "R_PPC64_NONE, addend 0"))
        break
got = [struct.unpack_from("<Q", b, built.file_off(s))[0] for s in slots]
if got != want:
    i = next(i for i in range(len(want)) if got[i] != want[i])
    bad.append("slot %d holds %#x in place, want %#x" % (i, got[i], want[i]))
print("\n".join(bad) or "%d %d" % (len(diff), len(slots) - len(oracle)))
sys.exit(1 if bad else 0)
PY
}

R=$T/refilled.vmlinux
refilled=0
cp "$T/cleared.vmlinux" "$R"
ps_run -e "$T/refill.err" 0 "$T/refill.err" -- record --in-place "$R"
rc=$ps_rc
if [ "$rc" -eq 0 ] && table_check "$R" >"$T/refill.check" 2>&1; then
	read -r nd nz <"$T/refill.check"
	refilled=1
	ok "ppc64le table cleared: record --in-place (exit 0) gives the kernel as built but for $nd bytes of its table and relocations: the $n sites ascending, in place and as the addends, then $nz zero slots (R_PPC64_NONE) for the weak leftovers"
else
	{
		echo "record --in-place exit status $rc"
		cat "$T/refill.err"
	} >>"$T/refill.check"
	not_ok "ppc64le table cleared: record --in-place gives the kernel as built, its table the sites ascending" \
		"$T/refill.check"
fi
audit_clean "ppc64le refilled" "$R" "$T/refilled.audit"
A=$T/again.vmlinux
cp "$V" "$A"
ps_run -e "$T/again.err" 0 "$T/again.err" -- record --in-place "$A"
rc=$ps_rc
if [ "$rc" -eq 0 ] && table_check "$A" >"$T/again.check" 2>&1; then
	read -r nd nz <"$T/again.check"
	ok "ppc64le as built: record --in-place (exit 0) changes $nd bytes, all in the table and its relocations: the $n sites ascending, values in place as ld wrote them, $nz zero slots (R_PPC64_NONE)"
else
	{
		echo "record --in-place exit status $rc"
		cat "$T/again.err"
	} >>"$T/again.check"
	not_ok "ppc64le as built: record --in-place sorts the table and drops the weak leftovers, nothing else" \
		"$T/again.check"
fi
cp "$R" "$T/twice.vmlinux"
ps_run -e "$T/twice.err" 0 "$T/twice.err" -- record --in-place "$T/twice.vmlinux"
rc=$ps_rc
if [ "$rc" -eq 0 ] && [ "$refilled" = 1 ] && cmp -s "$R" "$T/twice.vmlinux"; then
	ok "ppc64le refilled: record --in-place again changes nothing (exit 0, byte for byte)"
else
	{
		echo "record --in-place exit status $rc"
		cmp -l "$R" "$T/twice.vmlinux" 2>&1 | head -n 5
	} >>"$T/twice.err"
	not_ok "ppc64le refilled: record --in-place again changes nothing" "$T/twice.err"
fi

# 3. the wrong table: every entry 4 bytes back, on the mflr r0
$TAB shift "$V" "$T/wrong.vmlinux" -4 || die "mcounttab.py shift failed"
audit_missing "ppc64le every entry moved onto the mflr r0" "$T/wrong.vmlinux" "$T/wrong.audit"

# --- boots --------------------------------------------------------------------
# two at a time (lib.sh's side, which prints each boot's time), each
# boot's checks read after its boot
phase "record, audit, tables"
initramfs ppc64le "$T/initramfs.cpio"
side built boot_ppc64le "$V" "$T/initramfs.cpio" "$T/built.boot.log" "$BOOT_TIMEOUT"
[ "$refilled" != 1 ] || side refilled boot_ppc64le "$R" "$T/initramfs.cpio" "$T/refilled.boot.log" "$BOOT_TIMEOUT"
side wrong boot_ppc64le "$T/wrong.vmlinux" "$T/initramfs.cpio" "$T/wrong.boot.log" "$BOOT_TIMEOUT"
side_wait built
built_boots ppc64le ", the $nlive_built entries outside .init.text listed" listed "$T/built.boot.log" "$nlive_built"

if [ "$refilled" = 1 ]; then
	side_wait refilled
	if boots_as_built refilled "$nlive" && listed "$T/refilled.boot.log" "$nlive"; then
		ok "ppc64le cleared and refilled by record --in-place boots: the same $nb self tests PASSED, function tracer on $fr functions, each of the $nlive sites outside .init.text (as built $fb: the weak leftovers), no ftrace bug"
	else
		not_ok "ppc64le refilled: the same self tests PASSED and the $nlive sites enabled (got $fr)" \
			"$T/refilled.boot.log"
	fi
else
	not_ok "ppc64le cleared and refilled: boots (no refilled kernel: record --in-place failed or wrote a wrong table)"
fi

side_wait wrong
wrong_boots ppc64le "on the mflr r0" \
	" ($(grep -m1 -o 'expected ([0-9a-f]*) != found ([0-9a-f]*)' "$T/wrong.boot.log" || echo 'no expected/found line'))"

finish
