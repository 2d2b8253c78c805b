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
#   2. audit of the kernel as built: exit 0, nothing stale or missing;
#   3. the table cleared (slots, and R_PPC64_RELATIVE addends when the
#      kernel is RELOCATABLE): audit exit 1 with every site missing;
#      record --in-place on it gives back the linked file byte for byte.
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

# 2. audit as built
"$PATCHSITE" audit "$VMLINUX" >"$tmp/audit" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "0 stale, 0 missing, 0 duplicate" "$tmp/audit"; then
	ok "audit of the kernel as built: clean (exit 0)"
else
	{ echo "exit status $rc"; tail -n 20 "$tmp/audit"; } >"$tmp/msg"
	not_ok "audit of the kernel as built: clean (exit 0)" "$tmp/msg"
fi

# 3. cleared, then refilled
n=$(wc -l <"$tmp/oracle")
if $TAB clear "$VMLINUX" "$tmp/cleared" >"$tmp/msg" 2>&1 && ! cmp -s "$VMLINUX" "$tmp/cleared"; then
	ok "table cleared (mcounttab.py clear)"
else
	not_ok "table cleared (mcounttab.py clear)" "$tmp/msg"
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
if [ "$rc" -eq 0 ] && cmp "$VMLINUX" "$tmp/cleared" >>"$tmp/ip" 2>&1; then
	ok "record --in-place on the cleared table: the linked vmlinux, byte for byte"
else
	echo "exit status $rc" >>"$tmp/ip"
	not_ok "record --in-place on the cleared table: the linked vmlinux, byte for byte" "$tmp/ip"
fi
finish
