#!/bin/sh
# Seed 003's table shape natively on x86_64, side by side in one run: one
# relevant + I irrelevant tracers (I = 0, 10, 100, 1,000) on target(),
# through its own trampoline (call-ops) and through a list ops that walks
# every registered tracer (ftrace_ops_list_func's shape), beside target()
# untraced, target() with a direct_call ops, and target() traced by
# uftrace.  Writes RESULTS-x86_64.md next to this script.
#
#   sh bench/callops/run-x86_64.sh              (N=20000000, REPS=9)
#   N=5000000 REPS=5 sh bench/callops/run-x86_64.sh
#   RENDER_ONLY=1 sh bench/callops/run-x86_64.sh  (RESULTS-x86_64.md from out/x86_64/raw.txt)
#
# Every figure is the CPU time of the timed loop (BENCH_CLOCK=cpu:
# CLOCK_PROCESS_CPUTIME_ID of the benchmark process; the machine is shared,
# and other people's work stretches wall time far more than CPU time), the
# median of REPS runs.  The runs are interleaved: pass 1 of every row, then
# pass 2, ...  so that a slow spell of the host spreads over all rows.
#
# Calls per run: N for the untraced, call-ops and direct rows; N*10/(I+10)
# for the list rows (their cost grows with I: about the same time per run),
# a third of that for the listhash rows;
# N/20 for the uftrace rows (which write two records a call to disk).
# OUTDIR=DIR builds and runs in DIR, RESULTS=FILE writes there (tests/e2e/bench-x86.sh).
# Each run checks its own counts (bench.c; uftrace's: `uftrace report`) and
# the script stops at the first run that fails.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${N:-20000000}
REPS=${REPS:-9}
IRR=${IRR:-0 10 100 1000}
PATCHSITE=${PATCHSITE:-$root/patchsite}
O=${OUTDIR:-$here/out/x86_64}
RESULTS=${RESULTS:-$here/RESULTS-x86_64.md}
raw=$O/raw.txt

[ "$(uname -m)" = x86_64 ] || { echo "run-x86_64.sh: runs natively on x86_64 only" >&2; exit 2; }
command -v uftrace >/dev/null || { echo "run-x86_64.sh: uftrace is missing (sh scripts/install-deps.sh)" >&2; exit 2; }
[ -x "$PATCHSITE" ] || make -s -C "$root" patchsite
make -s -C "$here" ARCH=x86_64 O="$O" PATCHSITE="$PATCHSITE" >/dev/null

export BENCH_CLOCK=cpu
ulist=$((N / 20))
[ "$ulist" -gt 0 ] || ulist=1

# one run: LABEL N COMMAND...; appends "LABEL N TOTAL_NS" to raw.txt
one() {
	label=$1 calls=$2
	shift 2
	line=$("$@") || { echo "run-x86_64.sh: failed: $*" >&2; exit 1; }
	set -- $line
	echo "$label $calls $5" >>"$raw"
}
# uftrace: LABEL OPTIONS; records into $O/uftrace.data, then checks the count
ufrow() {
	label=$1 opts=$2
	rm -rf "$O/uftrace.data"
	# shellcheck disable=SC2086
	one "$label" "$ulist" uftrace record -d "$O/uftrace.data" --no-libcall $opts -P target \
		"$O/bench.raw" plain 0 0 "$ulist"
	got=$(uftrace report -d "$O/uftrace.data" -F target 2>/dev/null | awk '$NF == "target" { print $(NF - 1) }')
	want=$((ulist + ulist / 10))
	[ "$got" = "$want" ] || { echo "run-x86_64.sh: uftrace $opts saw '$got' calls of target, want $want" >&2; exit 1; }
}

last=$(echo "$IRR" | awk '{ print $NF }')
if [ -z "${RENDER_ONLY:-}" ]; then
: >"$raw"
start=$(date +%s)
for pass in $(seq 1 "$REPS"); do
	one plain "$N" "$O/bench" plain 0 0 "$N"
	one plain-raw "$N" "$O/bench.raw" plain 0 0 "$N"
	for i in $IRR; do
		one "callops-$i" "$N" "$O/bench" callops 1 "$i" "$N"
		nl=$((N * 10 / (i + 10)))
		one "list-$i" "$nl" "$O/bench" list 1 "$i" "$nl"
		nh=$((nl / 3))
		one "listhash-$i" "$nh" "$O/bench" listhash 1 "$i" "$nh"
	done
	for i in 0 $last; do
		one "perfunc2-$i" "$N" "$O/bench" perfunc 2 "$i" "$N"
	done
	one direct-0 "$N" "$O/bench" direct 1 0 "$N"
	ufrow uftrace ""
	ufrow uftrace-e "-e"
	echo "pass $pass/$REPS done ($(($(date +%s) - start)) s)" >&2
