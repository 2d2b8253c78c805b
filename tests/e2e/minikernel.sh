#!/bin/sh
# End-to-end tests of `patchsite record --in-place` and `patchsite audit` on
# the minikernel images of fixtures/minikernel/ (see its README.md): small
# kernel-like programs that walk their own patch-site table at start-up, patch
# every listed site into a call to a counter, run a workload whose call counts
# are known (fixtures/minikernel/expected.txt), and print the counts.
#
#   make -C fixtures/minikernel && PATCHSITE=/path/to/patchsite sh tests/e2e/minikernel.sh
#
#   riscv64  -pg, linked with relaxation on, table made per object before the
#            link (recordmcount's way): the linked table is stale.  Shown
#            against the link map and objdump; audit finds it; the program
#            counts wrong (checked patching) or crashes (blind patching).
#            After `record --in-place` the counts are exact, audit is clean,
#            and a second run changes nothing.  --no-relax link as control.
#   x86_64   -pg -mfentry -mrecord-mcount, run natively: the compiler's table,
#            cleared and reversed, is rewritten exactly by `record --in-place`.
#   aarch64  -fpatchable-function-entry=2, static PIE linked with
#            --no-apply-dynamic-relocs: the table is zeros in place and
#            R_AARCH64_RELATIVE addends; cleared (slots and addends) or
#            reversed, `record --in-place` must give the linker's addends back.
#            Runs under qemu-aarch64 (the image relocates itself).
#   bad input: a region smaller than the site count: exit 2, one line on
#            stderr naming the file, the file byte-identical, no -o output.
#
# Prints `ok - NAME` / `not ok - NAME` per check and `N passed, M failed`.
# A missing tool or fixture is a failure, never a skip.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mk=$root/fixtures/minikernel
out=$mk/out
expected=$mk/expected.txt
if [ -n "${PYTHON3:-}" ]; then
	py=$PYTHON3
elif [ -x /usr/bin/python3 ]; then
	py=/usr/bin/python3
else
	py=python3
fi
mkelf="$mk/tools/mkelf.py"
RUN_TIMEOUT=${RUN_TIMEOUT:-30}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-minikernel.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"

# ---------------------------------------------------------------- tools
ps_need_patchsite

# The architectures, their binutils and runners: fixtures/arches.mk, the one
# list.  Each has a section below with its own oracles; one without a
# section fails (never a skip).
arches=$(arch_var ARCHES)
tools="$py cmp timeout stat objcopy"
imgs=""
for a in $arches; do
	cross=$(arch_var "CROSS_$a")
	runner=$(arch_var "RUN_$a")
	tools="$tools ${cross}readelf ${cross}objdump ${cross}nm"
	[ "$runner" = native ] || tools="$tools ${runner%% *}"
	imgs="$imgs $a.elf $a-small.elf $a-oracle.elf"
done
# what the per-architecture sections add: the --no-relax control and the
# link map (riscv64), the distribution-style padded build (x86_64)
imgs="$imgs riscv64-norelax.elf riscv64.map x86_64-pad.elf"

tools_ok=1
for tool in $tools; do
	if command -v "$tool" >/dev/null 2>&1; then
		ok "tool $tool"
	else
		not_ok "tool $tool"
		tools_ok=0
	fi
done
[ "$tools_ok" = 1 ] || finish

imgs_ok=1
for f in $imgs; do
	[ -f "$out/$f" ] || { echo "missing $out/$f" >>"$tmp/msg.img"; imgs_ok=0; }
done
if [ "$imgs_ok" = 1 ] && [ -f "$expected" ]; then
	ok "fixtures built"
else
	not_ok "fixtures built (run make -C fixtures/minikernel)" "$tmp/msg.img"
	finish
fi

# ---------------------------------------------------------------- helpers

# run_img RUNNER IMAGE MODE OUT: run the image (RUNNER = native or a qemu),
# stdout+stderr in OUT, exit status in $run_rc
run_img() {
	if [ "$1" = native ]; then
		timeout "$RUN_TIMEOUT" "$2" "$3" >"$4" 2>&1
	else
		# shellcheck disable=SC2086 # RUNNER is a command line
		timeout "$RUN_TIMEOUT" $1 "$2" "$3" >"$4" 2>&1
	fi
	run_rc=$?
	echo "exit status $run_rc" >>"$4"
}

# the lines compared with expected.txt
counts_of() { grep -E '^(result=|count |unknown )' "$1"; }

