#!/bin/sh
# End-to-end test of `patchsite trace -p PID` (trace/inject.c: the tracer
# loaded into a running embedded program with ptrace, attached, detached
# and unloaded) and of the tracer's rough edges (issue 30, item 5), natively
# on x86_64.  The oracles are not patchsite: fixtures/attach's program
# counts its own calls and prints them; /proc/PID/maps (merged where the
# kernel split a mapping the runtime wrote) before and after; the program's
# .text read from /proc/PID/mem against the file's, where readelf says it
# is; Python's json for the dumps.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/trace-attach.sh
#
#   attach         -p on the program while 4 threads call hot() without
#                  pause: exit 0, the tracer mapped, .text differs from the
#                  file (sites live); marked() called 80,000 times meanwhile
#                  (the program's count): the table says 80,000 (0 lost, 0
#                  doubled); SIGINT detaches: maps as before, .text equal to
#                  the file's, the signals it catches as before (the
#                  runtime's SIGTRAP handler gone), the program goes on (a
#                  phase after detach)
#   again          a second attach (--duration, -o DIR) works (the runtime's claim
#                  was released): the phase during it counted exactly, maps
#                  clean again; the program's output equals an untraced
#                  run's; hot() counted no more than the program called it
#   shared         a program whose runtime is loaded already (the tracer
#                  preloaded, nothing attached): -p shares it, counts
#                  exactly, and leaves it (maps as before, no message)
#   fork, exec     while attached (-F marked), the program forks a child
#                  that calls marked() and exits (status 4), then one that
#                  calls it and execs the program again (status 5, the new
#                  image calls it too): each child is left clean (its
#                  .text read from /proc/PID/mem equals the file's, its
#                  caught signals as before the attach), the new image is
#                  untouched (.text as the file's, no tracer mapped, the
#                  runtime's claim free); the parent's sites stay live and
#                  its table counts its own calls exactly (the program's
#                  phases), none of its children's, and is the one table
#                  written (the child that exits writes none); nothing said; the
#                  program's output (the children's lines and statuses)
#                  equals an untraced run's
#   exec-self      while attached, the program itself execs (its workers
#                  calling): patchsite ends by itself, exit 2 with one line
#                  that says so, having touched nothing of the new image
#                  (its .text as the file's, no tracer mapped, the claim
#                  free, no SIGTRAP handler); the new image
#                  counts its calls, says so and ends with its status (5)
#   bad-*          no such pid; a program not embedded; ptrace refused (a
#                  process that is not dumpable, patchsite without
#                  CAP_SYS_PTRACE; another user's process); a process that
#                  exits during attach; a program under qemu-user; -F that
#                  matches nothing: exit 2, one line, the program unharmed
#                  (its output and maps unchanged, it ends normally)
#   json-lines     three dumps (two signals, exit) in one file: three
#                  lines, each one JSON document
#   fifo           a FIFO the tracer made is gone after exit, and
#                  `echo dump > FIFO` then returns; one the user made stays
#   stripped       a stripped program: the message says names are missing
#   quiet          `env`, a process the preload reaches that is not
#                  embedded, says nothing; PATCHSITE_TRACE_VERBOSE=1: one line
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
PY=/usr/bin/python3

. "$here/lib.sh"

unset PATCHSITE_TRACE PATCHSITE_TRACE_OUT PATCHSITE_TRACE_FORMAT PATCHSITE_TRACE_SIGNAL \
	PATCHSITE_TRACE_CTL PATCHSITE_TRACE_TIME PATCHSITE_TRACE_VERBOSE

work=$(mktemp -d)
chmod 755 "$work"
bg=
prog=
trap 'for p in $bg $prog; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
ps_init "$work"
ps_need_patchsite

for t in "$PY" gcc readelf strip setpriv timeout qemu-aarch64 aarch64-linux-gnu-gcc; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done

fx=$work/fx
if ! make -s -C "$root/fixtures/attach" O="$fx" >"$work/make.log" 2>&1; then
	not_ok "build fixtures/attach" "$work/make.log"
	finish
