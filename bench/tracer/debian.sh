#!/bin/sh
# The tracer's cost on real programs from Debian's source packages (issue
# 30's benchmark): each program built -O2 -pg -mfentry from `apt-get
# source`, embedded, and run on its own workload, every function traced;
# prints a table (the figures go in bench/RESULTS.md by hand).
#
#   sh bench/tracer/debian.sh               REPS=5 (runs of each way, after one
#                                           untimed warm-up round)
#
# Needs a deb-src entry for apt-get source (Debian's sources.list: a
# `Types: deb-src` stanza).  Sources and builds are kept in
# bench/tracer/out/debian/ (gitignored; built once).
#
# The programs (each over 1,000 functions, each with its own workload):
#   sqlite3  speedtest1 (test/speedtest1.c of sqlite3's source, SQLite's own
#            benchmark) on the amalgamation: `speedtest1 --size 10 --memdb`
#   bash     a script of its own loops (function calls, parameter
#            expansion, arithmetic, arrays, case): no fork, so every call is
#            the one process's
#
# The ways, interleaved run by run; CPU time of each run and its children
# (`perf stat -e task-clock`: the tracer's writer thread and patchsite's
# own reading and writing included); medians:
#   plain     the embedded program, no tracer (the program's own CPU)
#   count     the tracer preloaded over every function, counting only
#             (PATCHSITE_TRACE='*' PATCHSITE_TRACE_TIME=off)
#   trace     `patchsite trace` (every call's entry and exit recorded,
#             uftrace's data directory written)
#   uftrace   `uftrace record --no-libcall` of the same -pg binary
# With BEFORE=DIR (a libpatchsite-trace.so built from an earlier tree:
# `make -C runtime/tracer O=DIR CROSS=`), also `count` and `trace` with
# that tracer (this tree's patchsite), interleaved with the others
# (count-before, trace-before).
# Every way's standard output is checked against plain's.  The issue's
# goals: trace adds a tenth of what uftrace adds or less; count under 1.5x
# plain.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
REPS=${REPS:-5}
O=$here/out/debian
mkdir -p "$O/src" "$O/rt"
for t in perf uftrace gcc make tclsh; do
	command -v $t >/dev/null 2>&1 || {
		echo "debian.sh: $t is missing (apt-get install linux-perf uftrace gcc make tcl)" >&2
		exit 2
	}
done
[ -x "$root/patchsite" ] || make -s -C "$root"
make -s -C "$root/runtime/tracer" O="$O/rt" CROSS= >/dev/null

fetch() { # PACKAGE -> the unpacked source directory's path on stdout
	d=$(find "$O/src" -maxdepth 1 -type d -name "$1-[0-9]*" | head -n 1)
	if [ -z "$d" ]; then
		(cd "$O/src" && apt-get source --download-only "$1" >/dev/null 2>"$O/src/$1.err" &&
			dpkg-source -x --skip-patches "$1"_*.dsc >/dev/null 2>>"$O/src/$1.err") || {
			echo "debian.sh: apt-get source $1 failed (is there a deb-src entry?): $(tail -n 1 "$O/src/$1.err")" >&2
			exit 2
		}
		d=$(find "$O/src" -maxdepth 1 -type d -name "$1-[0-9]*" | head -n 1)
	fi
	echo "$d"
}

# sqlite3: the amalgamation (needs tclsh), then speedtest1 on it
if [ ! -x "$O/speedtest1-pg" ]; then
	s=$(fetch sqlite3)
	mkdir -p "$s/bld"
	(cd "$s/bld" && { [ -f sqlite3.c ] || { ../configure >/dev/null && make sqlite3.c >/dev/null; }; }) ||
		{ echo "debian.sh: the sqlite3 amalgamation failed to build" >&2; exit 2; }
	gcc -O2 -pg -mfentry -I"$s/bld" -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION \
		"$s/test/speedtest1.c" "$s/bld/sqlite3.c" -o "$O/speedtest1-pg" -lm
fi
# bash: its own build, -O2 -pg -mfentry, its own malloc off (glibc's, as
# Debian's own build)
if [ ! -x "$O/bash-pg" ]; then
	s=$(fetch bash)
	(cd "$s" && CFLAGS="-O2 -pg -mfentry" ./configure --without-bash-malloc --disable-nls >/dev/null &&
		make -j2 >/dev/null 2>&1) || { echo "debian.sh: bash failed to build" >&2; exit 2; }
	cp "$s/bash" "$O/bash-pg"