# counts_exact OUT: rc 0 and the counts and result are expected.txt's
counts_exact() {
	counts_of "$1" >"$1.counts"
	if [ "$run_rc" -ne 0 ]; then
		cat "$1"
		return 1
	fi
	diff "$expected" "$1.counts" && return 0
	cat "$1"
	return 1
}

# patched_all OUT N: the start-up code patched N sites and rejected none
patched_all() {
	grep -q "^table slots=$2 nonzero=$2 patched=$2 rejected=0\$" "$1" || { cat "$1"; return 1; }
}

# untraced OUT: rc 0, expected result, every count 0
untraced() {
	[ "$run_rc" -eq 0 ] || { cat "$1"; return 1; }
	grep '^result=' "$expected" >"$1.want"
	grep '^count ' "$expected" | sed 's/ [0-9]*$/ 0/' >>"$1.want"
	echo "unknown 0" >>"$1.want"
	counts_of "$1" >"$1.got"
	diff "$1.want" "$1.got" || { cat "$1"; return 1; }
}

# same_lines A B: the same lines, sorted
same_sorted() {
	sort "$1" >"$1.s"
	sort "$2" >"$2.s"
	diff "$1.s" "$2.s"
}

# is_sorted FILE: hex values in ascending order
is_sorted() {
	"$py" - "$1" <<'EOF'
import sys
try:
    v = [int(x, 16) for x in open(sys.argv[1]).read().split()]
except ValueError:
    sys.exit("not a list of values:\n" + open(sys.argv[1]).read())
if v != sorted(v):
    sys.exit("not sorted: %s" % " ".join(map(hex, v)))
EOF
}

values() { "$py" "$mkelf" values "$1"; }

# inplace NAME IMAGE [LINES] [OPTIONS...]: `record --in-place OPTIONS IMAGE`
# exits 0 with LINES lines on stderr (default 0: silent on success; 1: the
# report that --verbose asks for), stderr in $ps_err; a failed check (and
# status 1) when not, and IMAGE emptied after a failed run, so that every
# check that reads it fails
inplace() {
	_ip_name=$1 _ip_img=$2 _ip_lines=${3:-0}
	shift 2
	[ $# -gt 0 ] && shift
	if ! ps_run 0 /dev/null -- record --in-place "$@" "$_ip_img"; then
		not_ok "$_ip_name" "$ps_msg"
		: >"$_ip_img" # what reads the image after the failed run fails
		return 1
	fi
	if [ "$(wc -l <"$ps_err")" -eq "$_ip_lines" ]; then
		ok "$_ip_name"
		return 0
	fi
	{ echo "stderr is not $_ip_lines lines:"; cat "$ps_err"; } >"$ps_msg"
	not_ok "$_ip_name" "$ps_msg"
	return 1
}

# idempotent IMAGE NAME: a second `record --in-place` leaves the file
# byte-identical and does not rewrite it (same inode, same mtime)
idempotent() {
	cp "$1" "$tmp/idem.before"
	ino1=$(stat -c '%i %y' "$1")
	if ! ps_run 0 "$tmp/idem.out" -- record --in-place "$1"; then
		not_ok "$2: second record --in-place leaves the file byte-identical" "$ps_msg"
		not_ok "$2: second record --in-place does not rewrite the file" "$ps_msg"
		return
	fi
	ino2=$(stat -c '%i %y' "$1")
	cat "$ps_err" >"$tmp/idem.msg"
	if cmp "$tmp/idem.before" "$1" >>"$tmp/idem.msg" 2>&1; then
		ok "$2: second record --in-place leaves the file byte-identical"
	else
		not_ok "$2: second record --in-place leaves the file byte-identical" "$tmp/idem.msg"
	fi
	if [ "$ino1" = "$ino2" ]; then
		ok "$2: second record --in-place does not rewrite the file"
	else
		echo "inode, mtime: $ino1 -> $ino2" >>"$tmp/idem.msg"
		not_ok "$2: second record --in-place does not rewrite the file" "$tmp/idem.msg"
	fi
}

# audit_rc IMAGE WANT NAME [OPTIONS...]
audit_rc() {
	_img=$1 _want=$2 _name=$3
	shift 3
	if ! ps_run -e "$tmp/audit.out" "$_want" "$tmp/audit.out" -- audit "$@" "$_img"; then
		cat "$tmp/audit.out" >>"$ps_msg"
		not_ok "$_name" "$ps_msg"
	elif audit_says "$_want" "$tmp/audit.out" "$_img"; then
		ok "$_name"
	else
		{ echo "exit $_want, and the output does not say so:"; cat "$tmp/audit.out"; } >"$ps_msg"
		not_ok "$_name" "$ps_msg"
	fi
}

# audit_says STATUS OUT IMAGE: the output agrees with the status: 0, a
# summary of zeros; 1, a summary that counts findings; 2, one line naming
# the image
audit_says() {
	case $1 in
	0) grep -qx 'summary: 0 misaligned, 0 stale, 0 missing, 0 duplicate, 0 short, 0 unsorted, 0 shifted' "$2" ;;
	1) grep -q '^summary: .* [1-9][0-9]* ' "$2" ;;
	2) [ "$(wc -l <"$2")" -eq 1 ] && grep -q "^patchsite: $3: " "$2" ;;
	*) false ;;
	esac
}

