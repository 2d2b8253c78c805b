#!/bin/sh
# End-to-end test of the ready tracer, libpatchsite-trace.so (runtime/tracer),
# preloaded into fixtures/tracer's program embedded by `patchsite embed`.
# The oracle is not the tracer: the program counts its own calls and times
# its own loops and prints both; which functions a glob selects is checked
# against nm and Python's fnmatch; outputs against the program run untraced.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/tracer.sh
#
# For each flavour in TRACER_FLAVOURS: arm64 (-fpatchable-function-entry=4,2,
# cross-built, run under qemu-aarch64 with the tracer preloaded in the guest
# by `-E LD_PRELOAD=`), and natively on x86_64: x86_64-pfe-cet (GCC's
# -fpatchable-function-entry=5 with -fcf-protection: ENDBR64 first),
# x86_64-fentry (-pg -mfentry: calls to __fentry__ that embed turns into
# NOPs), x86_64-clang (clang's one 5-byte NOP), x86_64-san (as
# x86_64-pfe-cet without CET, the tracer and runtime under ASan and UBSan,
# libasan preloaded first):
#   embed          embed of tracee (-no-pie) and tracee-pie exits 0
#   run            traced with PATCHSITE_TRACE='t_*', each prints exactly
#                  what the original prints (returns in x0/x1, FP and memory,
#                  a longjmp out of 5 traced frames, recursion 700 deep)
#   counts         the table (tsv) lists exactly nm's functions of tfuncs.o
#                  (t_untraced, a t_* without a patch site, is not there),
#                  each with the calls the program counted; -no-pie: the
#                  address column is nm's address
#   glob           PATCHSITE_TRACE='t_a*,t_m?x,t_s*,t_[fp]*': the attached set is
#                  Python fnmatch over nm's names, the others get no row
#   longjmp        t_jump: 5 calls, none timed (longjmp left them), and the
#                  shadow stack is not left with their entries: t_deep after
#                  it has exactly 512 (the documented depth) of 701 timed
#   recursion      t_fib(15): 1973 calls, all timed, its total not more than
#                  the time the program measured around the call; t_rec(4), 5 nested 20 ms calls: total
#                  >= 100 ms and not more than the program measured around the
#                  call (counting nested calls twice gives 300 ms)
#   time           t_sleep10 (sleeps 10 ms): 5 calls, avg >= 10 ms, total <=
#                  the program's own time for the loop
#   threads        4 threads (started together, 4 rounds under qemu, 60
#                  natively) and main calling traced functions: counts equal
#                  the program's (atomic) counts, every call timed
#   stripped       the embedded -rdynamic program after strip (no .symtab):
#                  names from .dynsym, counts as above; stripped without
#                  -rdynamic: one line, no traced function matches
#   embed-fixture  (arm64) fixtures/embed's plain-pie, which does not link the
#                  runtime: add 10, mul 5, fib 25 calls (its source), sum8 0
#   json, text     the same counts read from PATCHSITE_TRACE_FORMAT=json and
#                  from the text table (sorted by total time, documented columns)
#   time-off       PATCHSITE_TRACE_TIME=off: counts right, nothing timed; on
#                  x86_64 every attached function counts through the direct
#                  call (PATCHSITE_TRACE_VERBOSE's line); the threads' counts
#                  exact with it too
#   signal         PATCHSITE_TRACE_SIGNAL=SIGUSR2: kill -USR2 while the
#                  program waits dumps the counts of phase 1 (as the program
#                  counted them), and the exit dump those of all 3 phases
#   ctl            PATCHSITE_TRACE_CTL=FIFO alone: nothing attached at start;
#                  `attach t_mul` written while the program runs, then `dump`,
#                  `detach`: the table counts exactly phase 2's t_mul calls
#                  (the program's numbers), no t_add; an unknown command and
#                  a glob matching nothing get one line each, the program
#                  goes on
#   reset          PATCHSITE_TRACE_TIME=off, `reset` written to the FIFO after
#                  phase 1: the exit table counts the calls of phases 2 and 3
#                  (the program's numbers)
#   bad-*          bad configuration (format, signal, time, globs, output
#                  file, ctl path not a FIFO, a glob matching nothing):
#                  exit 0, the program's output unchanged, exactly one line
#                  `patchsite-trace: ...: nothing traced` on stderr
#   not-embedded   the original program, PATCHSITE_TRACE_VERBOSE=1: one line,
#                  output unchanged (without it: silent, tests/e2e/trace-attach.sh)
#   unset          no PATCHSITE_TRACE nor _CTL: one line, output unchanged
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/tracer
PATCHSITE=${PATCHSITE:-$root/patchsite}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
TRACER_FLAVOURS=${TRACER_FLAVOURS:-arm64 riscv64 x86_64-pfe-cet x86_64-fentry x86_64-clang x86_64-san}
# x86_64-san: the tracer and the runtime built with ASan and UBSan (any
# report makes the program fail or write to stderr, which the checks see)
san='-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer'
PY=/usr/bin/python3

