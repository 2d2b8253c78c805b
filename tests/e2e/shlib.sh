#!/bin/sh
# End-to-end test of shared libraries: `patchsite embed` of a library (ET_DYN
# with DT_SONAME) and the runtime covering every embedded object of a process,
# on fixtures/shlib: a program (not embedded, the static runtime linked in)
# that links the embedded libsha.so and dlopens the embedded libshb.so,
# closes it, opens it again and closes it while it is attached, with threads
# calling both libraries.  The oracles are not patchsite: readelf, objdump,
# eu-elflint, nm, the libraries' own call counters and the program's output
# with the original libraries.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/shlib.sh
#
# For each flavour in SHLIB_FLAVOURS: x86_64-fentry (-pg -mfentry: calls to
# __fentry__ through the GOT), x86_64-pfe (-fpatchable-function-entry=5),
# natively; arm64 (=4,2) and riscv64 (=8,4) cross-built, run under qemu-user:
#   embed LIB       embed of libsha.so and libshb.so exits 0
#   segment LIB     readelf: still DYN, DT_SONAME unchanged, one PT_LOAD more,
#                   the new one R E and above every other PT_LOAD
#   elflint LIB     eu-elflint --gnu-ld: no findings
#   layout LIB      objdump: the first function starts with the idle form
#                   (x86_64 a 5-byte NOP, arm64 MOV X9, X30, riscv64 auipc t0)
#   run             the program with the embedded libraries exits 0 and its
#                   results (R lines) equal those with the original libraries
#   objects         the runtime lists libsha.so alone at start, then libsha.so
#                   and libshb.so while it is open, libsha.so alone after each
#                   dlclose, each with as many functions as nm lists (s[ab]_*)
#   calls           every runtime call returned 0 (attach_all, attach_object,
#                   detach_object before dlclose, attach_all after each
#                   dlclose, which must not touch the closed library), and
#                   ps_count after each dlclose equals that before the dlopen
#   counts          for each life of libshb (detached before dlclose, then
#                   closed while attached) and for libsha across both, the
#                   calls the ops saw equal the calls each function counted,
#                   and libshb's are exactly what the program makes (3
#                   threads x 2000 sb_sum(5) and 1000 sb_sum(3): sb_sum 7000,
#                   sb_sq 33000)
#   room            shmain room: libshb.so attached first (x86_64: its
#                   room taken first), libsha.so attached, then libshb.so
#                   detached and dlclose()d while threads call libsha: it
#                   is really unloaded (dlopen RTLD_NOLOAD finds nothing:
#                   nothing pins it, each object's sites call their own
#                   room), the program lives and every call to sa_mul is
#                   counted; libshb.so opened again, attached, 500 sb_sum
#                   calls: the ops sees 500, as its fresh counter says
#   rooms           x86_64, shmain rooms: every room capped at 2 slots
#                   (ps_arch_test_slots), 6 ops in turn attached to sa_mul
#                   and sb_sum in one call and detached, 2 threads calling
#                   both throughout: every call returns 0, each ops sees
#                   main's 3000 calls of each exactly (main's counted apart),
#                   4 slots in all (2 rooms of 2) and at least 4 reclaims
#                   (each room full twice: its slots reused after the
#                   threads answered)
#   program+library shfar, an embedded -no-pie program linking the embedded
#                   libsha.so and the runtime: ps_attach_all over both
#                   returns 0 (each object calls its own trampoline room,
#                   x86_64 too: the program's at 4 MiB, the library's near
#                   the top), and the 5 calls (mine, sa_mul, 3 sa_add) are
#                   seen
#   tracer          libpatchsite-trace.so preloaded, PATCHSITE_TRACE='sa_*,sb_*',
#                   into shplain (links the embedded libsha.so, no runtime of
#                   its own; 2 threads call libsha throughout while main
#                   dlopens libshb.so, calls it from 3 threads and itself,
#                   and dlcloses it, twice): the table has sa_add and sa_mul
#                   and two rows (two lives) of sb_sq and sb_sum, with the
#                   calls the libraries counted (sb_sum 14000, sb_sq 66000),
#                   nothing on stderr, the output as with the originals
#   tracer program+library  the same with shplain-emb, the program embedded
#                   too (-no-pie), globs 'sa_*,sb_*,worker_*': worker_a 2
#                   calls, worker_b 6, sa_*, sb_* as the libraries counted,
#                   nothing on stderr
#   trace program+library  `patchsite trace --summary -o DIR` of the same
#                   shplain-emb (every function of the program and of the
#                   libraries): the summary's calls and `uftrace report`'s
#                   of DIR each equal the libraries' own counters for
#                   sa_*, sb_*, and main 1, worker_a 2, worker_b 6
#   runpath         the same with shrun, which finds libsha.so and the
#                   libshb.so it dlopens by its own DT_RUNPATH ($ORIGIN/emb)
#                   while the tracer's directory holds the original
#                   libshb.so: the dlopen the tracer interposes finds the
#                   caller's (embedded) one, so sb_* are counted
#   trace records   `patchsite trace` (record mode) of shplain, not
#                   embedded itself, with the embedded libsha.so and the
#                   libshb.so it dlopens twice: `uftrace report` of the
#                   trace counts sa_add, sa_mul, sb_sq, sb_sum as the
#                   libraries' own counters of that run; `uftrace graph`
#                   (nesting, names, counts against each run's counters)
#                   equals the graph of uftrace's own recording (`uftrace
#                   record --force --no-libcall --no-event` of shplain with
#                   the original -pg -mfentry libraries: uftrace records
#                   -pg libraries through their __fentry__ calls; the
#                   other flavours are compared with that same recording,
#                   so x86_64-fentry must be among them); Chrome JSON
#                   (-o t.json) has a B and an E
#                   event per call of each library function, as counted
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/shlib
PATCHSITE=${PATCHSITE:-$root/patchsite}
SHLIB_FLAVOURS=${SHLIB_FLAVOURS:-x86_64-fentry x86_64-pfe arm64 riscv64}

