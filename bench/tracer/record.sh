#!/bin/sh
# The cost of recording every call (`patchsite trace`, the tracer's record
# mode) natively on x86_64, against the program untraced and against
# `uftrace record` on the same binary; prints a table (the figures go in
# bench/RESULTS.md by hand).
#
#   sh bench/tracer/record.sh            N=5000000 REPS=5 IMAGE=(its own binary)
#
# CPU time of each run and its children (`perf stat -e task-clock`: the
# scheduler's count, the tracer's writer thread and patchsite's own reading
# and writing included), runs interleaved, medians:
#
#   one call    fixtures/trace's program, `tprog many N`: N calls of leaf()
#               from one loop, -O2 -pg -mfentry, embedded.
#                 plain      the embedded program, no tracer
#                 recorded   the tracer preloaded in record mode on leaf
#                            alone (PATCHSITE_TRACE=leaf,
#                            PATCHSITE_TRACE_RECORD=DIR): the records only
#                 trace      `patchsite trace` (every function, the records
#                            read and uftrace's directory written)
#                 uftrace    `uftrace record --no-libcall` of the -pg build
#               one recorded call = (recorded - plain) / N
#   real        patchsite itself built -O2 -pg -mfentry (about 600 functions),
#               `record --symbolize IMAGE` (a kernel's vmlinux makes it
#               millions of calls: Debian's -dbg vmlinux for the figures in
#               bench/RESULTS.md), every function traced: plain, `patchsite
#               trace`, `uftrace record --no-libcall`
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${N:-5000000}
REPS=${REPS:-5}
IMAGE=${IMAGE:-}
O=$here/out/record
mkdir -p "$O/rt"
[ -x "$root/patchsite" ] || make -s -C "$root"
make -s -C "$root/fixtures/trace" O="$O" "$O/tprog-pg" >/dev/null
make -s -C "$root/runtime/tracer" O="$O/rt" CROSS= >/dev/null
"$root/patchsite" embed "$O/tprog-pg" -o "$O/tprog.emb"
# the real program: patchsite, -pg -mfentry, in a build tree of its own
make -s -C "$root" BUILD="$O/ps-build" CFLAGS="-O2 -pg -mfentry" "$O/ps-build/patchsite" >/dev/null
cp "$O/ps-build/patchsite" "$O/ps-pg"
"$root/patchsite" embed "$O/ps-pg" -o "$O/ps.emb"
cd "$O"	# the -pg programs write gmon.out where they run
python3 - "$O" "$N" "$REPS" "$root/patchsite" "${IMAGE:-$O/ps-pg}" <<'PYEOF'
import os, shutil, statistics, subprocess, sys
o, n, reps, ps, image = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
so, stat = o + '/rt/libpatchsite-trace.so', o + '/stat.txt'

def cpu(cmd, env=None):
    for d in ('rec', 'pt', 'uf'):
        shutil.rmtree(o + '/' + d, ignore_errors=True)
        shutil.rmtree(o + '/' + d + '.old', ignore_errors=True)
    os.makedirs(o + '/rec')
    p = subprocess.run(['perf', 'stat', '-x,', '-e', 'task-clock', '-o', stat, '--'] + cmd,
                       env=dict(os.environ, **(env or {})), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    task = [l.split(',') for l in open(stat) if ',task-clock,' in l]
    if p.returncode != 0 or len(task) != 1:
        sys.exit('%s: status %d, stderr %r' % (' '.join(cmd), p.returncode, p.stderr[:300]))
    return float(task[0][0]) / 1e3   # ms -> s

def bench(ways):
    got = {k: [] for k in ways}
    for r in range(reps + 1):
        for k, (cmd, env) in ways.items():
            t = cpu(cmd, env)
            if r:
                got[k].append(t)
    return {k: statistics.median(v) for k, v in got.items()}

one = bench({
    'plain': ([o + '/tprog.emb', 'many', str(n)], None),
    'recorded': ([o + '/tprog.emb', 'many', str(n)],
                 {'LD_PRELOAD': so, 'PATCHSITE_TRACE': 'leaf', 'PATCHSITE_TRACE_RECORD': o + '/rec'}),
    'trace': ([ps, 'trace', '--tracer=' + so, '-o', o + '/pt', o + '/tprog.emb', 'many', str(n)], None),
    'uftrace': (['uftrace', 'record', '--no-libcall', '-d', o + '/uf', o + '/tprog-pg', 'many', str(n)], None),
})
real_args = ['record', '--symbolize', image]
real = bench({
    'plain': ([o + '/ps.emb'] + real_args, None),
    'trace': ([ps, 'trace', '--tracer=' + so, '-o', o + '/pt', o + '/ps.emb'] + real_args, None),
    'uftrace': (['uftrace', 'record', '--no-libcall', '-d', o + '/uf', o + '/ps-pg'] + real_args, None),
})
load = ' '.join(open('/proc/loadavg').read().split()[:3])
print('N=%d REPS=%d, load %s' % (n, reps, load))
print('| tprog many N | CPU s | vs plain |')
for k, v in one.items():
    print('| %s | %.3f | %.2fx |' % (k, v, v / one['plain']))
print('one recorded call (entry and exit): %.2f ns' % ((one['recorded'] - one['plain']) / n * 1e9))
print('| patchsite record --symbolize %s (-pg) | CPU s | vs plain | added |' % os.path.basename(image))
for k, v in real.items():
    print('| %s | %.3f | %.2fx | %.3f |' % (k, v, v / real['plain'], v - real['plain']))
print('trace adds %.1f%% of what uftrace adds' %
      (100 * (real['trace'] - real['plain']) / (real['uftrace'] - real['plain'])))
PYEOF
