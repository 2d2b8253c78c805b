#!/bin/sh
# The preloaded tracer (libpatchsite-trace.so) never kills, hangs or
# corrupts the program it traces (issue 26, the tracer's part): one small
# program per situation (tests/safety/tracer-*.c), built -O2 -pg -mfentry
# on x86_64 (arm64 and riscv64: the fixtures' -fpatchable-function-entry,
# cross-built, run under qemu-user with the tracer preloaded in the guest),
# embedded by `patchsite embed`, run under `timeout`.  A hang or a death by
# a signal is a failure.  The oracle is never the tracer: each program
# counts its own calls, checks its own values, writes its own files and
# measures its own CPU time.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/safety-tracer.sh
#   SAFETY_ARCHES='x86_64 arm64 riscv64'    (the default)
#   TRACER_SO_DIR=DIR    use DIR/ARCH/libpatchsite-trace.so (with its
#                        libpatchsite-callops.so) instead of building
#                        runtime/tracer: how the suite is run against
#                        another build of the tracer
#
# Checks, per architecture:
#   signal         tracer-signal-timing: timing on, SIGUSR1 sent to the
#                  main thread as fast as another thread can while it calls
#                  t_work; the handler calls t_inhandler: exit 0 in time
#                  (no SIGSEGV from a record the handler overwrote), every
#                  value right (the program checks), the table's calls are
#                  the program's counts for both, every t_work call timed
#   signal-longjmp tracer-signal-longjmp: the same, but the handler leaves
#                  by siglongjmp (out of t_work, or out of the tracer's own
#                  entry hook or return): exit 0 in time, the handler's
#                  calls counted, and afterwards all 1,000 calls of t_after
#                  timed (what the interrupted hook left does not stop
#                  timing)
#   fork           tracer-fork-control: fork() while the program's own
#                  thread keeps the control FIFO busy (attach, dump,
#                  detach): no child hangs (10 s each), all exit 0; each
#                  child writes one exit table (its pid) whose t_stay count
#                  is its own 7 calls, and the parent's exit table counts
#                  its own calls only; with PATCHSITE_TRACE_OUT=DIR/%p.tsv,
#                  each child's table is in its own DIR/PID.tsv; the same
#                  with PATCHSITE_TRACE_TIME=off (x86_64: the direct call's
#                  counters, given back to zero in each child)
#   closefrom      tracer-closefrom: closefrom(3) after start-up, then four
#                  files of the program's own at the lowest numbers (the
#                  tracer's numbers reused), and again with one (its FIFO
#                  and pipe numbers left closed), and with a loop of
#                  close(fd) for fd 3 to 255 instead (the tracer's
#                  descriptors, moved high, survive it: nothing re-opened): after
#                  it, `attach t_late` through the FIFO is answered, the
#                  dump signal (SIGUSR2) still writes a table, the program
#                  exits 0, its four files hold exactly what it wrote, the
#                  exit table is in the tracer's file with the program's
#                  t_late count, and the process used < 300 ms of CPU
#                  while the main thread slept 1 s (no spinning)
#   long-line      tracer-long-line: a FIFO line of 4,095 bytes of padding
#                  then `attach t_victim` (4,110 in all) is discarded whole:
#                  one line saying so, t_victim never attached (no row);
#                  a line of exactly 4,095 bytes (`attach t_ok` after
#                  spaces) is a command: t_ok attached, its calls the
#                  program's count
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
SAFETY_ARCHES=${SAFETY_ARCHES:-x86_64 arm64 riscv64}
TRACER_SO_DIR=${TRACER_SO_DIR:-}
PY=/usr/bin/python3

. "$here/lib.sh"

unset PATCHSITE_TRACE PATCHSITE_TRACE_OUT PATCHSITE_TRACE_FORMAT PATCHSITE_TRACE_SIGNAL \
	PATCHSITE_TRACE_CTL PATCHSITE_TRACE_TIME

work=$(mktemp -d)
bgpid=
trap 'if [ -n "$bgpid" ]; then kill "$bgpid" 2>/dev/null; fi; rm -rf "$work"' EXIT
ps_init "$work"
ps_need_patchsite
# the programs are built with -pg: each writes gmon.out where it runs
cd "$work" || exit 1

