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
#      functions enabled as built (the kernel refilled without DWARF is
#      booted only when what qemu loads of it differs from the one refilled
#      with DWARF: the same bytes, objcopy -O binary, the same entry and
#      program headers but their file offsets, boot the same);
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
X=$W/x86

proof_start "$OUT/x86"

# --- the kernel -------------------------------------------------------------
# (configured again when the cached configuration misses an option)
kernel_configured x86 "$X" "$X86_CONFIG_WANT" EVENT_TRACE_STARTUP_TEST x86_config "$X"
grep -q "^CONFIG_FUNCTION_PADDING_BYTES=16$" "$X/.config" || die "x86: CONFIG_FUNCTION_PADDING_BYTES is not 16"
kernel_built x86_64 x86 x86 "$X" vmlinux
V=$T/built.vmlinux
S=$T/nodwarf.vmlinux
cp "$X/vmlinux" "$V"
objcopy --strip-debug "$V" "$S" || die "objcopy --strip-debug failed"
readelf -S "$V" | grep -q "\.debug_info" || die "the kernel has no DWARF (.debug_info)"
! readelf -S "$S" | grep -q "\.debug_" || die "objcopy --strip-debug left DWARF in the copy"

table_oracle "$V" "$T/built.values"

for K in built nodwarf; do
	if [ "$K" = built ]; then I=$V; what="with DWARF"; else I=$S; what="without DWARF"; fi

	# 1. as built
	record_is_oracle "x86_64 $what" "$I" "$K"
	audit_clean "x86_64 $what" "$I" "$T/$K.audit"

	# 2. cleared, refilled
	table_cleared "$I" "$T/$K.cleared" "$T/$K.cleared.values"
	audit_missing "x86_64 $what, table cleared" "$T/$K.cleared" "$T/$K.cleared.audit"
	table_refilled "x86_64 $what, table cleared" "$K"
	audit_clean "x86_64 $what, refilled" "$T/$K.refilled" "$T/$K.refilled.audit"
done

# 5. the wrong table: every entry 16 bytes back, in its function's padding
$TAB shift "$V" "$T/wrong.vmlinux" -16 || die "mcounttab.py shift failed"
audit_missing "x86_64 every entry moved into the padding" "$T/wrong.vmlinux" "$T/wrong.audit"

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
# loaded_as A B: qemu loads the same of both ELF files (PVH: the PT_LOAD
# and PT_NOTE contents, the entry): objcopy -O binary's image, the ELF
# header's entry and the program headers but their file offsets
loaded_as() {
	local f
	for f in "$1" "$2"; do
		objcopy -O binary "$f" "$f.bin" || return 1
		{ readelf -hW "$f" | grep "Entry point"; readelf -lW "$f" | awk '$1 ~ /^(LOAD|NOTE)$/ { $2 = ""; print }'; } >"$f.load" || return 1
	done
	cmp -s "$1.bin" "$2.bin" && cmp -s "$1.load" "$2.load" && [ -s "$1.load" ]
}
same_boot=""
if [ -s "$T/built.refilled.values" ] && [ -s "$T/nodwarf.refilled.values" ] &&
	loaded_as "$T/built.refilled" "$T/nodwarf.refilled"; then
	same_boot=$(stat -c %s "$T/built.refilled.bin")
fi
side built boot_x86 "$V" "$T/initramfs.cpio" "$T/built.boot.log" "$BOOT_TIMEOUT"
for K in built nodwarf; do
	[ ! -s "$T/$K.refilled.values" ] || { [ "$K" = nodwarf ] && [ -n "$same_boot" ]; } ||
		side "$K.refilled" boot_x86 "$T/$K.refilled" "$T/initramfs.cpio" "$T/$K.refilled.boot.log" "$BOOT_TIMEOUT"
done
side wrong boot_x86 "$T/wrong.vmlinux" "$T/initramfs.cpio" "$T/wrong.boot.log" "$BOOT_TIMEOUT"
side_wait built
built_boots x86_64 ""

for K in built nodwarf; do
	if [ "$K" = built ]; then what="with DWARF"; else what="without DWARF"; fi
	if [ ! -s "$T/$K.refilled.values" ]; then
		not_ok "x86_64 $what, cleared and refilled: boots (no refilled kernel: record --in-place failed)"
		continue
	fi
	if [ "$K" = nodwarf ] && [ -n "$same_boot" ]; then
		if boots_as_built built.refilled "$fb"; then
			ok "x86_64 $what, cleared and refilled by record --in-place: qemu loads the same $same_boot bytes, entry and segments as the kernel refilled with DWARF, which boots: the same $nb self tests PASSED, function tracer on $fr functions as built, no ftrace bug"
		else
			not_ok "x86_64 $what, refilled: loaded as the kernel refilled with DWARF, whose boot is not as built" \
				"$T/built.refilled.boot.log"
		fi
		continue
	fi
	side_wait "$K.refilled"
	if boots_as_built "$K.refilled" "$fb"; then
		ok "x86_64 $what, cleared and refilled by record --in-place boots: the same $nb self tests PASSED, function tracer on $fr functions as built, no ftrace bug"
	else
		not_ok "x86_64 $what, refilled: the same self tests PASSED and $fb functions enabled as built (got $fr)" \
			"$T/$K.refilled.boot.log"
	fi
done

side_wait wrong
wrong_boots x86_64 "in the padding"

finish
