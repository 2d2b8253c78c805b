#!/bin/sh
# Smoke test of the x86_64 benchmarks (bench/callops, bench/attach, their
# run-x86_64.sh): each bench built natively, embedded and run once with tiny
# sizes.  Only what the benches count is checked, never a time: the calls
# each tracer saw (the bench exits 1 on a wrong count), target()'s sum, the
# embedded site (objdump), uftrace's own count (`uftrace report`), the
# membarrier syncs (the runtime's counter and strace's).
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/bench-x86.sh
#
# Cases:
#   callops build/embed   bench.raw built (-fpatchable-function-entry=5), embedded
#   callops site          objdump: target() is five 1-byte NOPs as linked, one
#                         5-byte NOP once embedded
#   callops not-embedded  the as-linked program refuses every attaching scheme (exit 2)
#   callops ROW           every scheme the table has (plain, own trampoline with
#                         0/10/1,000 irrelevant ops, list and listhash with 0/1,000,
#                         direct;
#                         2 relevant ops through the bench's list ops and through
#                         the runtime's list trampoline): exit 0, one well-formed line
#   uftrace               uftrace record -P target of the as-linked program: uftrace
#                         report counts target N + N/10 times
#   attach build/embed    300 functions
#   attach syncs          2 calling threads, the batched calls and the loops: every
#                         call verified by the bench; the runtime counts 3 syncs per
#                         batch: 3 per list call, 3 x 300 per loop
#   attach strace         strace counts 6 SYNC_CORE membarriers for one list attach
#                         and one list detach, as the runtime does
#   run-x86_64.sh         both scripts end to end with tiny sizes (N=2000, one pass;
#                         N=300): exit 0, a results file with every row (19 for callops)
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ps_init "$tmp"
ps_need_patchsite
PATCHSITE=$(cd "$(dirname "$PATCHSITE")" && pwd)/$(basename "$PATCHSITE")

arch=$(uname -m)
if [ "$arch" != x86_64 ]; then
	echo "this test runs the benches natively: x86_64, not $arch" >"$tmp/arch.msg"
	not_ok "x86_64 host" "$tmp/arch.msg"
	finish
fi

# --- bench/callops ----------------------------------------------------------
C=$tmp/callops
check "callops build" make -s -C "$root/bench/callops" ARCH=x86_64 O="$C" "$C/bench.raw"
ps_check "callops embed" 0 /dev/null -- embed "$C/bench.raw" -o "$C/bench"

# target()'s first bytes, as objdump decodes them
entry() { objdump -d --no-show-raw-insn --disassemble=target "$1" |
	awk '/<target>:/ { s = 1; next } s && NF >= 2 { sub(/^[^:]*:[ \t]*/, ""); print; if (++n == 5) exit }'; }
entry "$C/bench.raw" >"$tmp/raw.ent"
entry "$C/bench" >"$tmp/emb.ent"
printf 'nop\nnop\nnop\nnop\nnop\n' >"$tmp/raw.want"
if cmp -s "$tmp/raw.ent" "$tmp/raw.want" && head -n 1 "$tmp/emb.ent" | grep -q '^nopl *0x0(%rax,%rax,1)$'; then
	ok "callops site: five 1-byte NOPs linked, one 5-byte NOP embedded"
else
	{ echo "as linked:"; cat "$tmp/raw.ent"; echo "embedded:"; cat "$tmp/emb.ent"; } >"$tmp/site.msg"
	not_ok "callops site: five 1-byte NOPs linked, one 5-byte NOP embedded" "$tmp/site.msg"
fi

for s in callops list direct; do
	"$C/bench.raw" "$s" 1 0 100 >"$tmp/ne.out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q 'not embedded' "$tmp/ne.out"; then
		ok "callops not-embedded: $s refused"
	else
		echo "exit $rc" >>"$tmp/ne.out"
		not_ok "callops not-embedded: $s refused" "$tmp/ne.out"
	fi
done

N=2000
for row in "plain 0 0" "callops 1 0" "callops 1 10" "callops 1 1000" "list 1 0" "list 1 1000" "listhash 1 0" "listhash 1 1000" \
	"direct 1 0" "callops 2 3" "perfunc 2 0" "perfunc 2 1000"; do
	# shellcheck disable=SC2086
	BENCH_CLOCK=cpu "$C/bench" $row "$N" >"$tmp/row.out" 2>"$tmp/row.err"
	rc=$?
	set -- $row
	if [ "$rc" = 0 ] && awk -v s="$1" -v r="$2" -v i="$3" -v n="$N" \
		'NR == 1 && NF == 5 && $1 == s && $2 == r && $3 == i && $4 == n && $5 ~ /^[0-9]+$/ && $5 > 0 { good = 1 }
		 END { exit !(good && NR == 1) }' "$tmp/row.out"; then
		ok "callops $row: counts right"
	else
		{ echo "exit $rc"; cat "$tmp/row.out" "$tmp/row.err"; } >"$tmp/row.msg"
		not_ok "callops $row: counts right" "$tmp/row.msg"
	fi
