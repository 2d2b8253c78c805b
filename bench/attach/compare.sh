#!/bin/sh
# Two builds of the runtime side by side in one run: the runtime/ of a git
# revision (BEFORE) and the one in the work tree (AFTER), each linked into
# bench/callops (seed 003's table shape) and bench/attach, embedded by the
# same ./patchsite and run under qemu-aarch64, interleaved so that both see
# the same load on a shared machine.  Prints each figure's median for both
# builds and the ratio AFTER / BEFORE (1.00: no cost).
#
#   sh bench/attach/compare.sh BEFORE         (a revision, e.g. main or eaf7960)
#   REPS=9 N=500000 NA=20000 sh bench/attach/compare.sh BEFORE
#   BENCHES=attach REPS=25 sh bench/attach/compare.sh BEFORE   (one bench only)
#
# Times are the CPU time of each process (BENCH_CLOCK=cpu: qemu's, kernel
# time included), not wall time: on a shared host other jobs stretch wall
# time by whatever they take, CPU time far less.  CLOCK=wall for wall time.
#
# REPS passes; in each, every (scheme, R, I) row of bench/callops runs once
# per build, N calls, the two builds back to back, which one first
# alternating between passes; then one repetition of bench/attach (NA
# functions: ps_attach_list, ps_detach_list, loops of ps_attach and
# ps_detach, each verified by calling all NA functions) per build.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BEFORE=${1:?usage: sh bench/attach/compare.sh BEFORE-REVISION}
REPS=${REPS:-9}
N=${N:-500000}
NA=${NA:-20000}
BENCHES=${BENCHES:-callops attach}
CLOCK=${CLOCK:-cpu}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
O=$here/out/compare
ROWS="0,0 0,1 0,2 0,10 0,100 1,1 1,2 1,10 1,100 1,0 2,0 10,0 100,0"

rm -rf "$O"
mkdir -p "$O/src"
rev=$(git -C "$root" rev-parse --short "$BEFORE^{commit}")
git -C "$root" archive "$rev" runtime | tar -x -C "$O/src"
[ -x "$root/patchsite" ] || make -s -C "$root"
for v in before after; do
	rt=$root/runtime
	[ "$v" = before ] && rt=$O/src/runtime
	make -s -C "$root/bench/callops" O="$O/callops-$v" RT="$rt" >/dev/null
	make -s -C "$here" O="$O/attach-$v" RT="$rt" N="$NA" >/dev/null
done

has() { case " $BENCHES " in *" $1 "*) return 0 ;; esac; return 1; }
export BENCH_CLOCK=$CLOCK
raw=$O/raw.txt
: >"$raw"
start=$(date +%s)
for pass in $(seq 1 "$REPS"); do
	order="before after"
	[ $((pass % 2)) -eq 0 ] && order="after before"
	has callops && for s in callops list; do
		for row in $ROWS; do
			r=${row%,*} i=${row#*,}
			for v in $order; do
				echo "$v $("$QEMU" -L "$SYSROOT" "$O/callops-$v/bench" "$s" "$r" "$i" "$N")" >>"$raw"
			done
		done
	done
	has attach && for v in $order; do
		"$QEMU" "$O/attach-$v/bench" 1 | sed -n "s/^rep 0 /$v attach /p" >>"$raw"
	done
	echo "pass $pass/$REPS done ($(($(date +%s) - start)) s)" >&2
done

python3 - "$raw" "$N" "$NA" "$REPS" "$rev" "$(git -C "$root" rev-parse --short HEAD)" \
	"$(git -C "$root" status --porcelain -- runtime | wc -l)" "$CLOCK" <<'PYEOF'
import math, statistics, sys
raw, n, na, reps, rev, head, dirty, clock = sys.argv[1:9]
n, na = int(n), int(na)
vals = {}
order = []
def put(v, key, x):
    if key not in order:
        order.append(key)
    vals.setdefault((v, key), []).append(x)
for line in open(raw):
    f = line.split()
    if len(f) == 6:                       # v scheme R I N TOTAL_NS
        put(f[0], f'callops: {f[1]} ({f[2]}, {f[3]}), ns/call', float(f[5]) / n)
    elif len(f) >= 3 and f[1] == 'attach':  # v attach k s k s ...
        for k, x in zip(f[2::2], f[3::2]):
            if not k.startswith(('faults_', 'syncs_')):   # counts, not times
                put(f[0], f'attach: {k}, ms', float(x) * 1e3)
after = 'work tree' + (' (runtime/ modified)' if dirty != '0' else '') + f' at {head}'
print(f'Runtime before: {rev}; after: {after}.')
print(f'{reps} interleaved passes; bench/callops N = {n} calls, bench/attach {na} functions;')
print(f'{"CPU time of the process" if clock == "cpu" else "wall time"}; medians; ratio = after / before.\n')
print('| figure | before | after | after / before |')
print('| --- | ---: | ---: | ---: |')
logs = {'callops': [], 'attach': []}
for key in order:
    b, a = statistics.median(vals[('before', key)]), statistics.median(vals[('after', key)])
    r = a / b if b else float('nan')
    logs[key.split(':')[0]].append(math.log(r))
    print(f'| {key} | {b:.2f} | {a:.2f} | {r:.3f} |')
for k, l in logs.items():
    if l:
        print(f'\n{k}: geometric mean of the ratios {math.exp(sum(l) / len(l)):.3f} over {len(l)} figures')
PYEOF