# too_small IMAGE NAME: `record --in-place` into a region with fewer slots
# than sites: exit 2, one line `patchsite: FILE: ...` on stderr, nothing on
# stdout, the file byte-identical; with -o, no output file
# too_small IMAGE NAME [SITE-OPTIONS]: an image that shows only some of its
# sites needs the layout stated (--patchable) for the others to be found
too_small() {
	opts=${3:-}
	cp "$1" "$tmp/small.img"
	cp "$1" "$tmp/small.orig"
	# shellcheck disable=SC2086 # OPTIONS are words
	ps_run -e "$tmp/small.err" 2 "$tmp/small.out" -- record $opts --in-place "$tmp/small.img"
	rc=$ps_rc
	{
		echo "exit status $rc"
		echo "stderr:"
		cat "$tmp/small.err"
		echo "stdout:"
		cat "$tmp/small.out"
	} >"$tmp/small.msg"
	if [ "$rc" -eq 2 ]; then
		ok "$2: region too small: exit 2"
	else
		not_ok "$2: region too small: exit 2" "$tmp/small.msg"
	fi
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/small.err")" -eq 1 ] && [ ! -s "$tmp/small.out" ] &&
		grep -q "^patchsite: $tmp/small.img: " "$tmp/small.err"; then
		ok "$2: region too small: a one-line error naming the file"
	else
		not_ok "$2: region too small: a one-line error naming the file" "$tmp/small.msg"
	fi
	if [ "$rc" -eq 2 ] && cmp "$tmp/small.orig" "$tmp/small.img" >>"$tmp/small.msg" 2>&1; then
		ok "$2: region too small: file byte-identical"
	else
		not_ok "$2: region too small: file byte-identical" "$tmp/small.msg"
	fi
	rm -f "$tmp/small.new"
	# shellcheck disable=SC2086 # OPTIONS are words
	if ps_run 2 /dev/null -- record $opts --in-place -o "$tmp/small.new" "$1" &&
		[ ! -e "$tmp/small.new" ]; then
		ok "$2: region too small, -o: exit 2, no output file"
	else
		{
			echo "exit status $ps_rc"
			cat "$ps_err"
			ls -l "$tmp/small.new" 2>&1
		} >"$tmp/small.msg"
		not_ok "$2: region too small, -o: exit 2, no output file" "$tmp/small.msg"
	fi
	# 12 sites, 2 slots: 10 sites are missing from the table
	audit_rc "$1" 1 "$2: audit of the too-small table: exit 1 (missing)" $opts
}

# reader IMAGE READELF NAME: mkelf.py's table reader agrees with readelf
reader() {
	values "$1" >"$tmp/reader.mine" 2>&1 &&
		"$py" "$mkelf" readelf-values "$2" "$1" >"$tmp/reader.readelf" 2>&1
	check "$3: table reader agrees with readelf" diff "$tmp/reader.mine" "$tmp/reader.readelf"
}

