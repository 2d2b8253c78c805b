#!/bin/sh
# End-to-end test of `patchsite trace` against uftrace 0.13, the real client
# and the oracle: fixtures/trace's program built -O2 -pg -mfentry is
# recorded by `uftrace record` as it is, and embedded and run by `patchsite
# trace`; uftrace then reads both data directories.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/trace-uftrace.sh
#
#   embed          patchsite embed of tprog-pg exits 0
#   MODE           (basic, threads, signal, longjmp, deep: recursion 300
#                  deep) patchsite trace exits 0,
#                  the program's output byte for byte its output untraced
#   MODE tree      uftrace replay of both: per thread, the same calls in the
#                  same order at the same depth (longjmp: uftrace recorded
#                  with its library calls, which it needs to follow longjmp;
#                  only the program's functions compared)
#   MODE counts    uftrace report: per-function calls equal (not longjmp:
#                  uftrace counts no call whose return it did not see)
#   MODE graph     uftrace graph: the same call graph (basic, signal)
#   MODE flame     uftrace dump --flame-graph of ours: every stack is a call
#                  path of uftrace's own replay (stacks whose self time rounds
#                  to 0 are left out: which ones depends on times)
#   MODE chrome    uftrace dump --chrome of ours parses as JSON
#   filter F/N/D   -F walk, -N fib, -D 2, -F run_basic -D 3: uftrace replay
#                  equals uftrace's own record with the same filters
#                  (--match=glob)
#   json           -o FILE.json: parses; B and E nest per thread, in time
#                  order; B events per function equal uftrace's counts
#   summary        --summary: calls equal uftrace's counts, self <= total,
#                  min <= max, avg = total / calls (a recursive function's
#                  total is its outermost calls'); --per-thread: a row per
#                  thread
#   time-filter    -t 1s: nothing ran that long, nothing kept, as uftrace
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
PY=/usr/bin/python3
NORM="$PY $here/trace-norm.py"

. "$here/lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"
ps_need_patchsite

fx=$work/fx
rt=$work/rt
mkdir -p "$rt"
if make -s -C "$root/fixtures/trace" O="$fx" "$fx/tprog-pg" >"$work/make.log" 2>&1 &&
	make -s -C "$root/runtime/tracer" O="$rt" CROSS= >>"$work/make.log" 2>&1; then
	ok "build fixtures/trace and the tracer"
else
	not_ok "build fixtures/trace and the tracer" "$work/make.log"
	finish
fi
tracer=$rt/libpatchsite-trace.so
nm --defined-only "$fx/tprog-pg" | awk '$2 ~ /^[Tt]$/ { print $3 }' >"$work/funcs"

ps_check "embed" 0 "$work/embed.out" -- embed "$fx/tprog-pg" -o "$fx/tprog.emb"

cd "$work" || exit 1

same() { # same NAME A B: ok if files A and B are equal and not empty
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		ok "$1"
	else
		{ echo "uftrace's own recording (<) against patchsite trace's (>):"; diff "$2" "$3"; } \
			>"$work/diff.out" 2>&1
		[ -s "$2" ] || echo "(empty)" >>"$work/diff.out"
		not_ok "$1" "$work/diff.out"
	fi
}

