#!/bin/bash
# tests/kernel/x86.sh - issue 17's proof: an x86_64 kernel with call padding,
# its table written by patchsite, against the kernel's own table as the
# oracle and booted under qemu-system-x86_64.
#
# The kernel: Debian's linux-source-6.12 built natively, out of tree
# (KERNEL_WORK/x86), tinyconfig (64BIT) plus what distribution kernels carry
# (lib.sh's x86_config, every option asserted =y): CALL_PADDING (16 bytes of
# NOPs before each function, a sized __pfx_ symbol over them), call depth
# tracking, IBT (ENDBR64 before the __fentry__ call), PARAVIRT, PVH (qemu
# boots vmlinux itself), FTRACE_MCOUNT_USE_CC (the compiler's own table),
# BUILDTIME_MCOUNT_SORT, the ftrace start-up tests, DWARF 5.
#
# The oracle is the kernel's own table under the sorttable rule
# (tests/kernel/mcounttab.py, which is not patchsite).  For the kernel as
# built and for a copy stripped of DWARF (objcopy --strip-debug):
#   1. record = the oracle, entry for entry; audit is clean (exit 0);
#   2. the table cleared (every slot zero): audit names the sites missing
#      (exit 1); record --in-place refills it (exit 0), the refilled table
#      = the oracle; audit of the result is clean (exit 0).
# The kernel integration (contrib/linux), its commands run by hand on this
# build (tests/kernel/contrib-x86.sh builds with it switched on):
#   0001: repad --in-place --quiet leaves every object of vmlinux.a byte for
#      byte, exit 0 (x86_64 has no ops literal to align);
#   0003: record --in-place on vmlinux as linked and sorted (exit 0), then
#      audit (exit 0): the table = the oracle.
# Booted under qemu-system-x86_64 (TCG, PVH entry, -kernel vmlinux) with a
# busybox-static initramfs whose /init switches the function tracer on
# over every function and counts enabled_functions (lib.sh's initramfs):
#   3. as built: the ftrace self tests PASSED, none FAILED, no ftrace bug,
#      thousands of functions enabled;
#   4. cleared and refilled by record --in-place (with and without DWARF):
#      the same self tests PASSED, no ftrace bug, the same number of
#      functions enabled as built;
#   5. a wrong table (every entry moved 16 bytes back, into the padding
#      NOPs before its function, where a __pfx_ symbol starts): audit says
#      so (exit 1), and the kernel logs "ftrace bug" and enables no function
#      (so this test can fail).
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/x86.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
BOOT_TIMEOUT=${BOOT_TIMEOUT:-480}
TAB="python3 tests/kernel/mcounttab.py"
X=$W/x86
T=$OUT/x86

kernel_packages
kernel_source
rm -rf "$T"	# a rerun must not read the last run's images
mkdir -p "$T"

# --- the kernel -------------------------------------------------------------
# (configured again when the cached configuration misses an option)
cfg_ok=1
for c in $X86_CONFIG_WANT; do
	grep -q "^CONFIG_$c=y" "$X/.config.patchsite" 2>/dev/null || cfg_ok=0
done
if [ "$cfg_ok" = 0 ]; then
	x86_config "$X"
	cp "$X/.config" "$X/.config.patchsite"
fi
for c in $X86_CONFIG_WANT; do
	grep -q "^CONFIG_$c=y" "$X/.config" || die "x86: CONFIG_$c is not set"
done
grep -q "^CONFIG_FUNCTION_PADDING_BYTES=16$" "$X/.config" || die "x86: CONFIG_FUNCTION_PADDING_BYTES is not 16"
t0=$(date +%s)
kbuild x86 vmlinux >"$OUT/x86.build.log" 2>&1 || {
	tail -n 30 "$OUT/x86.build.log" >&2
	die "x86 kernel build failed"
}
echo "# x86_64 kernel build: $(($(date +%s) - t0)) s"
phase "x86_64 build"
bootimg_check x86 "$X" x86
phase "x86_64 boot image audited"
V=$T/built.vmlinux
S=$T/nodwarf.vmlinux
cp "$X/vmlinux" "$V"
objcopy --strip-debug "$V" "$S" || die "objcopy --strip-debug failed"
readelf -S "$V" | grep -q "\.debug_info" || die "the kernel has no DWARF (.debug_info)"
! readelf -S "$S" | grep -q "\.debug_" || die "objcopy --strip-debug left DWARF in the copy"

