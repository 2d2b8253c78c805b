#!/bin/bash
# tests/kernel/tables.sh - the sites come from the code, never from the table
# under test: real kernels from Debian's linux-source-6.12, their tables
# cleared, moved and shifted, against the kernel's own table as the oracle.
#
# Kernels:
#   arm64   tinyconfig + ftrace (function and graph tracers, dynamic ftrace,
#           start-up tests), -O2 so that DYNAMIC_FTRACE_WITH_CALL_OPS is on
#           (-fpatchable-function-entry=4,2: the site is the literal at
#           func-8), RELOCATABLE: linked with --no-apply-dynamic-relocs, so
#           the table's values live only in .rela.dyn R_AARCH64_RELATIVE
#           addends.  Built here, out of tree (KERNEL_WORK/arm64).
#   riscv64 the stock kernel of tests/kernel/riscv-relax.sh (tinyconfig +
#           ftrace, RISCV_ISA_C: -fpatchable-function-entry=4, four c.nop at
#           entry), reused from KERNEL_WORK/out, built if missing.
#
# For each: the oracle is the kernel's own table under the kernel's
# sorttable rule (tests/kernel/mcounttab.py, which is not patchsite):
#   1. record on the kernel as built = the oracle; audit finds no missing
#      or misplaced site (riscv64 6.12 keeps the weak leftovers its build
#      does not zero: exactly those are stale);
#   2. the table cleared (slots and addends): audit names every oracle site
#      missing with its flavour; record --in-place writes back the oracle;
#      audit of the result is clean;
#   3. ten entries moved by 4 bytes: each named stale (with the function's
#      real site), each of their sites named missing, no 'shifted' finding;
#   4. every entry moved by one patch-area step (8 bytes: a table recorded
#      for the other layout): every entry stale, every site missing, and
#      one 'shifted' finding that says 8 bytes;
# and for arm64, booted under qemu-system-aarch64 with an initramfs whose
# /init (tests/kernel/tracefs-init.c) switches the function tracer on over
# every function and counts enabled_functions:
#   5. as built: the self tests PASSED, none FAILED, the boot reached init;
#      thousands of functions enabled, no "ftrace bug";
#   6. cleared and refilled by record --in-place: the same self tests
#      PASSED, the same number of functions enabled, no "ftrace bug";
#   7. the wrong table (every entry at func+0, what a layout learned from
#      the wrong evidence writes): the boot does not pass them (so this test
#      can fail).
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/tables.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
A=$W/arm64

proof_start "$OUT/tables"

# --- the arm64 CALL_OPS kernel ---------------------------------------------
# (configured again when a cached configuration predates the initramfs or
# has what lib.sh's KERNEL_TRIM turns off)
kernel_configured arm64 "$A" "DYNAMIC_FTRACE_WITH_CALL_OPS FTRACE_STARTUP_TEST RELOCATABLE JUMP_LABEL
	BLK_DEV_INITRD PROC_FS SYSFS TRACING" "$KERNEL_TRIM_OFF" arm64_config "$A" performance
kernel_built arm64 arm64 arm64 "$A" Image
kernel_copies arm64 "$A" "$OUT/arm64"

# --- the riscv64 kernel (riscv-relax.sh's stock one) ------------------------
if [ ! -f "$OUT/stock.vmlinux" ]; then
	bash tests/kernel/riscv-relax.sh >"$OUT/riscv-relax.log" 2>&1 ||
		die "riscv-relax.sh (which builds the riscv64 kernel) failed: see $OUT/riscv-relax.log"
fi
cp "$OUT/stock.vmlinux" "$OUT/riscv64.vmlinux"

# audit --format=json -> a summary python can assert on
# audit_json IMAGE NAME STATUS -> $T/NAME.audit.json; $rc is audit's exit
# status; when it is not STATUS, check_audit fails without reading the JSON
audit_json() {
	audit_ran=0
	ps_run -e "$T/$2.audit.err" "$3" "$T/$2.audit.json" -- audit --format=json "$1" && audit_ran=1
	rc=$ps_rc
}

