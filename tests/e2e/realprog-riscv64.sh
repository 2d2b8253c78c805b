#!/bin/sh
# End-to-end test of `patchsite embed` and the riscv64 runtime (issue 21) on
# a program none of us wrote: Debian's expat source package, cross-built for
# riscv64 with Linux 6.16's CALL_OPS layout (-fpatchable-function-entry=8,4
# with the C extension, -falign-functions=8), its own test suite (runtests,
# the first program expat's `make check` runs: 365 tests) embedded and run
# under qemu-riscv64 while a preloaded tracer keeps a counting ops on every
# traced function and a thread attaches and detaches other ops in rounds.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/realprog-riscv64.sh  (as root, or with sudo)
#
# The source: tests/e2e/debsrc.sh (`apt-get source expat` once, cached in
# build/expat-src, EXPAT_CACHE), as realprog-x86.sh has it.  Built with
# expat's buildconf.sh and configure --host=riscv64-linux-gnu
# --disable-shared, `make -C lib libexpatinternal.la` and `make -C tests
# runtests`.  The tracer is realprog-x86's (fixtures/realprog-x86/churn.c,
# its header says what it does), built here for riscv64 and linked with the
# riscv64 libpatchsite-callops.so; realprog-x86.py checks its summary.
#
# Cases:
#   source, build      expat's source is there; it builds for riscv64
#   unembedded         runtests -v under qemu-riscv64: exit 0, N `PASS:`
#                      lines and `100%: Checks: N, Failed: 0`
#   embed              patchsite embed exits 0
#   embedded           no tracer: the same stdout and stderr, exit 0
#   churned            steady ops on every function and the churn thread:
#                      the same stdout and stderr, exit 0
#   churned: rounds    no API call failed, at least MINROUNDS (20) rounds,
#                      attachments made, calls counted while attached
#   churned: tests     the steady ops counted as many calls of tcase_add_test
#                      (one per test) as the suite says it ran and passed
# Takes about 4 minutes on a loaded 2-core machine (the churned run under
# qemu is most of it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
PY=/usr/bin/python3
MINROUNDS=${MINROUNDS:-20}
CHECK="$PY $here/realprog-x86.py"
EXPAT_CACHE=${EXPAT_CACHE:-$root/build/expat-src}

. "$here/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
ps_init "$work"
. "$here/debsrc.sh"
ps_need_patchsite

cross=$(arch_var CROSS_riscv64)
QEMU="$(arch_var RUN_riscv64)"
for t in "${cross}gcc" "${cross}nm" make autoreconf libtoolize timeout cmp "$PY" apt-get dpkg-source; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done

if debsrc expat "$EXPAT_CACHE" expat/lib/xmlparse.c expat/tests/runtests.c expat/buildconf.sh; then
	ok "source ($debsrc_how)"
else
	not_ok "source: apt-get source expat"; finish
fi

# build: a copy of the tree (buildconf writes into it), the runtime, the tracer
cp -R "$debsrc_dir" "$work/src"
ex=$work/src/expat
pfe="-O2 -g -fpatchable-function-entry=8,4 -falign-functions=8"
if (cd "$ex" && ./buildconf.sh && ./configure --host="${cross%-}" CC="${cross}gcc" \
	CXX="${cross}g++" --disable-shared --without-docbook --without-examples \
	--without-xmlwf CFLAGS="$pfe" CXXFLAGS="$pfe" && make -C lib libexpatinternal.la &&
	make -C tests runtests) >"$work/build.log" 2>&1 &&
	mkdir -p "$work/rt" && make -s -C "$root/runtime" O="$work/rt" CROSS="$cross" >>"$work/build.log" 2>&1 &&
	"${cross}gcc" -O2 -g -Wall -Wextra -Werror -I"$root/runtime" -fPIC -shared -o "$work/rt/churn.so" \
		"$root/fixtures/realprog-x86/churn.c" -L"$work/rt" -lpatchsite-callops -lpthread \
		-Wl,-rpath,'$ORIGIN' >>"$work/build.log" 2>&1; then
	ok "build: runtests for riscv64 (=8,4 with C), the runtime and the tracer"
else
	not_ok "build" "$work/build.log"; finish
fi
bin=$ex/tests/runtests

# runp TAG PROG [VAR=VALUE...]: PROG -v under qemu-riscv64 in its own directory
runp() {
	_t=$1 _p=$2
	shift 2
	_e=
	for _v in "$@"; do _e="$_e -E $_v"; done
	mkdir -p "$work/$_t"
	# shellcheck disable=SC2086
	(cd "$work/$_t" && timeout 600 $QEMU $_e "$_p" -v) >"$work/$_t.out" 2>"$work/$_t.err"
	rc=$?
}
passed() { # OUT: the suite's own verdict
	_n=$(grep -c '^PASS: ' "$1")
	grep -qx "100%: Checks: $_n, Failed: 0" "$1" && [ "$_n" -gt 0 ] ||
		{ echo "# $_n PASS lines"; tail -n 5 "$1"; return 1; }
}
same_run() { # TAG: exit 0, the suite passed, the unembedded run's stdout and stderr
	[ "$rc" -eq 0 ] || { echo "# exit status $rc"; tail -n 10 "$work/$1.err"; return 1; }
	passed "$work/$1.out" || return 1
	cmp "$work/orig.out" "$work/$1.out" && cmp "$work/orig.err" "$work/$1.err"
}
pycheck() { # NAME ARG...: realprog-x86.py ARG...; its first line completes NAME
	_pc=$1
	shift
	if $CHECK "$@" >"$work/py.out" 2>&1; then
		ok "$_pc: $(head -n 1 "$work/py.out")"
	else
		not_ok "$_pc" "$work/py.out"
	fi
}

runp orig "$bin"
if [ "$rc" -eq 0 ] && passed "$work/orig.out" >"$work/passed.log"; then
	ok "unembedded: exit 0, the suite passes ($(grep -c '^PASS: ' "$work/orig.out") tests)"
else
	not_ok "unembedded: exit 0, the suite passes" "$work/passed.log"; finish
fi
"${cross}nm" "$bin" >"$work/nm"

if ps_run 0 "$work/embed.out" -- embed "$bin" -o "$work/runtests.emb"; then
	ok "embed"
else
	not_ok "embed" "$ps_msg"; finish
fi
runp emb "$work/runtests.emb"
check "embedded, no tracer: same output as unembedded, exit 0" same_run emb

runp churn "$work/runtests.emb" LD_PRELOAD="$work/rt/churn.so" CHURN_OUT="$work/churn.sum" \
	CHURN_STEADY=1 CHURN_ROUNDS=1
check "churned (steady ops on all, churn thread): same output as unembedded, exit 0" same_run churn
pycheck "churned: rounds" churn "$work/churn.sum" "$MINROUNDS"
pycheck "churned: tests" passes "$work/churn.sum" "$work/nm" "$work/churn.out" tcase_add_test
finish