fi
lib=$fx/libpatchsite-trace-attach.so
TR=--tracer=$lib
ps_check "embed attachme" 0 /dev/null -- embed "$fx/attachme" -o "$fx/attachme.emb" || finish
emb=$fx/attachme.emb

cat >"$work/judge.py" <<'EOF'
import re, subprocess, sys
cmd, args = sys.argv[1], sys.argv[2:]

def maps(pid):
    """/proc/PID/maps, adjacent pieces of one file with the same rights
       merged (the runtime's writes split a mapping), the heap's and the
       stack's extent left out (the program's own growth)"""
    out = []
    for line in open('/proc/%s/maps' % pid):
        f = line.split(None, 5)
        lo, hi = (int(x, 16) for x in f[0].split('-'))
        path = f[5].strip() if len(f) > 5 else ''
        if out and out[-1][1] == lo and out[-1][2] == f[1] and out[-1][3] == path and path:
            out[-1][1] = hi
            continue
        out.append([lo, hi, f[1], path])
    return ['%s %s' % (p, r) if p in ('[heap]', '[stack]') else '%x-%x %s %s' % (lo, hi, r, p)
            for lo, hi, r, p in out]

def text_same(pid, exe):
    """.text in memory against the file (readelf -SW says where)"""
    sec = None
    for line in subprocess.run(['readelf', '-SW', exe], capture_output=True, text=True).stdout.splitlines():
        m = re.match(r'\s*\[\s*\d+\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)', line)
        if m:
            sec = [int(x, 16) for x in m.groups()]
    addr, off, size = sec
    bias = None
    for line in open('/proc/%s/maps' % pid):
        f = line.split(None, 5)
        if len(f) > 5 and f[5].strip() == exe and int(f[2], 16) == 0:
            bias = int(f[0].split('-')[0], 16)
            break
    with open(exe, 'rb') as fh:
        fh.seek(off)
        want = fh.read(size)
    with open('/proc/%s/mem' % pid, 'rb') as fh:
        fh.seek(bias + addr)
        got = fh.read(size)
    diff = sum(1 for a, b in zip(want, got) if a != b)
    return diff

def claim(pid, exe):
    """the reserved word of the segment embed added (runtime/segment.h:
       the runtime's claim), found by its magic in readelf -lW's PT_LOADs"""
    bias = None
    for line in open('/proc/%s/maps' % pid):
        f = line.split(None, 5)
        if len(f) > 5 and f[5].strip() == exe and int(f[2], 16) == 0:
            bias = int(f[0].split('-')[0], 16)
            break
    out = subprocess.run(['readelf', '-lW', exe], capture_output=True, text=True).stdout
    with open(exe, 'rb') as fh, open('/proc/%s/mem' % pid, 'rb') as mem:
        for line in out.splitlines():
            f = line.split()
            if f and f[0] == 'LOAD':
                off, vaddr = int(f[1], 16), int(f[2], 16)
                fh.seek(off)
                if fh.read(8) == b'CALLSOP1':
                    mem.seek(bias + vaddr + 56)
                    return int.from_bytes(mem.read(8), 'little')
    return None

if cmd == 'claim-free':                 # claim-free PID EXE: no runtime claims the segment
    w = claim(*args)
    print('the segment header\'s reserved word: %s' % (hex(w) if w is not None else 'no segment'))
    sys.exit(w != 0)
elif cmd == 'claim-taken':
    w = claim(*args)
    print('the segment header\'s reserved word: %s' % (hex(w) if w is not None else 'no segment'))
    sys.exit(not w)
elif cmd == 'maps':                       # maps PID
    print('\n'.join(maps(args[0])))
elif cmd == 'text-same':                # text-same PID EXE: .text equals the file's
    d = text_same(*args)
    print('%d bytes of .text differ from the file' % d)
    sys.exit(d != 0)
elif cmd == 'text-differs':             # text-differs PID EXE: sites are live
    d = text_same(*args)
    print('%d bytes of .text differ from the file' % d)
    sys.exit(d == 0)
