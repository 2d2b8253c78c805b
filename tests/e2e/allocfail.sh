#!/bin/sh
# Allocation failure: every memory allocation of a representative run fails
# in turn, and patchsite says so in one line (issue 19).
#
#   make all fixtures
#   PATCHSITE_PLAIN=./patchsite sh tests/e2e/allocfail.sh
#
# PATCHSITE_PLAIN is the plain build: tests/hostile/allocshim.c replaces
# malloc, which ASan does too.  For each case (record, record --format=json,
# record --in-place on a copy, record --in-place -o, audit of a kernel
# package directory, repad, repad --in-place, pin, embed on arm64 and on
# x86_64 (where several layouts are probed), on fixtures) a
# first run counts the allocations made after main() starts (allocshim's
# ALLOCSHIM_COUNT; libelf's, libdw's and zlib's included); then a run per N
# fails the Nth (every N up to ALLOCFAIL_MAX_RUNS, default 400, an even
# spread beyond) and the outcome must be one of:
#   - exit 2, exactly one line on stderr, `patchsite: FILE: out of memory
#     for WHAT...` (or `while WHAT`), never "a bug", and the work directory
#     exactly as it was before the run (inputs unchanged, no output, no
#     temporary, no journal);
#   - the same result as the counting run (exit status, stdout, stderr and
#     every file of the work directory byte for byte): the failed allocation
#     was one a library retries or does without.
# Never a signal.  Each failure is logged by the shim (ALLOCSHIM_LOG), so a
# run that did not fail anything is counted apart and cannot pass as either.
#
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`; exits 1 if
# anything failed.  ALLOCFAIL_ONLY=NAME,... runs some cases; ALLOCFAIL_WHERE=1
# adds to each wrong outcome the patchsite functions that made the failed
# allocation (addr2line; development).

set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures
max_runs=${ALLOCFAIL_MAX_RUNS:-400}
only=${ALLOCFAIL_ONLY:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-allocfail.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
started=$(date +%s)

. "$here/lib.sh"
ps_init "$tmp"
die() { echo "allocfail.sh: $*" >&2; echo "$pass passed, $((fail + 1)) failed"; exit 1; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

PATCHSITE_PLAIN=$(abs "${PATCHSITE_PLAIN:-$root/patchsite}")
[ -x "$PATCHSITE_PLAIN" ] || die "no plain patchsite at $PATCHSITE_PLAIN (make all)"
for tool in cc gcc gzip xz zstd cmp diff; do
	command -v "$tool" >/dev/null 2>&1 || die "missing tool $tool"
done
for f in "$fix/out/x86_64-fentry/exec" "$fix/out/x86_64-fentry/vmlinux.o" \
	"$fix/out/aarch64-callops/exec" "$fix/out/riscv64-mcount/lib.o" \
	"$fix/repad/out/a.o" "$fix/embed/out/prog-dyn" "$fix/minikernel/out/x86_64-pad.elf" \
	"$fix/minikernel/out/riscv64.elf"; do
	[ -f "$f" ] || die "no fixture $f (make fixtures)"
done

shim=$tmp/allocshim.so
if cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$shim" "$root/tests/hostile/allocshim.c" -ldl \
	>"$tmp/msg" 2>&1; then
	ok "allocshim.so builds"
else
	not_ok "allocshim.so builds" "$tmp/msg"
	echo "$pass passed, $fail failed"
	exit 1
fi

# The shim fails what it is asked to, and only after main(): a tiny program
# whose first allocation in main fails, and whose count is exact.
cat >"$tmp/probe.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
	void *a = malloc(10), *b = calloc(2, 8), *c = strdup("x");
	printf("%d %d %d\n", a != NULL, b != NULL, c != NULL);
	return 0;
}
EOF
if cc -O0 -fno-builtin -o "$tmp/probe" "$tmp/probe.c" >"$tmp/msg" 2>&1; then
	ALLOCSHIM_NTH=3 LD_PRELOAD=$shim "$tmp/probe" >"$tmp/probe.3" 2>&1
	ALLOCSHIM_COUNT=$tmp/probe.count LD_PRELOAD=$shim "$tmp/probe" >/dev/null 2>&1
	# 3 allocations, and stdout's buffer at the first printf
	if [ "$(cat "$tmp/probe.3")" = "1 1 0" ] && [ "$(cat "$tmp/probe.count")" = 4 ]; then
		ok "the shim fails exactly the Nth allocation after main() (strdup included) and counts them"
	else
		echo "NTH=3: $(cat "$tmp/probe.3"); count: $(cat "$tmp/probe.count")" >"$tmp/msg"
		not_ok "the shim fails exactly the Nth allocation after main() (strdup included) and counts them" "$tmp/msg"
	fi
else
	not_ok "probe builds" "$tmp/msg"
fi

# --- a kernel package: vmlinux and modules, plain and compressed ------------
pkg=$tmp/pkg-src
kdir=$pkg/lib/modules/6.12.0-test/kernel
mkdir -p "$kdir/a" "$kdir/b" "$pkg/boot"
cat >"$tmp/mod.c" <<'EOF'
static const char modinfo[] __attribute__((section(".modinfo"), used)) = "license=GPL";
int counter;
__attribute__((noinline)) int m_add(int a, int b) { counter++; return a + b; }
__attribute__((noinline)) int m_neg(int a) { counter++; return -a; }
EOF
for name in a/one a/two b/three b/four; do
	gcc -O2 -pg -mfentry -mrecord-mcount -fno-pie -mcmodel=kernel -ffreestanding \
		-fno-asynchronous-unwind-tables -c -o "$kdir/$name.ko" "$tmp/mod.c" ||
		die "cannot compile $name.ko"
done
gzip -9 "$kdir/a/two.ko"
xz "$kdir/b/three.ko"
zstd -q --rm "$kdir/b/four.ko"
cp "$fix/minikernel/out/x86_64-pad.elf" "$pkg/boot/vmlinux-6.12.0-test"

# --- the cases --------------------------------------------------------------
# Each SETUP fills the work directory $w; the command runs in $w.
setup_record() { cp "$fix/out/x86_64-fentry/exec" "$w/img"; }
setup_object() { cp "$fix/out/x86_64-fentry/vmlinux.o" "$w/img.o"; }
setup_arm64() { cp "$fix/out/aarch64-callops/exec" "$w/img"; }
setup_kernel() { cp "$fix/minikernel/out/riscv64.elf" "$w/vmlinux"; }
setup_pkg() { cp -R "$pkg/." "$w/"; }
setup_repad() { cp "$fix/repad/out/a.o" "$w/a.o"; }
setup_pin() { cp "$fix/out/riscv64-mcount/lib.o" "$w/lib.o"; }
setup_embed() { cp "$fix/embed/out/prog-dyn" "$w/prog"; }
setup_embed_x86() { cp "$fix/out/x86_64-fentry/exec" "$w/prog"; }

want() { [ -z "$only" ] || case ",$only," in *",$1,"*) return 0 ;; esac; [ -z "$only" ]; }

# the patchsite functions in the failed allocation's backtrace (ALLOCFAIL_WHERE)
where() {
	sed -n 's/.*patchsite(+\(0x[0-9a-f]*\)).*/\1/p' "$tmp/trace" | head -n 8 |
		while read -r a; do printf '0x%x\n' $((a - 1)); done |
		addr2line -e "$PATCHSITE_PLAIN" -f -s | paste -d' ' - - | grep -v ' mem\.c:' | head -n 4 |
		tr '\n' '<' | sed 's/^/      at /; s/<$/\n/'
}

# one run in a fresh copy of the pristine directory; sets rc
one_run() {
	rm -rf "$w"
	cp -R "$tmp/pristine" "$w"
	rm -f "$tmp/trace"
	# 0 or 2 are judged by the caller against the counting run; any other
	# status is a wrong outcome it reports (a signal, a bug)
	ps_run -P -C "$w" -e "$tmp/err" \
		-x "env ALLOCSHIM_NTH=$1 ALLOCSHIM_LOG=$tmp/log ALLOCSHIM_COUNT=$tmp/count ${ALLOCFAIL_WHERE:+ALLOCSHIM_TRACE=$tmp/trace} LD_PRELOAD=$shim" \
		'[02]' "$tmp/out" -- $cmd
	rc=$ps_rc
}

# alloc_case NAME SETUP COMMAND...
alloc_case() {
	name=$1
	setup=$2
	shift 2
	want "$name" || return 0
	cmd="$*"
	w=$tmp/work
	rm -rf "$tmp/pristine" "$tmp/ref"
	mkdir "$tmp/pristine"
	(w=$tmp/pristine; $setup) || die "$name: setup failed"
	rm -f "$tmp/count" "$tmp/log"
	one_run 0
	rc0=$rc
	mv "$tmp/out" "$tmp/ref.out"
	mv "$tmp/err" "$tmp/ref.err"
	cp -R "$w" "$tmp/ref"
	count=$(sort -n "$tmp/count" 2>/dev/null | tail -n 1)
	if [ "$rc0" -ne 0 ] || [ -s "$tmp/ref.err" ] || [ -z "$count" ] || [ "$count" -lt 1 ] || [ -s "$tmp/log" ]; then
		{ echo "exit $rc0, count '$count'"; cat "$tmp/ref.err"; } >"$tmp/msg"
		not_ok "$name: the counting run succeeds ($cmd)" "$tmp/msg"
		return 0
	fi
	step=1
	[ "$count" -gt "$max_runs" ] && step=$(((count + max_runs - 1) / max_runs))
	n=1 nfail=0 nsame=0 nbad=0 nnone=0
	: >"$tmp/bad"
	while [ "$n" -le "$count" ]; do
		rm -f "$tmp/log"
		one_run "$n"
		why=
		if [ ! -s "$tmp/log" ]; then
			nnone=$((nnone + 1))	# nothing failed: must be the counting run's result
		fi
		if [ "$rc" -ge 128 ]; then
			why="killed by signal $((rc - 128))"
		elif grep -q 'a bug\|AddressSanitizer\|runtime error\|LeakSanitizer' "$tmp/err"; then
			why="says: $(head -n 1 "$tmp/err")"
		elif [ "$rc" -eq 2 ] && [ -s "$tmp/log" ]; then
			if [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
				why="exit 2 with $(wc -l <"$tmp/err") lines on stderr: $(head -n 3 "$tmp/err" | tr '\n' '|')"
			elif ! grep -q '^patchsite: .*: out of memory \(for\|while\) ' "$tmp/err"; then
				why="exit 2 but not 'out of memory for/while WHAT': $(cat "$tmp/err")"
			elif ! diff -r "$tmp/pristine" "$w" >"$tmp/diff" 2>&1; then
				why="exit 2 but the directory changed: $(head -n 3 "$tmp/diff" | tr '\n' '|')"
			else
				nfail=$((nfail + 1))
			fi
		elif [ "$rc" -eq "$rc0" ] && cmp -s "$tmp/out" "$tmp/ref.out" && cmp -s "$tmp/err" "$tmp/ref.err" &&
			diff -r "$tmp/ref" "$w" >/dev/null 2>&1; then
			nsame=$((nsame + 1))
		else
			why="exit $rc, not the counting run's result: $(head -n 2 "$tmp/err" | tr '\n' '|')"
		fi
		if [ -n "$why" ]; then
			nbad=$((nbad + 1))
			echo "N=$n ($(cat "$tmp/log" 2>/dev/null | tr '\n' ' ')): $why" >>"$tmp/bad"
			[ -n "${ALLOCFAIL_WHERE:-}" ] && [ -s "$tmp/trace" ] && where >>"$tmp/bad"
		fi
		n=$((n + step))
	done
	runs=$((nfail + nsame + nbad))
	echo "# $name: $count allocations, $runs runs (every ${step}th): $nfail out of memory, $nsame same result, $nnone failed nothing, $nbad wrong"
	if [ "$nbad" -eq 0 ] && [ "$nfail" -gt 0 ]; then
		ok "$name: each failed allocation is one 'out of memory for' line and exit 2, or the same result"
	else
		not_ok "$name: each failed allocation is one 'out of memory for' line and exit 2, or the same result ($nbad wrong)" "$tmp/bad"
	fi
}

alloc_case record setup_record record img
alloc_case record-json setup_object record --format=json img.o
alloc_case record-symbolize setup_kernel record --symbolize vmlinux
alloc_case record-inplace setup_arm64 record --in-place img
alloc_case record-inplace-o setup_kernel record --in-place -o new vmlinux
alloc_case audit-package setup_pkg audit -j1 boot lib
alloc_case audit-package-j2 setup_pkg audit -j2 --format=json boot lib
alloc_case repad setup_repad repad a.o -o out.o
alloc_case repad-inplace setup_repad repad --in-place a.o
alloc_case pin setup_pin pin lib.o
alloc_case embed setup_embed embed prog -o out
alloc_case embed-x86 setup_embed_x86 embed prog -o out

echo "# $(($(date +%s) - started)) s"
finish
