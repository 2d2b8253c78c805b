#!/bin/bash
# tests/kernel/ppc64le-table.sh - patchsite against a real powerpc64le
# kernel's own ftrace table, as built: the Linux 6.12 that
# tests/kernel/ppc64le.sh builds (lib.sh's kbuild output, KERNEL_WORK/powerpc/
# vmlinux; `make kernel-check` runs this script right after that one).
# Debian's GCC 12 (powerpc64le-linux-gnu-gcc) fails
# arch/powerpc/tools/gcc-check-fpatchable-function-entry.sh and passes
# gcc-check-mprofile-kernel.sh: every traced function has `mflr r0; bl
# _mcount` at its local entry, and objtool's __mcount_loc lists the bl.
#
# The oracle is the kernel's own table under sorttable's rule
# (tests/kernel/mcounttab.py, which is not patchsite):
#   1. record = the oracle: every entry found, none extra;
#   2. audit of the kernel as built (exit 1): stale exactly the table's
#      entries that are not the oracle's sites (the overridden weak
#      functions' code, kept by powerpc's build: no BUILDTIME_MCOUNT_SORT,
#      no sorttable zeroing; dropped by the kernel at boot), each by address,
#      and no other finding: nothing missing, shifted, misaligned,
#      duplicate, short, nor 'unsorted' (the table is in per-object order,
#      which the kernel sorts at boot);
#   3. audit --ignore weak of it: clean (exit 0), those entries counted as
#      the weak leftovers it ignored.
# The table cleared, refilled by record --in-place, moved onto the `mflr r0`,
# and those kernels booted: tests/kernel/ppc64le.sh.
#
# Usage (from the top of the tree, after `make` and tests/kernel/ppc64le.sh):
#   PATCHSITE=./patchsite bash tests/kernel/ppc64le-table.sh
# VMLINUX=FILE checks another powerpc64le vmlinux.  A missing kernel is a
# failure, never a skip.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
VMLINUX=${VMLINUX:-$W/powerpc/vmlinux}
T=$OUT/ppc64le-table
rm -rf "$T"	# a rerun must not read the last run's files
mkdir -p "$T" || exit 1

if [ ! -x "$PATCHSITE" ]; then not_ok "patchsite executable: $PATCHSITE"; finish; fi
if [ ! -f "$VMLINUX" ]; then
	not_ok "a powerpc64le vmlinux at $VMLINUX (tests/kernel/ppc64le.sh builds it)"
	finish
fi
machine=$(powerpc64le-linux-gnu-readelf -h "$VMLINUX" 2>/dev/null | awk -F: '/Machine/ { gsub(/^ +/, "", $2); print $2 }')
if [ "$machine" = PowerPC64 ]; then
	ok "$VMLINUX is a PowerPC64 image"
else
	not_ok "$VMLINUX is a PowerPC64 image (got '$machine')"
	finish
fi

# the oracle: the sites (the entries inside functions, sorted) and every
# nonzero entry of the table
if $TAB sites "$VMLINUX" >"$T/oracle" 2>"$T/oracle.err" && [ "$(wc -l <"$T/oracle")" -gt 1000 ] &&
	$TAB dump "$VMLINUX" >"$T/values" 2>>"$T/oracle.err"; then
	n=$(wc -l <"$T/oracle")
	ok "oracle: the kernel's table has $(wc -l <"$T/values") entries, $n inside functions"
else
	not_ok "oracle: the kernel's table (mcounttab.py sites and dump, over 1000 sites)" "$T/oracle.err"
	finish
fi

# 1. record = the oracle
if ps_run -e "$T/rec.err" 0 "$T/rec" -- record -v "$VMLINUX" && cmp -s "$T/rec" "$T/oracle"; then
	ok "record = the kernel's table ($n sites): $(tail -n 1 "$T/rec.err")"
else
	{
		cat "$ps_msg"
		[ -s "$ps_msg" ] || {
			echo "only patchsite:"; comm -23 "$T/rec" "$T/oracle" | head
			echo "only the table:"; comm -13 "$T/rec" "$T/oracle" | head
		}
	} >"$T/msg"
	not_ok "record = the kernel's table" "$T/msg"
fi

# 2. audit as built: stale exactly the entries outside the oracle, by
#    address, no other finding, exit 1 (0 if there were none)
if ps_run -e "$T/audit.err" '[01]' "$T/audit.json" -- audit --format=json "$VMLINUX" &&
	python3 - "$T/audit.json" "$T/oracle" "$T/values" "$ps_rc" >"$T/audit.check" 2>&1 <<'PY'; then
import json, sys
oracle = set(int(l, 16) for l in open(sys.argv[2]))
vals = set(int(l, 16) for l in open(sys.argv[3]))
rc = int(sys.argv[4])
weak = vals - oracle
d = json.load(open(sys.argv[1]))
bad = []
want = {k: 0 for k in d["summary"]}
want["stale"] = len(weak)
if d["summary"] != want:
    bad.append("summary %s, want %s" % (d["summary"], want))
stale = set(int(x["address"], 16) for x in d["findings"] if x["kind"] == "stale")
if stale != weak:
    bad.append("stale: %d not in the table outside functions, %d of those not stale"
               % (len(stale - weak), len(weak - stale)))
others = [x for x in d["findings"] if x["kind"] != "stale"]
if others:
    bad.append("%d other findings, the first %s" % (len(others), others[0]))
if d["site_count"] != len(oracle):
    bad.append("site_count %d, the kernel's %d" % (d["site_count"], len(oracle)))
if rc != (1 if weak else 0):
    bad.append("exit status %d with %d stale" % (rc, len(weak)))
print("\n".join(bad) or len(weak))
sys.exit(1 if bad else 0)
PY
	nweak=$(cat "$T/audit.check")
	ok "audit as built (exit $ps_rc): stale exactly the table's $nweak entries outside functions (weak leftovers), no other finding, not 'unsorted'"
else
	nweak=$(( $(wc -l <"$T/values") - n ))
	cat "$ps_msg" "$T/audit.err" >>"$T/audit.check"
	not_ok "audit as built: stale exactly the weak leftovers, no other finding" "$T/audit.check"
fi

# 3. audit --ignore weak: clean, the leftovers counted as ignored
if ps_run -e "$T/audit.ign.err" 0 "$T/audit.ign" -- audit --ignore weak "$VMLINUX" &&
	grep -qx "summary: 0 misaligned, 0 stale, 0 missing, 0 duplicate, 0 short, 0 unsorted, 0 shifted; ignored: $nweak stale ($nweak of them weak leftovers)" "$T/audit.ign"; then
	ok "audit --ignore weak as built: clean (exit 0), the $nweak weak leftovers ignored"
else
	cat "$ps_msg" >"$T/msg"
	[ -s "$ps_msg" ] || tail -n 3 "$T/audit.ign" >"$T/msg"
	not_ok "audit --ignore weak as built: clean (exit 0), the $nweak weak leftovers ignored" "$T/msg"
fi
finish