$TAB sites "$V" >"$T/oracle" || die "mcounttab.py cannot read the kernel's table"
$TAB dump "$V" >"$T/built.values" || die "mcounttab.py dump failed"
n=$(wc -l <"$T/oracle")
[ "$n" -gt 1000 ] || die "the kernel's table has only $n sites"
echo "# the kernel's table: $(wc -l <"$T/built.values") entries, $n inside a function"

for K in built nodwarf; do
	if [ "$K" = built ]; then I=$V; what="with DWARF"; else I=$S; what="without DWARF"; fi

	# 1. as built
	ps_run -e "$T/$K.record.err" 0 "$T/$K.record" -- record "$I"
	rc=$ps_rc
	if [ "$rc" -eq 0 ] && cmp -s "$T/$K.record" "$T/oracle"; then
		ok "x86_64 $what: record = the kernel's table ($n sites)"
	else
		{
			echo "record exit status $rc"
			diff "$T/oracle" "$T/$K.record" | head -n 12
		} >>"$T/$K.record.err"
		not_ok "x86_64 $what: record = the kernel's table" "$T/$K.record.err"
	fi
	ps_run -e "$T/$K.audit" 0 "$T/$K.audit" -- audit "$I"
	rc=$ps_rc
	if [ "$rc" -eq 0 ]; then
		ok "x86_64 $what: audit is clean (exit 0)"
	else
		echo "audit exit status $rc" >>"$T/$K.audit"
		not_ok "x86_64 $what: audit is clean (exit $rc)" "$T/$K.audit"
	fi

	# 2. cleared, refilled
	$TAB clear "$I" "$T/$K.cleared" || die "mcounttab.py clear failed"
	$TAB dump "$T/$K.cleared" >"$T/$K.cleared.values" || die "mcounttab.py dump failed"
	[ ! -s "$T/$K.cleared.values" ] || die "the cleared table is not all zero"
	ps_run -e "$T/$K.cleared.audit" 1 "$T/$K.cleared.audit" -- audit "$T/$K.cleared"
	rc=$ps_rc
	if [ "$rc" -eq 1 ] && [ "$(grep -c "^missing: " "$T/$K.cleared.audit")" -eq "$n" ]; then
		ok "x86_64 $what, table cleared: audit names the $n sites missing (exit 1)"
	else
		echo "audit exit status $rc, $(grep -c "^missing: " "$T/$K.cleared.audit") missing" \
			>>"$T/$K.cleared.audit"
		not_ok "x86_64 $what, table cleared: audit names every site missing" "$T/$K.cleared.audit"
	fi
	cp "$T/$K.cleared" "$T/$K.refilled"
	ps_run -e "$T/$K.refill.err" 0 "$T/$K.refill.err" -- record --in-place "$T/$K.refilled"
	rc=$ps_rc
	if [ "$rc" -eq 0 ] && $TAB dump "$T/$K.refilled" >"$T/$K.refilled.values" &&
		cmp -s "$T/$K.refilled.values" "$T/oracle"; then
		ok "x86_64 $what, table cleared: record --in-place writes back the kernel's table ($n entries)"
	else
		{
			echo "record --in-place exit status $rc"
			diff "$T/oracle" "$T/$K.refilled.values" 2>&1 | head -n 12
		} >>"$T/$K.refill.err"
		not_ok "x86_64 $what, table cleared: record --in-place writes back the kernel's table" \
			"$T/$K.refill.err"
	fi
	ps_run -e "$T/$K.refilled.audit" 0 "$T/$K.refilled.audit" -- audit "$T/$K.refilled"
	rc=$ps_rc
	if [ "$rc" -eq 0 ]; then
		ok "x86_64 $what, refilled: audit is clean (exit 0)"
	else
		echo "audit exit status $rc" >>"$T/$K.refilled.audit"
		not_ok "x86_64 $what, refilled: audit is clean (exit $rc)" "$T/$K.refilled.audit"
	fi