elif cmd == 'calls':                    # calls TABLE FUNCTION WANT ('le:N': at most N, more than 0)
    table, fn, want = args
    got = None
    for line in open(table):
        f = line.split()
        if len(f) == 5 and f[4] == fn and f[0].isdigit():
            got = int(f[0])
    print('%s: %s calls in the table, want %s' % (fn, got, want))
    if want.startswith('le:'):
        sys.exit(not (got and 0 < got <= int(want[3:])))
    sys.exit(got != int(want))
elif cmd == 'jsonl':                    # jsonl FILE N: N lines, each a JSON document
    import json
    lines = open(args[0]).read().splitlines()
    docs = [json.loads(l) for l in lines]
    print('%d lines, %d documents, reasons %s' % (len(lines), len(docs), [d['reason'] for d in docs]))
    sys.exit(len(docs) != int(args[1]) or any('functions' not in d for d in docs))
EOF
judge() { "$PY" "$work/judge.py" "$@"; }

# oneline FILE PATTERN: FILE is exactly one line, and it matches PATTERN
oneline() {
	cat "$1"
	[ "$(wc -l <"$1")" -eq 1 ] && grep -Eq "$2" "$1"
}

# start DIR ARGS...: attachme in the background ($prog), once its workers run
start() {
	_d=$1
	shift
	mkdir -p "$_d"
	"$@" >"$_d/out" 2>"$_d/err" &
	prog=$!
	waitfile "$_d/ready" 300 >"$_d/why"
}

# phase DIR K: the program's phase K, done
phase() {
	: >"$1/go$2"
	waitfile "$1/done$2" 600
}

# stop DIR: the program ends; its status
stop() {
	: >"$1/stop"
	wait "$prog"
	_rc=$?
	prog=
	return $_rc
}

# the reference: the program untraced, three phases
d=$work/ref
if start "$d" "$emb" "$d" 4 && phase "$d" 1 && phase "$d" 2 && phase "$d" 3 && stop "$d"; then
	ok "reference run"
else
	not_ok "reference run" "$d/why"
fi
ref=$work/ref/out

# --- attach, count, detach while threads call traced functions --------------
d=$work/att
if start "$d" "$emb" "$d" 4; then
	judge maps "$prog" >"$d/maps0"
	grep '^SigCgt' "/proc/$prog/status" >"$d/sig0"
	ps_run -x "timeout -s KILL 300" -e "$d/ps.err" 0 "$d/ps.out" -- trace -p "$prog" -F marked -F hot "$TR" &
	bg=$!
	if waitline "$d/ps.err" 'attached 2 functions' 600 >"$d/why"; then
		ok "attach: patchsite says it attached 2 functions"
		check "attach: the tracer is mapped in the program" grep -q libpatchsite-trace-attach.so "/proc/$prog/maps"
		check "attach: sites live (.text differs from the file)" judge text-differs "$prog" "$emb"
		check "attach: the runtime claimed the segment" judge claim-taken "$prog" "$emb"
		check "attach: phase 1 while attached" phase "$d" 1
		# SIGINT to the timeout that runs patchsite, which passes it on
		ppid=$(ps -o pid= --ppid "$bg" | tr -d ' ')
		[ -n "$ppid" ] && kill -INT "$ppid"
		if wait "$bg"; then
			ok "attach: SIGINT: exit 0"
			check "attach: detached" grep -q 'detached$' "$d/ps.err"
			check "attach: marked counted exactly as the program did (0 lost, 0 doubled)" \
				judge calls "$d/ps.out" marked "$(sed -n 's/^phase 1: marked //p' "$d/out")"
			judge maps "$prog" >"$d/maps1"
			check "attach: maps after detach as before" diff "$d/maps0" "$d/maps1"
			check "attach: .text after detach equals the file's" judge text-same "$prog" "$emb"
			check "attach: the runtime's claim released after detach" judge claim-free "$prog" "$emb"
			grep '^SigCgt' "/proc/$prog/status" >"$d/sig1"
			check "attach: signals caught after detach as before (no SIGTRAP handler left)" \
				diff "$d/sig0" "$d/sig1"
		else
			not_ok "attach: SIGINT: exit 0" "$ps_msg"
		fi
		bg=
	else
		not_ok "attach: patchsite says it attached 2 functions" "$d/why"
		kill "$bg" 2>/dev/null
		wait "$bg"
		bg=
	fi
	check "attach: the program goes on after detach (phase 2)" phase "$d" 2

	# again: the runtime's claim was released with the library
	ps_run -x "timeout -s KILL 300" -e "$d/ps2.err" 0 "$d/ps2.out" -- trace -p "$prog" -F 'mark*' --duration=3 -o "$d/o2" "$TR" &
	bg=$!
	if waitline "$d/ps2.err" 'attached 1 functions' 600 >"$d/why2" && phase "$d" 3 >>"$d/why2"; then
		if wait "$bg"; then
			ok "again: --duration=3: exit 0"
			check "again: marked counted exactly (-o DIR)" judge calls "$d/o2/summary.txt" marked \
				"$(sed -n 's/^phase 3: marked //p' "$d/out")"
			judge maps "$prog" >"$d/maps2"
			check "again: maps after detach as before" diff "$d/maps0" "$d/maps2"
		else
			not_ok "again: --duration=3: exit 0" "$ps_msg"
		fi
	else
		kill "$bg" 2>/dev/null
		wait "$bg"
		not_ok "again: attached, phase 3" "$d/why2"
	fi
	bg=
	if stop "$d"; then
		ok "attach: the program ends with status 0"
		check "attach: the program's output equals the untraced run's" diff "$ref" "$d/out"
		check "attach: hot counted, no more than the program called it" \
			judge calls "$d/ps.out" hot "le:$(cat "$d/hot")"
	else
		not_ok "attach: the program ends with status 0" "$d/err"
	fi
