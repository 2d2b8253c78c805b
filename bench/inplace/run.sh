#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/inplace/run.sh - `patchsite record --in-place`, the step a kernel
# build runs at every link, beside the kernel's own post-link step,
# scripts/sorttable (SPEC.md "Performance": within 5x of it).
#
#   make bench-inplace      builds ./patchsite, then runs this
#   sh bench/inplace/run.sh (INPLACE_IMAGE=..., INPLACE_WORK=..., RUNS=7,
#                            PATCHSITE=..., PATCHSITE_BEFORE=older/patchsite,
#                            INPLACE_SORTTABLE=0 for an image sorttable refuses,
#                            e.g. bench/gen.py's vmlinux-arm64-50k: no ORC)
#
# 1. sorttable is built from Debian's linux-source-6.12
#    (/usr/src/linux-source-6.12.tar.xz; apt-get install linux-source-6.12
#    when missing): scripts/sorttable.c with tools/include and
#    tools/arch/x86/include, -DUNWINDER_ORC_ENABLED -DMCOUNT_SORT_ENABLED
#    (Debian's x86_64 config has UNWINDER_ORC and BUILDTIME_MCOUNT_SORT, as
#    scripts/Makefile passes them), -lpthread, with the host cc and -O2.
# 2. The image: INPLACE_IMAGE, else Debian's x86_64 vmlinux with full DWARF
#    (/var/tmp/deb/vmlinux, or the linux-image-*-dbg package's
#    /usr/lib/debug/boot/vmlinux-* unpacked under /var/tmp/deb/dbg).  It is
#    only read: bench.py edits copies in INPLACE_WORK (/var/tmp/inplace).
# 3. bench/inplace/bench.py times, interleaved, RUNS rounds of: sorttable
#    IMAGE; nm -S + sorttable -s (6.12.117's whole step); patchsite record
#    --in-place, with and without --fsync (the table cleared by a small write
#    before each run); patchsite record (no write); and with
#    PATCHSITE_BEFORE an older build's record --in-place.  It prints medians
#    and the ratios.
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)

work=${INPLACE_WORK:-/var/tmp/inplace}
runs=${RUNS:-7}
patchsite=${PATCHSITE:-$root/patchsite}
case $patchsite in /*) ;; *) patchsite=$root/$patchsite ;; esac
mkdir -p "$work"

tarball=/usr/src/linux-source-6.12.tar.xz
if [ ! -f "$tarball" ]; then
	echo "bench: installing linux-source-6.12"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
		linux-source-6.12
fi
st=$work/sorttable
if [ ! -x "$st" ] || [ "$tarball" -nt "$st" ]; then
	echo "bench: building scripts/sorttable from $tarball"
	rm -rf "$work/src"
	mkdir -p "$work/src"
	tar -xJf "$tarball" -C "$work/src" --wildcards 'linux-source-6.12/scripts/sorttable*' \
		'linux-source-6.12/tools/include/*' 'linux-source-6.12/tools/arch/x86/include/*'
	(cd "$work/src/linux-source-6.12" &&
		cc -O2 -I tools/include -I tools/arch/x86/include -DUNWINDER_ORC_ENABLED \
			-DMCOUNT_SORT_ENABLED -o "$st" scripts/sorttable.c -lpthread)
fi

img=${INPLACE_IMAGE:-}
if [ -z "$img" ]; then
	for f in /var/tmp/deb/vmlinux /var/tmp/deb/dbg/usr/lib/debug/boot/vmlinux-*; do
		[ -f "$f" ] && { img=$f; break; }
	done
fi
if [ -z "$img" ] || [ ! -f "$img" ]; then
	echo "bench: no kernel image: set INPLACE_IMAGE (Debian's linux-image-*-dbg has one)" >&2
	exit 1
fi
echo "bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ "${INPLACE_SORTTABLE:-1}" = 0 ] && st=none
set -- --patchsite "$patchsite" --sorttable "$st" --image "$img" --work "$work/run" --runs "$runs"
[ -n "${PATCHSITE_BEFORE:-}" ] && set -- "$@" --before "$PATCHSITE_BEFORE"
python3 bench/inplace/bench.py "$@"
status=$?
rm -rf "$work/run"
exit $status