. "$here/lib.sh"

# graph_tree GRAPH OWN: the call tree `uftrace graph` draws, each node as
# its depth, the function's name, and "own" where its count is the run's
# own counter for it; siblings in name order (uftrace orders them by time,
# which two runs need not share).  A line whose prefix ends in "+-" is a
# child at depth (len + 1) / 4; any other prefix continues a chain: a child
# of the line before.
graph_tree() {
	python3 - "$1" "$2" <<'PY'
import re, sys
own = {l.split()[1]: l.split()[2] for l in open(sys.argv[2])}
root, stack, depth = [], [], -1
for l in open(sys.argv[1]):
    if " : " not in l:
        continue
    tree = l.split(" : ", 1)[1].rstrip("\n")
    m = re.search(r"\((\d+)\) (\S+)$", tree)
    if not m:
        continue
    n, name = m.group(1), m.group(2)
    pre = tree[:tree.index("(")]
    depth = (len(pre) + 1) // 4 if pre.endswith("+-") else depth + 1
    node = ("%s %s" % (name, "own" if own.get(name) == n else n), [])
    del stack[depth:]
    (stack[-1][1] if stack else root).append(node)
    stack.append(node)
def show(nodes, d):
    for label, kids in sorted(nodes):
        print(d, label)
        show(kids, d + 1)
show(root, 0)
PY
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"
ps_need_patchsite

for fl in $SHLIB_FLAVOURS; do
	case $fl in
	x86_64-fentry) cross= flavour=fentry pre= idle='nopl +0x0\(%rax,%rax,1\)' ;;
	x86_64-pfe) cross= flavour=pfe pre= idle='nopl +0x0\(%rax,%rax,1\)' ;;
	arm64) cross=aarch64-linux-gnu- flavour=fentry
		pre="qemu-aarch64 -L /usr/aarch64-linux-gnu" idle='mov[[:space:]]+x9, x30' ;;
	riscv64) cross=riscv64-linux-gnu- flavour=fentry
		pre="qemu-riscv64 -L /usr/riscv64-linux-gnu" idle='auipc[[:space:]]+t0' ;;
	*) not_ok "SHLIB_FLAVOURS: no flavour $fl"; continue ;;
	esac
	o=$work/$fl
	if ! make -s -C "$fix" O="$o" CROSS="$cross" FLAVOUR="$flavour" >"$work/make.log" 2>&1; then
		not_ok "$fl: build fixtures/shlib" "$work/make.log"
		continue
	fi
	mkdir -p "$o/emb"
	for lib in libsha libshb; do
		in=$o/$lib.so
		out=$o/emb/$lib.so
		ps_check "$fl: embed $lib" 0 /dev/null -- embed "$in" -o "$out" || continue
		readelf -hW "$out" >"$o/$lib.h" 2>&1
		readelf -dW "$in" | grep SONAME >"$o/$lib.soname.in"
		readelf -dW "$out" | grep SONAME >"$o/$lib.soname.out"
		readelf -lW "$in" | grep -c '^ *LOAD' >"$o/$lib.nload.in"
		readelf -lW "$out" | awk '$1 == "LOAD"' >"$o/$lib.loads"
		if grep -q 'Type:.*DYN' "$o/$lib.h" && grep -q "\[$lib.so\]" "$o/$lib.soname.out" &&
		   cmp -s "$o/$lib.soname.in" "$o/$lib.soname.out" &&
		   [ "$(wc -l <"$o/$lib.loads")" -eq $(($(cat "$o/$lib.nload.in") + 1)) ] &&
		   python3 -c '
