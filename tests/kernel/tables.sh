#!/bin/bash
# tests/kernel/tables.sh - the sites come from the code, never from the table
# under test: real kernels from Debian's linux-source-6.12, their tables
# cleared, moved and shifted, against the kernel's own table as the oracle.
#
# Kernels:
#   arm64   the two -Os kernels of tests/kernel/call-ops-os.sh (tinyconfig +
#           ftrace: function and graph tracers, dynamic ftrace, start-up
#           tests; DYNAMIC_FTRACE_WITH_CALL_OPS, -fpatchable-function-entry=4,2:
#           the site is the literal at func-8; RELOCATABLE, linked with
#           --no-apply-dynamic-relocs, so the table's values live only in
#           .rela.dyn R_AARCH64_RELATIVE addends), built there if missing:
#           the guard kernel (CALL_OPS with the guard lifted by hand, no
#           patchsite: its table is the kernel's own, sorttable's, and about
#           half its literals are misaligned) for 1-4, and the kernel built
#           with CONFIG_PATCHSITE (padded, no misaligned site; it boots and
#           traces) for 5-7.
#   riscv64 the stock kernel of tests/kernel/riscv-relax.sh (tinyconfig +
#           ftrace, RISCV_ISA_C: -fpatchable-function-entry=4, four c.nop at
#           entry), reused from KERNEL_WORK/out, built if missing.
#
# For each of the guard and riscv64 kernels: the oracle is the kernel's own
# table under the kernel's sorttable rule (tests/kernel/mcounttab.py, which
# is not patchsite), and its misaligned sites mcounttab.py's (arm64; none on
# riscv64), which audit names misaligned, never missing, in every case:
#   1. record on the kernel as built = the oracle; audit finds no missing
#      or misplaced site (riscv64 6.12 keeps the weak leftovers its build
#      does not zero: exactly those are stale);
#   2. the table cleared (slots and addends): audit names every aligned
#      oracle site missing with its flavour; record --in-place writes back
#      the oracle (arm64: --keep-misaligned; without it, exactly the aligned
#      sites); audit of the result finds nothing (arm64: but the misaligned);
#   3. ten entries moved by 4 bytes: each named stale (with the function's
#      real site), each of their aligned sites named missing, no 'shifted'
#      finding;
#   4. every entry moved by one patch-area step (8 bytes: a table recorded
#      for the other layout): every entry stale, every aligned site missing,
#      and one 'shifted' finding that says 8 bytes;
# and the arm64 kernel with CONFIG_PATCHSITE (its table, as its build
# wrote it, the reference for the refill; call-ops-os.sh checks it against
# the compiler's own), booted under qemu-system-aarch64 with an initramfs
# whose /init (tests/kernel/tracefs-init.c) switches the function tracer on
# over every function and counts enabled_functions:
#   5. as built: the self tests PASSED, none FAILED, the boot reached init;
#      thousands of functions enabled, no "ftrace bug";
#   6. cleared and refilled by record --in-place (its table again): the
#      same self tests PASSED, the same number of functions enabled, no
#      "ftrace bug";
#   7. the wrong table (every entry at func+0, what a layout learned from
#      the wrong evidence writes): the boot does not pass them (so this test
#      can fail).
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/tables.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
C=$OUT/call-ops-os

proof_start "$OUT/tables"

# --- the arm64 kernels (call-ops-os.sh's) -------------------------------------
# (in an environment of their own: a KBUILD_DIR or KERNEL_CCACHE of the
# caller's would reach its builds)
if [ ! -f "$C/guard.vmlinux" ] || [ ! -f "$C/patched.vmlinux" ]; then
	env -u KBUILD_DIR -u KERNEL_CCACHE bash tests/kernel/call-ops-os.sh >"$OUT/call-ops-os.log" 2>&1 ||
		die "call-ops-os.sh (which builds the arm64 kernels) failed: see $OUT/call-ops-os.log"