fi
cat >"$O/bash-work.sh" <<'EOF'
f() { local a=$1; r=$((a * 2 + ${#s})); }
s=
for ((i = 0; i < 20000; i++)); do
	f "$i"
	s="${s:0:16}$i"
	arr[i % 100]=$r
	case $s in *7*) n=$((n + 1)) ;; esac
done
echo "$n ${arr[42]} $s"
EOF
for p in speedtest1 bash; do
	"$root/patchsite" embed "$O/$p-pg" -o "$O/$p.emb"
done

cd "$O"	# the -pg programs write gmon.out where they run
python3 - "$O" "$REPS" "$root/patchsite" "${BEFORE:-}" <<'PYEOF'
import os, re, shutil, statistics, subprocess, sys
o, reps, ps, before = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
so, stat = o + '/rt/libpatchsite-trace.so', o + '/stat.txt'

def cpu(cmd, env=None):
    for d in ('pt', 'uf'):
        shutil.rmtree(o + '/' + d, ignore_errors=True)
        shutil.rmtree(o + '/' + d + '.old', ignore_errors=True)
    p = subprocess.run(['perf', 'stat', '-x,', '-e', 'task-clock', '-o', stat, '--'] + cmd,
                       env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    task = [l.split(',') for l in open(stat) if ',task-clock,' in l]
    if p.returncode != 0 or len(task) != 1:
        sys.exit('%s: status %d, stderr %r' % (' '.join(cmd), p.returncode, p.stderr[:300]))
    return float(task[0][0]) / 1e3, p.stdout   # ms -> s

def outkey(prog, out):
    # speedtest1 prints its own timings: compare what it did, not how long
    if prog == 'speedtest1':
        return re.sub(rb' *[0-9.]+s\n', b'\n', out)
    return out

def bench(prog, args):
    emb, pg = [o + '/' + prog + '.emb'] + args, [o + '/' + prog + '-pg'] + args
    ways = {
        'plain': (emb, None),
        'count': (emb, {'LD_PRELOAD': so, 'PATCHSITE_TRACE': '*', 'PATCHSITE_TRACE_TIME': 'off',
                        'PATCHSITE_TRACE_OUT': o + '/count.txt'}),
        'trace': ([ps, 'trace', '--tracer=' + so, '-o', o + '/pt', '--'] + emb, None),
        'uftrace': (['uftrace', 'record', '--no-libcall', '-d', o + '/uf', '--'] + pg, None),
    }
    if before:
        ways['count-before'] = (emb, dict(ways['count'][1], LD_PRELOAD=before + '/libpatchsite-trace.so'))
        ways['trace-before'] = ([ps, 'trace', '--tracer=' + before + '/libpatchsite-trace.so', '-o',
                                 o + '/pt', '--'] + emb, None)
    got, ref = {k: [] for k in ways}, None
    for r in range(reps + 1):
        for k, (cmd, env) in ways.items():
            t, out = cpu(cmd, env)
            key = outkey(prog, out)
            if ref is None:
                ref = key
            elif key != ref:
                sys.exit('%s: %s: the output differs from the plain run' % (prog, k))
            if k == 'trace':
                rec = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(o + '/pt')
                          for f in fs if f.endswith('.dat'))
            if r:
                got[k].append(t)
    return {k: statistics.median(v) for k, v in got.items()}, rec // 16

load0 = ' '.join(open('/proc/loadavg').read().split()[:3])
rows = [('sqlite3 speedtest1 --size 10 --memdb', bench('speedtest1', ['--size', '10', '--memdb'])),
        ('bash (bash-work.sh: 20,000 loop rounds)', bench('bash', [o + '/bash-work.sh']))]
load1 = ' '.join(open('/proc/loadavg').read().split()[:3])
print('REPS=%d, load %s at start, %s at end' % (reps, load0, load1))
print('| program | records | plain CPU s | count | trace | uftrace record | trace adds / uftrace adds |')
print('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for name, (m, recs) in rows:
    p = m['plain']
    print('| %s | %d | %.3f | %.3f (%.2fx) | %.3f (%.2fx) | %.3f (%.2fx) | %.0f%% |' % (
        name, recs, p, m['count'], m['count'] / p, m['trace'], m['trace'] / p,
        m['uftrace'], m['uftrace'] / p, 100 * (m['trace'] - p) / (m['uftrace'] - p)))
    if 'count-before' in m:
        print('|   count with BEFORE\'s tracer | | | %.3f (%.2fx) | | | |' % (m['count-before'], m['count-before'] / p))
    if 'trace-before' in m:
        print('|   trace with BEFORE\'s tracer | | | | %.3f (%.2fx) | | %.0f%% |' % (
            m['trace-before'], m['trace-before'] / p, 100 * (m['trace-before'] - p) / (m['uftrace'] - p)))
PYEOF
