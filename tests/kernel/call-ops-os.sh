#!/bin/bash
# tests/kernel/call-ops-os.sh - arm64 kernels built with -Os get CALL_OPS:
# patchsite's kernel integration (contrib/linux/*.patch) on Debian's
# linux-source-6.12.
#
# The configuration is tables.sh's arm64 one (tinyconfig + ftrace: function
# and graph tracers, dynamic ftrace, start-up tests) with
# CC_OPTIMIZE_FOR_SIZE, where upstream keeps CALL_OPS off for GCC because
# GCC ignores -falign-functions under -Os.  Two builds in one tree
# (KERNEL_WORK/arm64-os):
#
#   guard   the `!CC_OPTIMIZE_FOR_SIZE` guard lifted by hand in the source
#           (restored afterwards), no patchsite: CALL_OPS on, the literals
#           left where the link puts them.  Its misaligned sites are counted
#           by tests/kernel/mcounttab.py from the kernel's own table and by
#           `patchsite audit`, which must agree; ftrace must fail at boot
#           (it faults writing a misaligned literal and disables itself) and
#           the tracer self tests must not pass (so this test can fail);
#   patched make ... PATCHSITE=/path/to/patchsite: every object repadded as
#           it is made, the guard lifted by the integration, vmlinux's table
#           written and audited after the final link.  CALL_OPS and direct
#           calls on; no misaligned, stale or missing site (audit, and the
#           kernel's table against mcounttab.py's oracle); it boots under
#           qemu-system-aarch64 and passes the same ftrace self tests as the
#           same configuration built -O2 (tables.sh's kernel, built first if
#           missing).
#
# Prints the .text sizes of -O2, -Os (guard lifted) and -Os with patchsite,
# and the two -Os build times.
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/call-ops-os.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
BOOT_TIMEOUT=${BOOT_TIMEOUT:-240}
TAB="python3 tests/kernel/mcounttab.py"
B=$W/arm64-os
T=$OUT/call-ops-os
KCONFIG=$SRC/arch/arm64/Kconfig

kernel_packages
kernel_source
mkdir -p "$T" "$B"

# the -O2 kernel of the same configuration, and its self tests
if [ ! -f "$OUT/tables/built.tests" ]; then
	bash tests/kernel/tables.sh >"$OUT/tables.log" 2>&1 ||
		die "tables.sh (the -O2 kernel and its boot) failed: see $OUT/tables.log"
fi
[ -s "$OUT/tables/built.tests" ] || die "the -O2 kernel passed no self test"
export KBUILD_DIR=$B

text_size() { # VMLINUX
	aarch64-linux-gnu-size -A "$1" | awk '$1 == ".text" { print $2 }'
}

# The build's wall time and its CPU time (user + system of make and every
# compiler, assembler, linker and patchsite it ran): the machine is shared,
# and CPU time is what the load does not inflate much.
build() { # NAME [MAKE-ARGS...] -> $T/NAME.{vmlinux,Image,build.log,seconds,cpu}
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$T/$name.time" \
		bash -c '. tests/kernel/lib.sh; kbuild arm64 "$@" Image' kbuild "$@" \
		>"$T/$name.build.log" 2>&1 || {
		tail -n 30 "$T/$name.build.log" >&2
		die "the $name build failed"
	}
	awk '{ printf "%.0f\n", $1 }' "$T/$name.time" >"$T/$name.seconds"
	awk '{ printf "%.0f\n", $2 + $3 }' "$T/$name.time" >"$T/$name.cpu"
	cp "$B/vmlinux" "$T/$name.vmlinux"
	cp "$B/arch/arm64/boot/Image" "$T/$name.Image"
}

config_has() { # NAME CONFIG... : ok when every CONFIG_x=y
	local name=$1 c missing=""
	shift
	for c in "$@"; do
		grep -q "^CONFIG_$c=y" "$B/.config" || missing="$missing $c"
	done
	if [ -z "$missing" ]; then
		ok "$name: $*"
	else
		echo "not set:$missing" >"$T/config.msg"
		not_ok "$name: $*" "$T/config.msg"
	fi
}

