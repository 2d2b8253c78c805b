#!/bin/bash
# tests/kernel/call-ops-os.sh - arm64 kernels built with -Os get CALL_OPS:
# patchsite's kernel integration (contrib/linux/*.patch) on Debian's
# linux-source-6.12.
#
# The configuration is lib.sh's arm64_config (tinyconfig + ftrace: function
# and graph tracers, dynamic ftrace, start-up tests) with
# CC_OPTIMIZE_FOR_SIZE, where upstream keeps CALL_OPS off for GCC because
# GCC ignores -falign-functions under -Os.  The integration's switch is
# CONFIG_PATCHSITE (scripts/config -e PATCHSITE); PATCHSITE=... or PATH only
# says where the tool is.  Two builds in one tree (KERNEL_WORK/arm64-os):
#
#   guard   the `!CC_OPTIMIZE_FOR_SIZE` guard lifted by hand in the source
#           (restored afterwards), CONFIG_PATCHSITE asked for but
#           PATCHSITE=/nonexistent: Kconfig must turn the option off
#           (PATCHSITE_VERSION 0), leaving the .config of the same
#           configuration made without it, and the build, which would fail
#           if it ran the tool, names patchsite in no command.  CALL_OPS on,
#           the literals left where the link puts them.  Its misaligned
#           sites are counted by tests/kernel/mcounttab.py from the kernel's
#           own table and by `patchsite audit`, which must agree; ftrace
#           must fail at boot (it faults writing a misaligned literal and
#           disables itself) and the tracer self tests must not pass (so
#           this test can fail);
#   patched CONFIG_PATCHSITE=y, set once in a *config make with
#           PATCHSITE=/path/to/patchsite, then built with neither that nor
#           the option repeated, the tool found on PATH: every object with
#           patch sites repadded as it is made (its command names it), the
#           guard lifted by the integration, vmlinux's table written and
#           audited after the final link, nothing printed by patchsite.
#           CALL_OPS and direct calls on; no misaligned, stale or missing
#           site (audit, and the kernel's table against mcounttab.py's
#           oracle); its boot image (Image) audited as vmlinux is
#           (bootimg.sh); it boots under qemu-system-aarch64 and passes
#           the configuration's ftrace self tests (below).  Then a second
#           make (olddefconfig Image, again without PATCHSITE=) keeps the
#           option; and with a `patchsite` on PATH whose audit reports
#           findings, the relink of vmlinux fails showing patchsite's own
#           lines, and leaves no vmlinux.
#
# The self tests are the twelve that 6.12's kernel/trace/trace_selftest.c
# runs for this configuration (function, nop and function_graph tracers,
# dynamic ftrace, recursion, regs without the arch's support, fgraph
# storage): the list the same configuration built -O2, where upstream has
# CALL_OPS, passed in every run while tables.sh built that kernel (it now
# reads the two kernels of this script; a third arm64 build was a fifth
# of the kernel proofs' CPU).  The patched kernel must pass exactly these,
# the guard kernel must not.  tables.sh then damages and refills the
# tables of both kernels (KERNEL_WORK/out/call-ops-os/{guard,patched}.*).
#
# Prints the .text sizes of -Os (guard lifted) and -Os with patchsite,
# and the two -Os build times (the second build takes from ccache the
# compiles that are the first's, and says how many: its time is not the
# integration's cost).  The guard kernel boots beside the patched build,
# the patched kernel beside the checks and makes that follow its build
# (its boot's check is then the last before the sizes).
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/call-ops-os.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
B=$W/arm64-os
KCONFIG=$SRC/arch/arm64/Kconfig
# guard and patched are one configuration but for CONFIG_PATCHSITE: the
# second build takes from ccache what the first compiled (lib.sh's kbuild)
export KERNEL_CCACHE=1

proof_start "$OUT/call-ops-os" keep
mkdir -p "$B"