# check_audit NAME TEST-NAME PYTHON-ASSERTIONS
#   the assertions see: f (findings), by (kind -> set of addresses), oracle
#   (set), vals (the damaged table's non-zero values), moved (old values)
check_audit() {
	local name=$1 what=$2 code=$3
	if [ "$audit_ran" != 1 ]; then
		not_ok "$what" "$ps_msg"
	elif python3 - "$T/$name.audit.json" "$T/oracle" "$T/$name.values" "$T/$name.moved" \
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
oracle, vals, moved = addrs(sys.argv[2]), addrs(sys.argv[3]), addrs(sys.argv[4])
def need(c, msg):
    if not c:
        print(msg); sys.exit(1)
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
	V=$OUT/$K.vmlinux
	if [ "$K" = arm64 ]; then flavour=call-ops; else flavour=patchable; fi
	table_oracle "$V" "$T/$K.values" "$K"

	# 1. as built
	record_is_oracle "$K as built" "$V" "$K" "from the code" ", layout from the code"
	audit_json "$V" "$K" '[01]'
	check_audit "$K" "$K as built: audit (exit $rc): nothing missing, stale only the weak leftovers" "
need($rc in (0, 1), 'audit exit status $rc')
need(not by.get('missing') and not by.get('shifted'), 'missing or shifted: %d %d' % (len(by.get('missing', ())), len(by.get('shifted', ()))))
need(by.get('stale', set()) == vals - oracle, 'stale %d, leftovers %d' % (len(by.get('stale', ())), len(vals - oracle)))
need(d['site_count'] == len(oracle), 'sites %d' % d['site_count'])"

	# 2. cleared
	table_cleared "$V" "$T/$K.cleared" "$T/$K.cleared.values"
	audit_json "$T/$K.cleared" "$K.cleared" 1
	check_audit "$K.cleared" "$K cleared: audit (exit $rc) names every site missing, as $flavour" "
need($rc == 1, 'audit exit status $rc')
need(by.get('missing') == oracle, 'missing %d of %d' % (len(by.get('missing', ())), len(oracle)))
need(all(x['message'].startswith('$flavour ') for x in f if x['kind'] == 'missing'), 'flavour')
need(set(by) == {'missing'}, 'other kinds: %s' % sorted(by))"
	table_refilled "$K cleared" "$K"
	audit_clean "$K refilled" "$T/$K.refilled" "$T/$K.refilled.audit"

	# 3. ten entries moved by 4 bytes
	$TAB move "$V" "$T/$K.moved" 10 4 >"$T/$K.moved.moved" || die "$K: move failed"
	audit_json "$T/$K.moved" "$K.moved" 1
	cp "$T/$K.values" "$T/$K.moved.values"
	check_audit "$K.moved" "$K 10 entries moved: audit (exit $rc) names each stale and each site missing" "
need($rc == 1, 'audit exit status $rc')
need(len(moved) == 10, 'moved %d' % len(moved))
need(by.get('missing') == moved, 'missing %s' % sorted(hex(a) for a in by.get('missing', ())))
need(by.get('stale', set()) == set(v + 4 for v in moved) | (vals - oracle), 'stale %d' % len(by.get('stale', ())))
need(all('site is at' in x['message'] for x in f if x['kind'] == 'stale' and int(x['address'], 16) - 4 in moved), 'stale entries do not name the real site')
need('shifted' not in by, 'a shifted finding for 10 entries')"

	# 4. every entry moved by one patch-area step
	$TAB shift "$V" "$T/$K.shifted" 8 || die "$K: shift failed"
	$TAB dump "$T/$K.shifted" >"$T/$K.shifted.values"
	audit_json "$T/$K.shifted" "$K.shifted" 1
	check_audit "$K.shifted" "$K every entry moved by 8: every entry stale, every site missing, one 'shifted'" "
need($rc == 1, 'audit exit status $rc')
need(by.get('stale') == vals, 'stale %d of %d entries' % (len(by.get('stale', ())), len(vals)))
need(by.get('missing') == oracle, 'missing %d of %d' % (len(by.get('missing', ())), len(oracle)))
sh = [x for x in f if x['kind'] == 'shifted']
need(len(sh) == 1 and '8 bytes after' in sh[0]['message'], 'shifted: %s' % sh)"
	if [ "$K" = arm64 ]; then
		cp "$T/$K.shifted" "$T/$K.wrong"	# for the boot below: entries at func+0
	fi
done

# --- arm64 boots --------------------------------------------------------------
# two at a time (lib.sh's side), each boot's checks read after its boot
phase "tables cleared, moved and shifted"
image_of "$T/arm64.refilled" "$T/refilled.Image" || die "objcopy of the refilled kernel failed"
image_of "$T/arm64.wrong" "$T/wrong.Image" || die "objcopy of the wrong kernel failed"
initramfs arm64 "$T/initramfs.cpio"
side built boot_arm64 "$OUT/arm64.Image" "$T/built.boot.log" "$BOOT_TIMEOUT" "$T/initramfs.cpio"
side refilled boot_arm64 "$T/refilled.Image" "$T/refilled.boot.log" "$BOOT_TIMEOUT" "$T/initramfs.cpio"
side wrong boot_arm64 "$T/wrong.Image" "$T/wrong.boot.log" "$BOOT_TIMEOUT"
side_wait built
if self_tests "$T/built.boot.log" "$T/built.tests" && reached_init "$T/built.boot.log" &&
	grep -q "CPU features: detected: Address authentication" "$T/built.boot.log"; then
	ok "arm64 as built boots: $nt ftrace self tests PASSED, none FAILED, pointer authentication on"
else
	not_ok "arm64 as built boots and passes its ftrace self tests" "$T/built.boot.log"
fi
nb=$nt
tracer_on "arm64 as built" "$T/built.boot.log"
fb=$enabled
side_wait refilled
if self_tests "$T/refilled.boot.log" "$T/refilled.tests" "$T/built.tests" && reached_init "$T/refilled.boot.log"; then
	ok "arm64 cleared and refilled by record --in-place boots: the same $nb self tests PASSED"
else
	not_ok "arm64 refilled: the same self tests PASSED as built" "$T/refilled.boot.log"
fi
tracer_on "arm64 refilled" "$T/refilled.boot.log" "$fb" " as built" " as built"
side_wait wrong
selftests "$T/wrong.boot.log" >"$T/wrong.tests"
if ! cmp -s "$T/built.tests" "$T/wrong.tests" && ! reached_init "$T/wrong.boot.log"; then
	ok "arm64 with entries at func+0 (a wrong layout): fails ($(grep -m1 -o 'Undefined instruction\|ftrace bug\|Kernel panic' "$T/wrong.boot.log" || echo 'no init'))"
else
	not_ok "arm64 with a wrong table does not pass the self tests" "$T/wrong.boot.log"
fi

finish
