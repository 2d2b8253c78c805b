#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bench/decompress/run.sh: elfio/decompress.c's four stream loops (zlib,
# liblzma, libzstd, libbz2) of two checkouts, timed side by side.
#
#   sh bench/decompress/run.sh BEFORE_TREE AFTER_TREE [RUNS]
#
# Each tree must have been built (make patchsite: build/elfio/decompress.o,
# build/base/mem.o).  The input is the first 32 MiB of a real kernel (the
# Debian vmlinux in /work/cache/deb, else any vmlinux given as VMLINUX),
# compressed with gzip -9, xz, zstd -19 and bzip2 -9; inflate.c is linked
# against each tree's objects, and the two binaries alternate run by run
# (RUNS each, default 15) so that both see the same load.  Prints per
# format the median CPU time of each and their ratio.
set -eu
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
runs=${3:-15}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
vmlinux=${VMLINUX:-$(ls /work/cache/deb/amd64/usr/lib/debug/boot/vmlinux-* 2>/dev/null | head -1)}
[ -f "$vmlinux" ] || { echo "run.sh: no vmlinux (set VMLINUX)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-zbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

libs="-lz -llzma -lzstd -llz4 -lbz2 -llzo2"
for side in before after; do
	eval tree=\$$side
	cc -O2 -D_GNU_SOURCE -I"$root" -o "$tmp/$side" "$here/inflate.c" \
		"$tree/build/elfio/decompress.o" "$tree/build/base/mem.o" $libs
done
head -c $((32 << 20)) "$vmlinux" > "$tmp/raw"
gzip -9 -c "$tmp/raw" > "$tmp/raw.gz"
xz -c "$tmp/raw" > "$tmp/raw.xz"
zstd -q -19 -c "$tmp/raw" > "$tmp/raw.zst"
bzip2 -9 -c "$tmp/raw" > "$tmp/raw.bz2"

median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for f in raw.gz raw.xz raw.zst raw.bz2; do
	: > "$tmp/b"; : > "$tmp/a"
	i=0
	while [ $i -lt "$runs" ]; do
		"$tmp/before" "$tmp/$f" 1 | cut -d' ' -f3 >> "$tmp/b"
		"$tmp/after" "$tmp/$f" 1 | cut -d' ' -f3 >> "$tmp/a"
		i=$((i + 1))
	done
	fmt=$("$tmp/after" "$tmp/$f" 1 | cut -d' ' -f1)
	bm=$(median < "$tmp/b")
	am=$(median < "$tmp/a")
	awk -v f="$fmt" -v b="$bm" -v a="$am" 'BEGIN { printf "%-6s before %8.2f ms  after %8.2f ms  after/before %.3f\n", f, b / 1e6, a / 1e6, a / b }'
done
