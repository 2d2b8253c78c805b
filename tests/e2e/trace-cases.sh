#!/bin/sh
# End-to-end test of `patchsite trace` in the situations around the plain
# run (tests/e2e/trace-uftrace.sh has those against uftrace): the oracle is
# the program's own counts (fixtures/trace: `count NAME N` lines), its exit
# status, uftrace 0.13 reading the results, and a JSON parser.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/trace-cases.sh
#
#   status         the program's exit status is patchsite trace's (7; and
#                  143 for a program killed by SIGTERM, whose trace is still
#                  written, with a line saying the end is missing)
#   par            4 threads calling leaf at once (20,000 calls and walk(3)
#                  each): --per-thread has 4 leaf rows of 20,004 calls, the
#                  program's count is their sum; the Chrome JSON nests
#   storm          main calls leaf while a thread sends it SIGUSR1 as fast
#                  as it can, until the handler (calling leaf too) ran 3,000
#                  times:
#                  the calls recorded and the calls said not recorded (some
#                  come while the tracer's own hook runs) add up to the
#                  program's counts exactly; the Chrome JSON nests
#   spawn          a traced program that runs another embedded program: only
#                  the one patchsite started records (the other's calls are
#                  not in the trace: fib 0 there, 177 in its own count), and
#                  nothing is said on stderr
#   deep           rec(600): the 511 calls the shadow stack holds beside
#                  main are recorded (uftrace report), the 90 deeper ones are
#                  counted as not recorded (the stderr line): 511 + 90 = the
#                  program's count 601
#   tiny           --buffer-size=4, 100,000 calls of leaf: calls dropped > 0,
#                  recorded + dropped = the program's calls (+ main and
#                  run_many); the Chrome JSON of the same run parses and
#                  nests (never a torn call); threads mode with --buffer-size=4
#                  too
#   bad-*          one line `patchsite: ...`, exit 2, nothing written, the
#                  program not run: -F and -N globs matching nothing, an
#                  output directory that cannot be made, a program that was
#                  not embedded, no program, a bad -D, -t, --buffer-size
#   installed      no --tracer: patchsite in PREFIX/bin finds
#                  PREFIX/lib/patchsite/x86_64/libpatchsite-trace.so
#   nopie          the program linked -no-pie (ET_EXEC): the tree uftrace
#                  replays equals its own recording of the PIE
#   ARCH           (aarch64, riscv64: the program built with the
#                  architecture's patch sites, run under qemu-user by patchsite
#                  trace itself) the tree uftrace replays equals its
#                  own recording of the x86_64 -pg build, and the counts are
#                  the program's
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
mkdir -p "$work/rt/x86_64" "$work/rt/aarch64" "$work/rt/riscv64"
if make -s -C "$root/fixtures/trace" O="$fx" >"$work/make.log" 2>&1 &&
	make -s -C "$root/runtime/tracer" O="$work/rt/x86_64" CROSS= >>"$work/make.log" 2>&1 &&
	make -s -C "$root/runtime/tracer" O="$work/rt/aarch64" CROSS=aarch64-linux-gnu- \
		>>"$work/make.log" 2>&1 &&
	make -s -C "$root/runtime/tracer" O="$work/rt/riscv64" CROSS=riscv64-linux-gnu- \
		>>"$work/make.log" 2>&1; then
	ok "build fixtures/trace and the tracers"
else
	not_ok "build fixtures/trace and the tracers" "$work/make.log"
	finish
fi
tracer=$work/rt/x86_64/libpatchsite-trace.so
nm --defined-only "$fx/tprog-pg" | awk '$2 ~ /^[Tt]$/ { print $3 }' >"$work/funcs"
ps_check "embed" 0 "$work/embed.out" -- embed "$fx/tprog-pg" -o "$fx/tprog.emb"
cd "$work" || exit 1

# count NAME FILE: the program's own count of NAME (-1 if it printed none:
# an arithmetic check then fails rather than vanishes)
count() { awk -v n="$1" '$1 == "count" && $2 == n { print $3; f = 1 } END { if (!f) print -1 }' "$2"; }
# calls NAME DIR: uftrace report's calls of NAME in DIR (0 if none)
calls() {
	uftrace report -d "$2" -f call 2>/dev/null |
		awk -v n="$1" '$2 == n { c = $1 } END { print c + 0 }'
}
# notrec WHICH FILE: patchsite trace's count of calls not recorded
# (WHICH: full or deep), from its stderr line
# (0 when there is no such line: nothing was dropped)
notrec() {
	sed -n "s/.*not recorded: \([0-9]*\) calls (buffer full.*, \([0-9]*\) calls (deeper.*/\1 \2/p" "$2" |
		awk -v w="$1" '{ n = (w == "full" ? $1 : $2) } END { print n + 0 }'
}
equal() { # equal WHAT GOT WANT
	[ "$2" = "$3" ] && return 0
	echo "$1: $2, want $3"
	return 1
}