# ================================================================ riscv64
section_riscv64() {
RV=$(arch_var RUN_riscv64)
rvimg=$out/riscv64.elf
t=$tmp/rv
mkdir -p "$t"

run_img "$RV" "$out/riscv64-oracle.elf" oracle "$t/oracle"
check "riscv64: oracle build (manual counts) prints expected.txt" counts_exact "$t/oracle"

reader "$rvimg" riscv64-linux-gnu-readelf riscv64
values "$rvimg" >"$t/stale"
"$py" "$mkelf" objdump-sites riscv64-linux-gnu-objdump "$rvimg" _mcount >"$t/sites"
nsites=$(wc -l <"$t/sites")
check "riscv64: objdump finds 12 relaxed jal _mcount sites" test "$nsites" -eq 12
# every call was relaxed: no auipc ra left in front of a call to _mcount
riscv64-linux-gnu-objdump -d --no-show-raw-insn "$rvimg" | grep -E "jalr.*<_mcount>" >"$t/unrelaxed"
check "riscv64: the link relaxed every call _mcount to jal" test ! -s "$t/unrelaxed"

# the linked table is what the objects recorded, not where the code is now
"$py" "$mkelf" link-addrs "$out/riscv64.map" "$out"/riscv64/work_*.mcount.s >"$t/linkaddrs" 2>&1
check "riscv64: linked table = object .text address (map) + pre-link offset: addends not adjusted" \
	diff "$t/linkaddrs" "$t/stale"
grep -vxF -f "$t/sites" "$t/stale" >"$t/stale.off"
nstale=$(wc -l <"$t/stale.off")
note "riscv64: $nstale of $(wc -l <"$t/stale") per-object table entries are not at a jal _mcount after the relaxed link"
check "riscv64: relaxation made the per-object table stale (entries off the sites)" test "$nstale" -gt 0

if ! ps_run -e "$t/audit.txt" 1 "$t/audit.txt" -- audit "$rvimg"; then
	not_ok "riscv64: audit of the stale image: exit 1, stale entries" "$ps_msg"
elif grep -q stale "$t/audit.txt"; then
	ok "riscv64: audit of the stale image: exit 1, stale entries"
else
	not_ok "riscv64: audit of the stale image: exit 1, stale entries" "$t/audit.txt"
fi
ps_check "riscv64: audit --format=json of the stale image: exit 1" 1 "$t/audit.json" -- \
	audit --format=json "$rvimg" &&
check "riscv64: audit --format=json: stale = table - sites, missing = sites - table" \
	"$py" - "$t/audit.json" "$t/stale" "$t/sites" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
table = {int(x, 16) for x in open(sys.argv[2]).read().split()}
sites = {int(x, 16) for x in open(sys.argv[3]).read().split()}
got = {}
for f in d["findings"]:
    got.setdefault(f["kind"], set()).add(int(f["address"], 16))
bad = []
if got.get("stale", set()) != table - sites:
    bad.append("stale: got %s want %s" % (sorted(map(hex, got.get("stale", ()))),
                                          sorted(map(hex, table - sites))))
if got.get("missing", set()) != sites - table:
    bad.append("missing: got %s want %s" % (sorted(map(hex, got.get("missing", ()))),
                                            sorted(map(hex, sites - table))))
if d["summary"]["stale"] != len(table - sites):
    bad.append("summary %s" % d["summary"])
if bad:
    sys.exit("\n".join(bad))
EOF

run_img "$RV" "$rvimg" off "$t/off"
check "riscv64: un-patched run: expected result, no counts" untraced "$t/off"
cp "$t/off" "$tmp/rv.off"

run_img "$RV" "$rvimg" trace "$t/stale.trace"
note "riscv64 stale, checked patching: $(grep '^table' "$t/stale.trace")"
if [ "$run_rc" -eq 0 ] && ! counts_of "$t/stale.trace" | diff -q "$expected" - >/dev/null &&
	! grep -q ' rejected=0$' "$t/stale.trace"; then
	ok "riscv64: stale table, checked patching goes wrong: sites rejected, counts wrong"
else
	not_ok "riscv64: stale table, checked patching goes wrong: sites rejected, counts wrong" "$t/stale.trace"
fi
run_img "$RV" "$rvimg" blind "$t/stale.blind"
note "riscv64 stale, blind patching: exit status $run_rc"
if [ "$run_rc" -ne 0 ] || ! counts_of "$t/stale.blind" | diff -q "$expected" - >/dev/null; then
	ok "riscv64: stale table, blind patching goes wrong: crash or wrong output"
else
	not_ok "riscv64: stale table, blind patching goes wrong: crash or wrong output" "$t/stale.blind"
fi

# record --in-place -o FIXED
cp "$rvimg" "$t/orig"
if ps_run -e "$t/ip.err" 0 "$t/ip.out" -- record --in-place -v -o "$t/fixed" "$rvimg"; then
	check "riscv64: record --in-place -v -o: exit 0, one-line report" test "$(wc -l <"$t/ip.err")" -eq 1
	note "riscv64: $(cat "$t/ip.err")"
	check "riscv64: record --in-place -o leaves the input untouched" cmp "$t/orig" "$rvimg"
	check "riscv64: nothing on stdout from record --in-place" test ! -s "$t/ip.out"
else
	not_ok "riscv64: record --in-place -v -o: exit 0, one-line report" "$ps_msg"
	not_ok "riscv64: record --in-place -o leaves the input untouched (not read: the run failed)"
	not_ok "riscv64: nothing on stdout from record --in-place (not read: the run failed)"
	: >"$t/fixed" # the checks of its table fail
fi
values "$t/fixed" >"$t/fixed.values" 2>&1
check "riscv64: rewritten table = objdump's jal _mcount sites" same_sorted "$t/fixed.values" "$t/sites"
check "riscv64: rewritten table is sorted" is_sorted "$t/fixed.values"
if ps_run 0 "$t/record" -- record "$rvimg"; then
	check "riscv64: record (list) = objdump's sites" same_sorted "$t/record" "$t/sites"
else
	not_ok "riscv64: record (list) = objdump's sites" "$ps_msg"
fi
cp "$rvimg" "$t/inplace"
if ps_run 0 /dev/null -- record --in-place "$t/inplace"; then
	check "riscv64: record --in-place IMAGE = record --in-place -o" cmp "$t/fixed" "$t/inplace"
else
	not_ok "riscv64: record --in-place IMAGE = record --in-place -o" "$ps_msg"
fi

run_img "$RV" "$t/fixed" trace "$t/fixed.trace"
check "riscv64: fixed table: every listed site patched, none rejected" patched_all "$t/fixed.trace" 12
check "riscv64: fixed table: every count exact, result unchanged" counts_exact "$t/fixed.trace"
run_img "$RV" "$t/fixed" blind "$t/fixed.blind"
check "riscv64: fixed table, blind patching: every count exact" counts_exact "$t/fixed.blind"
audit_rc "$t/fixed" 0 "riscv64: audit of the fixed image: exit 0"
idempotent "$t/fixed" riscv64

# control: the same objects linked with --no-relax keep their table right
nr=$out/riscv64-norelax.elf
values "$nr" >"$t/nr.values"
"$py" "$mkelf" objdump-sites riscv64-linux-gnu-objdump "$nr" _mcount >"$t/nr.sites"
check "riscv64 --no-relax (control): per-object table = objdump's auipc+jalr sites" \
	diff "$t/nr.sites" "$t/nr.values"
audit_rc "$nr" 0 "riscv64 --no-relax (control): audit exit 0"
run_img "$RV" "$nr" trace "$t/nr.trace"
check "riscv64 --no-relax (control): every count exact (8-byte call patched)" counts_exact "$t/nr.trace"
cp "$nr" "$t/nr"
if ps_run 0 /dev/null -- record --in-place "$t/nr"; then
	check "riscv64 --no-relax (control): record --in-place changes nothing" cmp "$nr" "$t/nr"
else
	not_ok "riscv64 --no-relax (control): record --in-place changes nothing" "$ps_msg"
fi

too_small "$out/riscv64-small.elf" riscv64-small
}

