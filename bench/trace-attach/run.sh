#!/bin/sh
# bench/trace-attach: `patchsite trace -p` on a running program with N
# (20,000) functions, natively on x86_64 (issue 30: goal under 50 ms until
# every function records, the program's output unchanged).
#
#   sh bench/trace-attach/run.sh [RUNS]      (from the top of the tree, after
#                                            `make all runtime`)
#
# The program (main.c + bench/attach/gen.py's functions, GCC's 5-byte
# patch sites, embedded) calls every function in rounds 1 ms apart.  Each
# run attaches with -F '*' for 0.3 s (--duration) and detaches; its time is what
# patchsite prints, from its start to the return of the tracer's attach
# (every site live), and the wall time of the whole command.  Each run's
# table must count every one of the N functions (each recorded), and the
# program's checksum must equal an untraced run's.  Medians of RUNS (11).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
N=${N:-20000}
RUNS=${1:-11}
PATCHSITE=${PATCHSITE:-$root/patchsite}
lib=$root/build/runtime/x86_64/libpatchsite-trace-attach.so
o=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$o"' EXIT; echo "work: $o"
python3 "$root/bench/attach/gen.py" "$N" >"$o/traced.c"
gcc -O2 -fpatchable-function-entry=5 -fPIE -pie -o "$o/prog" "$(dirname "$0")/main.c" "$o/traced.c"
"$PATCHSITE" embed "$o/prog" -o "$o/prog.emb"

mkdir "$o/ref"
"$o/prog.emb" "$o/ref" >"$o/ref.out" &
p=$!
while [ ! -e "$o/ref/ready" ]; do sleep 0.05; done
: >"$o/ref/stop"
wait $p

mkdir "$o/run"
"$o/prog.emb" "$o/run" >"$o/run.out" &
p=$!
while [ ! -e "$o/run/ready" ]; do sleep 0.05; done
: >"$o/times"
i=0
while [ $i -lt "$RUNS" ]; do
	t0=$(date +%s%N)
	"$PATCHSITE" trace -p $p -F '*' --duration=0.3 --tracer="$lib" >"$o/table" 2>"$o/err"
	t1=$(date +%s%N)
	ms=$(sed -n 's/.*attached \([0-9]*\) functions in \([0-9.]*\) ms/\1 \2/p' "$o/err")
	called=$(awk 'NR > 2 && $1 > 0' "$o/table" | wc -l)
	echo "$ms $called $(( (t1 - t0) / 1000000 - 300 ))" >>"$o/times"
	i=$((i + 1))
done
: >"$o/run/stop"
wait $p
cmp -s "$o/ref.out" "$o/run.out" && same=yes || same=NO
python3 - "$o/times" "$N" "$same" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n = int(sys.argv[2])
att = [float(r[1]) for r in rows]
whole = [float(r[3]) for r in rows]
every = all(int(r[0]) >= n and int(r[2]) >= n for r in rows)  # main too
print('functions %d, runs %d' % (n, len(rows)))
print('attach (patchsite start to every site live): median %.1f ms (min %.1f, max %.1f)' %
      (statistics.median(att), min(att), max(att)))
print('whole command less its 300 ms --duration (attach, detach, unload): median %.0f ms' % statistics.median(whole))
print('every function attached and counted in every run: %s' % ('yes' if every else 'NO'))
print('program output equal to an untraced run: %s' % sys.argv[3])
PY