done

# 5. the wrong table: every entry 16 bytes back, in its function's padding
$TAB shift "$V" "$T/wrong.vmlinux" -16 || die "mcounttab.py shift failed"
ps_run -e "$T/wrong.audit" 1 "$T/wrong.audit" -- audit "$T/wrong.vmlinux"
rc=$ps_rc
if [ "$rc" -eq 1 ] && [ "$(grep -c "^missing: " "$T/wrong.audit")" -eq "$n" ]; then
	ok "x86_64 every entry moved into the padding: audit names the $n sites missing (exit 1)"
else
	echo "audit exit status $rc" >>"$T/wrong.audit"
	not_ok "x86_64 every entry moved into the padding: audit names every site missing" "$T/wrong.audit"
fi

# --- the kernel integration (contrib/linux) on x86_64 -------------------------
# Switching the integration on recompiles every object (0001 makes repad
# part of each object's command line, so kbuild's if_changed rebuilds them
# all: `make -n PATCHSITE=... vmlinux` on the built tree listed 718 compiles,
# 9 without it); tests/kernel/contrib-x86.sh is that build.  Here, what it
# runs is run by hand on this build's own files:
# 0001: repad --in-place --quiet after each object is made; on x86_64 there
# is no ops literal to align, so every object must come out byte for byte
# (the objects, and so the link, of a PATCHSITE= build are those of this one)
(cd "$X" && ar t vmlinux.a) >"$T/objects" || die "cannot list vmlinux.a"
no=$(wc -l <"$T/objects")
[ "$no" -gt 100 ] || die "vmlinux.a has only $no members"
mkdir -p "$T/repad"
bad=0
while read -r o; do
	c=$T/repad/obj.o
	cp "$X/$o" "$c" || die "cannot copy $o"
	ps_run -e "$T/repad/out" 0 "$T/repad/out" -- repad --in-place --quiet "$c"
	rc=$ps_rc
	if [ "$rc" -ne 0 ] || ! cmp -s "$X/$o" "$c"; then
		[ "$bad" -lt 5 ] && echo "$o: repad exit status $rc, $(cmp -s "$X/$o" "$c" && echo unchanged || echo changed): $(head -n 2 "$T/repad/out")" >>"$T/repad.log"
		bad=$((bad + 1))
	fi
done <"$T/objects"
if [ "$bad" -eq 0 ]; then
	ok "x86_64 contrib 0001: repad --in-place leaves each of the $no objects of vmlinux.a byte for byte (exit 0)"
else
	echo "$bad of $no objects" >>"$T/repad.log"
	not_ok "x86_64 contrib 0001: repad --in-place leaves every object of vmlinux.a byte for byte (exit 0)" \
		"$T/repad.log"
fi
# 0003: in link-vmlinux.sh, after the final link and sorttable (x86 sorts
# the table at build time, BUILDTIME_MCOUNT_SORT), record --in-place on the
# full table, then audit as the gate; arch/x86/Makefile.postlink runs after
# it and does not touch the table
P=$T/postlink.vmlinux
cp "$V" "$P"
ps_run -e "$T/postlink.err" 0 "$T/postlink.err" -- record --in-place "$P"
rc=$ps_rc
if [ "$rc" -eq 0 ] && ps_run -e "$T/postlink.audit" 0 "$T/postlink.audit" -- audit "$P" &&
	$TAB dump "$P" >"$T/postlink.values" && cmp -s "$T/postlink.values" "$T/oracle"; then
	ok "x86_64 contrib 0003: record --in-place after sorttable (exit 0), audit passes, the table = the kernel's"