else
	not_ok "attach: the program starts" "$d/why"
fi

# --- fork and exec while attached ----------------------------------------------
# forks DIR [CHECK]: the program forks a child that exits (status 4) and one
# that execs the program again (status 5), one after the other; with CHECK
# each is checked while it waits: its code against the file, its signals
forks() {
	: >"$1/fork"
	waitfile "$1/forked-x" 600 >>"$1/why" || return 1
	if [ -n "${2:-}" ]; then
		_c=$(cat "$1/forked-x")
		check "fork: the child's .text equals the file's (sites back)" judge text-same "$_c" "$emb"
		grep '^SigCgt' "/proc/$_c/status" >"$1/sigc"
		check "fork: the child's signals caught as before the attach (no SIGTRAP handler)" \
			diff "$1/sig0" "$1/sigc"
	fi
	: >"$1/go-x"
	waitfile "$1/forked-e" 600 >>"$1/why" || return 1
	if [ -n "${2:-}" ]; then
		_c=$(cat "$1/forked-e")
		check "fork: the second child's .text equals the file's" judge text-same "$_c" "$emb"
	fi
	: >"$1/go-e"
	waitfile "$1/execed" 600 >>"$1/why" || return 1
	if [ -n "${2:-}" ]; then
		_c=$(cat "$1/execed")
		check "exec: the new image's .text equals the file's" judge text-same "$_c" "$emb"
		check "exec: the new image has no tracer mapped" sh -c \
			"! grep libpatchsite-trace /proc/$_c/maps"
		check "exec: the new image's runtime claim is free" judge claim-free "$_c" "$emb"
	fi
	: >"$1/go-exec"
	waitfile "$1/forkdone" 600 >>"$1/why"
}

d=$work/forkref
if start "$d" "$emb" "$d" 2 && phase "$d" 1 && forks "$d" && phase "$d" 2 && stop "$d"; then
	ok "fork: reference run (untraced)"
else
	not_ok "fork: reference run (untraced)" "$d/why"
