#!/bin/sh
# bench/vmlinuz/run.sh - `patchsite audit` of a kernel as it ships (a bzImage,
# symbols from its kallsyms) beside what it must at least do: decompress the
# payload (`zstd -dc`, the payload cut out of the bzImage by its setup header)
# plus `patchsite record` on the same kernel's -dbg vmlinux.  Interleaved runs,
# medians of CPU time (user+sys) and wall time; the issue's goal is audit at
# most 1.5x the sum.
#
#   DIR=unpacked-packages-root [RUNS=7] [PATCHSITE=./patchsite] sh bench/vmlinuz/run.sh
#
# DIR holds boot/vmlinuz-V and usr/lib/debug/vmlinux-V (the -unsigned and -dbg
# packages unpacked together, as `make vmlinuz-debian` leaves them); only
# zstd payloads (Debian's amd64 kernels) are cut out here.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
RUNS=${RUNS:-7}
DIR=${DIR:?DIR=the unpacked packages}
z=$(ls "$DIR"/boot/vmlinuz-* | head -n 1)
v=$(ls "$DIR"/usr/lib/debug/vmlinux-* | head -n 1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# the payload: setup_sects at 0x1f1, payload_offset/length at 0x248/0x24c of
# the protected-mode part that starts at (setup_sects + 1) * 512
python3 - "$z" "$tmp/payload.zst" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
if b[0x202:0x206] != b'HdrS':
	sys.exit('%s: not a bzImage' % sys.argv[1])
pm = ((b[0x1f1] or 4) + 1) * 512
off, ln = struct.unpack_from('<II', b, 0x248)
p = b[pm + off:pm + off + ln]
if p[:4] != b'\x28\xb5\x2f\xfd':
	sys.exit('%s: the payload is not zstd' % sys.argv[1])
# the kernel's build appends the decompressed size (4 bytes) after the frame
open(sys.argv[2], 'wb').write(p[:-4])
PY
zstd -tq "$tmp/payload.zst" || { echo "$z: the payload does not decompress" >&2; exit 2; }
# one run: "cpu wall" in seconds (GNU time), the command's output discarded
# (audit exits 1 on findings; time's file then starts with a line saying so)
t() { /usr/bin/time -f '%U %S %e' -o "$tmp/t" "$@" >/dev/null 2>&1 || [ $? -eq 1 ]
	tail -n 1 "$tmp/t" | awk '{printf "%.3f %.3f\n", $1 + $2, $3}'; }
: >"$tmp/a"; : >"$tmp/z"; : >"$tmp/r"
i=0
while [ $i -lt "$RUNS" ]; do
	t "$PATCHSITE" audit "$z" >>"$tmp/a"
	t zstd -dc "$tmp/payload.zst" >>"$tmp/z"
	t "$PATCHSITE" record "$v" >>"$tmp/r"
	i=$((i + 1))
done
med() { sort -n -k"$2" "$1" | awk -v k="$2" '{a[NR] = $k} END {print a[int((NR + 1) / 2)]}'; }
echo "# $RUNS interleaved runs, medians; $(basename "$z")"
printf '%-34s %8s %8s\n' "" "cpu s" "wall s"
printf '%-34s %8s %8s\n' "patchsite audit vmlinuz" "$(med "$tmp/a" 1)" "$(med "$tmp/a" 2)"
printf '%-34s %8s %8s\n' "zstd -dc of its payload" "$(med "$tmp/z" 1)" "$(med "$tmp/z" 2)"
printf '%-34s %8s %8s\n' "patchsite record on -dbg vmlinux" "$(med "$tmp/r" 1)" "$(med "$tmp/r" 2)"
awk -v a="$(med "$tmp/a" 1)" -v z="$(med "$tmp/z" 1)" -v r="$(med "$tmp/r" 1)" \
	'BEGIN {printf "audit / (zstd + record), cpu: %.2fx\n", a / (z + r)}'