for mode in basic threads signal longjmp deep; do
	libcall=--no-libcall
	[ $mode = longjmp ] && libcall=
	arg=
	[ $mode = deep ] && arg=300	# deep, but within both shadow stacks
	# shellcheck disable=SC2086 # no $arg is no argument
	"$fx/tprog-pg" $mode $arg >"u-$mode.want" 2>&1
	# shellcheck disable=SC2086 # no $libcall is no argument
	if ! uftrace record -d "u-$mode" $libcall "$fx/tprog-pg" $mode $arg >"u-$mode.out" 2>&1; then
		not_ok "$mode: uftrace record (the oracle)" "u-$mode.out"
		continue
	fi
	# shellcheck disable=SC2086
	if ps_check "$mode" 0 "p-$mode.out" -- trace --tracer="$tracer" -o "p-$mode" \
		"$fx/tprog.emb" $mode $arg; then
		check "$mode: output unchanged" cmp "u-$mode.want" "p-$mode.out"
	else
		continue
	fi
	for what in tree counts graph; do
		[ $what = graph ] && [ $mode != basic ] && [ $mode != signal ] && continue
		# uftrace counts no call whose return it did not see (longjmp)
		[ $what = counts ] && [ $mode = longjmp ] && continue
		$NORM $what funcs "u-$mode" >"u-$mode.$what" 2>&1
		$NORM $what funcs "p-$mode" >"p-$mode.$what" 2>&1
		same "$mode $what" "u-$mode.$what" "p-$mode.$what"
	done
	check "$mode flame: every stack a call path of uftrace's replay" \
		$NORM flame funcs "p-$mode" "u-$mode"
	check "$mode chrome: uftrace dump --chrome parses" $NORM chrome-ok "p-$mode"
done

# filters, as uftrace record's
n=0
for f in "-F walk" "-N fib" "-D 2" "-F run_basic -D 3" "-N walk -D 4"; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # the filter is several arguments
	if ! uftrace record -d "uf$n" --no-libcall --match=glob $f "$fx/tprog-pg" basic \
		>"uf$n.out" 2>&1; then
		not_ok "filter $f: uftrace record (the oracle)" "uf$n.out"
		continue
	fi
	# shellcheck disable=SC2086
	ps_check "filter $f: patchsite trace" 0 "pf$n.out" -- trace --tracer="$tracer" $f \
		-o "pf$n" "$fx/tprog.emb" basic || continue
	$NORM tree funcs "uf$n" >"uf$n.tree" 2>&1
	$NORM tree funcs "pf$n" >"pf$n.tree" 2>&1
	same "filter $f: tree" "uf$n.tree" "pf$n.tree"
done

# Chrome JSON, checked by a parser against uftrace's counts
if ps_check "json: patchsite trace -o t.json" 0 "json.out" -- trace --tracer="$tracer" \
	-o t.json "$fx/tprog.emb" threads; then
	check "json: parses, B/E nest, counts are uftrace's" $NORM chrome t.json u-threads.counts
	check "json: no scratch directory left" sh -c '! ls -d t.json.raw* 2>/dev/null'
fi

# the summary
if ps_check "summary" -e "sum.err" 0 "sum.out" -- trace --tracer="$tracer" --summary \
	-o s1 "$fx/tprog.emb" basic; then
	check "summary: counts, self <= total, min <= max, avg = total / calls" $NORM summary sum.err u-basic.counts
fi
if ps_check "per-thread" -e "pt.err" 0 "pt.out" -- trace --tracer="$tracer" --per-thread \
	-o s2 "$fx/tprog.emb" threads; then
	# main's thread and the 3 workers each have a leaf row
	check "per-thread: leaf in 4 threads" sh -c \
		"test \"\$(awk '\$NF == \"leaf\"' pt.err | awk '{print \$1}' | sort -u | wc -l)\" = 4"
fi

# -t: nothing in basic runs a second
if uftrace record -d ut --no-libcall -t 1s "$fx/tprog-pg" basic >ut.out 2>&1 &&
	ps_check "time-filter: patchsite trace -t 1s" 0 "pt1.out" -- trace --tracer="$tracer" \
		-t 1s -o pt "$fx/tprog.emb" basic; then
	uftrace replay -d ut -f none >ut.replay 2>&1
	uftrace replay -d pt -f none >pt.replay 2>&1
	check "time-filter: nothing kept, as uftrace" sh -c \
		'grep -q "No data" ut.replay && grep -q "No data" pt.replay && ! grep -q "()" pt.replay'
else
	not_ok "time-filter: uftrace record -t 1s (the oracle)" ut.out
fi

finish
