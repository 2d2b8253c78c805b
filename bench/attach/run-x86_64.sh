#!/bin/sh
# Seed 004's shape natively on x86_64: attach one ops to N (20,000) traced
# functions while THREADS (2) threads call them, and detach; one batched
# call (ps_attach_list / ps_detach_list) and a loop of ps_attach /
# ps_detach, beside the same with no calling thread; the membarrier
# SYNC_CORE calls counted by the runtime and, in a separate untimed run, by
# strace.  Writes RESULTS-x86_64.md next to this script.
#
#   sh bench/attach/run-x86_64.sh            (N=20000, RUNS=7 processes, REPS=4 each)
#   N=40000 RUNS=9 sh bench/attach/run-x86_64.sh
#   RENDER_ONLY=1 sh bench/attach/run-x86_64.sh
#
# RUNS processes per configuration (THREADS calling threads, and none),
# interleaved; each makes REPS repetitions (bench.c: list attach, list
# detach, loop attach, loop detach, each verified).  A process's first
# repetition also pays its one-time costs (membarrier registration, the
# SIGTRAP handler, carving the first trampoline): its figures are shown
# apart; the others' median is the figure.  Each phase is timed in wall
# time (CLOCK_MONOTONIC) and in the attaching thread's CPU time
# (CLOCK_THREAD_CPUTIME_ID).
# OUTDIR=DIR builds and runs in DIR, RESULTS=FILE writes there (tests/e2e/bench-x86.sh).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${N:-20000}
RUNS=${RUNS:-7}
REPS=${REPS:-4}
THREADS=${THREADS:-2}
PATCHSITE=${PATCHSITE:-$root/patchsite}
O=${OUTDIR:-$here/out/x86_64}
RESULTS=${RESULTS:-$here/RESULTS-x86_64.md}
raw=$O/raw-$N.txt

[ "$(uname -m)" = x86_64 ] || { echo "run-x86_64.sh: runs natively on x86_64 only" >&2; exit 2; }
command -v strace >/dev/null || { echo "run-x86_64.sh: strace is missing (sh scripts/install-deps.sh)" >&2; exit 2; }
[ -x "$PATCHSITE" ] || make -s -C "$root" patchsite
make -s -C "$here" ARCH=x86_64 O="$O" N="$N" PATCHSITE="$PATCHSITE" >/dev/null

if [ -z "${RENDER_ONLY:-}" ]; then
# the syncs, counted outside the runtime: one list attach and one list detach
strace -f -qq -e trace=membarrier -o "$O/strace.txt" "$O/bench" 1 "$THREADS" list >"$O/strace-run.txt"
grep -c '(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE' "$O/strace.txt" >"$O/strace-syncs.txt" || true
: >"$raw"
start=$(date +%s)
for run in $(seq 1 "$RUNS"); do
	for t in "$THREADS" 0; do
		"$O/bench" "$REPS" "$t" >"$O/one.txt" ||
			{ echo "run-x86_64.sh: failed: $O/bench $REPS $t" >&2; cat "$O/one.txt" >&2; exit 1; }
		sed "s/^/threads $t /" "$O/one.txt" >>"$raw"
	done
	echo "run $run/$RUNS done ($(($(date +%s) - start)) s)" >&2
done
echo $(($(date +%s) - start)) >"$O/elapsed.txt"
{
	git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "(not a git checkout)"
	{ git -C "$root" status --porcelain -- bench runtime rewriter arch 2>/dev/null || :; } | { grep -vc "RESULTS[^ ]*\.md$" || :; }
	cut -d' ' -f1-3 /proc/loadavg
} >"$O/commit.txt"
fi

python3 - "$raw" "$RESULTS" "$N" "$RUNS" "$REPS" "$THREADS" \
	"$(cat "$O/elapsed.txt")" "$(sed -n 1p "$O/commit.txt")" "$(sed -n 2p "$O/commit.txt")" "$(sed -n 3p "$O/commit.txt")" \
	"$(cat "$O/strace-syncs.txt")" "$O/strace-run.txt" <<'PYEOF'
import datetime, os, platform, statistics, sys
(raw, out, n, runs, reps, threads, elapsed, commit, dirty, load, strace_syncs,
 strace_run) = sys.argv[1:13]
n, runs, reps, threads = int(n), int(runs), int(reps), int(threads)
vals, callers = {}, {}
for line in open(raw):
    f = line.split()
    t = int(f[1])
    if f[2] == 'rep':
        rep = int(f[3])
        for k, v in zip(f[4::2], f[5::2]):
            vals.setdefault((t, k, rep == 0), []).append(float(v))
    elif f[2] == 'callers':
        callers.setdefault(t, []).append(f[3:])
def med(t, k, first=False):
    v = vals.get((t, k, first))
    return statistics.median(v) if v else float('nan')
# the runtime's syncs in the strace run
own = None
for line in open(strace_run):
    f = line.split()
    if f and f[0] == 'rep':
        d = dict(zip(f[2::2], f[3::2]))
        own = (int(d['syncs_list_attach']), int(d['syncs_list_detach']))
phases = ['list_attach', 'list_detach', 'loop_attach', 'loop_detach']
names = {'list_attach': '`ps_attach_list`, all N', 'list_detach': '`ps_detach_list`, all N',
         'loop_attach': 'loop of N `ps_attach`', 'loop_detach': 'loop of N `ps_detach`'}