. "$here/lib.sh"

unset PATCHSITE_TRACE PATCHSITE_TRACE_OUT PATCHSITE_TRACE_FORMAT PATCHSITE_TRACE_SIGNAL \
	PATCHSITE_TRACE_CTL PATCHSITE_TRACE_TIME PATCHSITE_TRACE_VERBOSE

work=$(mktemp -d)
bgpid=
trap 'if [ -n "$bgpid" ]; then kill "$bgpid" 2>/dev/null; fi; rm -rf "$work"' EXIT
ps_init "$work"
ps_need_patchsite

for t in aarch64-linux-gnu-gcc aarch64-linux-gnu-nm riscv64-linux-gnu-gcc riscv64-linux-gnu-nm \
	"$QEMU" qemu-riscv64 "$PY" timeout gcc clang nm; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done

# the judge: the tracer's tables against the program's own numbers
cat >"$work/judge.py" <<'PYEOF'
import fnmatch, json, re, sys

def prog_counts(path, tag=None):
    out = {}
    for line in open(path):
        f = line.split()
        if tag is None and len(f) == 3 and f[0] == 'count':
            out[f[1]] = int(f[2])
        elif tag is not None and len(f) == 4 and f[0] == 'count' and f[1] == tag:
            out[f[2]] = int(f[3])
    return out

def prog_value(path, key):
    for line in open(path):
        f = line.split()
        if len(f) == 2 and f[0] == key:
            return int(f[1])
    raise SystemExit('%s: no %s line' % (path, key))

def tsv_dumps(path):
    """[(reason, {name: row})] for each dump in the file"""
    dumps = []
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('# patchsite-trace\t'):
            dumps.append((line.split('\t')[2], {}))
        elif line.startswith('function\t'):
            assert line == 'function\taddress\tattached\tcalls\ttimed\ttotal_ns\tavg_ns', line
        elif line:
            f = line.split('\t')
            if len(f) != 7 or not dumps:
                raise SystemExit('%s: bad line %r' % (path, line))
            dumps[-1][1][f[0]] = {'address': int(f[1], 16), 'attached': int(f[2]),
                                  'calls': int(f[3]), 'timed': int(f[4]),
                                  'total_ns': int(f[5]), 'avg_ns': int(f[6])}
    return dumps