# --- 1. the guard lifted by hand, no patchsite -----------------------------
[ -f "$W/Kconfig.arm64.patched" ] || cp "$KCONFIG" "$W/Kconfig.arm64.patched"
cp "$W/Kconfig.arm64.patched" "$KCONFIG"
sed -i 's/(CC_IS_CLANG || !CC_OPTIMIZE_FOR_SIZE || PATCHSITE_REPAD)/(CC_IS_CLANG || y)/' "$KCONFIG"
grep -q "(CC_IS_CLANG || y)" "$KCONFIG" || die "cannot lift the CALL_OPS guard in $KCONFIG"
arm64_config "$B" size
config_has "guard lifted, -Os" CC_OPTIMIZE_FOR_SIZE DYNAMIC_FTRACE_WITH_CALL_OPS
build guard
cp "$W/Kconfig.arm64.patched" "$KCONFIG"

$TAB sites "$T/guard.vmlinux" >"$T/guard.sites" || die "mcounttab.py cannot read the guard kernel"
# the compiler's own sites (its __patchable_function_entries, linked and
# sorted, untouched by patchsite), by function: the oracle for the table
# of the padded kernel below
$TAB functions "$T/guard.vmlinux" >"$T/guard.functions" || die "mcounttab.py functions failed"
$TAB misaligned "$T/guard.vmlinux" >"$T/guard.misaligned" || die "mcounttab.py misaligned failed"
nmis=$(wc -l <"$T/guard.misaligned")
nsites=$(wc -l <"$T/guard.sites")
"$PATCHSITE" audit --format=json "$T/guard.vmlinux" >"$T/guard.audit.json" 2>"$T/guard.audit.err"
rc=$?
amis=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["summary"]["misaligned"])' \
	"$T/guard.audit.json" 2>/dev/null || echo "?")
if [ "$rc" -eq 1 ] && [ "$nmis" -gt 0 ] && [ "$amis" = "$nmis" ]; then
	ok "guard lifted, no patchsite: $nmis of $nsites sites misaligned (the kernel's table and audit agree)"
else
	echo "audit exit $rc, audit says $amis misaligned, the table $nmis" >>"$T/guard.audit.err"
	not_ok "guard lifted, no patchsite: misaligned sites counted" "$T/guard.audit.err"
fi
boot_arm64 "$T/guard.Image" "$T/guard.boot.log" "$BOOT_TIMEOUT"
selftests "$T/guard.boot.log" >"$T/guard.tests"
# 6.12's ftrace_call_adjust() returns 0 for a misaligned literal and
# ftrace_process_locs() keeps a record at address 0: the first update
# faults on it ("ftrace bug ... faulted on modifying 0x0"; seen elsewhere:
# a BUG in patch_map), ftrace disables itself, the tracer self tests do not
# run, and the kernel may still reach init
why=$(tr -d '\r' <"$T/guard.boot.log" | grep -m1 -o 'ftrace bug\|ftrace faulted on [a-z]*\|Internal error[^:]*\|BUG[^[]*\|Kernel panic[^-]*' || true)
ng=$(wc -l <"$T/guard.tests")
if ! cmp -s "$OUT/tables/built.tests" "$T/guard.tests" && [ -n "$why" ]; then
	ok "guard lifted, no patchsite: $why; $ng of the -O2 kernel's $(wc -l <"$OUT/tables/built.tests") self tests PASSED"
else
	diff "$OUT/tables/built.tests" "$T/guard.tests" >>"$T/guard.boot.log" 2>&1
	not_ok "guard lifted, no patchsite: fails the -O2 kernel's self tests, with ftrace's failure named" "$T/guard.boot.log"
fi

# --- 2. PATCHSITE=... -------------------------------------------------------
arm64_config "$B" size PATCHSITE="$PATCHSITE"
config_has "-Os with PATCHSITE" CC_OPTIMIZE_FOR_SIZE PATCHSITE_REPAD \
	DYNAMIC_FTRACE_WITH_CALL_OPS DYNAMIC_FTRACE_WITH_DIRECT_CALLS
build patched PATCHSITE="$PATCHSITE"

