#!/bin/sh
# tests/vmlinuz-debian.sh - Debian's own kernel as it ships, against its -dbg
# vmlinux (`make vmlinuz-debian`; not part of `make check`: it downloads the
# linux-image-VERSION-unsigned and -dbg packages, about 350 MB, into $CACHE).
#
#   table   record from boot/vmlinuz (symbols from its kallsyms): every site
#           is an entry of the -dbg vmlinux's __start_mcount_loc..__stop_mcount_loc
#           table read from its bytes in Python (not patchsite); the entries
#           that are not sites (6.1's weak leftovers) are audit's stale
#           findings, the same ones from both
#   names   record --symbolize from vmlinuz = from the -dbg vmlinux
#   audit   the same summary line from both
#   stub    the package's System.map is Debian's stub: recognised and skipped
#   6.1     DEB_VERSION=6.1.0-N-cloud-ARCH: the weak leftovers; arm64's has no
#           CONFIG_KALLSYMS_ALL (the -dbg package's System.map is passed),
#           and no DWARF says which of its functions were built with
#           -fpatchable-function-entry=2: its config does (WITH_REGS), and
#           the assembly whose entry is an alternative's NOPs is no site
#
#   CACHE=DIR PATCHSITE=./patchsite [DEB_ARCH=amd64|arm64] [DEB_SERIES=6.12|6.1]
#       [DEB_VERSION=6.12.117+deb12-cloud-amd64]
#       sh tests/vmlinuz-debian.sh
# (arm64 packages need `dpkg --add-architecture arm64; apt-get update` once.)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
CACHE=${CACHE:-$HOME/.cache/patchsite-vmlinuz}
A=${DEB_ARCH:-amd64}
# DEB_SERIES=6.1: bookworm's own kernel (6.1.0-N-cloud-ARCH), else 6.12
if [ "${DEB_SERIES:-6.12}" = 6.1 ]; then
	pat="^linux-image-6\\.1\\.0-[0-9]*-cloud-$A-unsigned\$"
else
	pat="^linux-image-6\\.12\\.[0-9.]*[+]deb[0-9]*-cloud-$A-unsigned\$"