fi
d=$work/fork
if start "$d" "$emb" "$d" 2; then
	grep '^SigCgt' "/proc/$prog/status" >"$d/sig0"
	ps_run -x "timeout -s KILL 300" -e "$d/ps.err" 0 "$d/ps.out" -- trace -p "$prog" -F marked "$TR" &
	bg=$!
	if waitline "$d/ps.err" 'attached 1 functions' 600 >"$d/why" && phase "$d" 1 >>"$d/why" &&
	   forks "$d" check && phase "$d" 2 >>"$d/why"; then
		ok "fork: attached, phase 1, two children, phase 2"
		check "fork: the parent's sites still live after its children" \
			judge text-differs "$prog" "$emb"
		ppid=$(ps -o pid= --ppid "$bg" | tr -d ' ')
		[ -n "$ppid" ] && kill -INT "$ppid"
		if wait "$bg"; then
			ok "fork: SIGINT: exit 0"
			want=$(($(sed -n 's/^phase [12]: marked //p' "$d/out" | paste -sd+)))
			check "fork: the parent's calls counted exactly, none of its children's" \
				judge calls "$d/ps.out" marked "$want"
			check "fork: one table, the parent's (no child wrote one)" sh -c \
				"cat '$d/ps.out'; [ \$(grep -c '^# patchsite-trace: pid' '$d/ps.out') -eq 1 ] &&
				 grep -q '^# patchsite-trace: pid $prog, detach' '$d/ps.out'"
			check "fork: nothing said about the children" sh -c \
				"cat '$d/ps.err'; ! grep -Ev 'attached|detached' '$d/ps.err'"
		else
			not_ok "fork: SIGINT: exit 0" "$ps_msg"
		fi
	else
		not_ok "fork: attached, phase 1, two children, phase 2" "$d/why"
		kill "$bg" 2>/dev/null
		wait "$bg"
	fi
	bg=
	if stop "$d"; then
		ok "fork: the program ends with status 0"
		check "fork: its output (the children's, their statuses 4 and 5) equals the untraced run's" \
			sh -c "grep -q '^fork child: status 4' '$d/out' && grep -q '^fork child: status 5' '$d/out' &&
			       grep -q \"^exec'd: marked 20000\" '$d/out' && diff '$work/forkref/out' '$d/out'"
	else
		not_ok "fork: the program ends with status 0" "$d/err"
	fi
else
	not_ok "fork: the program starts" "$d/why"
fi

# --- the attached process itself execs -------------------------------------------
d=$work/execself
if start "$d" "$emb" "$d" 2; then
	ps_run -x "timeout -s KILL 300" -e "$d/ps.err" 2 "$d/ps.out" -- trace -p "$prog" -F marked "$TR" &
	bg=$!
	if waitline "$d/ps.err" 'attached 1 functions' 600 >"$d/why" && phase "$d" 1 >>"$d/why"; then
		: >"$d/exec"
		waitfile "$d/execed" 600 >>"$d/why"
		# patchsite ends by itself once the image is gone (no signal sent;
		# after 60 s it is stopped with SIGINT, as a user would, and fails)
		_n=0
		while kill -0 "$bg" 2>/dev/null && [ $_n -lt 600 ]; do sleep 0.1; _n=$((_n + 1)); done
		if kill -0 "$bg" 2>/dev/null; then
			echo "patchsite still waits 60 s after the exec: SIGINT" >>"$ps_msg"
			ppid=$(ps -o pid= --ppid "$bg" | tr -d ' ')
			[ -n "$ppid" ] && kill -INT "$ppid"
		fi
		if wait "$bg"; then
			ok "exec-self: patchsite ends by itself, exit 2"
			check "exec-self: one line after the attach's says the program ran exec" sh -c \
				"cat '$d/ps.err'; [ \$(wc -l <'$d/ps.err') -eq 2 ] &&
				 sed -n 2p '$d/ps.err' | grep -q '^patchsite: pid $prog: the program ran exec while traced'"
		else
			not_ok "exec-self: patchsite ends by itself, exit 2" "$ps_msg"
		fi
		bg=
		check "exec-self: the new image's .text equals the file's" judge text-same "$prog" "$emb"
		check "exec-self: the new image has no tracer mapped" sh -c "! grep libpatchsite-trace /proc/$prog/maps"
		check "exec-self: the new image's runtime claim is free" judge claim-free "$prog" "$emb"
		# SIGTRAP is signal 5: bit 4 of SigCgt (exec reset the rest)
		check "exec-self: the new image catches no SIGTRAP (no runtime handler)" sh -c \
			"grep '^SigCgt' /proc/$prog/status; [ \$(( 0x\$(awk '/^SigCgt/ { print \$2 }' /proc/$prog/status) & 16 )) -eq 0 ]"
		: >"$d/go-exec"
		wait "$prog"
		rc=$?
		prog=
		if [ "$rc" -eq 5 ] && grep -q "^exec'd: marked 20000" "$d/out"; then
			ok "exec-self: the new image counts its calls and ends with status 5"
		else
			echo "status $rc" >>"$d/err"
			not_ok "exec-self: the new image counts its calls and ends with status 5" "$d/err"
		fi
	else
		not_ok "exec-self: attached, phase 1" "$d/why"
		kill "$bg" 2>/dev/null
		wait "$bg"
		bg=
	fi