done

# uftrace on the program as linked (its own dynamic patching of target)
if uftrace record -d "$tmp/uftrace.data" --no-libcall -P target "$C/bench.raw" plain 0 0 "$N" \
	>"$tmp/uf.out" 2>&1; then
	got=$(uftrace report -d "$tmp/uftrace.data" -F target 2>/dev/null |
		awk '$NF == "target" { print $(NF - 1) }')
	if [ "$got" = $((N + N / 10)) ]; then
		ok "uftrace: target recorded N + N/10 times"
	else
		echo "uftrace report: '$got' calls of target, want $((N + N / 10))" >"$tmp/uf.msg"
		not_ok "uftrace: target recorded N + N/10 times" "$tmp/uf.msg"
	fi
else
	not_ok "uftrace: target recorded N + N/10 times" "$tmp/uf.out"
fi

# --- bench/attach -----------------------------------------------------------
A=$tmp/attach
NA=300
check "attach build" make -s -C "$root/bench/attach" ARCH=x86_64 O="$A" N="$NA" "$A/bench-$NA.raw"
ps_check "attach embed" 0 /dev/null -- embed "$A/bench-$NA.raw" -o "$A/bench"

"$A/bench" 2 2 >"$tmp/at.out" 2>&1
rc=$?
# every rep: 3 syncs per batch (a list call is one batch, each loop step one)
if [ "$rc" = 0 ] && awk -v n="$NA" '
	$1 == "rep" { reps++; for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
		if (v["syncs_list_attach"] == 3 && v["syncs_list_detach"] == 3 &&
		    v["syncs_loop_attach"] == 3 * n && v["syncs_loop_detach"] == 3 * n) good++ }
	$1 == "callers" && NF == 6 && $2 > 0 && $3 > 0 && $5 <= $2 && $6 <= $3 { callers = 1 }
	END { exit !(reps == 2 && good == 2 && callers) }' "$tmp/at.out"; then
	ok "attach syncs: 2 threads calling, 3 syncs per batch, every count verified"
else
	echo "exit $rc" >>"$tmp/at.out"
	not_ok "attach syncs: 2 threads calling, 3 syncs per batch, every count verified" "$tmp/at.out"
fi

strace -f -qq -e trace=membarrier -o "$tmp/strace.txt" "$A/bench" 1 2 list >"$tmp/st.out" 2>&1
rc=$?
sc=$(grep -c '(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE' "$tmp/strace.txt")
if [ "$rc" = 0 ] && [ "$sc" = 6 ] &&
	grep -q '^rep 0 .* syncs_list_attach 3 syncs_list_detach 3 ' "$tmp/st.out"; then
	ok "attach strace: 6 SYNC_CORE membarriers for two batches, as the runtime counts"
else
	{ echo "exit $rc, strace counted $sc"; cat "$tmp/st.out"; } >"$tmp/st.msg"
	not_ok "attach strace: 6 SYNC_CORE membarriers for two batches, as the runtime counts" "$tmp/st.msg"
fi

# --- the scripts, end to end, tiny -----------------------------------------
if N=2000 REPS=1 OUTDIR="$C" RESULTS="$tmp/callops.md" PATCHSITE="$PATCHSITE" \
	sh "$root/bench/callops/run-x86_64.sh" >"$tmp/rc.out" 2>&1 &&
	[ "$(grep -c '^| .* | `' "$tmp/callops.md")" = 19 ]; then
	ok "callops run-x86_64.sh: 19 rows"
else
	not_ok "callops run-x86_64.sh: 19 rows" "$tmp/rc.out"
fi
if N=$NA RUNS=1 REPS=2 OUTDIR="$A" RESULTS="$tmp/attach.md" PATCHSITE="$PATCHSITE" \
	sh "$root/bench/attach/run-x86_64.sh" >"$tmp/ra.out" 2>&1 &&
	grep -q "^- Syncs: 3 per batch\.$" "$tmp/attach.md"; then
	ok "attach run-x86_64.sh: results, 3 syncs per batch"
else
	not_ok "attach run-x86_64.sh: results, 3 syncs per batch" "$tmp/ra.out"
fi

finish
