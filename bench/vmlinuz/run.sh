#!/bin/sh
# bench/vmlinuz/run.sh - `patchsite audit` of a kernel as it ships (symbols
# from its kallsyms) beside what it must at least do: decompress the payload
# (amd64's bzImage: `zstd -dc` of the payload cut out by its setup header;
# arm64's vmlinuz is the raw Image: nothing to decompress) plus `patchsite
# record` on the same kernel's -dbg vmlinux.  Interleaved runs, medians of
# CPU time (user+sys) and wall time; the issue's goal is audit at most 1.5x
# the sum.  `patchsite audit` of the -dbg vmlinux is shown beside them.
#
#   DIR=unpacked-packages-root [RUNS=7] [PATCHSITE=./patchsite] sh bench/vmlinuz/run.sh
#
# DIR holds boot/vmlinuz-V and usr/lib/debug/vmlinux-V (the -unsigned and -dbg
# packages unpacked together, as `make vmlinuz-debian` leaves them): a
# bzImage with a zstd payload (Debian's amd64 kernels) or an arm64 Image;
# or boot/vmlinux-V, the raw riscv64 Image Debian's riscv64 packages install
# under that name.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
RUNS=${RUNS:-7}
DIR=${DIR:?DIR=the unpacked packages}
z=$(ls "$DIR"/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$z" ] || z=$(ls "$DIR"/boot/vmlinux-* | head -n 1)
v=$(ls "$DIR"/usr/lib/debug/vmlinux-* | head -n 1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# the payload: setup_sects at 0x1f1, payload_offset/length at 0x248/0x24c of
# the protected-mode part that starts at (setup_sects + 1) * 512; an arm64
# Image ("ARM\x64" at 0x38) or a riscv64 one ("RSC\x05") has none
kind=$(python3 - "$z" "$tmp/payload.zst" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
if b[0x38:0x3c] in (b'ARM\x64', b'RSC\x05'):
	print('image')
	sys.exit(0)
if b[0x202:0x206] != b'HdrS':
	sys.exit('%s: neither a bzImage nor an arm64 or riscv64 Image' % sys.argv[1])
pm = ((b[0x1f1] or 4) + 1) * 512
off, ln = struct.unpack_from('<II', b, 0x248)
p = b[pm + off:pm + off + ln]
if p[:4] != b'\x28\xb5\x2f\xfd':
	sys.exit('%s: the payload is not zstd' % sys.argv[1])
# the kernel's build appends the decompressed size (4 bytes) after the frame
open(sys.argv[2], 'wb').write(p[:-4])
print('bzimage')
PY
)
if [ "$kind" = bzimage ]; then
	zstd -tq "$tmp/payload.zst" || { echo "$z: the payload does not decompress" >&2; exit 2; }
fi
# one run: "cpu wall" in seconds, the command's output discarded (audit exits
# 1 on findings); the CPU time from the child's rusage (GNU time's 10 ms steps
# are too coarse for runs of 50 ms)
t() { python3 - "$@" <<'PY'
import os, sys, time
w = time.monotonic()
pid = os.fork()
if pid == 0:
	fd = os.open(os.devnull, os.O_WRONLY)
	os.dup2(fd, 1)
	os.dup2(fd, 2)
	os.execvp(sys.argv[1], sys.argv[1:])
_, st, ru = os.wait4(pid, 0)
w = time.monotonic() - w
rc = os.waitstatus_to_exitcode(st)
if rc not in (0, 1):
	sys.exit("%s: exit status %d" % (sys.argv[1], rc))
print("%.4f %.4f" % (ru.ru_utime + ru.ru_stime, w))
PY
}
: >"$tmp/a"; : >"$tmp/z"; : >"$tmp/r"; : >"$tmp/v"
i=0
while [ $i -lt "$RUNS" ]; do
	t "$PATCHSITE" audit "$z" >>"$tmp/a"
	if [ "$kind" = bzimage ]; then
		t zstd -dc "$tmp/payload.zst" >>"$tmp/z"
	else
		echo "0 0" >>"$tmp/z"
	fi
	t "$PATCHSITE" record "$v" >>"$tmp/r"
	t "$PATCHSITE" audit "$v" >>"$tmp/v"
	i=$((i + 1))
done
med() { sort -n -k"$2" "$1" | awk -v k="$2" '{a[NR] = $k} END {print a[int((NR + 1) / 2)]}'; }
echo "# $RUNS interleaved runs, medians; $(basename "$z")"
printf '%-34s %8s %8s\n' "" "cpu s" "wall s"
printf '%-34s %8s %8s\n' "patchsite audit vmlinuz" "$(med "$tmp/a" 1)" "$(med "$tmp/a" 2)"
if [ "$kind" = bzimage ]; then
	printf '%-34s %8s %8s\n' "zstd -dc of its payload" "$(med "$tmp/z" 1)" "$(med "$tmp/z" 2)"
else
	printf '%-34s %8s %8s\n' "(an Image: nothing to decompress)" 0 0
fi
printf '%-34s %8s %8s\n' "patchsite record on -dbg vmlinux" "$(med "$tmp/r" 1)" "$(med "$tmp/r" 2)"
printf '%-34s %8s %8s\n' "patchsite audit on -dbg vmlinux" "$(med "$tmp/v" 1)" "$(med "$tmp/v" 2)"
awk -v a="$(med "$tmp/a" 1)" -v z="$(med "$tmp/z" 1)" -v r="$(med "$tmp/r" 1)" \
	'BEGIN {printf "audit / (zstd + record), cpu: %.2fx\n", a / (z + r)}'