fi
cp "$C/guard.vmlinux" "$T/arm64.vmlinux"
cp "$C/patched.vmlinux" "$T/patched.vmlinux"
cp "$C/patched.Image" "$T/patched.Image"

# --- the riscv64 kernel (riscv-relax.sh's stock one) ------------------------
if [ ! -f "$OUT/stock.vmlinux" ]; then
	bash tests/kernel/riscv-relax.sh >"$OUT/riscv-relax.log" 2>&1 ||
		die "riscv-relax.sh (which builds the riscv64 kernel) failed: see $OUT/riscv-relax.log"
fi
cp "$OUT/stock.vmlinux" "$T/riscv64.vmlinux"

# audit --format=json -> a summary python can assert on
# audit_json IMAGE NAME STATUS -> $T/NAME.audit.json; $rc is audit's exit
# status; when it is not STATUS, check_audit fails without reading the JSON
audit_json() {
	audit_ran=0
	ps_run -e "$T/$2.audit.err" "$3" "$T/$2.audit.json" -- audit --format=json "$1" && audit_ran=1
	rc=$ps_rc
}

# check_audit NAME TEST-NAME PYTHON-ASSERTIONS
#   the assertions see: f (findings), by (kind -> set of addresses, less
#   'misaligned', which must be mis), oracle (set), vals (the damaged
#   table's non-zero values), moved (old values), mis (mcounttab.py's
#   misaligned sites)
check_audit() {
	local name=$1 what=$2 code=$3
	if [ "$audit_ran" != 1 ]; then
		not_ok "$what" "$ps_msg"
	elif python3 - "$T/$name.audit.json" "$T/oracle" "$T/$name.values" "$T/$name.moved" "$T/mis" \
		>"$T/$name.check" 2>&1 <<EOF
import json, sys
def addrs(path):
    try:
        return set(int(l, 16) for l in open(path) if l.strip())
    except FileNotFoundError:
        return set()
d = json.load(open(sys.argv[1]))
f = d["findings"]
by = {}
for x in f:
    by.setdefault(x["kind"], set()).add(int(x["address"], 16))
oracle, vals, moved, mis = addrs(sys.argv[2]), addrs(sys.argv[3]), addrs(sys.argv[4]), addrs(sys.argv[5])
def need(c, msg):
    if not c:
        print(msg); sys.exit(1)
# a misaligned site is named misaligned, whatever the table holds
mf = by.pop('misaligned', set())
need(mf == mis, 'misaligned %d, mcounttab.py %d' % (len(mf), len(mis)))
$code
print("ok")
EOF
	then
		ok "$what"
	else
		not_ok "$what" "$T/$name.check"
	fi
}

image_of() { # VMLINUX IMAGE: as arch/arm64/boot/Makefile makes Image
	aarch64-linux-gnu-objcopy -O binary -R .note -R .note.gnu.build-id -R .comment -S "$1" "$2"
}

for K in arm64 riscv64; do
	V=$T/$K.vmlinux
	: >"$T/mis"
	L=$K mm=""
	if [ "$K" = arm64 ]; then
		flavour=call-ops
		L="arm64 -Os (guard lifted)"
		$TAB misaligned "$V" >"$T/mis" || die "mcounttab.py misaligned failed"
		[ -s "$T/mis" ] || die "the guard kernel has no misaligned site"
		mm=", each of the $(wc -l <"$T/mis") misaligned named misaligned"
	else
		flavour=patchable
	fi
	table_oracle "$V" "$T/$K.values" "$K"

	# 1. as built
	record_is_oracle "$L as built" "$V" "$K" "from the code" ", layout from the code"
	audit_json "$V" "$K" '[01]'
	check_audit "$K" "$L as built: audit (exit $rc): nothing missing, stale only the weak leftovers$mm" "