# the judge: the tracer's tsv tables against the program's own numbers
cat >"$work/judge.py" <<'PYEOF'
import sys

def dumps(path):
    """[(pid, reason, {name: row})] for each dump in a tsv file"""
    out = []
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('# patchsite-trace\t'):
            f = line.split('\t')
            out.append((int(f[1].split()[1]), f[2], {}))
        elif line.startswith('function\t') or not line:
            continue
        else:
            f = line.split('\t')
            if len(f) != 7 or not out:
                raise SystemExit('%s: bad line %r' % (path, line))
            out[-1][2][f[0]] = {'attached': int(f[2]), 'calls': int(f[3]), 'timed': int(f[4])}
    return out

def prog(path):
    """the program's `KEY VALUE` and `count NAME N` lines"""
    vals, counts, kids = {}, {}, []
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[0] == 'count':
            counts[f[1]] = int(f[2])
        elif len(f) == 2 and f[0] == 'child':
            kids.append(int(f[1]))
        elif len(f) == 2:
            vals[f[0]] = f[1]
    return vals, counts, kids

def exit_rows(d, pid=None):
    ex = [x for x in d if x[1] == 'exit' and (pid is None or x[0] == pid)]
    if len(ex) != 1:
        raise SystemExit('want one exit dump%s, got %d' % (' of pid %d' % pid if pid else '', len(ex)))
    return ex[0][2]

cmd, tsv, out = sys.argv[1:4]
d, (vals, counts, kids) = (dumps(tsv) if cmd != 'fork-p' else []), prog(out)
bad = []
if cmd == 'signal':
    rows = exit_rows(d)
    for n in ('t_work', 't_inhandler'):
        got = rows.get(n, {}).get('calls')
        if got != counts[n] or not counts[n]:
            bad.append('%s: tracer %s calls, program %d' % (n, got, counts[n]))
    w = rows.get('t_work', {})
    if w.get('timed') != w.get('calls'):
        bad.append('t_work: %r, every call should be timed' % w)
elif cmd == 'longjmp':
    rows = exit_rows(d)
    got = rows.get('t_inhandler', {}).get('calls')
    if got != counts['t_inhandler'] or not counts['t_inhandler']:
        bad.append('t_inhandler: tracer %s calls, program %d' % (got, counts['t_inhandler']))
    a = rows.get('t_after', {})
    if (a.get('calls'), a.get('timed')) != (1000, 1000) or counts['t_after'] != 1000:
        bad.append('t_after: %r, want 1000 calls all timed (program %d)' % (a, counts['t_after']))
elif cmd == 'fork':
    parent = int(vals['parent'])
    want = int(vals['child_calls'])
    if not kids:
        bad.append('no child')
    for k in kids:
        r = exit_rows(d, k).get('t_stay', {})
        if r.get('calls') != want:
            bad.append('child %d: t_stay %r, it called it %d times' % (k, r, want))
    r = exit_rows(d, parent).get('t_stay', {})
    if r.get('calls') != counts['t_stay']:
        bad.append('parent: t_stay %r, it called it %d times' % (r, counts['t_stay']))
    others = {x[0] for x in d} - set(kids) - {parent}
    if others:
        bad.append('dumps from pids %s that are neither the parent nor its children' % sorted(others))
elif cmd == 'fork-p':             # fork-p DIR PROGOUT: DIR/PID.tsv per process
    import os
    parent = int(vals['parent'])
    want = int(vals['child_calls'])
    if not kids:
        bad.append('no child')
    for pid, n in [(k, want) for k in kids] + [(parent, counts['t_stay'])]:
        f = os.path.join(tsv, '%d.tsv' % pid)
        if not os.path.exists(f):
            bad.append('no %s' % f)
            continue
        r = exit_rows(dumps(f), pid).get('t_stay', {})
        if r.get('calls') != n:
            bad.append('%s: t_stay %r, that process called it %d times' % (f, r, n))
elif cmd == 'closefrom':
    if [x[1] for x in d] != ['signal', 'exit']:
        bad.append('dumps %r, want signal then exit' % [x[1] for x in d])
    else:
        r = exit_rows(d).get('t_late', {})
        if r.get('calls') != counts['t_late'] or r.get('attached') != 1 or counts['t_late'] != 100:
            bad.append('t_late: %r, program %d calls' % (r, counts['t_late']))
