#!/bin/sh
# The start-up cost of the preloaded tracer (libpatchsite-trace.so) on a
# generated program with N traced functions (bench/attach/gen.py), embedded
# by patchsite; writes RESULTS.md.
#
#   sh bench/tracer/run.sh                  (arm64 under qemu-aarch64, N=20000, REPS=11)
#   ARCH=x86_64 sh bench/tracer/run.sh      (built and run natively)
#
# The program does next to nothing (main calls f0 once), so each run is
# start-up and exit.  Three ways, run side by side (interleaved, REPS
# rounds), CPU time of each process (`perf stat -e task-clock`: the
# scheduler's own count; wait4's rusage is in whole ticks here), medians;
# the wall time beside it includes perf's own start-up:
#   plain   the embedded program, no tracer
#   all     PATCHSITE_TRACE='*': every function attached (one
#           ps_attach_list of N), the table at exit (text, to a file)
#   one     PATCHSITE_TRACE=f1: names read, one function attached
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${N:-20000}
REPS=${REPS:-11}
ARCH=${ARCH:-arm64}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
O=$here/out/$ARCH

case $ARCH in
arm64) cross=aarch64-linux-gnu- ;;
x86_64) cross= ;;
*) echo "bench/tracer: ARCH is arm64 or x86_64" >&2; exit 2 ;;
esac
[ -x "$root/patchsite" ] || make -s -C "$root"
make -s -C "$here" O="$O" N="$N" CROSS="$cross" >/dev/null
python3 - "$O" "$N" "$REPS" "$ARCH" "$QEMU" "$SYSROOT" "$here/RESULTS-$ARCH.md" <<'PYEOF'
import datetime, os, platform, statistics, subprocess, sys, time
o, n, reps, arch, qemu, sysroot, out = sys.argv[1:]
n, reps = int(n), int(reps)
prog, so = o + '/prog', o + '/libpatchsite-trace.so'
stat = o + '/stat.txt'
def cmd(preload):
    perf = ['perf', 'stat', '-x,', '-e', 'task-clock', '-o', stat, '--']
    if arch == 'arm64':
        return perf + [qemu, '-L', sysroot] + (['-E', 'LD_PRELOAD=' + so] if preload else []) + [prog]
    return perf + ['env'] + (['LD_PRELOAD=' + so] if preload else []) + [prog]
ways = {
    'plain': (cmd(False), {}),
    'all': (cmd(True), {'PATCHSITE_TRACE': '*'}),
    'one': (cmd(True), {'PATCHSITE_TRACE': 'f1'}),
}
cpu = {k: [] for k in ways}
wall = {k: [] for k in ways}
table = o + '/table.txt'
for r in range(reps + 1):
    for k, (c, extra) in ways.items():
        env = dict(os.environ, PATCHSITE_TRACE_OUT=table, **extra)
        env.pop('PATCHSITE_TRACE_CTL', None)
        t0 = time.perf_counter()
        p = subprocess.run(c, env=env, stderr=subprocess.PIPE)
        t1 = time.perf_counter()
        status, err = p.returncode, p.stderr
        task = [l.split(',') for l in open(stat) if ',task-clock,' in l]
        if status != 0 or err or len(task) != 1:
            sys.exit('%s: status %d, stderr %r' % (' '.join(c), status, err[:300]))
        if k == 'all':
            head = open(table).readline()
            if '%d functions attached' % n not in head:
                sys.exit('the tracer did not attach %d functions: %r' % (n, head))
        if r:   # round 0 warms the page cache
            cpu[k].append(float(task[0][0]) / 1e3)
            wall[k].append(t1 - t0)
mc = {k: statistics.median(v) for k, v in cpu.items()}
mw = {k: statistics.median(v) for k, v in wall.items()}
load = open('/proc/loadavg').read().split()[:3]
where = 'under `qemu-aarch64` (user-mode emulation: every mprotect of code invalidates translated blocks)' if arch == 'arm64' else 'natively'
rows = '\n'.join('| %s | %.2f | %.2fx | %.1f |' % (k, mc[k] * 1e3, mc[k] / mc['plain'], mw[k] * 1e3)
                 for k in ways)
text = f'''# bench/tracer: start-up cost of the preloaded tracer, {n} functions ({arch})

Reproduce: `sh bench/tracer/run.sh` (arm64) or `ARCH=x86_64 sh bench/tracer/run.sh`;
N={n}, REPS={reps} (+1 warm-up round), run on {datetime.date.today().isoformat()},
{platform.machine()} host, load average {' '.join(load)}, {where}.

The program (`bench/attach/gen.py` {n} functions with patch sites, PIE,
embedded) calls one function and exits, so a run is start-up and exit.
The three ways run interleaved, one process each; medians of {reps}:

| way | CPU ms | vs plain | wall ms (with perf's own start) |
| --- | ---: | ---: | ---: |
{rows}

- plain: the embedded program, no tracer.
- all: `PATCHSITE_TRACE='*'`: names read from `/proc/self/exe` ({n} FUNC
  symbols) matched against the glob, one `ps_attach_list` of {n} functions,
  the table written at exit.
- one: `PATCHSITE_TRACE=f1`: the same reading and matching, one function attached.
- The tracer adds {(mc['all'] - mc['plain']) * 1e3:.1f} ms of CPU with every function attached,
  {(mc['one'] - mc['plain']) * 1e3:.1f} ms with one.
'''
open(out, 'w').write(text)
print(text)
PYEOF