# contrib/linux as it would be sent: the kernel's own checkpatch, --strict
if (cd "$SRC" && perl scripts/checkpatch.pl --no-tree --strict "$OLDPWD"/contrib/linux/*.patch) \
	>"$T/checkpatch.log" 2>&1 && grep -q "total: 0 errors, 0 warnings, 0 checks" "$T/checkpatch.log" &&
	! grep "total: " "$T/checkpatch.log" | grep -qv "total: 0 errors, 0 warnings, 0 checks"; then
	ok "contrib/linux: scripts/checkpatch.pl --strict finds no error, warning or check"
else
	not_ok "contrib/linux: scripts/checkpatch.pl --strict" "$T/checkpatch.log"
fi
export KBUILD_DIR=$B
# the tool on PATH as `patchsite` (the kernel Makefile's default), for the
# builds that do not name it
mkdir -p "$T/bin" "$T/failbin"
ln -sf "$PATCHSITE" "$T/bin/patchsite"

# the ftrace self tests of this configuration, as lib.sh's selftests lists
# them (see the top)
cat >"$T/expected.tests" <<'EOF'
Testing tracer function: PASSED
Testing dynamic ftrace: PASSED
Testing ftrace recursion: PASSED
Testing ftrace recursion safe: PASSED
Testing ftrace regs(no arch support): PASSED
Testing tracer nop: PASSED
Testing tracer function_graph: PASSED
Testing fgraph storage of 1 byte: PASSED
Testing fgraph storage of 2 bytes: PASSED
Testing fgraph storage of 4 bytes: PASSED
Testing fgraph storage of 8 bytes: PASSED
Testing multiple fgraph storage on a function: PASSED
EOF

text_size() { # VMLINUX
	aarch64-linux-gnu-size -A "$1" | awk '$1 == ".text" { print $2 }'
}

# The build's wall time and its CPU time (user + system of make and every
# compiler, assembler, linker and patchsite it ran): the machine is shared,
# and CPU time is what the load does not inflate much.
build() { # NAME [MAKE-ARGS...] -> $T/NAME.{vmlinux,Image,build.log,seconds,cpu}
	local name=$1
	shift
	kernel_timed "$name" arm64 "$B" "$T/$name.build.log" "$@"
	awk '{ printf "%.0f\n", $1 }' "$T/$name.time" >"$T/$name.seconds"
	awk '{ printf "%.0f\n", $2 + $3 }' "$T/$name.time" >"$T/$name.cpu"
	kernel_copies arm64 "$B" "$T/$name"
	ccache_hits >"$T/$name.ccache"
	phase "build $name ($(cat "$T/$name.ccache"))"
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
sed -i 's/(CC_IS_CLANG || !CC_OPTIMIZE_FOR_SIZE || PATCHSITE)/(CC_IS_CLANG || y)/' "$KCONFIG"
grep -q "(CC_IS_CLANG || y)" "$KCONFIG" || die "cannot lift the CALL_OPS guard in $KCONFIG"
arm64_config "$B" size PATCHSITE=/nonexistent
cp "$B/.config" "$T/guard.config.without"
# the option asked for, the tool not there: Kconfig drops it
"$SRC/scripts/config" --file "$B/.config" -e PATCHSITE
grep -q "^CONFIG_PATCHSITE=y" "$B/.config" || die "scripts/config -e PATCHSITE did not set it"
kbuild arm64 PATCHSITE=/nonexistent olddefconfig >"$T/guard.olddefconfig.log" 2>&1 ||
	die "olddefconfig with PATCHSITE=/nonexistent failed: $(tail -n 5 "$T/guard.olddefconfig.log")"
if grep -q "^CONFIG_PATCHSITE_VERSION=0$" "$B/.config" && ! grep -q "^CONFIG_PATCHSITE=" "$B/.config" &&
	cmp -s "$T/guard.config.without" "$B/.config"; then
	ok "CONFIG_PATCHSITE=y, PATCHSITE=/nonexistent: Kconfig turns it off (PATCHSITE_VERSION=0), the .config is the one made without it"
else
	{
		grep "PATCHSITE" "$B/.config"
		diff "$T/guard.config.without" "$B/.config"
	} >"$T/guard.config.diff" 2>&1
	not_ok "CONFIG_PATCHSITE=y, PATCHSITE=/nonexistent: Kconfig turns it off" "$T/guard.config.diff"
fi
config_has "guard lifted, -Os" CC_OPTIMIZE_FOR_SIZE DYNAMIC_FTRACE_WITH_CALL_OPS
build guard PATCHSITE=/nonexistent
cp "$W/Kconfig.arm64.patched" "$KCONFIG"
# the build ran no patchsite (it would have failed): no object's command
# names it, and the option is still off
grep -l -r --include='.*.cmd' -e patchsite "$B" >"$T/guard.cmds" 2>/dev/null
ncmd=$(find "$B" -name '.*.o.cmd' | wc -l)
if [ ! -s "$T/guard.cmds" ] && [ "$ncmd" -gt 500 ] && cmp -s "$T/guard.config.without" "$B/.config" &&
	! grep -qi patchsite "$T/guard.build.log"; then
	ok "PATCHSITE=/nonexistent: the build succeeds, none of its $ncmd object commands names patchsite, the option stays off"
else
	echo "$(wc -l <"$T/guard.cmds") of $ncmd commands name patchsite" >>"$T/guard.cmds"
	not_ok "PATCHSITE=/nonexistent: the build runs no patchsite" "$T/guard.cmds"
fi

$TAB sites "$T/guard.vmlinux" >"$T/guard.sites" || die "mcounttab.py cannot read the guard kernel"
# the compiler's own sites (its __patchable_function_entries, linked and
# sorted, untouched by patchsite), by function: the oracle for the table
# of the padded kernel below
$TAB functions "$T/guard.vmlinux" >"$T/guard.functions" || die "mcounttab.py functions failed"
$TAB misaligned "$T/guard.vmlinux" >"$T/guard.misaligned" || die "mcounttab.py misaligned failed"
nmis=$(wc -l <"$T/guard.misaligned")
nsites=$(wc -l <"$T/guard.sites")
amis="?"
ps_run -e "$T/guard.audit.err" 1 "$T/guard.audit.json" -- audit --format=json "$T/guard.vmlinux" &&
	amis=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["summary"]["misaligned"])' \
		"$T/guard.audit.json" 2>/dev/null || echo "?")
rc=$ps_rc
if [ "$rc" -eq 1 ] && [ "$nmis" -gt 0 ] && [ "$amis" = "$nmis" ]; then
	ok "guard lifted, no patchsite: $nmis of $nsites sites misaligned (the kernel's table and audit agree)"
else
	echo "audit exit $rc, audit says $amis misaligned, the table $nmis" >>"$T/guard.audit.err"
	not_ok "guard lifted, no patchsite: misaligned sites counted" "$T/guard.audit.err"
fi
# the guard kernel boots beside the next build (lib.sh's side: one qemu
# thread beside make -j2), its checks read once both have ended
side guard boot_arm64 "$T/guard.Image" "$T/guard.boot.log" "$BOOT_TIMEOUT"

# --- 2. CONFIG_PATCHSITE=y -----------------------------------------------------
# set once, in a *config make that names the tool
arm64_config "$B" size PATCHSITE="$PATCHSITE"
"$SRC/scripts/config" --file "$B/.config" -e PATCHSITE
kbuild arm64 PATCHSITE="$PATCHSITE" olddefconfig >/dev/null || die "olddefconfig with CONFIG_PATCHSITE failed"
config_has "-Os with CONFIG_PATCHSITE" CC_OPTIMIZE_FOR_SIZE PATCHSITE \
	DYNAMIC_FTRACE_WITH_CALL_OPS DYNAMIC_FTRACE_WITH_DIRECT_CALLS
want=$(sh "$SRC/scripts/patchsite-version.sh" "$PATCHSITE")
if [ "$want" -ge 100 ] && grep -q "^CONFIG_PATCHSITE_VERSION=$want$" "$B/.config" &&
	ps_run 0 "$T/version.txt" -- --version; then
	ok "PATCHSITE_VERSION=$want ($(cat "$T/version.txt"))"
else
	grep PATCHSITE "$B/.config" >"$T/version.msg"
	not_ok "PATCHSITE_VERSION is patchsite's version, at least 100" "$T/version.msg"
fi
# built without PATCHSITE= and without the option given again: make's
# default `patchsite`, found on PATH
PATH="$T/bin:$PATH" build patched
# its boot beside the guard's, then beside the checks and makes that follow
# (they touch $B, not the copied Image); its checks read after the relink
side patched boot_arm64 "$T/patched.Image" "$T/patched.boot.log" "$BOOT_TIMEOUT"
# the kernel as it ships: its Image audited as its vmlinux is (before the
# makes below write over $B)
bootimg_check arm64 "$B" "arm64 -Os with CONFIG_PATCHSITE"
phase "patched boot image audited"
side_wait guard
selftests "$T/guard.boot.log" >"$T/guard.tests"
# 6.12's ftrace_call_adjust() returns 0 for a misaligned literal and
# ftrace_process_locs() keeps a record at address 0: the first update
# faults on it ("ftrace bug ... faulted on modifying 0x0"; seen elsewhere:
# a BUG in patch_map), ftrace disables itself, the tracer self tests do not
# run, and the kernel may still reach init
why=$(tr -d '\r' <"$T/guard.boot.log" | grep -m1 -o 'ftrace bug\|ftrace faulted on [a-z]*\|Internal error[^:]*\|BUG[^[]*\|Kernel panic[^-]*' || true)
ng=$(wc -l <"$T/guard.tests")
if ! cmp -s "$T/expected.tests" "$T/guard.tests" && [ -n "$why" ]; then
	ok "guard lifted, no patchsite: $why; $ng of the configuration's $(wc -l <"$T/expected.tests") self tests PASSED"
else
	diff "$T/expected.tests" "$T/guard.tests" >>"$T/guard.boot.log" 2>&1
	not_ok "guard lifted, no patchsite: fails the configuration's self tests, with ftrace's failure named" "$T/guard.boot.log"
fi

ps_run -e "$T/patched.audit.err" 0 "$T/patched.audit.json" -- audit --format=json "$T/patched.vmlinux"
rc=$ps_rc
$TAB sites "$T/patched.vmlinux" >"$T/patched.sites" || die "mcounttab.py cannot read the patched kernel"
$TAB misaligned "$T/patched.vmlinux" >"$T/patched.misaligned" || die "mcounttab.py misaligned failed"
ps_run -e "$T/patched.record.err" 0 "$T/patched.record" -- record "$T/patched.vmlinux"
rrc=$ps_rc
cat "$T/patched.record.err" >>"$T/patched.audit.err"
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

# every object of vmlinux.a with patch sites (a __patchable_function_entries
# section) went through repad: its command names it
objects_repadded "$B" aarch64-linux-gnu-readelf __patchable_function_entries "$T/patched"
if [ "$nsit" -gt 300 ] && [ ! -s "$T/patched.norepad" ] && ! grep -qi patchsite "$T/patched.build.log"; then
	ok "CONFIG_PATCHSITE: each of the $nsit objects of vmlinux.a with patch sites made with \`patchsite repad --in-place --quiet\` (found on PATH; $nrep of the $no objects in all), nothing printed by patchsite"
else
	grep -i patchsite "$T/patched.build.log" >>"$T/patched.norepad"
	echo "$(wc -l <"$T/patched.norepad") of the $nsit objects with sites not repadded, or patchsite's lines above" >>"$T/patched.norepad"
	not_ok "CONFIG_PATCHSITE: every object with sites repadded, the build quiet" "$T/patched.norepad"
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

# the option persists: a second make, a *config target included, with
# neither PATCHSITE= nor the option given again
PATH="$T/bin:$PATH" kbuild arm64 olddefconfig Image >"$T/again.log" 2>&1
rc=$?
ps_run -e "$T/again.audit" 0 "$T/again.audit" -- audit "$B/vmlinux"
arc=$ps_rc
if [ "$rc" -eq 0 ] && grep -q "^CONFIG_PATCHSITE=y" "$B/.config" &&
	grep -q "^CONFIG_PATCHSITE=y" "$B/include/config/auto.conf" && [ "$arc" -eq 0 ]; then
	ok "CONFIG_PATCHSITE persists: make olddefconfig Image again, no PATCHSITE=, keeps it (vmlinux $(cmp -s "$B/vmlinux" "$T/patched.vmlinux" && echo unchanged || echo relinked), audit clean)"
else
	echo "make exit $rc, audit exit $arc; $(grep PATCHSITE "$B/.config")" >>"$T/again.log"
	not_ok "CONFIG_PATCHSITE persists across makes without PATCHSITE=" "$T/again.log"
fi

# a failing audit fails the link with patchsite's own lines: a `patchsite`
# on PATH whose audit reads the guard kernel (misaligned sites); the
# objects' commands are unchanged, so only vmlinux is linked again
cat >"$T/failbin/patchsite" <<EOF
#!/bin/sh
[ "\$1" = audit ] && exec "$PATCHSITE" audit "$T/guard.vmlinux"
exec "$PATCHSITE" "\$@"
EOF
chmod +x "$T/failbin/patchsite"
ps_run -e "$T/fail.expected" 1 "$T/fail.expected" -- audit "$T/guard.vmlinux" ||
	die "audit of the guard kernel did not report findings (exit 1): $(head -n 3 "$ps_msg")"
rm -f "$B/vmlinux"
PATH="$T/failbin:$PATH" kbuild arm64 Image >"$T/fail.log" 2>&1
rc=$?
head -n 20 "$T/fail.expected" >"$T/fail.first"
missing=$(grep -c -v -x -F -f "$T/fail.log" "$T/fail.first")
if [ "$rc" -ne 0 ] && [ "$missing" -eq 0 ] && grep -q -x -F "$(tail -n 1 "$T/fail.expected")" "$T/fail.log" &&
	grep -q "Failed to audit the patch-site table of vmlinux" "$T/fail.log" && [ ! -e "$B/vmlinux" ]; then
	ok "CONFIG_PATCHSITE, audit findings: the link fails (exit $rc) showing patchsite's first 20 lines and its last, no vmlinux left"
else
	echo "make exit $rc, $missing of patchsite's first 20 lines not shown, vmlinux $([ -e "$B/vmlinux" ] && echo left || echo removed)" >>"$T/fail.log"
	not_ok "CONFIG_PATCHSITE, audit findings: the link fails with patchsite's lines" "$T/fail.log"
fi
# and links again with the real tool
PATH="$T/bin:$PATH" kbuild arm64 Image >"$T/relink.log" 2>&1 || {
	tail -n 20 "$T/relink.log" >&2
	die "the relink with the tool on PATH failed"
}

# the patched kernel's boot (started beside the guard's, after its build:
# the checks since, and the three makes above, ran beside it)
side_wait patched
if self_tests "$T/patched.boot.log" "$T/patched.tests" "$T/expected.tests" &&
	! grep -q "Misaligned patch-site" "$T/patched.boot.log" && reached_init "$T/patched.boot.log"; then
	ok "PATCHSITE: boots and passes the configuration's $nt ftrace self tests, no \"Misaligned patch-site\""
else
	not_ok "PATCHSITE: the configuration's self tests PASSED" "$T/patched.boot.log"
fi

# --- 3. sizes and build times -------------------------------------------------
g=$(text_size "$T/guard.vmlinux")
p=$(text_size "$T/patched.vmlinux")
tg=$(cat "$T/guard.seconds")
tp=$(cat "$T/patched.seconds")
cg=$(cat "$T/guard.cpu")
cp=$(cat "$T/patched.cpu")
echo "# .text bytes: -Os (guard lifted) $g, -Os with patchsite $p"
python3 -c "import sys; g,p=map(int,sys.argv[1:]); print('# the padding costs %d bytes (%.2f%%) over -Os' % (p-g, 100.0*(p-g)/g))" "$g" "$p"
python3 -c "import sys; a,b,c,d=map(int,sys.argv[1:]); print('# build: -Os %d s wall, %d s CPU; -Os with PATCHSITE %d s wall (%+.1f%%; beside the guard boot), %d s CPU (%+.1f%%)' % (a, c, b, 100.0*(b-a)/a, d, 100.0*(d-c)/c))" "$tg" "$tp" "$cg" "$cp"
echo "# ccache: -Os $(cat "$T/guard.ccache"); -Os with PATCHSITE $(cat "$T/patched.ccache") (its time is then not the integration's cost: doc/kernel.md measured that without ccache)"
if [ "$p" -gt "$g" ]; then
	ok "text: -Os with patchsite is larger than plain -Os (the padding: $((p - g)) bytes)"
else
	not_ok "text: -Os with patchsite larger than plain -Os ($p against $g)"
fi

finish