need($rc in (0, 1), 'audit exit status $rc')
need(not by.get('missing') and not by.get('shifted'), 'missing or shifted: %d %d' % (len(by.get('missing', ())), len(by.get('shifted', ()))))
need(by.get('stale', set()) == vals - oracle, 'stale %d, leftovers %d' % (len(by.get('stale', ())), len(vals - oracle)))
need(d['site_count'] == len(oracle), 'sites %d' % d['site_count'])"

	# 2. cleared
	table_cleared "$V" "$T/$K.cleared" "$T/$K.cleared.values"
	audit_json "$T/$K.cleared" "$K.cleared" 1
	check_audit "$K.cleared" "$L cleared: audit (exit $rc) names every site missing, as $flavour$mm" "
need($rc == 1, 'audit exit status $rc')
need(by.get('missing') == oracle - mis, 'missing %d of %d' % (len(by.get('missing', ())), len(oracle - mis)))
need(all(x['message'].startswith('$flavour ') for x in f if x['kind'] == 'missing'), 'flavour')
need(set(by) == {'missing'}, 'other kinds: %s' % sorted(by))"
	if [ "$K" = arm64 ]; then
		# the misaligned sites too on request; by default only the
		# aligned ones (the kernel would skip the others)
		table_refilled "$L cleared" "$K" --keep-misaligned
		audit_json "$T/$K.refilled" "$K.refilled" 1
		check_audit "$K.refilled" "$L refilled: audit (exit $rc) finds nothing but the misaligned" "
need($rc == 1, 'audit exit status $rc')
need(not by, 'other findings: %s' % sorted(by))"
		cp "$T/$K.cleared" "$T/$K.aligned"
		grep -v -x -F -f "$T/mis" "$T/oracle" >"$T/$K.aligned.want"
		if ps_run -e "$T/$K.aligned.err" 0 "$T/$K.aligned.err" -- record --in-place "$T/$K.aligned" &&
			$TAB dump "$T/$K.aligned" >"$T/$K.aligned.values" &&
			cmp -s "$T/$K.aligned.want" "$T/$K.aligned.values"; then
			ok "$L cleared: record --in-place writes the $(wc -l <"$T/$K.aligned.want") aligned sites, none of the $(wc -l <"$T/mis") misaligned"
		else
			{ cat "$ps_msg"; diff "$T/$K.aligned.want" "$T/$K.aligned.values" | head; } >>"$T/$K.aligned.err" 2>&1
			not_ok "$L cleared: record --in-place writes the aligned sites only" "$T/$K.aligned.err"
		fi
	else
		table_refilled "$L cleared" "$K"
		audit_clean "$L refilled" "$T/$K.refilled" "$T/$K.refilled.audit"
	fi

	# 3. ten entries moved by 4 bytes
	$TAB move "$V" "$T/$K.moved" 10 4 >"$T/$K.moved.moved" || die "$K: move failed"
	audit_json "$T/$K.moved" "$K.moved" 1
	cp "$T/$K.values" "$T/$K.moved.values"
	check_audit "$K.moved" "$L 10 entries moved: audit (exit $rc) names each stale and each site missing$mm" "
need($rc == 1, 'audit exit status $rc')
need(len(moved) == 10, 'moved %d' % len(moved))
need(by.get('missing', set()) == moved - mis, 'missing %s' % sorted(hex(a) for a in by.get('missing', ())))
need(by.get('stale', set()) == set(v + 4 for v in moved) | (vals - oracle), 'stale %d' % len(by.get('stale', ())))
need(all('site is at' in x['message'] for x in f if x['kind'] == 'stale' and int(x['address'], 16) - 4 in moved), 'stale entries do not name the real site')
need('shifted' not in by, 'a shifted finding for 10 entries')"

	# 4. every entry moved by one patch-area step
	$TAB shift "$V" "$T/$K.shifted" 8 || die "$K: shift failed"
	$TAB dump "$T/$K.shifted" >"$T/$K.shifted.values"
	audit_json "$T/$K.shifted" "$K.shifted" 1
	check_audit "$K.shifted" "$L every entry moved by 8: every entry stale, every site missing, one 'shifted'$mm" "