else
	not_ok "exec-self: the program starts" "$d/why"
fi

# --- a program that has the runtime already (the tracer preloaded) ---------------
d=$work/shared
if start "$d" env PATCHSITE_TRACE_CTL="$d/ctl" LD_PRELOAD="$fx/libpatchsite-trace.so" "$emb" "$d" 2; then
	judge maps "$prog" >"$d/maps0"
	ps_run -x "timeout -s KILL 300" -e "$d/ps.err" 0 "$d/ps.out" -- trace -p "$prog" -F marked --duration=3 "$TR" &
	bg=$!
	if waitline "$d/ps.err" 'attached 1 functions' 600 >"$d/why" && phase "$d" 1 >>"$d/why"; then
		if wait "$bg"; then
			ok "shared: the preloaded runtime shared: exit 0"
			check "shared: marked counted exactly" judge calls "$d/ps.out" marked \
				"$(sed -n 's/^phase 1: marked //p' "$d/out")"
			check "shared: stderr is the attach and detach lines only" \
				test "$(grep -vc 'attached 1 functions\|detached$' "$d/ps.err")" -eq 0
			# the program's runtime keeps the page it mapped for its
			# rounds (anonymous, rw-p): the rest is as before
			judge maps "$prog" >"$d/maps1"
			grep -v ' rw-p $' "$d/maps0" >"$d/maps0.f"
			grep -v ' rw-p $' "$d/maps1" >"$d/maps1.f"
			check "shared: maps after detach as before (the program's runtime stays)" \
				diff "$d/maps0.f" "$d/maps1.f"
		else
			not_ok "shared: the preloaded runtime shared: exit 0" "$ps_msg"
		fi
	else
		kill "$bg" 2>/dev/null
		wait "$bg"
		not_ok "shared: attached, phase 1" "$d/why"
	fi
	bg=
	check "shared: the program ends with status 0" stop "$d"
else
	not_ok "shared: the program starts" "$d/why"
fi

# --- bad input: one line, exit 2, the program unharmed -------------------------
# bad NAME PATTERN DIR ARGS...: patchsite ARGS exits 2 with one line
# matching PATTERN ($wrap, if set: a command prefix)
wrap=
bad() {
	_n=$1 _pat=$2 _d=$3
	shift 3
	if ps_run -x "$wrap" -e "$_d/bad.err" 2 /dev/null -- "$@" &&
		oneline "$_d/bad.err" "$_pat" >"$_d/bad.why"; then
		ok "bad $_n: exit 2, one line"
	else
		cat "$ps_msg" >>"$_d/bad.why"
		not_ok "bad $_n: exit 2, one line" "$_d/bad.why"
	fi
}

# unharmed DIR NAME: maps as before (maps0), a phase runs, it ends with
# status 0, its first phase's line the untraced run's
unharmed() {
	judge maps "$prog" >"$1/maps1"
	check "bad $2: maps unchanged" diff "$1/maps0" "$1/maps1"
	if phase "$1" 1 >"$1/why" && stop "$1"; then
		check "bad $2: the program runs on, same output (2 threads: phase 1 marked 40000)" \
			test "$(head -n 1 "$1/out")" = "phase 1: marked 40000"
	else
		not_ok "bad $2: the program runs on" "$1/why"
	fi
}