"$PATCHSITE" audit --format=json "$T/patched.vmlinux" >"$T/patched.audit.json" 2>"$T/patched.audit.err"
rc=$?
$TAB sites "$T/patched.vmlinux" >"$T/patched.sites" || die "mcounttab.py cannot read the patched kernel"
$TAB misaligned "$T/patched.vmlinux" >"$T/patched.misaligned" || die "mcounttab.py misaligned failed"
"$PATCHSITE" record "$T/patched.vmlinux" >"$T/patched.record" 2>>"$T/patched.audit.err"
rrc=$?
if [ "$rc" -eq 0 ] && [ "$rrc" -eq 0 ] && [ ! -s "$T/patched.misaligned" ] &&
	cmp -s "$T/patched.sites" "$T/patched.record" &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["summary"]; sys.exit(any(s.values()))' \
		"$T/patched.audit.json"; then
	ok "PATCHSITE: audit clean (0 misaligned, 0 stale, 0 missing); the table holds all $(wc -l <"$T/patched.sites") sites, none misaligned"
else
	echo "audit exit $rc, record exit $rrc, misaligned in the table: $(wc -l <"$T/patched.misaligned")" \
		>>"$T/patched.audit.err"
	diff "$T/patched.sites" "$T/patched.record" | head >>"$T/patched.audit.err"
	not_ok "PATCHSITE: audit clean and the table complete" "$T/patched.audit.err"
fi
boot_arm64 "$T/patched.Image" "$T/patched.boot.log" "$BOOT_TIMEOUT"
selftests "$T/patched.boot.log" >"$T/patched.tests"
n=$(wc -l <"$T/patched.tests")
if [ "$n" -gt 0 ] && cmp -s "$OUT/tables/built.tests" "$T/patched.tests" &&
	! grep -q "FAILED\|Misaligned patch-site" "$T/patched.boot.log" &&
	reached_init "$T/patched.boot.log"; then
	ok "PATCHSITE: boots and passes the same $n ftrace self tests as the -O2 kernel, no \"Misaligned patch-site\""
else
	diff "$OUT/tables/built.tests" "$T/patched.tests" >>"$T/patched.boot.log" 2>&1
	not_ok "PATCHSITE: the same self tests PASSED as -O2" "$T/patched.boot.log"
fi

# none left out: the table that patchsite wrote names the same functions as
# the compiler's own table of the unpadded link (the code is the same, only
# padded): a site dropped or added would show here
$TAB functions "$T/patched.vmlinux" >"$T/patched.functions" || die "mcounttab.py functions failed"
if [ -s "$T/guard.functions" ] && cmp -s "$T/guard.functions" "$T/patched.functions"; then
	ok "PATCHSITE: the table names the same $(wc -l <"$T/patched.functions") functions as the compiler's own table of the unpadded link"
else
	diff "$T/guard.functions" "$T/patched.functions" | head -n 20 >"$T/functions.diff"
	not_ok "PATCHSITE: the table names the same functions as the compiler's own table" "$T/functions.diff"
fi

# --- 3. sizes and build times -------------------------------------------------
o2=$(text_size "$OUT/arm64.vmlinux")
g=$(text_size "$T/guard.vmlinux")
p=$(text_size "$T/patched.vmlinux")
tg=$(cat "$T/guard.seconds")
tp=$(cat "$T/patched.seconds")
cg=$(cat "$T/guard.cpu")
cp=$(cat "$T/patched.cpu")
echo "# .text bytes: -O2 $o2, -Os (guard lifted) $g, -Os with patchsite $p"
python3 -c "import sys; o,g,p=map(int,sys.argv[1:]); print('# -Os with patchsite: %.1f%% smaller than -O2; the padding costs %d bytes (%.2f%%) over -Os' % (100.0*(o-p)/o, p-g, 100.0*(p-g)/g))" "$o2" "$g" "$p"
python3 -c "import sys; a,b,c,d=map(int,sys.argv[1:]); print('# build: -Os %d s wall, %d s CPU; -Os with PATCHSITE %d s wall (%+.1f%%), %d s CPU (%+.1f%%)' % (a, c, b, 100.0*(b-a)/a, d, 100.0*(d-c)/c))" "$tg" "$tp" "$cg" "$cp"
if [ "$p" -gt "$g" ] && [ "$p" -lt "$o2" ]; then
	ok "text: -Os with patchsite is larger than plain -Os (the padding) and smaller than -O2"
else
	not_ok "text: -Os with patchsite between -Os and -O2 ($g < $p < $o2)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
