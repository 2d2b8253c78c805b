#!/bin/bash
# tests/kernel/ppc64le-table.sh - patchsite against a real powerpc64le
# kernel's own ftrace table: Linux 6.12 from Debian's linux-source-6.12,
# cross-built with Debian's GCC 12 (powerpc64le-linux-gnu-gcc), which fails
# arch/powerpc/tools/gcc-check-fpatchable-function-entry.sh and passes
# gcc-check-mprofile-kernel.sh: every traced function has `mflr r0; bl
# _mcount` at its local entry, and recordmcount's __mcount_loc lists the bl.
#
# The oracle is the kernel's own table under sorttable's rule
# (tests/kernel/mcounttab.py, which is not patchsite):
#   1. record = the oracle: every entry found, none extra;
#   2. audit of the kernel as built: the overridden weak functions' sites
#      (kept by powerpc's build, dropped by the kernel at boot) and nothing
#      else, not even 'unsorted' (the kernel sorts this table at boot);
#      clean with --ignore weak;
#   3. the table cleared (slots and R_PPC64_RELATIVE addends): audit exit 1
#      with every site missing; record --in-place writes the oracle's sites,
#      sorted, in place and in the addends, unused slots zero with
#      R_PPC64_NONE, no other byte of the file changed (the linked table was
#      per-object order with the weak leftovers: not byte for byte that);
#      audit clean; a second run changes nothing.
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite VMLINUX=/var/tmp/ppc/vmlinux bash tests/kernel/ppc64le-table.sh
# A missing kernel is a failure, never a skip.
set -u
cd "$(dirname "$0")/../.." || exit 1
PATCHSITE=${PATCHSITE:-./patchsite}
VMLINUX=${VMLINUX:-/var/tmp/ppc/vmlinux}
TAB="python3 tests/kernel/mcounttab.py"
pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-ppc64le-kernel.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