elif cmd == 'long-line':
    rows = exit_rows(d)
    if 't_victim' in rows:
        bad.append('t_victim has a row (attached by the tail of a discarded line): %r' % rows['t_victim'])
    r = rows.get('t_ok', {})
    if r.get('calls') != counts['t_ok'] or r.get('attached') != 1 or counts['t_ok'] != 70:
        bad.append('t_ok: %r, program %d calls' % (r, counts['t_ok']))
else:
    raise SystemExit('judge: unknown ' + cmd)
if bad:
    print('\n'.join(bad))
    sys.exit(1)
PYEOF
judge() { $PY "$work/judge.py" "$@"; }

# ctl FIFO LINE: one command to the tracer (5 s at most to open the FIFO)
ctl() { timeout 5 sh -c 'printf "%s\n" "$1" >"$2"' ctl "$2" "$1"; }
# status NAME RC: a run's exit status, said plainly (124: the timeout hit)
status() {
	case $2 in
	0) echo "$1: exit 0" ;;
	124) echo "$1: did not finish in time (timeout)" ;;
	12[5-9] | 1[3-9]?) echo "$1: killed by signal $(($2 - 128))" ;;
	*) echo "$1: exit status $2" ;;
	esac
}

for arch in $SAFETY_ARCHES; do
	case $arch in
	x86_64)
		cross= cflags='-O2 -pg -mfentry' pre= nsig=100000
		;;
	arm64)
		cross=aarch64-linux-gnu- cflags='-O2 -fpatchable-function-entry=4,2 -falign-functions=8'
		pre='qemu-aarch64 -L /usr/aarch64-linux-gnu' nsig=20000
		;;
	riscv64)
		cross=riscv64-linux-gnu- cflags='-O2 -fpatchable-function-entry=8,4 -falign-functions=8'
		pre='qemu-riscv64 -L /usr/riscv64-linux-gnu' nsig=20000
		;;
	*)
		not_ok "SAFETY_ARCHES: no architecture $arch"
		continue
		;;
	esac
	o=$work/$arch
	mkdir -p "$o"
	if [ -n "$TRACER_SO_DIR" ]; then
		so=$TRACER_SO_DIR/$arch/libpatchsite-trace.so
		check "$arch: the tracer to test, $so" test -f "$so" || continue
	else
		so=$o/libpatchsite-trace.so
		check "$arch: build runtime/tracer" env -u MAKEFLAGS -u MAKELEVEL \
			make -s -C "$root/runtime/tracer" O="$o" CROSS="$cross" || continue
	fi
	if [ -n "$pre" ]; then
		tr="$pre -E LD_PRELOAD=$so"
	else
		tr="env LD_PRELOAD=$so"
	fi
	built=1
	for p in signal-timing signal-longjmp fork-control closefrom long-line; do
		if ! "${cross}gcc" $cflags -Wall -Wextra -Werror -o "$o/$p" "$root/tests/safety/tracer-$p.c" \
			-lpthread >"$o/$p.cc" 2>&1; then
			not_ok "$arch: build tracer-$p.c" "$o/$p.cc"
			built=0
		elif ! ps_check "$arch: embed tracer-$p" 0 "$o/$p.embed" -- embed "$o/$p" -o "$o/$p.emb"; then
			built=0
		fi
	done
	[ $built = 1 ] || continue

	# signal: a traced function in a handler, timing on
	env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_OUT="$o/sig.tsv" PATCHSITE_TRACE_FORMAT=tsv \
		timeout 60 $tr "$o/signal-timing.emb" $nsig >"$o/sig.out" 2>"$o/sig.err"
	rc=$?
	status "tracer-signal-timing $nsig" $rc >"$o/sig.why"
	cat "$o/sig.out" "$o/sig.err" >>"$o/sig.why"
	if [ $rc -eq 0 ]; then
		ok "$arch: signal: the program survives $nsig signals whose handler calls a timed function"
		check "$arch: signal: the table counts the program's calls, every t_work timed" \
			judge signal "$o/sig.tsv" "$o/sig.out"
	else
		not_ok "$arch: signal: the program survives $nsig signals whose handler calls a timed function" "$o/sig.why"
	fi

	# signal: the handler leaves by siglongjmp
	env PATCHSITE_TRACE='t_*' PATCHSITE_TRACE_OUT="$o/lj.tsv" PATCHSITE_TRACE_FORMAT=tsv \
		timeout 120 $tr "$o/signal-longjmp.emb" $((nsig / 5)) >"$o/lj.out" 2>"$o/lj.err"
	rc=$?
	status "tracer-signal-longjmp $((nsig / 5))" $rc >"$o/lj.why"
	cat "$o/lj.out" "$o/lj.err" >>"$o/lj.why"
	if [ $rc -eq 0 ]; then
		ok "$arch: signal-longjmp: the program survives $((nsig / 5)) handlers that call a timed function and siglongjmp"
		check "$arch: signal-longjmp: the handler's calls counted; after it, all 1,000 calls of t_after timed" \
			judge longjmp "$o/lj.tsv" "$o/lj.out"
	else
		not_ok "$arch: signal-longjmp: the program survives $((nsig / 5)) handlers that call a timed function and siglongjmp" "$o/lj.why"
	fi

	# fork while the control thread works
	env PATCHSITE_TRACE=t_stay PATCHSITE_TRACE_CTL="$o/fork.fifo" PATCHSITE_TRACE_OUT="$o/fork.tsv" \
		PATCHSITE_TRACE_FORMAT=tsv timeout 150 $tr "$o/fork-control.emb" 30 >"$o/fork.out" 2>"$o/fork.err"
	rc=$?
	status "tracer-fork-control 30" $rc >"$o/fork.why"
	grep -v 'ctl: \(at\|de\)tached 32 functions' "$o/fork.err" >>"$o/fork.why"
	cat "$o/fork.out" >>"$o/fork.why"
	if [ $rc -eq 0 ]; then
		ok "$arch: fork: 30 children forked during control commands, none hangs, all exit 0"
		check "$arch: fork: one exit table per child with its own 7 calls, the parent's its own" \
			judge fork "$o/fork.tsv" "$o/fork.out"
	else
		not_ok "$arch: fork: 30 children forked during control commands, none hangs, all exit 0" "$o/fork.why"
	fi

	# the same with a %p in PATCHSITE_TRACE_OUT: each child its own file;
	# then counting only (x86_64: the direct call's table, zeroed in each
	# child, not the trampoline's counters)
	for way in "forkp on %p in the output's name: each child's table in its own file, its own 7 calls" \
		"forkoff off counting only: each child's table its own 7 calls, the parent's its own"; do
		set -- $way
		d=$1 tm=$2
		shift 2
		what="$arch: fork, $*"
		mkdir -p "$o/$d"
		env PATCHSITE_TRACE=t_stay PATCHSITE_TRACE_TIME=$tm PATCHSITE_TRACE_CTL="$o/$d.fifo" \
			PATCHSITE_TRACE_OUT="$o/$d/%p.tsv" PATCHSITE_TRACE_FORMAT=tsv \
			timeout 150 $tr "$o/fork-control.emb" 10 >"$o/$d.out" 2>"$o/$d.err"
		rc=$?
		status "tracer-fork-control 10" $rc >"$o/$d.why"
		grep -v 'ctl: \(at\|de\)tached 32 functions' "$o/$d.err" >>"$o/$d.why"
		if [ $rc -eq 0 ]; then
			check "$what" judge fork-p "$o/$d" "$o/$d.out"
		else
			not_ok "$what" "$o/$d.why"
		fi
	done

	# closefrom(3): the tracer's descriptors closed under it
	for nf in 4 1 loop; do
		how=
		if [ $nf = loop ]; then
			nf=4 how=loop
		fi
		d=$o/cf$nf$how
		mkdir -p "$d"
		f=$d/fifo
		env PATCHSITE_TRACE_CTL="$f" PATCHSITE_TRACE_SIGNAL=SIGUSR2 PATCHSITE_TRACE_OUT="$d/tsv" \
			PATCHSITE_TRACE_FORMAT=tsv timeout 120 $tr "$o/closefrom.emb" "$d" $nf $how >"$d/out" 2>"$d/err" &
		bgpid=$!
		if waitfile "$d/ready" >"$d/why"; then
			pid=$(sed -n 's/^pid //p' "$d/out")
			answered=0
			for try in 1 2 3 4; do
				ctl "$f" "attach t_late"
				if waitline "$d/err" '^patchsite-trace: ctl: attached 1 functions matching t_late$' 20 \
					>>"$d/why"; then
					answered=1
					break
				fi
			done
			if [ $answered = 1 ]; then
				ok "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: the FIFO still takes commands (attach t_late answered)"
			else
				cat "$d/err" >>"$d/why"
				not_ok "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: the FIFO still takes commands (attach t_late answered)" "$d/why"
			fi
			if [ -n "$pid" ] && kill -USR2 "$pid" && waitline "$d/tsv" '^# patchsite-trace.*signal' 100 >>"$d/why"; then
				ok "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: the dump signal still writes a table"
			else
				not_ok "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: the dump signal still writes a table" "$d/why"
			fi
			: >"$d/go"
		else
			not_ok "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: the program got ready" "$d/why"
		fi
		wait "$bgpid"
		rc=$?
		bgpid=
		status "tracer-closefrom" $rc >"$d/st"
		cat "$d/err" >>"$d/st"
		if [ $rc -eq 0 ]; then
			ok "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: the program exits 0 in time"
		else
			not_ok "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: the program exits 0 in time" "$d/st"
		fi
		for k in $(seq 0 $((nf - 1))); do
			printf 'data%d line 1\ndata%d line 2\n' $k $k >"$d/want$k"
		done
		check "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: the program's files hold exactly what it wrote" \
			sh -c 'for k in $(seq 0 $(($2 - 1))); do cmp "$1/want$k" "$1/data$k" || exit 1; done' sh "$d" $nf
		check "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: a signal table, then the exit table in the tracer's file, t_late's calls the program's" \
			judge closefrom "$d/tsv" "$d/out"
		if [ -n "$how" ]; then
			check "$arch: closefrom (a close loop to 255): the tracer's descriptors were above it: nothing re-opened" \
				sh -c '! grep "closed the tracer" "$1"' sh "$d/err"
		fi
		cpu=$(sed -n 's/^cpu_idle_ms //p' "$d/out")
		check "$arch: closefrom${how:+ (a close loop to 255)}, $nf files: < 300 ms CPU while the program slept 1 s (got ${cpu:-none})" \
			test "${cpu:-99999}" -lt 300
	done

	# an over-long FIFO line is discarded whole
	d=$o/ll
	mkdir -p "$d"
	f=$d/fifo
	$PY -c 'import sys