else
	{ echo "record --in-place exit status $rc"; cat "$T/postlink.audit" "$ps_msg"; } >>"$T/postlink.err" 2>/dev/null
	not_ok "x86_64 contrib 0003: record --in-place, audit, the table = the kernel's" "$T/postlink.err"
fi

# --- boots --------------------------------------------------------------------
# two at a time (lib.sh's side, which prints each boot's time), each
# boot's checks read after its boot
phase "record, audit, tables"
initramfs x86 "$T/initramfs.cpio"
side built boot_x86 "$V" "$T/initramfs.cpio" "$T/built.boot.log" "$BOOT_TIMEOUT"
for K in built nodwarf; do
	[ ! -s "$T/$K.refilled.values" ] ||
		side "$K.refilled" boot_x86 "$T/$K.refilled" "$T/initramfs.cpio" "$T/$K.refilled.boot.log" "$BOOT_TIMEOUT"
done
side wrong boot_x86 "$T/wrong.vmlinux" "$T/initramfs.cpio" "$T/wrong.boot.log" "$BOOT_TIMEOUT"
side_wait built
selftests "$T/built.boot.log" >"$T/built.tests"
nb=$(wc -l <"$T/built.tests")
fb=$(tracefs_ok "$T/built.boot.log")
if [ $? -eq 0 ] && [ "$nb" -gt 0 ] && ! grep -q FAILED "$T/built.boot.log"; then
	ok "x86_64 as built boots: $nb ftrace self tests PASSED, none FAILED, function tracer on $fb functions, no ftrace bug"
else
	not_ok "x86_64 as built boots, passes its self tests, traces every function (enabled_functions $fb)" \
		"$T/built.boot.log"
fi

for K in built nodwarf; do
	if [ "$K" = built ]; then what="with DWARF"; else what="without DWARF"; fi
	if [ ! -s "$T/$K.refilled.values" ]; then
		not_ok "x86_64 $what, cleared and refilled: boots (no refilled kernel: record --in-place failed)"
		continue
	fi
	side_wait "$K.refilled"
	selftests "$T/$K.refilled.boot.log" >"$T/$K.refilled.tests"
	fr=$(tracefs_ok "$T/$K.refilled.boot.log" "$fb")
	if [ $? -eq 0 ] && [ "$nb" -gt 0 ] && ! grep -q FAILED "$T/$K.refilled.boot.log" &&
		cmp -s "$T/built.tests" "$T/$K.refilled.tests"; then
		ok "x86_64 $what, cleared and refilled by record --in-place boots: the same $nb self tests PASSED, function tracer on $fr functions as built, no ftrace bug"
	else
		{
			echo "enabled_functions $fr (as built $fb)"
			diff "$T/built.tests" "$T/$K.refilled.tests"
		} >>"$T/$K.refilled.boot.log" 2>&1
		not_ok "x86_64 $what, refilled: the same self tests PASSED and $fb functions enabled as built (got $fr)" \
			"$T/$K.refilled.boot.log"
	fi
done

side_wait wrong
selftests "$T/wrong.boot.log" >"$T/wrong.tests"
fw=$(tracefs_field "$T/wrong.boot.log" enabled_functions)
if grep -q "ftrace bug" "$T/wrong.boot.log" && [ "$fw" = 0 ] &&
	grep -q "^TRACEFS done" <(tr -d '\r' <"$T/wrong.boot.log") &&
	! cmp -s "$T/built.tests" "$T/wrong.tests"; then
	ok "x86_64 with every entry in the padding: the kernel logs 'ftrace bug', enables $fw functions, $(wc -l <"$T/wrong.tests") of the $nb self tests PASSED"
else
	echo "enabled_functions ${fw:-none}" >>"$T/wrong.boot.log"
	not_ok "x86_64 with a wrong table: 'ftrace bug', no function enabled" "$T/wrong.boot.log"
fi

finish