# no such pid: a pid that ran and was reaped
sh -c 'exit 0' &
dead=$!
wait $dead
d=$work/nopid
mkdir -p "$d"
bad "no-such-pid" "^patchsite: pid $dead: no such process" "$d" trace -p "$dead" "$TR"

d=$work/plain
if start "$d" "$fx/attachme" "$d" 2; then
	judge maps "$prog" >"$d/maps0"
	bad "not-embedded" "^patchsite: pid $prog: .*attachme: not embedded by .patchsite embed." "$d" \
		trace -p "$prog" "$TR"
	unharmed "$d" "not-embedded"
else
	not_ok "bad not-embedded: the program starts" "$d/why"
fi

d=$work/nomatch
if start "$d" "$emb" "$d" 2; then
	judge maps "$prog" >"$d/maps0"
	bad "no-match" "no traced function matches" "$d" trace -p "$prog" -F 'nothing_like_this*' "$TR"
	check "bad no-match: the runtime's claim released" judge claim-free "$prog" "$emb"
	unharmed "$d" "no-match"
else
	not_ok "bad no-match: the program starts" "$d/why"
fi

# not dumpable, and patchsite without CAP_SYS_PTRACE (root drops it from
# its bounding set; any other user has none)
d=$work/nodump
if start "$d" "$emb" "$d" 2 nodump; then
	judge maps "$prog" >"$d/maps0"
	if [ "$(id -u)" -eq 0 ]; then
		wrap="setpriv --bounding-set=-sys_ptrace"
		bad "ptrace-refused (not dumpable)" "^patchsite: pid $prog: ptrace refused" "$d" \
			trace -p "$prog" "$TR"
		wrap=
	else
		bad "ptrace-refused (not dumpable)" "^patchsite: pid $prog: ptrace refused" "$d" \
			trace -p "$prog" "$TR"
	fi
	unharmed "$d" "ptrace-refused (not dumpable)"
else
	not_ok "bad ptrace-refused: the program starts" "$d/why"
fi

# another user's process: root runs patchsite as nobody; anyone else tries init
d=$work/other
chmod 777 "$work" "$fx"
if [ "$(id -u)" -eq 0 ]; then
	if start "$d" "$emb" "$d" 2; then
		judge maps "$prog" >"$d/maps0"
		wrap="setpriv --reuid=65534 --regid=65534 --clear-groups"
		bad "ptrace-refused (another user)" "^patchsite: pid $prog: ptrace refused" "$d" \
			trace -p "$prog" "$TR"
		wrap=
		unharmed "$d" "ptrace-refused (another user)"
	else
		not_ok "bad ptrace-refused (another user): the program starts" "$d/why"
	fi
else
	mkdir -p "$d"
	bad "ptrace-refused (another user)" "^patchsite: pid 1: ptrace refused" "$d" trace -p 1 "$TR"
fi
chmod 755 "$work" "$fx"