done
echo $(($(date +%s) - start)) >"$O/elapsed.txt"
{
	git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "(not a git checkout)"
	{ git -C "$root" status --porcelain -- bench runtime rewriter arch 2>/dev/null || :; } | { grep -vc "RESULTS[^ ]*\.md$" || :; }
	cut -d' ' -f1-3 /proc/loadavg
} >"$O/commit.txt"
fi

python3 - "$raw" "$RESULTS" "$N" "$REPS" "$IRR" "$(cat "$O/elapsed.txt")" \
	"$(sed -n 1p "$O/commit.txt")" "$(sed -n 2p "$O/commit.txt")" "$(sed -n 3p "$O/commit.txt")" "$root" <<'PYEOF'
import os, platform, statistics, subprocess, sys, datetime
raw, out, n, reps, irr, elapsed, commit, dirty, load, root = sys.argv[1:11]
n, reps, irr = int(n), int(reps), [int(x) for x in irr.split()]
per = {}
for line in open(raw):
    label, calls, total = line.split()
    per.setdefault(label, []).append(int(total) / int(calls))
med = {k: statistics.median(v) for k, v in per.items()}
lo = {k: min(v) for k, v in per.items()}
hi = {k: max(v) for k, v in per.items()}
base = med['plain']
ov = {k: v - base for k, v in med.items()}