rows = []
for p in phases:
    cells = []
    for t in (threads, 0):
        cells += [f'{med(t, p) * 1e3:.2f}', f'{med(t, p + "_thread") * 1e3:.2f}']
    s = statistics.median(vals.get((threads, 'syncs_' + p, False), [float('nan')]))
    fl = med(threads, 'faults_' + p)
    rows.append(f'| {names[p]} | ' + ' | '.join(cells) + f' | {s:.0f} | {fl:.0f} |')
first = []
for p in phases[:2]:
    first.append(f'| {names[p]} | {med(threads, p, True) * 1e3:.2f} | {med(threads, p + "_thread", True) * 1e3:.2f} '
                 f'| {med(0, p, True) * 1e3:.2f} | {med(0, p + "_thread", True) * 1e3:.2f} '
                 f'| {med(threads, "faults_" + p, True):.0f} |')
la, ld = med(threads, 'list_attach'), med(threads, 'list_detach')
lac, ldc = med(threads, 'list_attach_thread'), med(threads, 'list_detach_thread')
ok = lambda c: '**met**' if c else '**not met**'
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
ncalls = [int(x) for c in callers.get(threads, []) for x in c[:threads]]
dirty_s = f' plus {dirty} uncommitted files under bench/, runtime/, rewriter/, arch/' if dirty != '0' else ''
B = 'bench/attach/out/x86_64'
if own == (3, 3) and strace_syncs == '6':
    syncs_verdict = '3 per batch'
else:
    syncs_verdict = f'NOT 3 per batch (strace {strace_syncs} for two batches, runtime {own})'
text = f'''# bench/attach on x86_64: {n:,} functions attached and detached while {threads} threads call them

Generated by `sh bench/attach/run-x86_64.sh` (N={n}, RUNS={runs}, REPS={reps}, THREADS={threads}) on
{datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC')}, at commit `{commit}`{dirty_s}.
Machine: {platform.system()} {platform.release()}, {os.cpu_count()} CPUs ({cpu}), shared with other
work; load average at the end: {load}. Wall time of the runs: {elapsed} s.

The program (`gen.py`): {n:,} small functions built with `-fpatchable-function-entry=5`,
a dynamic PIE linked with libpatchsite-callops.a, embedded (`patchsite embed`).
Each process starts {threads} threads that call every function in turn until it ends, then
makes {reps} repetitions of: `ps_attach_list` of one counting ops to all {n:,} functions,
`ps_detach_list`, a loop of {n:,} `ps_attach`, a loop of {n:,} `ps_detach`. After each
attach the attaching thread calls every function once and its ops must count exactly
{n:,} calls from that thread, and none after each detach (the ops counts per thread);
the calling threads must have made calls ({min(ncalls) if ncalls else 0:,} to {max(ncalls) if ncalls else 0:,}
per thread and process) and their ops counts may not exceed them.

## Results

Medians over {runs} processes x {reps - 1} repetitions (each process's first repetition
apart, below), {runs} processes per column pair, interleaved.
"wall": CLOCK_MONOTONIC; "CPU": the attaching thread's CPU time. syncs: the runtime's
count of `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE)` calls in the phase;
page faults: the process's minor faults in the phase (getrusage), {threads} threads calling.

| phase (ms) | wall, {threads} threads calling | CPU, {threads} threads calling | wall, none | CPU, none | syncs | page faults |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(rows)}

A process's first repetition (median of {runs}; also pays the one-time set-up):

| phase (ms) | wall, {threads} threads | CPU, {threads} threads | wall, none | CPU, none | page faults |
| --- | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(first)}

- Goal: attach and detach of {n:,} functions while {threads} threads call them, each under
  5 ms: attach **{lac * 1e3:.2f} ms**, detach **{ldc * 1e3:.2f} ms** of the attaching thread's CPU
  time: {ok(lac < 0.005 and ldc < 0.005)}; in wall time {la * 1e3:.2f} and {ld * 1e3:.2f} ms:
  {ok(la < 0.005 and ld < 0.005)} (load average {load} on {os.cpu_count()} CPUs: wall time here is mostly
  waiting for a CPU, beside the {threads} calling threads and other people's work).
  (Seed 004: about 3 s in the kernel for 20,000 functions.)
- The first batch of a process pays more: {med(threads, 'faults_list_attach', True):.0f} minor page
  faults against {med(threads, 'faults_list_attach'):.0f} later (the copy-on-write of each text page
  at its first write, the runtime's own tables), and the runtime sets itself up
  (membarrier registration, the SIGTRAP handler, the trampoline code copied into the room).
- One batched call against the loop, in the attaching thread's CPU time: attach
  {med(threads, 'loop_attach_thread') / lac:.0f}x, detach {med(threads, 'loop_detach_thread') / ldc:.0f}x faster (each `ps_attach` is a batch
  of one, with its own protocol round: 3 syncs per function).
- Syncs: {syncs_verdict}.
  strace counted {strace_syncs} `MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE` calls in a
  process that made one `ps_attach_list` and one `ps_detach_list` of {n:,} functions
  (`strace -f -e trace=membarrier {B}/bench 1 {threads} list`); the runtime counted
  {own[0] if own else '?'} and {own[1] if own else '?'} in that same run.

## Commands

```
make -C bench/attach ARCH=x86_64 O=out/x86_64 N={n}   # gen.py, -fpatchable-function-entry=5,
                                                    # dynamic PIE, patchsite embed
{B}/bench {reps} {threads}       # a process of the first column pair
{B}/bench {reps} 0       # the second
strace -f -qq -e trace=membarrier -o strace.txt {B}/bench 1 {threads} list
```

Raw: `{B}/raw-{n}.txt` (`threads T rep I KEY VALUE ...`).
'''
open(out, 'w').write(text)
print(text)
PYEOF