sys.stdout.write("x" * 4095 + "attach t_victim\n")
sys.stdout.write(" " * (4095 - len("attach t_ok")) + "attach t_ok\n")' >"$d/lines"
	env PATCHSITE_TRACE_CTL="$f" PATCHSITE_TRACE_OUT="$d/tsv" PATCHSITE_TRACE_FORMAT=tsv \
		timeout 120 $tr "$o/long-line.emb" "$d" >"$d/out" 2>"$d/err" &
	bgpid=$!
	if waitfile "$d/ready" >"$d/why" && timeout 10 sh -c 'cat "$1" >"$2"' sh "$d/lines" "$f" &&
		waitline "$d/err" '^patchsite-trace: ctl: attached 1 functions matching t_ok$' 150 >>"$d/why"; then
		ok "$arch: long-line: a line of exactly 4,095 bytes is a command"
	else
		cat "$d/err" >>"$d/why"
		not_ok "$arch: long-line: a line of exactly 4,095 bytes is a command" "$d/why"
	fi
	: >"$d/go"
	wait "$bgpid"
	rc=$?
	bgpid=
	status "tracer-long-line" $rc >"$d/st"
	cat "$d/err" >>"$d/st"
	if [ $rc -eq 0 ]; then
		ok "$arch: long-line: the program exits 0 in time"
	else
		not_ok "$arch: long-line: the program exits 0 in time" "$d/st"
	fi
	check "$arch: long-line: t_victim never attached, t_ok's calls the program's" \
		judge long-line "$d/tsv" "$d/out"
	check "$arch: long-line: stderr is the discarded line's one message and t_ok's answer" \
		sh -c '[ "$(wc -l <"$1")" -eq 2 ] &&
			grep -q "^patchsite-trace: ctl: a line longer than 4095 bytes, discarded$" "$1" &&
			! grep -q victim "$1" || { cat "$1"; exit 1; }' sh "$d/err"
done

finish