def cmd(v):
    return subprocess.run(v, capture_output=True, text=True).stdout.strip().splitlines()[0]
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
nlist = {i: n * 10 // (i + 10) for i in irr}
rows = []
def row(name, key, calls, command):
    rows.append(f'| {name} | {calls:,} | {med[key]:.2f} | {lo[key]:.2f}..{hi[key]:.2f} | '
                + ('-' if key == 'plain' else f'{ov[key]:.2f}') + f' | `{command}` |')
B = 'bench/callops/out/x86_64'
row('untraced: `target()` a 5-byte NOP (embedded)', 'plain', n, f'{B}/bench plain 0 0 {n}')
row('untraced, as linked (GCC\'s five 1-byte NOPs)', 'plain-raw', n, f'{B}/bench.raw plain 0 0 {n}')
for i in irr:
    row(f'own trampoline (call-ops), 1 + {i:,} ops', f'callops-{i}', n, f'{B}/bench callops 1 {i} {n}')
for i in irr:
    row(f'list (every ops walked), 1 + {i:,} ops', f'list-{i}', nlist[i], f'{B}/bench list 1 {i} {nlist[i]}')
for i in irr:
    row(f'list, each ops\'s filter and notrace hash sets looked up, 1 + {i:,} ops', f'listhash-{i}',
        nlist[i] // 3, f'{B}/bench listhash 1 {i} {nlist[i] // 3}')
for i in (0, irr[-1]):
    row(f'2 ops on `target` (the runtime\'s list trampoline), + {i:,} ops', f'perfunc2-{i}', n,
        f'{B}/bench perfunc 2 {i} {n}')
row('`direct_call` ops (no trampoline)', 'direct-0', n, f'{B}/bench direct 1 0 {n}')
u = n // 20
row('uftrace 0.13, entry and exit records', 'uftrace', u,
    f'uftrace record --no-libcall -P target {B}/bench.raw plain 0 0 {u}')
row('uftrace 0.13 `-e`, entry records only', 'uftrace-e', u,
    f'uftrace record --no-libcall -e -P target {B}/bench.raw plain 0 0 {u}')
table = '\n'.join(rows)

def r(a, b):
    return a / b if b > 0 else float('inf')
c0, c1000 = ov['callops-0'], ov[f'callops-{irr[-1]}']
flat = r(c1000, c0)
flat_tot = r(med[f'callops-{irr[-1]}'], med['callops-0'])
ratio100 = r(ov['list-100'], ov['callops-100']) if 100 in irr else float('nan')
hratio100 = r(ov['listhash-100'], ov['callops-100']) if 100 in irr else float('nan')
hratios = ' | '.join(f'{r(ov[f"listhash-{i}"], ov[f"callops-{i}"]):.1f}x' for i in irr)
ratios = ' | '.join(f'{r(ov[f"list-{i}"], ov[f"callops-{i}"]):.1f}x' for i in irr)
uf = r(ov['uftrace'], ov['callops-0'])
ufe = r(ov['uftrace-e'], ov['callops-0'])
ok = lambda c: '**met**' if c else '**not met**'
summary = f'''| I (irrelevant ops) | {' | '.join(f'{i:,}' for i in irr)} |
| --- | {' | '.join('---:' for _ in irr)} |
| own trampoline, overhead (ns) | {' | '.join(f"{ov[f'callops-{i}']:.2f}" for i in irr)} |
| list, overhead (ns) | {' | '.join(f"{ov[f'list-{i}']:.2f}" for i in irr)} |
| list / own | {ratios} |
| list with hash sets, overhead (ns) | {' | '.join(f"{ov[f'listhash-{i}']:.2f}" for i in irr)} |
| list with hash sets / own | {hratios} |'''
dirty_s = f' plus {dirty} uncommitted files under bench/, runtime/, rewriter/, arch/' if dirty != '0' else ''
text = f'''# bench/callops on x86_64: own trampolines against the list, natively

Generated by `sh bench/callops/run-x86_64.sh` (N={n}, REPS={reps}) on
{datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC')}, at commit `{commit}`{dirty_s}.

- Machine: {platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}),
  shared with other work; load average at the end: {load}. Wall time of the runs: {elapsed} s.
- Compiler: {cmd(['gcc', '--version'])}; {cmd(['uftrace', '--version'])}.
- Every figure: CPU time of the timed loop (`BENCH_CLOCK=cpu`, `CLOCK_PROCESS_CPUTIME_ID`),
  divided by its calls; the median of {reps} runs, the runs of all rows interleaved.
  Overhead = the row's median minus the untraced row's.

## What is measured

`target(int)` (traced.c, the only file built with `-fpatchable-function-entry=5`,
then `patchsite embed`, which makes GCC's five 1-byte NOPs one 5-byte NOP) is called
in a dependent loop (`x = target(x)`; bench.c). A tracer is a `struct ps_ops` with a
filter (the one function it traces) and a counter; its func increments the counter.
The relevant tracer filters on `target`; irrelevant tracer *i* on `other_i`, one of
1,000 further traced functions never called in the loop, to which it is attached.
Every run checks afterwards that the relevant tracer counted each call (and the
irrelevant ones none) and that `target` returned the right sum.

- **own trampoline (call-ops)**: each tracer is attached (`ps_attach`) to its one
  function, so `target`'s site calls its tracer's own trampoline, which calls
  `ops->func` with the ops in hand; the irrelevant tracers have theirs, which
  `target` never reaches.
- **list**: every wanted site calls one list ops, whose func walks **all**
  registered tracers (1 + I) and calls those whose filter is the calling
  function, as `ftrace_ops_list_func` does; the relevant tracer is registered
  last, so every walk passes all I irrelevant ones. The test is one compare: the
  cheapest a list can be.
- **list with hash sets** (listhash): the same walk, each ops tested as
  `ftrace_ops_test` tests one: its filter and its notrace set are hash sets
  (2 buckets for a one-function filter, as ftrace sizes one; multiplicative
  hashing), the address looked up in the filter set and, the notrace set being
  empty, that checked. Still less than the kernel's list function does per call
  (recursion protection, preemption, per-ops flags are not modelled).
- **2 ops on `target`** (perfunc): two relevant tracers, both attached to `target`
  (`ps_attach` adds), so its site calls the runtime's list trampoline, which walks
  only the ops attached to `target` (seed 001), whatever number of ops the
  other functions have.
- **`direct_call`**: the relevant ops has `direct_call` set (direct.S: increments
  a counter, returns); the site calls it with no trampoline (seed 004's direct calls).
- **uftrace**: the program as linked (before embed: the same `target` bytes but
  five 1-byte NOPs), run under `uftrace record -P target --no-libcall`: uftrace's
  dynamic patching turns `target`'s patchable entry into a call to its
  trampoline at load time, and every call goes through libmcount's one generic
  entry handler, which records it (and, by default, hooks the return to record
  the exit too; `-e` records entries only). Dynamic patching of this build rather
  than `uftrace record` of a `-pg` build: it is the same binary and the same
  function code as every other row, and only `target` is patched, as only
  `target` has a relevant tracer here; a `-pg` build would call `__fentry__` in
  every row. Its CPU time is the traced process's (libmcount's work in the
  calling thread); the uftrace process that writes the records to disk runs
  beside it and is not counted. Each run checks with `uftrace report` that
  `target` was recorded N + N/10 times.

## Results

| row | calls per run | ns per call (median) | min..max of runs | overhead (ns) | command |
| --- | ---: | ---: | ---: | ---: | --- |
{table}

{summary}

## Against the goals

- Own-trampoline row flat in I: overhead {c0:.2f} ns at I = 0, {c1000:.2f} ns at I = {irr[-1]:,}:
  {flat:.2f}x (per call, untraced call included: {flat_tot:.2f}x); goal within 10%: {ok(abs(flat_tot - 1) <= 0.10 or abs(flat - 1) <= 0.10)}
  (judged on the per-call time; the overhead is the difference of two medians a few ns apart).
  The fastest runs of each row, less exposed to the other work on the machine: {lo['callops-0']:.2f},
  {', '.join(f"{lo[f'callops-{i}']:.2f}" for i in irr[1:])} ns for I = {', '.join(f'{i:,}' for i in irr)}
  ({lo[f'callops-{irr[-1]}'] / lo['callops-0']:.2f}x from 0 to {irr[-1]:,}); the medians of the I = {', '.join(f'{i:,}' for i in irr[1:-1])} rows,
  whose path is the same as I = 0's, show how far the load moves a median.
- At I = 100: list / own trampoline = {ov['list-100']:.2f} / {ov['callops-100']:.2f} ns = **{ratio100:.1f}x**; goal at least 50x: {ok(ratio100 >= 50)}.
  Against the list with hash sets (the kernel's per-ops test): {ov['listhash-100']:.2f} / {ov['callops-100']:.2f} ns = **{hratio100:.1f}x**: {ok(hratio100 >= 50)}.
- The overhead of one traced call through its own trampoline: **{c0:.2f} ns** (I = 0); goal under 10 ns: {ok(c0 < 10)}.
- uftrace on the same function: {ov['uftrace']:.2f} ns a call ({uf:.0f}x the own trampoline's overhead);
  entries only (`-e`): {ov['uftrace-e']:.2f} ns ({ufe:.0f}x).
- A `direct_call` ops: {ov['direct-0']:.2f} ns a call.

Why the 50x is not reached: at I = 100 the bare list costs {ov['list-100']:.0f} ns, about
{(ov['list-100'] - ov['list-0']) / 100:.2f} ns per ops walked (one load and compare each), and the
list with hash sets {(ov['listhash-100'] - ov['listhash-0']) / 100:.2f} ns per ops; 50x would need the own
trampoline's overhead at or under {ov['list-100'] / 50:.2f} ns ({ov['listhash-100'] / 50:.2f} ns against the hash
sets). The own trampoline's {ov['callops-0']:.1f} ns are its fixed path: the site's `CALL` into the ops'
slot (`movabs $ops, %r11; jmp`), the shared code saving the eight argument
registers and xmm0-7 on an aligned frame, testing for ENDBR64 before the site, the
indirect call of `ops->func`, the restores and the `RET` back into the body. Only the
`direct_call` path, which skips all of it, is that cheap: the bare list at I = 100
against `direct_call` (measured at I = 0) is {r(ov['list-100'], ov['direct-0']):.0f}x.
(Seed 003's 1063.38 / 1.87 ns was the arm64 kernel's list function, about 10 ns per ops,
against a kernel trampoline that saves no vector registers.)
- Two ops on `target` through the runtime's list trampoline: {ov['perfunc2-0']:.2f} ns with no other ops,
  {ov[f'perfunc2-{irr[-1]}']:.2f} ns beside {irr[-1]:,} ops on other functions.

## Commands

```
make -C bench/callops ARCH=x86_64 O=out/x86_64      # runtime (make -C runtime CROSS=),
                                                    # traced.o -fpatchable-function-entry=5, bench.o
                                                    # and direct.o without, a dynamic PIE: bench.raw;
                                                    # patchsite embed bench.raw -o bench
BENCH_CLOCK=cpu bench/callops/out/x86_64/bench SCHEME R I N   # one run: SCHEME R I N TOTAL_NS
```

and the commands in the table, each run {reps} times. Raw runs (LABEL CALLS TOTAL_NS):
`bench/callops/out/x86_64/raw.txt`.
'''
open(out, 'w').write(text)
print(summary)
print(f'flat {flat_tot:.2f}x, list/own at 100 {ratio100:.1f}x (hash sets {hratio100:.1f}x), own overhead {c0:.2f} ns, uftrace {ov["uftrace"]:.1f} ns')
PYEOF
