#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/package/run.sh - a whole kernel package audited in one call, beside
# the floor: decompressing its modules once on one core.
#
#   make bench-package       (builds ./patchsite first)
#   sh bench/package/run.sh  with ./patchsite built
#
# Fetches Debian's cloud-amd64 kernel package (linux-image-...-unsigned: the
# vmlinuz is not read, the 1,138 .ko.xz modules are; the -dbg package's
# vmlinux with DWARF is the vmlinux), unpacks it under bench/out/package/
# (cached), then times, interleaved run by run (python3 bench/package/time.py):
#
#   xz -dc of every module, one process on one core (the floor)
#   patchsite audit VMLINUX MODULES-DIR (workers, one a core)
#   patchsite audit -j1 VMLINUX MODULES-DIR
#
# and prints the medians and the ratios.  Environment: PATCHSITE (default
# ./patchsite), RUNS (default 7), KVER (default the newest 6.12 cloud-amd64
# that apt knows).
set -eu
cd "$(dirname "$0")/../.."
P=$(readlink -f "${PATCHSITE:-./patchsite}")
RUNS=${RUNS:-7}
W=bench/out/package
mkdir -p "$W"
need=""
for t in xz python3; do command -v "$t" >/dev/null 2>&1 || need="$need $t"; done
if [ -n "$need" ]; then
	apt-get update -qq && apt-get install -y -qq --no-install-recommends xz-utils python3 >/dev/null
fi
if [ -z "${KVER:-}" ]; then
	apt-get update -qq
	KVER=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9.]*\+deb[0-9]*-cloud-amd64-unsigned$' |
		sed 's/^linux-image-\(.*\)-unsigned .*/\1/' | sort -V | tail -n 1)
fi
[ -n "$KVER" ] || { echo "bench/package: no linux-image-6.12.*-cloud-amd64-unsigned in apt" >&2; exit 2; }
if [ ! -f "$W/$KVER.done" ]; then
	rm -rf "$W/$KVER"
	mkdir -p "$W/$KVER"
	(cd "$W" && apt-get download "linux-image-$KVER-unsigned" "linux-image-$KVER-dbg")
	dpkg-deb -x "$W"/linux-image-"$KVER"-unsigned_*.deb "$W/$KVER"
	dpkg-deb --fsys-tarfile "$W"/linux-image-"$KVER"-dbg_*.deb |
		tar -x -C "$W/$KVER" "./usr/lib/debug/boot/vmlinux-$KVER"
	rm -f "$W"/linux-image-"$KVER"-*.deb
	touch "$W/$KVER.done"
fi
V=$W/$KVER/usr/lib/debug/boot/vmlinux-$KVER
M=$W/$KVER/lib/modules/$KVER
find "$M" -name '*.ko.xz' | sort >"$W/modules.list"
echo "bench/package: $KVER: $(wc -l <"$W/modules.list") modules, $(nproc) cores, $RUNS runs"
python3 bench/package/time.py "$RUNS" "$P" "$V" "$M" "$W/modules.list"