# ================================================================ x86_64
section_x86_64() {
x86img=$out/x86_64.elf
t=$tmp/x86
mkdir -p "$t"

run_img native "$out/x86_64-oracle.elf" oracle "$t/oracle"
check "x86_64: oracle build prints expected.txt" counts_exact "$t/oracle"
reader "$x86img" readelf x86_64
values "$x86img" >"$t/linker"
"$py" "$mkelf" objdump-sites objdump "$x86img" __fentry__ >"$t/sites"
check "x86_64: the compiler's table = objdump's call __fentry__ sites" diff "$t/sites" "$t/linker"
check "x86_64: 12 sites" test "$(wc -l <"$t/sites")" -eq 12
run_img native "$x86img" off "$t/off"
check "x86_64: un-patched run: expected result, no counts" untraced "$t/off"
run_img native "$x86img" trace "$t/trace"
check "x86_64: compiler's table: every site patched" patched_all "$t/trace" 12
check "x86_64: compiler's table: every count exact" counts_exact "$t/trace"

"$py" "$mkelf" clear "$x86img" "$t/clr" >"$t/clr.err" 2>&1
values "$t/clr" >"$t/clr.values"
check "x86_64: cleared table is all zeros" sh -c "! grep -vx 0x0 '$t/clr.values'"
run_img native "$t/clr" trace "$t/clr.trace"
check "x86_64: cleared table: nothing patched, no counts (the runtime uses the table)" \
	sh -c "grep -q '^table slots=12 nonzero=0 patched=0 rejected=0\$' '$t/clr.trace' && ! grep -q '^count .* [1-9]' '$t/clr.trace'"
audit_rc "$t/clr" 1 "x86_64: audit of the cleared table: exit 1 (missing)"
inplace "x86_64: record --in-place on the cleared table: exit 0, silent" "$t/clr"
values "$t/clr" >"$t/restored"
check "x86_64: rewritten table = the compiler's (sorted)" same_sorted "$t/restored" "$t/linker"
check "x86_64: rewritten image byte-identical to the linker's" cmp "$x86img" "$t/clr"
run_img native "$t/clr" trace "$t/restored.trace"
check "x86_64: rewritten table: every count exact" counts_exact "$t/restored.trace"
audit_rc "$t/clr" 0 "x86_64: audit of the rewritten table: exit 0"
idempotent "$t/clr" x86_64
"$py" "$mkelf" reverse "$x86img" "$t/rev" >"$t/rev.err" 2>&1
inplace "x86_64: reversed table: record --in-place exits 0" "$t/rev"
check "x86_64: reversed table: record --in-place sorts it back (byte-identical)" cmp "$x86img" "$t/rev"
too_small "$out/x86_64-small.elf" x86_64-small

# ======================================= x86_64 as distributions build it
# Call padding (-fpatchable-function-entry=16,16 under objtool's __pfx_
# symbols), IBT (ENDBR64 before the call), and eight padded assembly
# functions that no unit's ranges cover (Debian's 6.12 vmlinux has eight:
# pv_native_save_fl and the like).  The padding is never a site: with or
# without DWARF the sites are the calls to __fentry__, the compiler's own
# table; a stated layout the code does not bear out is refused.
padimg=$out/x86_64-pad.elf
t=$tmp/x86pad
mkdir -p "$t"
values "$padimg" >"$t/linker"
"$py" "$mkelf" objdump-sites objdump "$padimg" __fentry__ >"$t/sites"
check "x86_64 padded: the compiler's table = objdump's call __fentry__ sites (12)" \
	sh -c "diff '$t/sites' '$t/linker' && [ \$(wc -l <'$t/sites') -eq 12 ]"
check "x86_64 padded: 8 padded assembly functions and a __pfx_ symbol per function" \
	sh -c "[ \$(nm '$padimg' | grep -c ' __pfx_mk_') -eq 8 ] && [ \$(nm '$padimg' | grep -c ' __pfx_') -ge 20 ]"
objcopy --strip-debug "$padimg" "$t/nodebug" || not_ok "x86_64 padded: objcopy --strip-debug"
for v in dwarf nodebug; do
	img=$padimg
	[ "$v" = nodebug ] && img=$t/nodebug
	if ps_check "x86_64 padded ($v): record exits 0" 0 "$t/$v.list" -- record "$img"; then
		check "x86_64 padded ($v): record = the compiler's table (no padding listed)" \
			same_sorted "$t/$v.list" "$t/linker"
	else
		not_ok "x86_64 padded ($v): record = the compiler's table (no padding listed)" "$ps_msg"
	fi
	audit_rc "$img" 0 "x86_64 padded ($v): audit of the image as linked: exit 0"
done
run_img native "$padimg" trace "$t/trace"
check "x86_64 padded: linker's table: every site patched, none rejected" patched_all "$t/trace" 12
"$py" "$mkelf" clear "$t/nodebug" "$t/clr" >"$t/clr.err" 2>&1 ||
	not_ok "x86_64 padded: mkelf.py clear" "$t/clr.err"
cp "$t/clr" "$t/clr.orig"
ps_run -e "$t/stated.err" 2 "$t/stated.out" -- record --in-place --patchable=16,16 "$t/clr"
rc=$ps_rc
check "x86_64 padded: record --in-place --patchable=16,16 refused: exit 2, one line naming the file" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$t/stated.err') -eq 1 ] &&
		grep -q '^patchsite: $t/clr: --patchable=16,16 does not match the code' '$t/stated.err' &&
		grep -q 'state --calls, or nothing' '$t/stated.err' || { echo rc=$rc; cat '$t/stated.err'; false; }"
check "x86_64 padded: the refused stated layout wrote nothing" sh -c "[ $rc -eq 2 ] && cmp '$t/clr.orig' '$t/clr'"
audit_rc "$padimg" 2 "x86_64 padded: audit --patchable=16,16 refused: exit 2" --patchable=16,16
audit_rc "$padimg" 2 "x86_64 padded: audit --nop-mcount refused: exit 2" --nop-mcount
inplace "x86_64 padded: record --in-place on the cleared table (no DWARF): exit 0" "$t/clr"
values "$t/clr" >"$t/restored"
check "x86_64 padded: rewritten table = the compiler's" same_sorted "$t/restored" "$t/linker"
run_img native "$t/clr" trace "$t/restored.trace"
check "x86_64 padded: rewritten table: every site patched, none rejected" patched_all "$t/restored.trace" 12
check "x86_64 padded: rewritten table: every count exact" counts_exact "$t/restored.trace"
}