# exits during attach: a thread of it exits (status 3) once it sees a tracer
d=$work/watch
if start "$d" "$emb" "$d" 2 watch; then
	bad "exits-during-attach" "^patchsite: pid $prog: the process exited during attach" "$d" \
		trace -p "$prog" "$TR"
	# it exits once traced; if it was never traced, it is stopped after 30 s
	i=0
	while kill -0 "$prog" 2>/dev/null && [ "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$prog/status" 2>/dev/null)" != Z ] &&
		[ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill "$prog" 2>/dev/null
	wait "$prog"
	check "bad exits-during-attach: the program exited by itself (status 3)" test $? -eq 3
	prog=
else
	not_ok "bad exits-during-attach: the program starts" "$d/why"
fi

# an arm64 program under qemu-user
d=$work/qemu
mkdir -p "$d"
printf '#include <unistd.h>\nint main(void) { for (int i = 0; i < 600; i++) usleep(100000); return 0; }\n' >"$d/loop.c"
if aarch64-linux-gnu-gcc -O2 -o "$d/loop" "$d/loop.c" >"$d/cc.log" 2>&1; then
	qemu-aarch64 -L /usr/aarch64-linux-gnu "$d/loop" &
	prog=$!
	sleep 0.5
	bad "qemu-user" "^patchsite: pid $prog: .*qemu-user" "$d" trace -p "$prog" "$TR"
	check "bad qemu-user: the program still runs" kill -0 "$prog"
	kill "$prog"
	wait "$prog" 2>/dev/null
	prog=
else
	not_ok "bad qemu-user: build an arm64 program" "$d/cc.log"
fi

# --- the tracer's rough edges (preloaded) -----------------------------------------
pre=$fx/libpatchsite-trace.so

# repeated JSON dumps are JSON Lines
d=$work/json
if start "$d" env PATCHSITE_TRACE='marked,hot' PATCHSITE_TRACE_FORMAT=json PATCHSITE_TRACE_SIGNAL=SIGUSR2 \
	PATCHSITE_TRACE_OUT="$d/dumps" LD_PRELOAD="$pre" "$emb" "$d" 2; then
	kill -USR2 "$prog" && waitline "$d/dumps" '"reason": "signal"' 300 >"$d/why"
	phase "$d" 1 >>"$d/why"
	n=$(wc -l <"$d/dumps")
	kill -USR2 "$prog"
	i=0
	while [ "$(wc -l <"$d/dumps")" -le "$n" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if stop "$d"; then
		check "json-lines: three dumps, three lines, each one JSON document" judge jsonl "$d/dumps" 3
	else
		not_ok "json-lines: the program ends with status 0" "$d/err"
	fi
else
	not_ok "json-lines: the program starts" "$d/why"
fi

# a FIFO the tracer made is gone with the program; a writer then returns
d=$work/fifo
if start "$d" env PATCHSITE_TRACE_CTL="$d/ctl" LD_PRELOAD="$pre" "$emb" "$d" 2; then
	check "fifo: the tracer made it" test -p "$d/ctl"
	if stop "$d"; then
		check "fifo: removed at exit" test ! -e "$d/ctl"
		check "fifo: echo dump > FIFO after exit returns" timeout 10 sh -c "echo dump > '$d/ctl'"
	else
		not_ok "fifo: the program ends with status 0" "$d/err"
	fi
else
	not_ok "fifo: the program starts" "$d/why"
fi
d=$work/fifo2
mkdir -p "$d"
mkfifo "$d/ctl"
if start "$d" env PATCHSITE_TRACE_CTL="$d/ctl" LD_PRELOAD="$pre" "$emb" "$d" 2 && stop "$d"; then
	check "fifo: one the user made stays" test -p "$d/ctl"
else
	not_ok "fifo: the program with the user's FIFO" "$d/why"
fi

# stripped: names are missing, and the message says so
d=$work/strip
mkdir -p "$d"
strip "$emb" -o "$fx/attachme.strip"
if start "$d" env PATCHSITE_TRACE='marked' LD_PRELOAD="$pre" "$fx/attachme.strip" "$d" 2 && stop "$d"; then
	check "stripped: one line: no match, the program is stripped, names missing" \
		oneline "$d/err" 'no traced function matches: the program is stripped \(no \.symtab\)'
else
	not_ok "stripped: the program runs" "$d/why"
fi

# helper processes the preload reaches say nothing, unless asked
d=$work/quiet
if start "$d" env PATCHSITE_TRACE='marked' PATCHSITE_TRACE_OUT="$d/table" LD_PRELOAD="$pre" \
	env "$emb" "$d" 2 && phase "$d" 1 && stop "$d"; then
	check "quiet: env says nothing" test ! -s "$d/err"
	check "quiet: the program is traced" judge calls "$d/table" marked \
		"$(sed -n 's/^phase 1: marked //p' "$d/out")"
else
	not_ok "quiet: the program runs" "$d/why"
fi
PATCHSITE_TRACE=marked PATCHSITE_TRACE_VERBOSE=1 LD_PRELOAD="$pre" /usr/bin/true 2>"$work/verbose.err"
check "quiet: PATCHSITE_TRACE_VERBOSE=1: one line, not embedded" \
	oneline "$work/verbose.err" 'true: not embedded by .patchsite embed.'

finish
