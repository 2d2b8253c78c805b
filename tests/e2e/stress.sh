#!/bin/sh
# tests/e2e/stress.sh - threads call traced functions in a loop while another
# thread attaches and detaches ops on every one of them in rounds (issue 20;
# fixtures/stress/stress.c says what is checked): no crash, no lost or
# doubled call for an ops attached throughout, no wrong result.
#
# x86_64, natively: 20,000 functions (bench/attach/gen.py), 2 workers, for
# each site flavour below (embedded with patchsite embed, the runtime linked
# statically), and once with the harness and the runtime under ASan+UBSan.
# aarch64 and riscv64 (=8,4 with C), under qemu-user: 2,000 functions (the
# core is the same).
#
# Oracle: the program's own count of its calls and its own results, made
# outside any traced code; the runtime's ops must match them exactly.
#
# Usage: PATCHSITE=./patchsite sh tests/e2e/stress.sh   (SECS=3 by default)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SECS=${SECS:-3}
pass=0
fail=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-stress.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"
ps_need_patchsite

a64_cross=$(arch_var CROSS_aarch64)
a64_run=$(arch_var RUN_aarch64)
rv_cross=$(arch_var CROSS_riscv64)
rv_run=$(arch_var RUN_riscv64)

# build NAME CC TRACED-FLAGS LINK-FLAGS RT-CFLAGS HARNESS-FLAGS N CROSS
# -> $tmp/NAME/raw (not embedded); each step's output in $tmp/NAME.log.
# A step whose inputs (command, flags, source) another flavour already built
# is not done again: traced.c per N, traced.o per CC, TRACED-FLAGS and N, the
# runtime per CROSS and RT-CFLAGS, stress.o per CC and HARNESS-FLAGS (in
# $tmp/shared/, named by those inputs).  The same command on the same input
# makes the same bytes, so each flavour links what it linked before: the
# ASan row's traced.o is gcc-pfe5-pie's (20,000 functions, the slowest
# compile of the script), the four plain x86 rows share one runtime.
shared() { # KEY...: $tmp/shared/<a name for KEY>
	mkdir -p "$tmp/shared" && echo "$tmp/shared/$(echo "$*" | md5sum | cut -c1-16)"
}
build() {
	_d=$tmp/$1
	_gen=$(shared gen "$7").c
	_obj=$(shared traced "$2" "$3" "$7").o
	_rt=$(shared runtime "$8" "$5")
	_har=$(shared stress "$2" "$6").o
	mkdir -p "$_d" &&
	{ [ -f "$_gen" ] || { python3 "$root/bench/attach/gen.py" "$7" >"$_gen.new" && mv "$_gen.new" "$_gen"; }; } &&
	{ [ -f "$_obj" ] || $2 -O1 $3 -c -o "$_obj" "$_gen"; } &&
	{ [ -f "$_rt/libpatchsite-callops.a" ] || { mkdir -p "$_rt" &&
		make -s --no-print-directory -C "$root/runtime" O="$_rt" CROSS="$8" CFLAGS="-O2 -g $5"; }; } &&
	{ [ -f "$_har" ] || $2 -O2 -g -Wall -Wextra -Werror $6 -I"$root/runtime" -c -o "$_har" \
		"$root/fixtures/stress/stress.c"; } &&
	$2 $4 $6 -o "$_d/raw" "$_har" "$_obj" "$_rt/libpatchsite-callops.a" -lpthread
}

# one NAME RUNNER: embed, then run for SECS seconds with 2 workers
one() {
	_d=$tmp/$1
	if ! ps_check "$1: embed" 0 "$_d/embed.out" -- embed "$_d/raw" -o "$_d/prog"; then
		return
	fi
	$2 "$_d/prog" "$SECS" 2 >"$_d/out" 2>"$_d/err"
	_rc=$?
	if [ "$_rc" -eq 0 ]; then
		ok "$1: $(cat "$_d/out")"
	else
		cat "$_d/out" "$_d/err" >"$_d/why"
		not_ok "$1: stress run failed (exit status $_rc)" "$_d/why"
	fi
	# the summary is the oracle's: checked here as well as by the program
	check "$1: summary says nothing lost, doubled or wrong" \
		grep -Eq ' lost 0 doubled 0 other 0 wrong-results 0 b-calls [1-9][0-9]* c-calls [1-9]' "$_d/out"
}

n86=20000
pfe="-fpatchable-function-entry=5"
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
# name | compiler | traced functions' flags | link flags | runtime's extra
# CFLAGS | harness' extra flags ('-': none)
while IFS='|' read -r name cc flags link rtflags hflags; do
	[ "$rtflags" = - ] && rtflags=
	[ "$hflags" = - ] && hflags=
	if build "$name" "$cc" "$flags" "$link" "$rtflags" "$hflags" "$n86" "" >"$tmp/$name.log" 2>&1; then
		ok "$name: built"
		one "$name" ""
	else
		not_ok "$name: build" "$tmp/$name.log"
	fi
done <<EOT
gcc-pfe5-pie|gcc|$pfe -fPIE|-pie|-|-
gcc-fentry-static|gcc|-pg -mfentry -fno-PIE|-static -no-pie|-|-
gcc-nopmcount-cet|gcc|-pg -mfentry -mnop-mcount -fcf-protection=full -fno-PIE|-no-pie|-|-
clang-pfe5-cet|clang|$pfe -fcf-protection=full -fPIE|-pie|-|-
gcc-pfe5-asan|gcc|$pfe -fPIE|-pie|$san|$san
EOT

# aarch64: the core's list and batches under qemu
if build a64 "${a64_cross}gcc" "-fpatchable-function-entry=4,2 -falign-functions=8" -static "" "" 2000 \
	"$a64_cross" >"$tmp/a64.log" 2>&1; then
	ok "a64: built"
	one a64 "$a64_run"
else
	not_ok "a64: build" "$tmp/a64.log"
fi
# riscv64: Linux 6.16's layout with the C extension
if build rv64 "${rv_cross}gcc" "-fpatchable-function-entry=8,4 -falign-functions=8" -static "" "" 2000 \
	"$rv_cross" >"$tmp/rv64.log" 2>&1; then
	ok "rv64: built"
	one rv64 "$rv_run"
else
	not_ok "rv64: build" "$tmp/rv64.log"
fi
finish