# ================================================================ aarch64
section_aarch64() {
A64=$(arch_var RUN_aarch64)
a64img=$out/aarch64.elf
t=$tmp/a64
mkdir -p "$t"

run_img "$A64" "$out/aarch64-oracle.elf" oracle "$t/oracle"
check "aarch64: oracle build prints expected.txt" counts_exact "$t/oracle"
reader "$a64img" aarch64-linux-gnu-readelf aarch64
"$py" "$mkelf" slots "$a64img" >"$t/slots"
check "aarch64: linker's table: zeros in place, every slot covered by R_AARCH64_RELATIVE" \
	awk 'NF != 3 || $2 != "0x0" || $3 == "-" { print; bad = 1 } END { exit bad }' "$t/slots"
# the addends as readelf prints them (the relocations at the slots' offsets)
awk '{ print $1 }' "$t/slots" >"$t/slotaddrs"
aarch64-linux-gnu-readelf -rW "$a64img" >"$t/relocs"
"$py" - "$t/relocs" "$t/slotaddrs" >"$t/linker" 2>&1 <<'EOF'
import sys
slots = [int(x, 16) for x in open(sys.argv[2]).read().split()]
rel = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 4 and f[2] == "R_AARCH64_RELATIVE":
        rel[int(f[0], 16)] = int(f[-1], 16)
for s in slots:
    print("0x%x" % rel[s])
EOF
check "aarch64: 12 addends" test "$(wc -l <"$t/linker")" -eq 12
# independent: the traced functions' symbols (-fpatchable-function-entry=2,0:
# the site is the function's first byte)
aarch64-linux-gnu-nm "$out"/aarch64/work_a.o "$out"/aarch64/work_b.o "$out"/aarch64/work_c.o |
	awk '$2 ~ /^[Tt]$/ { print $3 }' | sort -u >"$t/funcs"
aarch64-linux-gnu-nm "$a64img" >"$t/nm"
"$py" - "$t/nm" "$t/funcs" >"$t/funcaddrs" <<'EOF'
import sys
want = set(open(sys.argv[2]).read().split())
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3 and f[2] in want:
        print("0x%x" % int(f[0], 16))
EOF
check "aarch64: linker's addends = the traced functions' addresses (nm)" same_sorted "$t/linker" "$t/funcaddrs"
if ps_run 0 "$t/record" -- record "$a64img"; then
	check "aarch64: record (list) = the linker's addends" same_sorted "$t/record" "$t/linker"
else
	not_ok "aarch64: record (list) = the linker's addends" "$ps_msg"
fi
audit_rc "$a64img" 0 "aarch64: audit of the linker's image: exit 0"
run_img "$A64" "$a64img" off "$t/off"
check "aarch64: un-patched run: expected result, no counts" untraced "$t/off"
run_img "$A64" "$a64img" trace "$t/trace"
check "aarch64: linker's table (self-relocated): every site patched" patched_all "$t/trace" 12
check "aarch64: linker's table: every count exact" counts_exact "$t/trace"
cp "$a64img" "$t/same"
if ps_run 0 /dev/null -- record --in-place "$t/same"; then
	check "aarch64: record --in-place on the linker's image changes nothing" cmp "$a64img" "$t/same"
else
	not_ok "aarch64: record --in-place on the linker's image changes nothing" "$ps_msg"
fi

# cleared: slots and addends zeroed
"$py" "$mkelf" clear "$a64img" "$t/clr" >"$t/clr.err" 2>&1
"$py" "$mkelf" readelf-values aarch64-linux-gnu-readelf "$t/clr" >"$t/clr.values" 2>&1
check "aarch64: cleared: readelf shows every addend 0" sh -c "test -s '$t/clr.values' && ! grep -vx 0x0 '$t/clr.values'"
cp "$t/clr" "$t/clr.orig"
run_img "$A64" "$t/clr" trace "$t/clr.trace"
check "aarch64: cleared table: no counts (the runtime uses the table)" \
	sh -c "grep -q '^table slots=12 nonzero=12 patched=0 rejected=12\$' '$t/clr.trace' && ! grep -q '^count .* [1-9]' '$t/clr.trace'"
audit_rc "$t/clr" 1 "aarch64: audit of the cleared table: exit 1 (missing)"
inplace "aarch64: record --in-place -v on the cleared table: exit 0, one-line report" "$t/clr" 1 -v
note "aarch64: $(cat "$ps_err")"
"$py" - "$t/clr" aarch64-linux-gnu-readelf "$t/slotaddrs" >"$t/restored" 2>&1 <<'EOF'
import subprocess, sys
slots = [int(x, 16) for x in open(sys.argv[3]).read().split()]
rel = {}
for line in subprocess.run([sys.argv[2], "-rW", sys.argv[1]], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 4 and f[2] == "R_AARCH64_RELATIVE":
        rel[int(f[0], 16)] = int(f[-1], 16)
for s in slots:
    print("0x%x" % rel[s] if s in rel else "none at 0x%x" % s)
EOF
check "aarch64: cleared then record --in-place: addends (readelf -rW) = the linker's (sorted)" \
	same_sorted "$t/restored" "$t/linker"
check "aarch64: cleared then record --in-place: addends in ascending slot order" is_sorted "$t/restored"
run_img "$A64" "$t/clr" trace "$t/restored.trace"
check "aarch64: rewritten addends: every count exact" counts_exact "$t/restored.trace"
audit_rc "$t/clr" 0 "aarch64: audit of the rewritten table: exit 0"
idempotent "$t/clr" aarch64
cp "$t/clr.orig" "$t/clr2"
if ps_run 0 /dev/null -- record --patchable=2,0 --in-place "$t/clr2"; then
	values "$t/clr2" >"$t/restored2" 2>&1
	check "aarch64: cleared then record --patchable=2,0 --in-place: the linker's addends" \
		diff "$t/linker" "$t/restored2"
else
	not_ok "aarch64: cleared then record --patchable=2,0 --in-place: the linker's addends" "$ps_msg"
fi

# reversed: the same addends in the wrong order
"$py" "$mkelf" reverse "$a64img" "$t/rev" >"$t/rev.err" 2>&1
inplace "aarch64: reversed table: record --in-place exit 0, one-line report" "$t/rev"
values "$t/rev" >"$t/rev.values" 2>&1
check "aarch64: reversed table: record --in-place restores the linker's addends in order" \
	diff "$t/linker" "$t/rev.values"
run_img "$A64" "$t/rev" trace "$t/rev.trace"
check "aarch64: re-sorted table: every count exact" counts_exact "$t/rev.trace"

# The region keeps 2 of the compiler's 12 entries: nothing in the image
# shows the other 10 NOP areas are sites, so the layout is stated.
too_small "$out/aarch64-small.elf" aarch64-small --patchable=2
}

# ================================================================ each architecture
for a in $arches; do
	case $a in
	riscv64) section_riscv64 ;;
	x86_64) section_x86_64 ;;
	aarch64) section_aarch64 ;;
	# its minikernel (-pg -mprofile-kernel, local entry points) has a script
	# of its own, beside the ELFv2-only cases: it must be one make e2e runs
	powerpc64le)
		if [ -f "$here/ppc64le.sh" ] && sed -n '/^E2E_SCRIPTS *:=/,/[^\\]$/p' "$root/Makefile" | grep -qw ppc64le; then
			ok "powerpc64le: its minikernel is checked by tests/e2e/ppc64le.sh, which make e2e runs"
		else
			not_ok "powerpc64le: its minikernel is checked by tests/e2e/ppc64le.sh, which make e2e runs"
		fi ;;
	*) not_ok "$a: fixtures/arches.mk lists it, and tests/e2e/minikernel.sh has no section for it" ;;
	esac
done

finish
