#!/bin/sh
# End-to-end test of `patchsite embed` and the x86_64 runtime (issue 20) on a
# program none of us wrote, natively: Debian's expat source package, built
# as Debian builds it plus -pg -mfentry, its own test suite embedded and run
# while a preloaded tracer attaches and detaches ops to all its functions
# from a background thread, live.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/realprog-x86.sh  (as root, or with sudo)
#
# Why expat: its test suite is real and quick (runtests and runtestspp, the
# two programs its `make check` runs: 365 tests each, the second the same
# tests compiled as C++; a few seconds, one process each, a line per test
# and a pass/fail verdict), it builds in well under a minute, and its
# library code is the traced program's own (linked statically into the
# test programs).  Debian's lua5.4 source has no test suite (Lua's tests
# are a separate upstream tarball), and zlib's `make test` is one example
# run and one pipe.  One of expat's tests times itself
# (test_big_tokens_take_linear_time: its cases' clock() within 15x of the
# first's); tracing slows all cases alike, and it has passed in every run.
#
# Needs an x86_64 Debian 12 machine with what scripts/install-deps.sh
# installs (dpkg-dev for apt-get source, autoconf, automake and libtool for
# expat's buildconf.sh as Debian's rules run it, g++, gprof) and `make
# fixtures` (fixtures/realprog-x86: the tracer churn.so, the runtime it
# links, churn-stats.so, fixsalt.so).  The source is fetched with `apt-get
# source expat` once and cached in build/expat-src (EXPAT_CACHE) by
# tests/e2e/debsrc.sh.
#
# Build: expat's buildconf.sh and configure (--disable-shared, so the tests
# link the library statically) with Debian's flags (dpkg-buildflags CFLAGS
# and CPPFLAGS, -Wall, LDFLAGS -Wl,-Bsymbolic-functions and
# dpkg-buildflags'; gcc's default PIE) plus FLAVOUR (-pg -mfentry, linked
# with -pg too: every run writes a gmon.out, only the unembedded one's is
# read), then
# `make -C lib libexpatinternal.la` and `make -C tests runtests runtestspp`;
# the two programs are kept in build/expat-x86 (EXPAT_BUILD) for the next
# run, by source and flags.
#
# The tracer (fixtures/realprog-x86/churn.c, LD_PRELOAD, linked with
# libpatchsite-callops.so): CHURN_STEADY=1 attaches a counting ops to every
# traced function before main and leaves it there; CHURN_ROUNDS=1 starts a
# thread that attaches and detaches other ops in rounds until exit (every
# API form; one, two and, with the steady ops, three ops on a function).
# fixsalt.so fixes expat's hash salt (arc4random_buf), without which some
# 60 functions' call counts differ from run to run (see fixsalt.c).
#
# Cases, for each of runtests and runtestspp (P):
#   source            expat's source is there (apt-get source, or the cache)
#   buildconf, configure, build
#   P unembedded      the suite passes: exit 0, `100%: Checks: N, Failed: 0`,
#                     N `PASS:` lines (with fixsalt.so; gmon.out written)
#   P gprof           gprof reads its gmon.out (the call-count oracle)
#   P embed           patchsite embed exits 0
#   P embedded        the embedded program, no tracer: same stdout and
#                     stderr as unembedded, exit 0
#   P churned         steady ops and churn thread together: same output,
#                     exit 0
#   P churned: sites  the runtime traces exactly the functions that call
#                     __fentry__ (objdump of the unembedded program)
#   P churned: rounds no API call failed, >= MINROUNDS (20) rounds,
#                     attachments made, calls counted while attached
#   P churned: counts the steady ops counted, for every function, as many
#                     calls as gprof counted in the unembedded run; at least
#                     as many for main (called from libc, which gprof does
#                     not see) and for the functions gprof folds GCC's
#                     .part/.isra clones into (realprog-x86.py says why)
#   P churned: tests  the steady ops counted as many calls of tcase_add_test
#                     (minicheck: one per test) as the suite's verdict
#                     `100%: Checks: N, Failed: 0` says and as it printed
#                     `PASS:` lines
#   P steady alone    the steady ops alone: same output, exit 0, and the
#                     same count for every function as under churn
#   P churn alone, 24 slots
#                     the churn thread alone (each ops then alone on its
#                     functions, its own trampoline), churn-stats.so with
#                     the runtime's trampoline slots capped at 24: same
#                     output, exit 0, rounds as above
#   P churn alone, 24 slots: reclaim
#                     the patcher's counters: retired slots were reclaimed
#                     (freed once no thread was in them) and reused, and
#                     no reclaim round timed out; the INT3s the program met
#                     are counted in the check's name
# Every run has a 300 s timeout (a deadlock fails, it does not hang).
#
# CHURN_BREAK=regs or CHURN_BREAK=lose in the environment makes the tracer
# wrong on purpose (churn.c): the test must then fail (regs: the churned
# runs' output; lose: the counts).
#
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`; exits
# nonzero on any failure.  Nothing is skipped: a failing apt-get is a
# failure that names why.  About 75 s with the programs cached, on a shared
# 2-core machine (load 13); building them adds 1 to 2.5 minutes.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
EXPAT_CACHE=${EXPAT_CACHE:-$root/build/expat-src}
EXPAT_BUILD=${EXPAT_BUILD:-$root/build/expat-x86}
FX=${FX:-$root/fixtures/realprog-x86/out}
FLAVOUR=${FLAVOUR:--pg -mfentry}
MINROUNDS=${MINROUNDS:-20}
PY=/usr/bin/python3
CHECK="$PY $here/realprog-x86.py"

. "$here/lib.sh"
showlog() { sed 's/^/# /' "$1" | tail -n "${2:-30}"; }

ps_need_patchsite
[ "$(uname -m)" = x86_64 ] || { not_ok "a native x86_64 machine (this is $(uname -m))"; finish; }
for t in gcc g++ make autoreconf libtoolize objdump nm gprof timeout cmp "$PY" \
	apt-get dpkg-source dpkg-buildflags; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done
for f in churn.so churn-stats.so fixsalt.so; do
	[ -f "$FX/$f" ] || { not_ok "fixture $FX/$f (make fixtures)"; finish; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"

# ---------------------------------------------------------------- source
. "$here/debsrc.sh"
if debsrc expat "$EXPAT_CACHE" expat/buildconf.sh expat/configure.ac expat/lib/xmlparse.c \
	expat/tests/runtests.c expat/tests/runtestspp.cpp; then
	src=$debsrc_dir
	ok "source: $debsrc_how"
else
	not_ok "source: apt-get source expat"
	finish
fi

# ---------------------------------------------------------------- build
# The two test programs are kept in EXPAT_BUILD/KEY (KEY: a checksum of the
# source's name and the flags), so that a second run does not build again;
# the build is expat's, not patchsite's.  A private copy of the source, so a
# build never writes into the source cache; without the MAKEFLAGS of a
# calling make (its variable overrides would reach expat's).
cflags="$(dpkg-buildflags --get CFLAGS) -Wall $FLAVOUR"
cppflags=$(dpkg-buildflags --get CPPFLAGS)
ldflags="-Wl,-Bsymbolic-functions $(dpkg-buildflags --get LDFLAGS)"
key=$(printf '%s\n' "$(basename "$src")" "$cflags" "$cppflags" "$ldflags" | cksum | cut -d' ' -f1)
progs=$EXPAT_BUILD/$key
build() {
	b=$work/expat
	cp -R "$src/expat" "$b" || return 1
	mk() { env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL nice make "$@"; }
	if (cd "$b" && ./buildconf.sh) >"$work/buildconf.log" 2>&1; then
		ok "buildconf (autoreconf, as debian/rules runs it)"
	else
		showlog "$work/buildconf.log"; not_ok "buildconf"; return 1
	fi
	if (cd "$b" && ./configure --disable-shared --without-docbook --without-examples \
		CFLAGS="$cflags" CXXFLAGS="$cflags" CPPFLAGS="$cppflags" LDFLAGS="$ldflags") \
		>"$work/configure.log" 2>&1; then
		ok "configure (CFLAGS=$cflags)"
	else
		showlog "$work/configure.log"; not_ok "configure"; return 1
	fi
	if mk -C "$b/lib" -j2 libexpatinternal.la >"$work/make.log" 2>&1 &&
		mk -C "$b/tests" -j2 runtests runtestspp >>"$work/make.log" 2>&1; then
		ok "build: make -C lib libexpatinternal.la; make -C tests runtests runtestspp"
	else
		showlog "$work/make.log"; not_ok "build"; return 1
	fi
	rm -rf "$progs"
	mkdir -p "$progs" && cp "$b/tests/runtests" "$b/tests/runtestspp" "$progs/" &&
		touch "$progs/.complete"
}
if [ -f "$progs/.complete" ]; then
	ok "build: cached in $progs"
else
	build || { not_ok "build: runtests and runtestspp in $progs"; finish; }
fi

# ---------------------------------------------------------------- runs
# runp TAG PROG [VAR=VALUE...]: PROG -v in its own directory ($work/TAG: its
# gmon.out), with the environment given; stdout in TAG.out, stderr in
# TAG.err, exit status in $rc.
runp() {
	_t=$1 _p=$2
	shift 2
	mkdir -p "$work/$_t"
	(cd "$work/$_t" && timeout 300 env "$@" "$_p" -v) >"$work/$_t.out" 2>"$work/$_t.err"
	rc=$?
}
# The suite's own verdict in OUT: `100%: Checks: N, Failed: 0` and N PASS lines.
passed() { # OUT
	_n=$(grep -c '^PASS: ' "$1")
	grep -qx "100%: Checks: $_n, Failed: 0" "$1" && [ "$_n" -gt 0 ] ||
		{ echo "# $_n PASS lines; the suite's last lines:"; showlog "$1" 5; return 1; }
}
# same_run TAG: the last run ($rc) exited 0, the suite passed, and its
# stdout and stderr are the unembedded run's
same_run() {
	[ "$rc" -eq 0 ] || { echo "# exit status $rc"; showlog "$work/$1.err" 10; return 1; }
	passed "$work/$1.out" || return 1
	cmp "$work/$p.orig.out" "$work/$1.out" || { diff "$work/$p.orig.out" "$work/$1.out" | head -n 20; return 1; }
	cmp "$work/$p.orig.err" "$work/$1.err" || { diff "$work/$p.orig.err" "$work/$1.err" | head -n 20; return 1; }
}

# pycheck NAME ARG...: realprog-x86.py ARG...; its first line completes NAME
pycheck() {
	_pc=$1
	shift
	if $CHECK "$@" >"$work/py.out" 2>&1; then
		ok "$_pc: $(head -n 1 "$work/py.out")"
	else
		not_ok "$_pc" "$work/py.out"
	fi
}

for p in runtests runtestspp; do
	bin=$progs/$p
	emb=$work/$p.embedded
	runp "$p.orig" "$bin" LD_PRELOAD="$FX/fixsalt.so"
	echo "# exit status $rc" >"$work/passed.log"
	if [ "$rc" -eq 0 ] && passed "$work/$p.orig.out" >"$work/passed.log"; then
		ok "$p unembedded: exit 0, the suite passes ($(grep -c '^PASS: ' "$work/$p.orig.out") tests)"
	else
		not_ok "$p unembedded: exit 0, the suite passes" "$work/passed.log"; continue
	fi
	if gprof -b -p -z --no-demangle "$bin" "$work/$p.orig/gmon.out" >"$work/$p.gprof" 2>"$work/gprof.err"; then
		ok "$p gprof: flat profile of the unembedded run"
	else
		showlog "$work/gprof.err"; not_ok "$p gprof"
	fi
	nm "$bin" >"$work/$p.nm"
	objdump -d --no-show-raw-insn "$bin" >"$work/$p.dis"

	if ps_run 0 "$work/embed.out" -- embed "$bin" -o "$emb"; then
		ok "$p embed"
	else
		not_ok "$p embed" "$ps_msg"; continue
	fi

	runp "$p.emb" "$emb"
	check "$p embedded, no tracer: same output as unembedded, exit 0" same_run "$p.emb"

	tracer="$FX/fixsalt.so $FX/churn.so"
	runp "$p.churn" "$emb" LD_PRELOAD="$tracer" CHURN_OUT="$work/$p.churn.sum" CHURN_STEADY=1 CHURN_ROUNDS=1
	check "$p churned (steady ops on all, churn thread): same output as unembedded, exit 0" same_run "$p.churn"
	pycheck "$p churned: sites" sites "$work/$p.churn.sum" "$work/$p.dis"
	pycheck "$p churned: rounds" churn "$work/$p.churn.sum" "$MINROUNDS"
	pycheck "$p churned: counts" gprof "$work/$p.churn.sum" "$work/$p.nm" "$work/$p.gprof" main
	pycheck "$p churned: tests" passes "$work/$p.churn.sum" "$work/$p.nm" "$work/$p.churn.out" tcase_add_test

	runp "$p.steady" "$emb" LD_PRELOAD="$tracer" CHURN_OUT="$work/$p.steady.sum" CHURN_STEADY=1
	check "$p steady alone: same output as unembedded, exit 0" same_run "$p.steady"
	pycheck "$p steady alone" same "$work/$p.steady.sum" "$work/$p.churn.sum"

	runp "$p.rounds" "$emb" LD_PRELOAD="$FX/fixsalt.so $FX/churn-stats.so" CHURN_OUT="$work/$p.rounds.sum" \
		CHURN_ROUNDS=1 CHURN_SLOTS=24
	check "$p churn alone, 24 slots: same output as unembedded, exit 0" same_run "$p.rounds"
	pycheck "$p churn alone, 24 slots: rounds" churn "$work/$p.rounds.sum" "$MINROUNDS"
	pycheck "$p churn alone, 24 slots: reclaim" reclaim "$work/$p.rounds.sum"
done

finish