ok() { pass=$((pass + 1)); echo "ok - $1"; }
not_ok() {
	fail=$((fail + 1))
	echo "not ok - $1"
	[ $# -gt 1 ] && [ -s "$2" ] && head -n 25 "$2" | sed 's/^/#   /'
}
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

if [ ! -x "$PATCHSITE" ]; then not_ok "patchsite executable ($PATCHSITE)"; finish; fi
if [ ! -f "$VMLINUX" ]; then not_ok "a powerpc64le vmlinux at $VMLINUX"; finish; fi
machine=$(powerpc64le-linux-gnu-readelf -h "$VMLINUX" 2>/dev/null | awk -F: '/Machine/ { gsub(/^ +/, "", $2); print $2 }')
if [ "$machine" = PowerPC64 ]; then ok "$VMLINUX is a PowerPC64 image"; else not_ok "$VMLINUX is a PowerPC64 image (got '$machine')"; finish; fi

# the oracle
if $TAB sites "$VMLINUX" >"$tmp/oracle" 2>"$tmp/msg" && [ -s "$tmp/oracle" ]; then
	ok "oracle: the kernel's table has $(wc -l <"$tmp/oracle") entries inside functions"
else
	not_ok "oracle: the kernel's table (mcounttab.py sites)" "$tmp/msg"
	finish
fi

# 1. record = the oracle
"$PATCHSITE" record -v "$VMLINUX" >"$tmp/rec" 2>"$tmp/rec.err"
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$tmp/rec" "$tmp/oracle"; then
	ok "record = the kernel's table ($(wc -l <"$tmp/rec") sites): $(tail -n 1 "$tmp/rec.err")"
else
	{ echo "exit status $rc"; cat "$tmp/rec.err"; echo "only patchsite:"; comm -23 "$tmp/rec" "$tmp/oracle" | head;
	  echo "only the table:"; comm -13 "$tmp/rec" "$tmp/oracle" | head; } >"$tmp/msg"
	not_ok "record = the kernel's table" "$tmp/msg"
fi

# 2. audit as built: the only findings are the overridden weak functions'
#    sites, which powerpc's build keeps (no BUILDTIME_MCOUNT_SORT, no
#    sorttable zeroing) and the kernel drops at boot; the table is in
#    per-object order, which the kernel sorts at boot: no 'unsorted'
nweak=$(( $($TAB dump "$VMLINUX" | wc -l) - $(wc -l <"$tmp/oracle") ))
"$PATCHSITE" audit "$VMLINUX" >"$tmp/audit" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "0 misaligned, $nweak stale, 0 missing, 0 duplicate, 0 short, 0 unsorted, 0 shifted" "$tmp/audit"; then
	ok "audit as built: exit 1, exactly the $nweak weak leftovers stale, nothing missing, not 'unsorted'"
else
	{ echo "exit status $rc"; tail -n 5 "$tmp/audit"; } >"$tmp/msg"
	not_ok "audit as built: exit 1, exactly the $nweak weak leftovers stale, nothing missing, not 'unsorted'" "$tmp/msg"
fi
"$PATCHSITE" audit --ignore weak "$VMLINUX" >"$tmp/audit" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "0 stale, 0 missing" "$tmp/audit" && grep -q "($nweak of them weak leftovers)" "$tmp/audit"; then
	ok "audit --ignore weak as built: clean (exit 0)"
else
	{ echo "exit status $rc"; tail -n 5 "$tmp/audit"; } >"$tmp/msg"
	not_ok "audit --ignore weak as built: clean (exit 0)" "$tmp/msg"
fi

# 3. cleared, then refilled: the sites, sorted, in place and in the
#    R_PPC64_RELATIVE addends, unused slots zero with R_PPC64_NONE; nothing
#    else in the file changes
n=$(wc -l <"$tmp/oracle")
if $TAB clear "$VMLINUX" "$tmp/cleared" >"$tmp/msg" 2>&1 && ! cmp -s "$VMLINUX" "$tmp/cleared"; then
	ok "table cleared (mcounttab.py clear: slots and addends)"
else
	not_ok "table cleared (mcounttab.py clear: slots and addends)" "$tmp/msg"
	finish
fi
"$PATCHSITE" audit "$tmp/cleared" >"$tmp/audit2" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q "0 stale, $n missing" "$tmp/audit2"; then
	ok "audit of the cleared table: exit 1, all $n sites missing"
else
	{ echo "exit status $rc"; tail -n 5 "$tmp/audit2"; } >"$tmp/msg"
	not_ok "audit of the cleared table: exit 1, all $n sites missing" "$tmp/msg"
fi
"$PATCHSITE" record --in-place "$tmp/cleared" >"$tmp/ip" 2>&1
rc=$?
$TAB dump "$tmp/cleared" >"$tmp/refilled" 2>>"$tmp/ip"
if [ "$rc" -eq 0 ] && cmp -s "$tmp/refilled" "$tmp/oracle"; then
	ok "record --in-place on the cleared table: exit 0, the table is the oracle's $n sites"
else
	echo "exit status $rc" >>"$tmp/ip"
	not_ok "record --in-place on the cleared table: exit 0, the table is the oracle's $n sites" "$tmp/ip"
fi
# every slot: sorted values in place = addends; the rest of the file as linked
python3 - "$VMLINUX" "$tmp/cleared" >"$tmp/msg" 2>&1 <<'EOF'
import struct, sys
sys.path.insert(0, "tests/kernel")
import mcounttab
a, b = mcounttab.Image(sys.argv[1]), mcounttab.Image(sys.argv[2])
lo, hi = a.file_off(a.start), a.file_off(a.start) + (a.stop - a.start)
rel = set()
for slot, o in a.relas.items():
    rel.update(range(o, o + 24))
bad = [i for i in range(len(a.data)) if a.data[i] != b.data[i] and not lo <= i < hi and i not in rel]
vals, prev = [], 0
for slot in range(b.start, b.stop, 8):
    v, = struct.unpack_from("<Q", b.data, b.file_off(slot))
    o = a.relas.get(slot)
    off, info, add = struct.unpack_from("<QQq", b.data, o)
    want_type = 22 if v else 0
    if (info & 0xffffffff) != want_type or add % (1 << 64) != v or off != slot:
        sys.exit("slot %#x: in place %#x, relocation type %d addend %#x" % (slot, v, info & 0xffffffff, add))
    if v:
        if v <= prev:
            sys.exit("not sorted at slot %#x" % slot)
        prev = v
        vals.append(v)
if len(a.data) != len(b.data) or bad:
    sys.exit("bytes outside the table and its relocations differ: %d, first at %s" % (len(bad), bad[:3]))
print("%d values sorted, in place and in their R_PPC64_RELATIVE addends" % len(vals))
EOF
if [ $? -eq 0 ]; then
	ok "refilled: $(cat "$tmp/msg"); unused slots zero with R_PPC64_NONE; no other byte differs"
else
	not_ok "refilled: values sorted, in place and in the addends; no other byte differs" "$tmp/msg"
fi
"$PATCHSITE" audit "$tmp/cleared" >"$tmp/audit3" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "0 stale, 0 missing" "$tmp/audit3"; then
	ok "audit of the refilled table: clean (exit 0)"
else
	{ echo "exit status $rc"; tail -n 5 "$tmp/audit3"; } >"$tmp/msg"
	not_ok "audit of the refilled table: clean (exit 0)" "$tmp/msg"
fi
cp "$tmp/cleared" "$tmp/again"
"$PATCHSITE" record --in-place "$tmp/again" >"$tmp/ip2" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$tmp/cleared" "$tmp/again"; then
	ok "record --in-place on the refilled kernel changes nothing"
else
	echo "exit status $rc" >>"$tmp/ip2"
	not_ok "record --in-place on the refilled kernel changes nothing" "$tmp/ip2"
fi
finish