import sys
rows = [l.split() for l in open(sys.argv[1])]
vs = [int(r[2], 16) for r in rows]
sys.exit(not (vs[-1] == max(vs) and rows[-1][-2] == "E" and rows[-1][-3] == "R"))' "$o/$lib.loads"; then
			ok "$fl: segment $lib"
		else
			cat "$o/$lib.h" "$o/$lib.soname.in" "$o/$lib.soname.out" "$o/$lib.loads" >"$o/detail"
			not_ok "$fl: segment $lib" "$o/detail"
		fi
		check "$fl: elflint $lib" sh -c "eu-elflint --gnu-ld '$out' | grep -qx 'No errors'"
		first=$(${cross}nm --defined-only "$in" | awk '$2 == "T" && $3 ~ /^s[ab]_/ { print $3 }' | sort | head -1)
		${cross}objdump -d --no-show-raw-insn "$out" |
			awk -v f="<$first>:" '$2 == f { go = 1; next } go { print; exit }' >"$o/$lib.first"
		if [ -n "$first" ] && grep -Eq "$idle" "$o/$lib.first"; then
			ok "$fl: layout $lib"
		else
			not_ok "$fl: layout $lib ($first)" "$o/$lib.first"
		fi
		${cross}nm --defined-only "$in" | awk '$2 == "T" && $3 ~ /^s[ab]_/' | wc -l >"$o/$lib.nfn"
	done
	# the program with the original libraries, then with the embedded ones
	LD_LIBRARY_PATH=$o $pre ${pre:+-E LD_LIBRARY_PATH=$o} "$o/shmain" >"$o/orig.out" 2>"$o/orig.err"
	orc=$?
	LD_LIBRARY_PATH=$o/emb timeout 600 $pre ${pre:+-E LD_LIBRARY_PATH=$o/emb} "$o/shmain" \
		>"$o/emb.out" 2>"$o/emb.err"
	erc=$?
	grep '^R' "$o/orig.out" >"$o/orig.r"
	grep '^R' "$o/emb.out" >"$o/emb.r"
	if [ $orc -eq 0 ] && [ $erc -eq 0 ] && [ -s "$o/orig.r" ] && cmp -s "$o/orig.r" "$o/emb.r"; then
		ok "$fl: run"
	else
		{ echo "original exit $orc, embedded exit $erc"; diff "$o/orig.r" "$o/emb.r"; cat "$o/emb.err"; } >"$o/detail"
		not_ok "$fl: run" "$o/detail"
		continue
	fi
	na=$(cat "$o/libsha.nfn") nb=$(cat "$o/libshb.nfn")
	printf '%s\n' "O start 1 libsha.so:$na" "O b1 2 libsha.so:$na libshb.so:$nb" \
		"O closed1 1 libsha.so:$na" "O b2 2 libsha.so:$na libshb.so:$nb" \
		"O closed2 1 libsha.so:$na" >"$o/want.o"
	grep '^O' "$o/emb.out" >"$o/got.o"
	if [ "$na" -ge 2 ] && [ "$nb" -ge 2 ] && cmp -s "$o/want.o" "$o/got.o"; then
		ok "$fl: objects"
	else
		diff "$o/want.o" "$o/got.o" >"$o/detail"
		not_ok "$fl: objects" "$o/detail"
	fi
	printf '%s\n' "E start attach_all 0" "E b1 attach_object 0" "E b1 detach_object 0" \
		"E closed1 count same" "E closed1 attach_all 0" "E b2 attach_object 0" \
		"E closed2 count same" "E closed2 attach_all 0" "E end detach_ops_all 0" >"$o/want.e"
	grep '^E' "$o/emb.out" >"$o/got.e"
	if cmp -s "$o/want.e" "$o/got.e"; then
		ok "$fl: calls"
	else
		diff "$o/want.e" "$o/got.e" >"$o/detail"
		not_ok "$fl: calls" "$o/detail"
	fi
	grep '^C' "$o/emb.out" >"$o/got.c"
	if [ "$(wc -l <"$o/got.c")" -eq 6 ] &&
	   awk '$4 != $5 || $5 <= 0 { bad = 1 }
		$2 ~ /^b/ && $3 == "sb_sum" && $5 != 7000 { bad = 1 }
		$2 ~ /^b/ && $3 == "sb_sq" && $5 != 33000 { bad = 1 }
		END { exit bad }' "$o/got.c"; then
		ok "$fl: counts"
	else
		not_ok "$fl: counts" "$o/got.c"
	fi
	# the library attached first (x86_64: its room taken first) closed
	# while the other calls on: unloaded, every call of libsha's counted,
	# and its second life counted from a fresh counter
	if LD_LIBRARY_PATH=$o/emb timeout 600 $pre ${pre:+-E LD_LIBRARY_PATH=$o/emb} "$o/shmain" room \
		>"$o/room.out" 2>&1 &&
	   [ "$(grep -c '^E room ' "$o/room.out")" -eq 10 ] &&
	   [ "$(grep -c '^E room .* 0$' "$o/room.out")" -eq 10 ] &&
	   grep -qx 'E room loaded after dlclose 0' "$o/room.out" &&
	   awk '$1 == "C" && $3 == "sa_mul" && $4 == $5 && $5 >= 2000 { a = 1 }
		$1 == "C" && $3 == "sb_sum" && $4 == 500 && $5 == 500 { b = 1 }
		END { exit !(a && b) }' "$o/room.out"; then
		ok "$fl: room: a traced library closed, unloaded, opened again"
	else
		not_ok "$fl: room: a traced library closed, unloaded, opened again" "$o/room.out"
	fi
	# x86_64: a room per object, each capped at 2 slots, reused in turn
	case $fl in
	x86_64-*)
		if LD_LIBRARY_PATH=$o/emb timeout 600 "$o/shmain" rooms >"$o/rooms.out" 2>&1 &&
		   [ "$(grep -c '^E rooms ops[0-5] 0 0$' "$o/rooms.out")" -eq 6 ] &&
		   [ "$(grep -c '^C rooms ops[0-5] 3000 3000$' "$o/rooms.out")" -eq 6 ] &&
		   awk '$1 == "S" && $4 == 4 && $6 >= 4 { ok = 1 } END { exit !ok }' "$o/rooms.out"
		then
			ok "$fl: rooms: each object's room full in turn, its slots reused"
		else
			not_ok "$fl: rooms: each object's room full in turn, its slots reused" \
				"$o/rooms.out"
		fi
		;;
	esac
	# an embedded program and an embedded library in one process
	want_far='objects 2|attach_all 0|r 8 seen 5'
	if ps_run 0 /dev/null -- embed "$o/shfar" -o "$o/shfar.emb" &&
	   LD_LIBRARY_PATH=$o/emb timeout 600 $pre ${pre:+-E LD_LIBRARY_PATH=$o/emb} "$o/shfar.emb" \
		>"$o/far.out" 2>&1 &&
	   [ "$(tr '\n' '|' <"$o/far.out")" = "$want_far|" ]; then
		ok "$fl: program+library"
	else
		{ echo "want $want_far"; cat "$ps_msg" "$o/far.out"; } >"$o/detail" 2>&1
		not_ok "$fl: program+library" "$o/detail"
	fi
	# the preloaded tracer on a program linking the embedded libsha.so
	LD_LIBRARY_PATH=$o $pre ${pre:+-E LD_LIBRARY_PATH=$o} "$o/shplain" >"$o/plain.orig" 2>&1
	rm -f "$o/t.tsv"
	if [ -n "$pre" ]; then
		# qemu-user hands its environment to the guest (-E splits at commas)
		PATCHSITE_TRACE='sa_*,sb_*' PATCHSITE_TRACE_FORMAT=tsv PATCHSITE_TRACE_OUT=$o/t.tsv \
			timeout 600 $pre -E LD_LIBRARY_PATH="$o/emb" \
			-E LD_PRELOAD="$o/libpatchsite-trace.so" "$o/shplain" >"$o/plain.out" 2>"$o/plain.err"
	else
		LD_LIBRARY_PATH=$o/emb LD_PRELOAD=$o/libpatchsite-trace.so PATCHSITE_TRACE='sa_*,sb_*' \
			PATCHSITE_TRACE_FORMAT=tsv PATCHSITE_TRACE_OUT=$o/t.tsv timeout 600 \
			"$o/shplain" >"$o/plain.out" 2>"$o/plain.err"
	fi
	trc=$?
	# a library's two lives are two rows each: summed by name
	awk -F'\t' '$1 ~ /^s[ab]_/ { n[$1] += $4 } END { for (f in n) print "C", f, n[f] }' \
		"$o/t.tsv" 2>/dev/null | sort >"$o/t.c"
	grep '^C' "$o/plain.out" | sort >"$o/own.c"
	if [ $trc -eq 0 ] && [ ! -s "$o/plain.err" ] && [ "$(wc -l <"$o/own.c")" -eq 4 ] &&
	   grep -qx 'C sb_sum 14000' "$o/own.c" && grep -qx 'C sb_sq 66000' "$o/own.c" &&
	   [ "$(awk -F'\t' '$1 ~ /^sb_/' "$o/t.tsv" | wc -l)" -eq 4 ] &&
	   cmp -s "$o/t.c" "$o/own.c" && grep -q '^R' "$o/plain.orig" &&
	   [ "$(grep '^R' "$o/plain.orig")" = "$(grep '^R' "$o/plain.out")" ]; then
		ok "$fl: tracer"
	else
		{ echo "exit $trc"; cat "$o/plain.err" "$o/t.tsv" "$o/own.c"; } >"$o/detail" 2>&1
		not_ok "$fl: tracer" "$o/detail"
	fi
	# the tracer on an embedded program linking an embedded library
	rm -f "$o/p.tsv"
	if ps_run 0 /dev/null -- embed "$o/shplain-emb" -o "$o/shplain-emb.emb"; then
		if [ -n "$pre" ]; then
			PATCHSITE_TRACE='sa_*,sb_*,worker_*' PATCHSITE_TRACE_FORMAT=tsv \
				PATCHSITE_TRACE_OUT=$o/p.tsv timeout 600 $pre -E LD_LIBRARY_PATH="$o/emb" \
				-E LD_PRELOAD="$o/libpatchsite-trace.so" "$o/shplain-emb.emb" \
				>"$o/pe.out" 2>"$o/pe.err"
		else
			PATCHSITE_TRACE='sa_*,sb_*,worker_*' PATCHSITE_TRACE_FORMAT=tsv \
				PATCHSITE_TRACE_OUT=$o/p.tsv LD_LIBRARY_PATH=$o/emb \
				LD_PRELOAD=$o/libpatchsite-trace.so timeout 600 "$o/shplain-emb.emb" \
				>"$o/pe.out" 2>"$o/pe.err"
		fi
		prc=$?
	else
		prc=$ps_rc
	fi
	awk -F'\t' '$1 ~ /^(s[ab]|worker)_/ { n[$1] += $4 } END { for (f in n) print "C", f, n[f] }' \
		"$o/p.tsv" 2>/dev/null | sort >"$o/p.c"
	{ grep '^C' "$o/pe.out"; printf 'C worker_a 2\nC worker_b 6\n'; } | sort >"$o/p.want"
	if [ "$prc" -eq 0 ] && [ ! -s "$o/pe.err" ] && [ "$(grep -c '^C s' "$o/p.want")" -eq 4 ] &&
	   cmp -s "$o/p.c" "$o/p.want"; then
		ok "$fl: tracer program+library"
	else
		{ echo "exit $prc"; cat "$o/pe.err" "$o/p.tsv" "$o/p.want"; } >"$o/detail" 2>&1
		not_ok "$fl: tracer program+library" "$o/detail"
	fi
	# `patchsite trace` of the same (every function): the summary and the
	# records (uftrace report) count the program's and the libraries' calls
	rm -rf "$o/pt.d"
	if [ -f "$o/shplain-emb.emb" ] &&
	   ps_run -x "env LD_LIBRARY_PATH=$o/emb timeout 600" -e "$o/pt.err" 0 "$o/pt.out" -- \
		trace --tracer="$o/libpatchsite-trace.so" --summary -o "$o/pt.d" -- \
		"$o/shplain-emb.emb"; then
		{ grep '^C' "$o/pt.out"; printf 'C main 1\nC worker_a 2\nC worker_b 6\n'; } | sort \
			>"$o/pt.want"
		# summary rows: calls first, the name last (a library's two lives: summed)
		awk '$1 ~ /^[0-9]+$/ && $NF ~ /^(s[ab]_|worker_|main$)/ { n[$NF] += $1 }
			END { for (f in n) print "C", f, n[f] }' "$o/pt.err" | sort >"$o/pt.sum"
		uftrace report -d "$o/pt.d" >"$o/pt.report" 2>&1
		awk '$NF ~ /^(s[ab]_|worker_|main$)/ { n[$NF] += $(NF - 1) }
			END { for (f in n) print "C", f, n[f] }' "$o/pt.report" | sort >"$o/pt.rep"
		if [ "$(grep -c '^C s' "$o/pt.want")" -eq 4 ] && cmp -s "$o/pt.sum" "$o/pt.want"; then
			ok "$fl: trace program+library: --summary counts both objects' calls"
		else
			{ cat "$o/pt.err"; echo ---; cat "$o/pt.want"; } >"$o/detail" 2>&1
			not_ok "$fl: trace program+library: --summary counts both objects' calls" \
				"$o/detail"
		fi
		if cmp -s "$o/pt.rep" "$o/pt.want"; then
			ok "$fl: trace program+library: uftrace report counts both objects' calls"
		else
			{ cat "$o/pt.report"; echo ---; cat "$o/pt.want"; } >"$o/detail" 2>&1
			not_ok "$fl: trace program+library: uftrace report counts both objects' calls" \
				"$o/detail"
		fi
	else
		not_ok "$fl: trace program+library: --summary counts both objects' calls" "$ps_msg"
		not_ok "$fl: trace program+library: uftrace report counts both objects' calls" \
			"$ps_msg"
	fi
	# shrun finds its libraries by its DT_RUNPATH ($ORIGIN/emb) alone; the
	# tracer's own directory ($o) holds the original libshb.so
	rm -f "$o/r.tsv"
	if [ -n "$pre" ]; then
		PATCHSITE_TRACE='sa_*,sb_*' PATCHSITE_TRACE_FORMAT=tsv PATCHSITE_TRACE_OUT=$o/r.tsv \
			timeout 600 $pre -E LD_PRELOAD="$o/libpatchsite-trace.so" "$o/shrun" \
			>"$o/run.out" 2>"$o/run.err"
	else
		PATCHSITE_TRACE='sa_*,sb_*' PATCHSITE_TRACE_FORMAT=tsv PATCHSITE_TRACE_OUT=$o/r.tsv \
			LD_PRELOAD=$o/libpatchsite-trace.so timeout 600 "$o/shrun" \
			>"$o/run.out" 2>"$o/run.err"
	fi
	rrc=$?
	awk -F'\t' '$1 ~ /^s[ab]_/ { n[$1] += $4 } END { for (f in n) print "C", f, n[f] }' \
		"$o/r.tsv" 2>/dev/null | sort >"$o/r.c"
	grep '^C' "$o/run.out" | sort >"$o/rown.c"
	if [ $rrc -eq 0 ] && [ ! -s "$o/run.err" ] && [ "$(wc -l <"$o/rown.c")" -eq 4 ] &&
	   cmp -s "$o/r.c" "$o/rown.c"; then
		ok "$fl: runpath"
	else
		{ echo "exit $rrc"; cat "$o/run.err" "$o/r.tsv" "$o/rown.c"; } >"$o/detail" 2>&1
		not_ok "$fl: runpath" "$o/detail"
	fi
	# record mode: `patchsite trace` of shplain (not embedded itself) records
	# the calls into the embedded libsha.so it links and the libshb.so it
	# dlopens twice; uftrace reads them as its own (x86_64: the same
	# program with the original -pg libraries under `uftrace record`)
	rm -rf "$o/ud" "$o/uu" "$o/t.json"
	# uftrace records only -pg libraries, natively: with
	# -fpatchable-function-entry (x86_64-pfe) and under qemu-user (arm64,
	# riscv64) the x86_64-fentry flavour's recording stands (the same tree)
	if [ "$fl" = x86_64-fentry ]; then
		LD_LIBRARY_PATH=$o timeout 600 uftrace record --force --no-libcall --no-event \
			-d "$o/uu" "$o/shplain" >"$o/uu.out" 2>"$o/uu.err"
		urc=$?
		uu=$o/uu
	else
		urc=0
		uu=$work/x86_64-fentry/uu
	fi
	if ps_run -x "env LD_LIBRARY_PATH=$o/emb timeout 600" 0 "$o/ud.out" -- trace \
		--tracer="$o/libpatchsite-trace.so" -o "$o/ud" -- "$o/shplain"; then
		uftrace report -d "$o/ud" >"$o/ud.report" 2>&1
		uftrace graph -d "$o/ud" >"$o/ud.graph" 2>&1
		uftrace report -d "$uu" >"$o/uu.report" 2>&1
		uftrace graph -d "$uu" >"$o/uu.graph" 2>&1
		# the report's calls of s[ab]_* against the program's own counters
		awk '$NF ~ /^s[ab]_/ { print "C", $NF, $(NF - 1) }' "$o/ud.report" | sort \
			>"$o/ud.c"
		grep '^C' "$o/ud.out" | sort >"$o/udown.c"
		awk '$NF ~ /^s[ab]_/ { print "C", $NF, $(NF - 1) }' "$o/uu.report" | sort \
			>"$o/uu.c"
		grep '^C' "$uu.out" 2>/dev/null | sort >"$o/uuown.c"
		if [ "$(wc -l <"$o/udown.c")" -eq 4 ] && grep -qx 'C sb_sum 14000' "$o/udown.c" &&
		   cmp -s "$o/ud.c" "$o/udown.c"; then
			ok "$fl: trace records: uftrace report counts the libraries' calls"
		else
			cat "$o/ud.report" "$o/udown.c" >"$o/detail"
			not_ok "$fl: trace records: uftrace report counts the libraries' calls" \
				"$o/detail"
		fi
		# the call graphs: each line's nesting and name, and its count
		# against the run's own counters (the workers' counts vary
		# from run to run); uftrace's own recording the same
		graph_tree "$o/ud.graph" "$o/udown.c" >"$o/ud.tree"
		graph_tree "$o/uu.graph" "$o/uuown.c" >"$o/uu.tree"
		if [ $urc -eq 0 ] && cmp -s "$o/uu.c" "$o/uuown.c" &&
		   [ "$(grep -c ' own$' "$o/ud.tree")" -eq 4 ] &&
		   grep -q '^0 shplain 1$' "$o/ud.tree" && cmp -s "$o/ud.tree" "$o/uu.tree"; then
			ok "$fl: trace records: uftrace graph as uftrace's own recording"
		else
			{ echo "uftrace record exit $urc"; cat "$o/uu.err" "$o/ud.tree"; echo ---
			  cat "$o/uu.tree" "$o/uu.c" "$o/uuown.c"; } >"$o/detail" 2>&1
			not_ok "$fl: trace records: uftrace graph as uftrace's own recording" \
				"$o/detail"
		fi
	else
		not_ok "$fl: trace records: uftrace report counts the libraries' calls" "$ps_msg"
		not_ok "$fl: trace records: uftrace graph as uftrace's own recording" "$ps_msg"
	fi
	# Chrome JSON: a B and an E per call of each library function
	if ps_run -x "env LD_LIBRARY_PATH=$o/emb timeout 600" 0 "$o/cj.out" -- trace \
		--tracer="$o/libpatchsite-trace.so" -o "$o/t.json" -- "$o/shplain" &&
	   python3 - "$o/t.json" "$o/cj.out" >"$o/cj.detail" 2>&1 <<'PY'
import collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
own = {l.split()[1]: int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("C ")}
b, e = collections.Counter(), collections.Counter()
for x in ev:
    (b if x["ph"] == "B" else e)[x["name"]] += 1
got = {k: b[k] for k in own}
print("own", own, "B", got, "E", {k: e[k] for k in own})
sys.exit(not (len(own) == 4 and got == own and all(e[k] == own[k] for k in own)))
PY
	then
		ok "$fl: trace records: Chrome JSON names the libraries' calls"
	else
		cat "$ps_msg" "$o/cj.detail" >"$o/detail" 2>&1
		not_ok "$fl: trace records: Chrome JSON names the libraries' calls" "$o/detail"
	fi
done

finish