def nm_funcs(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[1] in 'Tt':
            out[f[2]] = int(f[0], 16)
    return out

def one(path):
    d = tsv_dumps(path)
    if len(d) != 1 or d[0][0] != 'exit':
        raise SystemExit('%s: want one exit dump, got %r' % (path, [r for r, _ in d]))
    return d[0][1]

def same_counts(rows, want, names):
    bad = []
    for n in sorted(names):
        got = rows[n]['calls'] if n in rows else None
        if got != want[n]:
            bad.append('%s: tracer %s, program %d' % (n, got, want[n]))
    return bad

cmd, args = sys.argv[1], sys.argv[2:]
bad = []
if cmd == 'counts':            # counts TSV PROGOUT NM-OF-TFUNCS [NM-OF-PROG]
    rows, want, funcs = one(args[0]), prog_counts(args[1]), nm_funcs(args[2])
    attached = {n for n, r in rows.items() if r['attached']}
    if attached != set(funcs):
        bad.append('attached %s, nm says %s' % (sorted(attached), sorted(funcs)))
    bad += same_counts(rows, want, funcs)
    if len(args) > 3:
        addrs = nm_funcs(args[3])
        for n in funcs:
            if n in rows and rows[n]['address'] != addrs[n]:
                bad.append('%s: address %#x, nm %#x' % (n, rows[n]['address'], addrs[n]))
elif cmd == 'threads':         # threads TSV PROGOUT NM: counts, every call timed
    rows, want, funcs = one(args[0]), prog_counts(args[1]), nm_funcs(args[2])
    bad += same_counts(rows, want, funcs)
    for n in ('t_add', 't_mul', 't_fib', 't_deep'):
        if not want[n] or rows[n]['timed'] != rows[n]['calls']:
            bad.append('%s: %r, program %d' % (n, rows[n], want[n]))
elif cmd == 'exact':           # exact TSV COUNTS: the attached functions and their calls
    rows, want = one(args[0]), prog_counts(args[1])
    if {n for n, r in rows.items() if r['attached']} != set(want):
        bad.append('attached %s, want %s' % (sorted(rows), sorted(want)))
    bad += same_counts(rows, want, want)
elif cmd == 'glob':            # glob TSV PROGOUT NM GLOBS
    rows, want, funcs = one(args[0]), prog_counts(args[1]), nm_funcs(args[2])
    globs = args[3].split(',')
    sel = {n for n in funcs if any(fnmatch.fnmatchcase(n, g) for g in globs)}
    attached = {n for n, r in rows.items() if r['attached']}
    if attached != sel or set(rows) != sel:
        bad.append('attached %s, rows %s; fnmatch over nm: %s' % (sorted(attached), sorted(rows), sorted(sel)))
    bad += same_counts(rows, want, sel)
elif cmd == 'longjmp':         # longjmp TSV PROGOUT
    rows, want = one(args[0]), prog_counts(args[1])
    j, d = rows['t_jump'], rows['t_deep']
    if (j['calls'], j['timed']) != (want['t_jump'], 0) or want['t_jump'] != 5:
        bad.append('t_jump: %d calls, %d timed; program %d' % (j['calls'], j['timed'], want['t_jump']))
    if (d['calls'], d['timed']) != (701, 512) or want['t_deep'] != 701:
        bad.append('t_deep: %d calls, %d timed, want 701 and 512' % (d['calls'], d['timed']))
    a = rows['t_add']
    if a['timed'] != a['calls'] or a['calls'] != want['t_add']:
        bad.append('t_add after the longjmp: %r' % a)
elif cmd == 'fib':             # fib TSV PROGOUT PROGERR: all timed, total within the program's time
    rows, want = one(args[0]), prog_counts(args[1])
    f = rows['t_fib']
    if f['calls'] != want['t_fib'] or f['timed'] != f['calls'] or want['t_fib'] != 1973:
        bad.append('t_fib: %r, program %d' % (f, want['t_fib']))
    el = prog_value(args[2], 'fib_ns')
    if not 0 < f['total_ns'] <= el:
        bad.append('t_fib total %d ns, the program timed the call at %d ns' % (f['total_ns'], el))
elif cmd == 'rec':             # rec TSV PROGOUT
    rows, want = one(args[0]), prog_counts(args[1])
    el = prog_value(args[1], 'elapsed_ns')
    r = rows['t_rec']
    if r['calls'] != 5 or want['t_rec'] != 5 or r['timed'] != 5:
        bad.append('t_rec: %r, program %d' % (r, want['t_rec']))
    if not 100 * 10**6 <= r['total_ns'] <= el:
        bad.append('t_rec total %d ns: want >= 100 ms and <= the program\'s %d ns' % (r['total_ns'], el))
elif cmd == 'sleep':           # sleep TSV PROGOUT
    rows, want = one(args[0]), prog_counts(args[1])
    el = prog_value(args[1], 'elapsed_ns')
    r = rows['t_sleep10']
    if r['calls'] != 5 or want['t_sleep10'] != 5 or r['timed'] != 5:
        bad.append('t_sleep10: %r' % r)
    if r['avg_ns'] < 10 * 10**6 or r['total_ns'] > el:
        bad.append('t_sleep10: avg %d ns (want >= 10 ms), total %d ns (program %d)' % (r['avg_ns'], r['total_ns'], el))
elif cmd == 'json':            # json JSON PROGOUT NM
    doc = json.load(open(args[0]))
    want, funcs = prog_counts(args[1]), nm_funcs(args[2])
    rows = {f['name']: f for f in doc['functions']}
    if doc['reason'] != 'exit' or doc['attached'] != len(funcs) or set(rows) != set(funcs):
        bad.append('reason %r attached %r names %s' % (doc['reason'], doc['attached'], sorted(rows)))
    bad += same_counts(rows, want, funcs)
    tot = [f['total_ns'] for f in doc['functions']]
    if tot != sorted(tot, reverse=True):
        bad.append('not sorted by total_ns: %r' % tot)
elif cmd == 'text':            # text TABLE PROGOUT NM
    lines = open(args[0]).read().splitlines()
    want, funcs = prog_counts(args[1]), nm_funcs(args[2])
    called = {n for n in funcs if want[n]}
    m = re.match(r'# patchsite-trace: pid \d+, exit: (\d+) functions attached, (\d+) called$', lines[0])
    if not m or int(m.group(1)) != len(funcs) or int(m.group(2)) != len(called):
        bad.append('header %r' % lines[0])
    if lines[1].split() != ['calls', 'timed', 'total_ms', 'avg_us', 'function']:
        bad.append('columns %r' % lines[1])
    rows = {}
    tot = []
    for l in lines[2:]:
        f = l.split()
        rows[f[4]] = {'calls': int(f[0])}
        tot.append(float(f[2]))
    if set(rows) != called:
        bad.append('rows %s, called %s' % (sorted(rows), sorted(called)))
    bad += same_counts(rows, want, called)
    if tot != sorted(tot, reverse=True):
        bad.append('not sorted by total: %r' % tot)
elif cmd == 'timeoff':         # timeoff TSV PROGOUT NM
    rows, want, funcs = one(args[0]), prog_counts(args[1]), nm_funcs(args[2])
    bad += same_counts(rows, want, funcs)
    if any(r['timed'] or r['total_ns'] for r in rows.values()):
        bad.append('timed with PATCHSITE_TRACE_TIME=off')
elif cmd == 'signal':          # signal TSV PROGOUT
    d = tsv_dumps(args[0])
    if [r for r, _ in d] != ['signal', 'exit']:
        bad.append('dumps %r, want signal then exit' % [r for r, _ in d])
    else:
        for (reason, rows), tag in ((d[0], '1'), (d[1], '3')):
            want = prog_counts(args[1], tag)
            bad += ['%s: %s' % (reason, b) for b in same_counts(rows, want, ['t_add', 't_mul'])]
elif cmd == 'ctl':             # ctl TSV PROGOUT
    d = tsv_dumps(args[0])
    p1, p2 = prog_counts(args[1], '1'), prog_counts(args[1], '2')
    mul = p2['t_mul'] - p1['t_mul']
    if [r for r, _ in d] != ['ctl', 'exit']:
        bad.append('dumps %r, want ctl then exit' % [r for r, _ in d])
    else:
        for reason, rows in d:
            r = rows.get('t_mul')
            if not r or r['calls'] != mul or mul != 300 or set(rows) != {'t_mul'}:
                bad.append('%s: rows %r, program counted %d t_mul calls in phase 2' % (reason, rows, mul))
        if d[0][1]['t_mul']['attached'] != 1 or d[1][1]['t_mul']['attached'] != 0:
            bad.append('attached at ctl dump / at exit: %r' % [x[1]['t_mul']['attached'] for x in d])
elif cmd == 'reset':           # reset TSV PROGOUT: the exit table counts phases 2 and 3
    rows, p1, p3 = one(args[0]), prog_counts(args[1], '1'), prog_counts(args[1], '3')
    for n in ('t_add', 't_mul'):
        want = p3[n] - p1[n]
        if not want or rows.get(n, {}).get('calls') != want:
            bad.append('%s: %r, the program called it %d times after the reset' % (n, rows.get(n), want))
else:
    raise SystemExit('judge: unknown ' + cmd)
if bad:
    print('\n'.join(bad))
    sys.exit(1)
PYEOF
judge() { $PY "$work/judge.py" "$@"; }

# ctl FIFO LINE: one command to the tracer (its FIFO is open: this does not block)
ctl() { timeout 10 sh -c 'printf "%s\n" "$1" >"$2"' ctl "$2" "$1"; }

# oneline ERR WORD: stderr is exactly one line, the tracer's, naming WORD, saying nothing is traced
# (the program's own fib_ns line left out)
oneline() {
	grep -v '^fib_ns ' "$1" >"$1.tracer"
	[ "$(wc -l <"$1.tracer")" -eq 1 ] && grep -q "^patchsite-trace: .*$2.*: nothing traced$" "$1.tracer" &&
		return 0
	echo "stderr, want one line naming $2:"
	cat "$1"
	return 1
}

for arch in $TRACER_FLAVOURS; do
	tcc=
	pfe=
	case $arch in
	arm64)
		cross=aarch64-linux-gnu-
		NM=aarch64-linux-gnu-nm
		pre="$QEMU -L $SYSROOT"
		;;
	riscv64)
		cross=riscv64-linux-gnu-
		NM=riscv64-linux-gnu-nm
		pre="qemu-riscv64 -L /usr/riscv64-linux-gnu"
		;;
	x86_64-*)
		cross=
		NM=nm
		pre=
		case $arch in
		x86_64-pfe-cet) tcc=gcc pfe='-fpatchable-function-entry=5 -fcf-protection=full' ;;
		x86_64-fentry) tcc=gcc pfe='-pg -mfentry' ;;
		x86_64-clang) tcc=clang pfe='-fpatchable-function-entry=5' ;;
		x86_64-san) tcc=gcc pfe='-fpatchable-function-entry=5' ;;
		*) not_ok "TRACER_FLAVOURS: no flavour $arch"; continue ;;
		esac
		;;
	*)
		not_ok "TRACER_FLAVOURS: no flavour $arch"
		continue
		;;
	esac
	o=$work/$arch
	# threads' rounds: long enough natively that the threads overlap for sure
	rounds=60
	case $arch in arm64 | riscv64) rounds=4 ;; esac
	if [ "$arch" = x86_64-san ]; then
		make -s -C "$fix" O="$o" CROSS="$cross" TCC="$tcc" PFE="$pfe" EXTRA_CFLAGS="$san" \
			LDFLAGS="-fsanitize=address,undefined" >"$work/make.log" 2>&1
	elif [ -n "$tcc" ]; then
		make -s -C "$fix" O="$o" CROSS="$cross" TCC="$tcc" PFE="$pfe" >"$work/make.log" 2>&1
	else
		make -s -C "$fix" O="$o" CROSS="$cross" >"$work/make.log" 2>&1
	fi
	if [ $? -ne 0 ]; then
		not_ok "$arch: build fixtures/tracer" "$work/make.log"
		continue
	fi
	so=$o/libpatchsite-trace.so
	case $arch in
	arm64) tr="$QEMU -L $SYSROOT -E LD_PRELOAD=$so" ;;
	riscv64) tr="qemu-riscv64 -L /usr/riscv64-linux-gnu -E LD_PRELOAD=$so" ;;
	x86_64-san) tr="env LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so):$so" ;;
	*) tr="env LD_PRELOAD=$so" ;;
	esac
	$NM "$o/tfuncs.o" >"$o/nm.tfuncs"
	$pre "$o/tracee" calls >"$o/plain.calls" 2>"$o/plain.err"

	for prog in tracee tracee-pie; do
		p=$o/$prog.emb
		t=$arch/$prog
		ps_check "$t: embed" 0 "$o/$prog.embed.out" -- embed "$o/$prog" -o "$p" || continue
		$NM "$p" >"$o/$prog.nm"

		if env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_OUT="$o/$prog.tsv" PATCHSITE_TRACE_FORMAT=tsv \
			timeout 120 $tr "$p" calls >"$o/$prog.calls" 2>"$o/$prog.err" &&
			cmp -s "$o/plain.calls" "$o/$prog.calls" && grep -q '^fib_ns [0-9]*$' "$o/$prog.err" &&
			[ "$(wc -l <"$o/$prog.err")" -eq 1 ]; then
			ok "$t: run"
		else
			diff "$o/plain.calls" "$o/$prog.calls" >"$o/diff" 2>&1
			cat "$o/$prog.err" >>"$o/diff"
			not_ok "$t: run" "$o/diff"
			continue
		fi
		if [ "$prog" = tracee ]; then
			check "$t: counts" judge counts "$o/$prog.tsv" "$o/$prog.calls" "$o/nm.tfuncs" "$o/$prog.nm"
		else
			check "$t: counts" judge counts "$o/$prog.tsv" "$o/$prog.calls" "$o/nm.tfuncs"
		fi
		check "$t: longjmp" judge longjmp "$o/$prog.tsv" "$o/$prog.calls"
		check "$t: recursion (fib)" judge fib "$o/$prog.tsv" "$o/$prog.calls" "$o/$prog.err"

		g='t_a*,t_m?x,t_s*,t_[fp]*'
		if env PATCHSITE_TRACE="$g" PATCHSITE_TRACE_OUT="$o/$prog.glob" PATCHSITE_TRACE_FORMAT=tsv \
			timeout 120 $tr "$p" calls >"$o/$prog.gcalls" 2>"$o/$prog.err"; then
			check "$t: glob" judge glob "$o/$prog.glob" "$o/$prog.gcalls" "$o/nm.tfuncs" "$g"
		else
			not_ok "$t: glob (exit status)" "$o/$prog.err"
		fi
	done

	# the rest on the PIE one
	p=$o/tracee-pie.emb
	t=$arch
	if [ "$arch" = arm64 ]; then
		# fixtures/embed's plain-pie, which embed.sh's preloaded counter
		# checks: add 10, mul 5 and fib 25 calls, by its source
		e=$o/embedfx
		if make -s -C "$root/fixtures/embed" O="$e" "$e/plain-pie" >"$o/efx.log" 2>&1 &&
			ps_run 0 "$o/efx.embed.out" -- embed "$e/plain-pie" -o "$e/plain-pie.emb"; then
			if env PATCHSITE_TRACE='add,mul,fib,sum8' PATCHSITE_TRACE_OUT="$e/tsv" PATCHSITE_TRACE_FORMAT=tsv \
				timeout 120 $tr "$e/plain-pie.emb" >"$e/out" 2>"$e/err" &&
				$pre "$e/plain-pie" >"$e/want" && cmp -s "$e/want" "$e/out"; then
				printf 'count add 10\ncount mul 5\ncount fib 25\ncount sum8 0\n' >"$e/counts"
				check "$t: fixtures/embed plain-pie" judge exact "$e/tsv" "$e/counts"
			else
				cat "$e/err" >>"$o/efx.log"
				not_ok "$t: fixtures/embed plain-pie: run" "$o/efx.log"
			fi
		else
			cat "$ps_msg" >>"$o/efx.log"
			not_ok "$t: fixtures/embed plain-pie: build and embed" "$o/efx.log"
		fi
	fi
	if env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_OUT="$o/threads.tsv" PATCHSITE_TRACE_FORMAT=tsv \
		timeout 120 $tr "$p" threads $rounds >"$o/threads.out" 2>"$o/threads.err"; then
		check "$t: threads" judge threads "$o/threads.tsv" "$o/threads.out" "$o/nm.tfuncs"
	else
		not_ok "$t: threads: exit status" "$o/threads.err"
	fi
	# stripped: names from .dynsym (-rdynamic); without them, nothing to match
	if ps_run 0 "$o/dyn.embed.out" -- embed "$o/tracee-dyn" -o "$o/dyn.emb" &&
		${cross}strip "$o/dyn.emb" -o "$o/dyn.strip" && ${cross}strip "$p" -o "$o/pie.strip" &&
		! ${cross}readelf -S "$o/dyn.strip" | grep -q '\.symtab'; then
		if env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_OUT="$o/dyn.tsv" PATCHSITE_TRACE_FORMAT=tsv \
			timeout 120 $tr "$o/dyn.strip" calls >"$o/dyn.out" 2>"$o/dyn.err"; then
			check "$t: stripped, names from .dynsym" judge counts "$o/dyn.tsv" "$o/dyn.out" "$o/nm.tfuncs"
		else
			not_ok "$t: stripped, names from .dynsym: exit status" "$o/dyn.err"
		fi
		env PATCHSITE_TRACE='t_*' timeout 120 $tr "$o/pie.strip" calls >"$o/pst.out" 2>"$o/pst.err"
		rc=$?
		if [ $rc -eq 0 ] && cmp -s "$o/plain.calls" "$o/pst.out" &&
			oneline "$o/pst.err" 'no traced function matches' >"$o/pst.why"; then
			ok "$t: stripped, no names"
		else
			echo "exit status $rc" >>"$o/pst.why"
			not_ok "$t: stripped, no names" "$o/pst.why"
		fi
	else
		not_ok "$t: embed and strip tracee-dyn" "$ps_msg"
	fi
	for mode in rec sleep; do
		if env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_OUT="$o/$mode.tsv" PATCHSITE_TRACE_FORMAT=tsv \
			timeout 120 $tr "$p" $mode >"$o/$mode.out" 2>"$o/$mode.err"; then
			check "$t: time ($mode)" judge $mode "$o/$mode.tsv" "$o/$mode.out"
		else
			not_ok "$t: time ($mode): exit status" "$o/$mode.err"
		fi
	done
	for fmt in json text; do
		if env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_OUT="$o/calls.$fmt" PATCHSITE_TRACE_FORMAT=$fmt \
			timeout 120 $tr "$p" calls >"$o/$fmt.out" 2>"$o/$fmt.err"; then
			check "$t: $fmt" judge $fmt "$o/calls.$fmt" "$o/$fmt.out" "$o/nm.tfuncs"
		else
			not_ok "$t: $fmt: exit status" "$o/$fmt.err"
		fi
	done
	# the default output is stderr
	if env PATCHSITE_TRACE='t_*' timeout 120 $tr "$p" calls >"$o/stderr.out" 2>"$o/stderr.text"; then
		grep -v '^fib_ns ' "$o/stderr.text" >"$o/stderr.table"
		check "$t: text on stderr" judge text "$o/stderr.table" "$o/stderr.out" "$o/nm.tfuncs"
	else
		not_ok "$t: text on stderr: exit status" "$o/stderr.text"
	fi
	if env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_TIME=off PATCHSITE_TRACE_OUT="$o/off.tsv" \
		PATCHSITE_TRACE_FORMAT=tsv PATCHSITE_TRACE_VERBOSE=1 timeout 120 $tr "$p" calls \
		>"$o/off.out" 2>"$o/off.err"; then
		check "$t: time-off" judge timeoff "$o/off.tsv" "$o/off.out" "$o/nm.tfuncs"
		# x86_64: every attached function of the program counts through
		# the direct call (count_stub), none through the trampoline
		n=$(awk -F'\t' '$1 !~ /^#/ && $1 != "function" && $3 == 1' "$o/off.tsv" | wc -l)
		case $t in
		x86_64*) want="counts only: $n of the $n functions attached count through a direct call" ;;
		*) want= ;;
		esac
		got=$(grep '^patchsite-trace: counts only' "$o/off.err" | sed 's/^patchsite-trace: //; s/, without.*//')
		if [ "$got" = "$want" ]; then
			ok "$t: time-off: ${want:-no direct-call counting (x86_64 only)}"
		else
			echo "want '$want', got '$got'" >"$o/off.why"
			not_ok "$t: time-off: the direct-call counting line" "$o/off.why"
		fi
	else
		not_ok "$t: time-off: exit status" "$o/off.err"
	fi
	# the same counts from threads calling at once (the direct call's
	# atomic add: no call lost)
	if env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_TIME=off PATCHSITE_TRACE_OUT="$o/offthr.tsv" \
		PATCHSITE_TRACE_FORMAT=tsv timeout 120 $tr "$p" threads $rounds >"$o/offthr.out" 2>"$o/offthr.err"; then
		check "$t: time-off, threads" judge timeoff "$o/offthr.tsv" "$o/offthr.out" "$o/nm.tfuncs"
	else
		not_ok "$t: time-off, threads: exit status" "$o/offthr.err"
	fi

	# signal: a dump while the program waits, and at exit
	d=$o/sig
	mkdir -p "$d"
	env PATCHSITE_TRACE='t_add,t_mul' PATCHSITE_TRACE_SIGNAL=SIGUSR2 PATCHSITE_TRACE_OUT="$d/tsv" \
		PATCHSITE_TRACE_FORMAT=tsv $tr "$p" phases "$d" >"$d/out" 2>"$d/err" &
	bgpid=$!
	if waitfile "$d/ready" >"$d/why" && kill -USR2 "$bgpid" &&
		waitline "$d/tsv" '^# patchsite-trace.*signal' >>"$d/why"; then
		: >"$d/go1"
		: >"$d/go2"
		if wait "$bgpid"; then
			check "$t: signal" judge signal "$d/tsv" "$d/out"
		else
			not_ok "$t: signal: exit status" "$d/err"
		fi
	else
		kill "$bgpid" 2>/dev/null
		wait "$bgpid"
		cat "$d/err" >>"$d/why"
		not_ok "$t: signal" "$d/why"
	fi
	bgpid=

	# control FIFO: attach, dump, detach while the program runs
	d=$o/ctl
	mkdir -p "$d"
	f=$d/fifo
	env PATCHSITE_TRACE_CTL="$f" PATCHSITE_TRACE_OUT="$d/tsv" PATCHSITE_TRACE_FORMAT=tsv \
		$tr "$p" phases "$d" >"$d/out" 2>"$d/err" &
	bgpid=$!
	if waitfile "$d/ready" >"$d/why" &&
		ctl "$f" "attach nothing_like_this*" && waitline "$d/err" 'nothing_like_this.*no traced function matches' >>"$d/why" &&
		ctl "$f" "frobnicate" && waitline "$d/err" "unknown command 'frobnicate'" >>"$d/why" &&
		ctl "$f" "attach t_mul" && waitline "$d/err" '^patchsite-trace: ctl: attached 1 functions matching t_mul$' >>"$d/why" &&
		: >"$d/go1" && waitfile "$d/done1" >>"$d/why" &&
		ctl "$f" "dump" && waitline "$d/tsv" '^# patchsite-trace.*ctl' >>"$d/why" &&
		ctl "$f" "detach" && waitline "$d/err" '^patchsite-trace: ctl: detached 1 functions$' >>"$d/why"; then
		: >"$d/go2"
		if wait "$bgpid"; then
			check "$t: ctl" judge ctl "$d/tsv" "$d/out"
			check "$t: ctl: one stderr line for each of the 4 commands that answer" test "$(wc -l <"$d/err")" -eq 4
		else
			not_ok "$t: ctl: exit status" "$d/err"
		fi
	else
		kill "$bgpid" 2>/dev/null
		wait "$bgpid"
		cat "$d/err" >>"$d/why"
		not_ok "$t: ctl" "$d/why"
	fi
	bgpid=

	# reset, counting only: the counts after it are the calls made after it
	d=$o/reset
	mkdir -p "$d"
	f=$d/fifo
	env PATCHSITE_TRACE='t_add,t_mul' PATCHSITE_TRACE_TIME=off PATCHSITE_TRACE_CTL="$f" \
		PATCHSITE_TRACE_OUT="$d/tsv" PATCHSITE_TRACE_FORMAT=tsv $tr "$p" phases "$d" >"$d/out" 2>"$d/err" &
	bgpid=$!
	if waitfile "$d/ready" >"$d/why" &&
		ctl "$f" "reset" && waitline "$d/err" '^patchsite-trace: ctl: reset$' >>"$d/why"; then
		: >"$d/go1"
		: >"$d/go2"
		if wait "$bgpid"; then
			check "$t: ctl reset, counting only: the exit table counts phases 2 and 3" \
				judge reset "$d/tsv" "$d/out"
		else
			not_ok "$t: ctl reset: exit status" "$d/err"
		fi
	else
		kill "$bgpid" 2>/dev/null
		wait "$bgpid"
		cat "$d/err" >>"$d/why"
		not_ok "$t: ctl reset" "$d/why"
	fi
	bgpid=

	# bad configuration: one line, the program runs untraced
	: >"$o/regular"
	for bad in 'TRACE_FORMAT=xml FORMAT' 'TRACE_SIGNAL=SIGFOO SIGNAL' 'TRACE_SIGNAL=9 SIGNAL' \
		'TRACE_TIME=maybe TIME' 'TRACE_OUT=/nonexistent/dir/x OUT' "TRACE_CTL=$o/regular not.a.FIFO" \
		'TRACE=, empty.glob' 'TRACE=nothing_like_this* no.traced.function.matches' 'TRACE= empty'; do
		set -- $bad
		var=PATCHSITE_${1%%=*}
		val=${1#*=}
		word=$2
		if [ "$var" = PATCHSITE_TRACE ]; then
			env "$var=$val" timeout 120 $tr "$p" calls >"$o/bad.out" 2>"$o/bad.err"
		else
			env PATCHSITE_TRACE='t_*' "$var=$val" timeout 120 $tr "$p" calls >"$o/bad.out" 2>"$o/bad.err"
		fi
		rc=$?
		if [ $rc -eq 0 ] && cmp -s "$o/plain.calls" "$o/bad.out" && oneline "$o/bad.err" "$word" >"$o/bad.why"; then
			ok "$t: bad $var=$val"
		else
			echo "exit status $rc" >>"$o/bad.why"
			not_ok "$t: bad $var=$val" "$o/bad.why"
		fi
	done
	env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_VERBOSE=1 timeout 120 $tr "$o/tracee-pie" calls >"$o/ne.out" 2>"$o/ne.err"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$o/plain.calls" "$o/ne.out" && oneline "$o/ne.err" 'not embedded by `patchsite embed`' >"$o/ne.why"; then
		ok "$t: not-embedded"
	else
		echo "exit status $rc" >>"$o/ne.why"
		not_ok "$t: not-embedded" "$o/ne.why"
	fi
	timeout 120 $tr "$p" calls >"$o/un.out" 2>"$o/un.err"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$o/plain.calls" "$o/un.out" && oneline "$o/un.err" 'neither PATCHSITE_TRACE nor PATCHSITE_TRACE_CTL is set' >"$o/un.why"; then
		ok "$t: unset"
	else
		echo "exit status $rc" >>"$o/un.why"
		not_ok "$t: unset" "$o/un.why"
	fi
done

finish