# --- the program's exit status
ps_check "status: exit 7 is patchsite trace's" 7 st.out -- trace --tracer="$tracer" -o st \
	"$fx/tprog.emb" exit 7
if ps_check "status: killed by SIGTERM, 143" -e kill.err 143 kill.out -- trace \
	--tracer="$tracer" -o kill "$fx/tprog.emb" kill; then
	check "status: killed: uftrace reads the directory" uftrace info -d kill
	check "status: killed: a line says the end is missing" grep -q "did not end through exit" kill.err
fi

# --- threads at once
if ps_check "par: 4 threads at once" -e par.err 0 par.out -- trace --tracer="$tracer" \
	--per-thread -o par "$fx/tprog.emb" par 20000; then
	check "par: 4 leaf rows of 20004 calls" equal "leaf rows" \
		"$(awk '$NF == "leaf" && $2 == 20004' par.err | wc -l)" 4
	check "par: the program counted them all" equal "leaf count" "$(count leaf par.out)" 80016
fi
if ps_check "par: -o par.json" 0 parj.out -- trace --tracer="$tracer" -o par.json \
	"$fx/tprog.emb" par 20000; then
	check "par: JSON parses and every call nests" $NORM chrome par.json -
fi

# --- signals as fast as they come
if ps_check "storm" -e storm.err 0 storm.out -- trace --tracer="$tracer" --summary \
	-o storm "$fx/tprog.emb" storm 3000; then
	rec=$(awk '$NF ~ /^(main|run_storm|storm_sender|leaf|on_sig)$/ && $1 ~ /^[0-9]+$/ { s += $1 }
		END { print s + 0 }' storm.err)
	check "storm: recorded + not recorded = the program's calls" equal "calls" \
		"$((rec + $(notrec full storm.err)))" \
		"$(($(count leaf storm.out) + $(count on_sig storm.out) + 3))"
fi
if ps_check "storm: -o storm.json" 0 stormj.out -- trace --tracer="$tracer" -o storm.json \
	"$fx/tprog.emb" storm 3000; then
	check "storm: JSON parses and every call nests" $NORM chrome storm.json -
fi

# --- a program it runs is left alone
if ps_check "spawn" -e spawn.err 0 spawn.out -- trace --tracer="$tracer" -o spawn \
	"$fx/tprog.emb" spawn; then
	check "spawn: the child's calls are not recorded" equal "fib calls" "$(calls fib spawn)" 0
	check "spawn: the child ran (its count, printed first)" equal "fib count" \
		"$(count fib spawn.out | head -n 1)" 177
	check "spawn: the parent's calls are" equal "leaf calls" "$(calls leaf spawn)" 1
	check "spawn: nothing on stderr" test ! -s spawn.err
fi

# --- deep recursion: 512 recorded, the rest counted
if ps_check "deep: rec(600)" -e deep.err 0 deep.out -- trace --tracer="$tracer" -o deep \
	"$fx/tprog.emb" deep 600; then
	# main holds the shadow stack's first entry, rec the other 511
	check "deep: 511 recorded" equal "recorded rec" "$(calls rec deep)" 511
	check "deep: recorded + counted deeper = the program's count" equal "rec calls" \
		"$(($(calls rec deep) + $(notrec deep deep.err)))" "$(count rec deep.out)"
fi

# --- tiny buffers: drops counted, never torn
if ps_check "tiny: --buffer-size=4" -e tiny.err 0 tiny.out -- trace --tracer="$tracer" \
	--buffer-size=4 -o tiny "$fx/tprog.emb" many 100000; then
	d=$(notrec full tiny.err)
	check "tiny: calls dropped and said" test "${d:-0}" -gt 0
	check "tiny: recorded + dropped = the program's calls" equal "calls" \
		"$(($(calls leaf tiny) + $(calls main tiny) + $(calls run_many tiny) + ${d:-0}))" \
		"$(($(count leaf tiny.out) + 2))"
fi
if ps_check "tiny: --buffer-size=4 -o tiny.json" -e tj.err 0 tj.out -- trace --tracer="$tracer" \
	--buffer-size=4 -o tiny.json "$fx/tprog.emb" many 100000; then
	check "tiny: JSON parses and every call nests" $NORM chrome tiny.json -
fi
if ps_check "tiny: threads --buffer-size=4" -e tt.err 0 tt.out -- trace --tracer="$tracer" \
	--buffer-size=4 -o tt.json "$fx/tprog.emb" threads; then
	check "tiny: threads: JSON parses and every call nests" $NORM chrome tt.json -
fi

# --- bad input: one line, exit 2, nothing written, the program not run
bad() { # bad NAME ARG...: patchsite trace ARG... in an empty directory
	_name=$1
	shift
	rm -rf bad && mkdir bad
	if ps_check "bad-$_name: exit 2" -C bad -e bad.err 2 bad.out -- trace "$@"; then
		check "bad-$_name: one line 'patchsite: ...'" sh -c \
			'test "$(wc -l <bad.err)" = 1 && grep -q "^patchsite: " bad.err'
		check "bad-$_name: nothing written, the program not run" sh -c \
			'test -z "$(ls -A bad)" && ! test -s bad.out'
	fi
}
bad glob-F --tracer="$tracer" -F 'nosuch*' "$fx/tprog.emb" basic
bad glob-N --tracer="$tracer" -N nosuch "$fx/tprog.emb" basic
bad outdir --tracer="$tracer" -o /dev/null/x "$fx/tprog.emb" basic
bad outjson --tracer="$tracer" -o /dev/null/x.json "$fx/tprog.emb" basic
bad not-embedded --tracer="$tracer" "$fx/tprog-pg" basic
bad no-program --tracer="$tracer"
bad depth --tracer="$tracer" -D 0 "$fx/tprog.emb" basic
bad time --tracer="$tracer" -t 5parsecs "$fx/tprog.emb" basic
bad bufsize --tracer="$tracer" --buffer-size=3 "$fx/tprog.emb" basic
bad tracer --tracer=/nonexistent/libpatchsite-trace.so "$fx/tprog.emb" basic

# --- installed: found in PREFIX/lib/patchsite/ARCH beside PREFIX/bin
mkdir -p pfx/bin pfx/lib/patchsite/x86_64
cp "$PATCHSITE" pfx/bin/patchsite
cp "$work/rt/x86_64/libpatchsite-trace.so" "$work/rt/x86_64/libpatchsite-callops.so" \
	pfx/lib/patchsite/x86_64/
saved=$PATCHSITE
PATCHSITE=$work/pfx/bin/patchsite
if ps_check "installed: no --tracer" 0 inst.out -- trace -o inst "$fx/tprog.emb" basic; then
	check "installed: recorded" equal "leaf calls" "$(calls leaf inst)" "$(count leaf inst.out)"
fi
PATCHSITE=$saved

# --- arm64 and riscv64 under qemu-user, against uftrace on x86_64
if uftrace record -d u-basic --no-libcall "$fx/tprog-pg" basic >u.out 2>&1; then
	$NORM tree funcs u-basic >u-basic.tree 2>&1
else
	not_ok "uftrace record (the oracle)" u.out
fi
# --- ET_EXEC
if ps_check "nopie: embed" 0 e-nopie.out -- embed "$fx/tprog-pg-nopie" -o "$fx/tprog-nopie.emb" &&
	ps_check "nopie: patchsite trace" 0 q-nopie.out -- trace --tracer="$tracer" -o q-nopie \
		"$fx/tprog-nopie.emb" basic; then
	$NORM tree funcs q-nopie >q-nopie.tree 2>&1
	check "nopie: uftrace replay tree = uftrace's own" cmp u-basic.tree q-nopie.tree
fi

for arch in aarch64 riscv64; do
	if ! ps_check "$arch: embed" 0 "e-$arch.out" -- embed "$fx/tprog-$arch" \
		-o "$fx/tprog-$arch.emb"; then
		continue
	fi
	if ps_check "$arch: patchsite trace under qemu" 0 "q-$arch.out" -- trace \
		--tracer="$work/rt/$arch/libpatchsite-trace.so" -o "q-$arch" "$fx/tprog-$arch.emb" \
		basic; then
		$NORM tree funcs "q-$arch" >"q-$arch.tree" 2>&1
		check "$arch: uftrace replay tree = uftrace's own on x86_64" cmp u-basic.tree \
			"q-$arch.tree"
		check "$arch: fib calls are the program's" equal fib "$(calls fib "q-$arch")" \
			"$(count fib "q-$arch.out")"
	fi
done

finish