need($rc == 1, 'audit exit status $rc')
need(by.get('stale') == vals, 'stale %d of %d entries' % (len(by.get('stale', ())), len(vals)))
need(by.get('missing') == oracle - mis, 'missing %d of %d' % (len(by.get('missing', ())), len(oracle - mis)))
sh = [x for x in f if x['kind'] == 'shifted']
need(len(sh) == 1 and '8 bytes after' in sh[0]['message'], 'shifted: %s' % sh)"
done

# --- the arm64 kernel with CONFIG_PATCHSITE: refilled and wrong ---------------
# its table as its build wrote it (call-ops-os.sh: every function of the
# compiler's own table, none misaligned) is the reference here
: >"$T/mis"
V=$T/patched.vmlinux
P="arm64 -Os with CONFIG_PATCHSITE"
table_oracle "$V" "$T/patched.values" "$P"
$TAB misaligned "$V" >"$T/patched.mis" || die "mcounttab.py misaligned failed"
[ ! -s "$T/patched.mis" ] || die "$P: misaligned sites in its table (see call-ops-os.sh)"
table_cleared "$V" "$T/patched.cleared" "$T/patched.cleared.values"
table_refilled "$P, cleared" patched
$TAB shift "$V" "$T/patched.wrong" 8 || die "patched: shift failed"	# entries at func+0

# --- arm64 boots --------------------------------------------------------------
# two at a time (lib.sh's side), each boot's checks read after its boot
phase "tables cleared, moved and shifted"
image_of "$T/patched.refilled" "$T/refilled.Image" || die "objcopy of the refilled kernel failed"
image_of "$T/patched.wrong" "$T/wrong.Image" || die "objcopy of the wrong kernel failed"
initramfs arm64 "$T/initramfs.cpio"
side built boot_arm64 "$T/patched.Image" "$T/built.boot.log" "$BOOT_TIMEOUT" "$T/initramfs.cpio"
side refilled boot_arm64 "$T/refilled.Image" "$T/refilled.boot.log" "$BOOT_TIMEOUT" "$T/initramfs.cpio"
side wrong boot_arm64 "$T/wrong.Image" "$T/wrong.boot.log" "$BOOT_TIMEOUT"
side_wait built
if self_tests "$T/built.boot.log" "$T/built.tests" && reached_init "$T/built.boot.log" &&
	grep -q "CPU features: detected: Address authentication" "$T/built.boot.log"; then
	ok "$P as built boots: $nt ftrace self tests PASSED, none FAILED, pointer authentication on"
else
	not_ok "$P as built boots and passes its ftrace self tests" "$T/built.boot.log"
fi
nb=$nt
tracer_on "$P as built" "$T/built.boot.log"
fb=$enabled
side_wait refilled
if self_tests "$T/refilled.boot.log" "$T/refilled.tests" "$T/built.tests" && reached_init "$T/refilled.boot.log"; then
	ok "$P cleared and refilled by record --in-place boots: the same $nb self tests PASSED"
else
	not_ok "$P refilled: the same self tests PASSED as built" "$T/refilled.boot.log"
fi
tracer_on "$P refilled" "$T/refilled.boot.log" "$fb" " as built" " as built"
side_wait wrong
selftests "$T/wrong.boot.log" >"$T/wrong.tests"
if ! cmp -s "$T/built.tests" "$T/wrong.tests" && ! reached_init "$T/wrong.boot.log"; then
	ok "$P with entries at func+0 (a wrong layout): fails ($(grep -m1 -o 'Undefined instruction\|ftrace bug\|Kernel panic' "$T/wrong.boot.log" || echo 'no init'))"
else
	not_ok "$P with a wrong table does not pass the self tests" "$T/wrong.boot.log"
fi

finish