fi
V=${DEB_VERSION:-$(apt-cache search "$pat" | sed 's/^linux-image-\(.*\)-unsigned .*/\1/' | sort -V | tail -1)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-vmlinuz-debian.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/e2e/lib.sh"
ps_init "$tmp"
ps_need_patchsite
if [ -z "$V" ]; then
	echo "no linux-image-${DEB_SERIES:-6.12}*-cloud-$A-unsigned in apt's lists (apt-get update?)" >"$tmp/why"
	not_ok "a Debian ${DEB_SERIES:-6.12} cloud-$A kernel package" "$tmp/why"
	finish
fi
note "package linux-image-$V"
mkdir -p "$CACHE/$V" || exit 1
if ! [ -f "$CACHE/$V/done" ]; then
	(cd "$CACHE/$V" && apt-get download "linux-image-$V-unsigned:$A" "linux-image-$V-dbg:$A" &&
		for d in *.deb; do dpkg-deb -x "$d" root || exit 1; done && rm -f ./*.deb &&
		touch done) >"$tmp/dl" 2>&1
fi
check "downloaded and unpacked" test -f "$CACHE/$V/done"
r=$CACHE/$V/root
z=$r/boot/vmlinuz-$V
d=$r/usr/lib/debug/boot/vmlinux-$V

check "the package's System.map is Debian's stub" grep -q "The real System.map is in" "$r/boot/System.map-$V"
# a build without CONFIG_KALLSYMS_ALL (Debian's 6.1 arm64) has only text
# symbols in its kallsyms: no __start_mcount_loc.  Its real System.map is in
# the -dbg package, and is what a user passes
zmap=""
if ! grep -q "^CONFIG_KALLSYMS_ALL=y" "$r/boot/config-$V"; then
	zmap=--system-map=$r/usr/lib/debug/boot/System.map-$V
	note "no CONFIG_KALLSYMS_ALL: the vmlinuz runs take $zmap"
fi
# the -dbg vmlinux has no config beside it: the package's, as vmlinuz finds it
dcfg=--config=$r/boot/config-$V

python3 - "$d" >"$tmp/want" <<'EOF'
import struct, subprocess, sys
elf = sys.argv[1]
sym = {}
for line in subprocess.run(["nm", elf], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3 and f[2] in ("__start_mcount_loc", "__stop_mcount_loc"):
        sym[f[2]] = int(f[0], 16)
b = open(elf, "rb").read()
shoff, = struct.unpack_from("<Q", b, 0x28)
shnum, = struct.unpack_from("<H", b, 0x3c)
lo, hi = sym["__start_mcount_loc"], sym["__stop_mcount_loc"]
# arm64 (--no-apply-dynamic-relocs): a slot's value is the addend of the
# R_AARCH64_RELATIVE entry of .rela.dyn at it
rel = {}
secs = [struct.unpack_from("<IIQQQQ", b, shoff + 64 * i) for i in range(shnum)]
for name, typ, flags, addr, off, size in secs:
    if typ == 4 and flags & 2:
        for k in range(size // 24):
            o, info, add = struct.unpack_from("<QQq", b, off + 24 * k)
            if lo <= o < hi and info & 0xffffffff == 1027:
                rel[o] = add & (2**64 - 1)
for name, typ, flags, addr, off, size in secs:
    if addr <= lo < addr + size and typ != 8 and flags & 2:
        v = [struct.unpack_from("<Q", b, off + lo - addr + 8 * k)[0] or rel.get(lo + 8 * k, 0)
             for k in range((hi - lo) // 8)]
        for x in sorted(x for x in v if x):
            print("0x%x" % x)
        break
EOF
note "the -dbg vmlinux's table: $(wc -l <"$tmp/want") entries"

start=$(date +%s.%N)
ps_run 0 "$tmp/got" -- record $zmap "$z"
zrc=$ps_rc
end=$(date +%s.%N)
note "record from vmlinuz: $(echo "$end - $start" | bc) s"
# record prints the verified sites: the table's entries but the leftovers of
# overridden weak functions (6.1), which audit counts as stale
if [ "$zrc" = 0 ] && comm -23 "$tmp/got" "$tmp/want" | grep -q . ; then
	{ echo "sites from vmlinuz that are not in the -dbg vmlinux's table:"; comm -23 "$tmp/got" "$tmp/want" | head; } >"$tmp/d"
	not_ok "record from vmlinuz: every site is an entry of the -dbg vmlinux's table" "$tmp/d"
elif [ "$zrc" = 0 ]; then
	ok "record from vmlinuz: every site is an entry of the -dbg vmlinux's table ($(wc -l <"$tmp/got") of $(wc -l <"$tmp/want"))"
else
	not_ok "record from vmlinuz: every site is an entry of the -dbg vmlinux's table" "$ps_msg"
fi
leftover=$(comm -13 "$tmp/got" "$tmp/want" | wc -l)
ps_check "record --symbolize of the -dbg vmlinux" 0 "$tmp/dsym" -- record --symbolize "$d"
# sites and flavours equal; names equal but where kallsyms and the symbol
# table pick a different one of aliases at one address (counted)
if ps_run 0 "$tmp/zsym" -- record --symbolize $zmap "$z" &&
	cut -d' ' -f1,3 "$tmp/zsym" >"$tmp/z13" && cut -d' ' -f1,3 "$tmp/dsym" >"$tmp/d13" &&
	cmp -s "$tmp/z13" "$tmp/d13"; then
	ok "sites and flavours from vmlinuz = from the -dbg vmlinux ($(wc -l <"$tmp/zsym"))"
	note "names that differ (another alias at the same address): $(diff "$tmp/zsym" "$tmp/dsym" | grep -c '^<')"
else
	{ cat "$ps_msg"; diff "$tmp/z13" "$tmp/d13" | head; } >"$tmp/d" 2>&1
	not_ok "sites and flavours from vmlinuz = from the -dbg vmlinux" "$tmp/d"
fi
if ps_run '[01]' "$tmp/da" -- audit "$dcfg" "$d" && ps_run '[01]' "$tmp/za" -- audit $zmap "$z" &&
	[ "$(grep '^summary' "$tmp/za")" = "$(grep '^summary' "$tmp/da")" ]; then
	ok "audit: the same findings from vmlinuz as from the -dbg vmlinux: $(grep '^summary' "$tmp/za")"
	if grep -q "^summary: 0 misaligned, $leftover stale, " "$tmp/za" &&
		[ "$(grep '^stale' "$tmp/za" | cut -d' ' -f2 | sort)" = "$(grep '^stale' "$tmp/da" | cut -d' ' -f2 | sort)" ]; then
		ok "audit: the $leftover table entries that are not sites are its stale findings, the same entries from both"
	else
		echo "$leftover entries of the table are not sites" >"$tmp/d"
		not_ok "audit: the table entries that are not sites are its stale findings" "$tmp/d"
	fi
else
	{ cat "$ps_msg"; cat "$tmp/za" "$tmp/da"; } >"$tmp/d" 2>&1
	not_ok "audit: the same findings from vmlinuz as from the -dbg vmlinux" "$tmp/d"
fi
if [ "$A" = amd64 ]; then
start=$(date +%s.%N)
off=$(python3 -c "
import sys; b=open(sys.argv[1],'rb').read(0x250)
s=b[0x1f1] or 4; import struct; print((s+1)*512+struct.unpack_from('<I',b,0x248)[0], struct.unpack_from('<I',b,0x24c)[0])" "$z")
# (zstd payloads only: Debian's 6.12; 6.1's are lz4)
# (the payload less the 4-byte size the kernel's build appends to it)
if tail -c +$((${off% *} + 1)) "$z" | head -c "$((${off#* } - 4))" | zstd -dc >/dev/null 2>&1; then
	end=$(date +%s.%N)
	note "zstd -dc of the payload alone: $(echo "$end - $start" | bc) s"
fi
fi
finish
