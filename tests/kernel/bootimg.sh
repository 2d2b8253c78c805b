# tests/kernel/bootimg.sh - a kernel as it ships, audited from its boot image
# against its own vmlinux (sourced by the kernel tests, after lib.sh; bash).
#
# Strategy: each kernel script calls `bootimg_check ARCH BUILD-DIR NAME` once
# after its build.  The boot image is what the build ships: x86's
# arch/x86/boot/bzImage (made here from the same vmlinux when the script
# built only vmlinux), arm64's and riscv64's arch/*/boot/Image, and on
# powerpc64le the vmlinux itself stripped of its symbols (what a ppc64el
# package installs).  Symbols come from the image's kallsyms when the build
# has CONFIG_KALLSYMS_ALL, else from the build's System.map (kallsyms holds
# text symbols only: no __start_mcount_loc).  The build's .config is given
# to both audits.  Checks:
#   table     record IMAGE = record vmlinux, and every entry of it is a
#             value of the vmlinux's table as mcounttab.py reads it
#   audit     the same findings (kind and address) and summary
#   cleared   the table zeroed (mcounttab.py clear, slots and addends) and
#             the boot image made again from that vmlinux as the build
#             makes it (objcopy -O binary; x86: objcopy -R .comment -S, the
#             payload compressed as the original is and put in its place;
#             ppc64le: strip): every site named missing, exit 1

# bootimg_check ARCH BUILD-DIR NAME
bootimg_check() {
	local arch=$1 b=$2 name=$3 t=$OUT/bootimg-$3 img sym="" cfg=--config=$2/.config cross n
	local tab="python3 tests/kernel/mcounttab.py"
	mkdir -p "$t"
	case $arch in
	x86) cross="" ;;
	arm64) cross=aarch64-linux-gnu- ;;
	riscv) cross=riscv64-linux-gnu- ;;
	powerpc) cross=powerpc64le-linux-gnu- ;;
	*) die "bootimg_check: unknown arch $arch" ;;
	esac
	grep -q "^CONFIG_KALLSYMS_ALL=y" "$b/.config" || sym=--system-map=$b/System.map
	case $arch in
	x86)
		if ! [ "$b/arch/x86/boot/bzImage" -nt "$b/vmlinux" ]; then
			KBUILD_DIR=$b kbuild x86 bzImage >"$t/build.log" 2>&1 || {
				not_ok "$name boot image: make bzImage" "$t/build.log"
				return
			}
		fi
		img=$b/arch/x86/boot/bzImage
		;;
	arm64 | riscv) img=$b/arch/$arch/boot/Image ;;
	powerpc)
		img=$t/vmlinux.stripped
		${cross}strip -o "$img" "$b/vmlinux" || die "$name: strip failed"
		;;
	esac
	# shellcheck disable=SC2086
	if ps_run 0 "$t/want" -- record "$b/vmlinux" && ps_run 0 "$t/got" -- record $sym "$img" &&
		cmp -s "$t/got" "$t/want" && $tab dump "$b/vmlinux" >"$t/table" &&
		[ -s "$t/got" ] && ! sort "$t/got" | comm -23 - <(sort "$t/table") | grep -q .; then
		ok "$name boot image ($(basename "$img")${sym:+, System.map}): record = on vmlinux ($(wc -l <"$t/got") sites, all in its table)"
	else
		{ cat "$ps_msg"; diff "$t/got" "$t/want" | head; } >"$t/d" 2>&1
		not_ok "$name boot image ($(basename "$img")): record = on vmlinux" "$t/d"
	fi
	# shellcheck disable=SC2086
	if ps_run '[01]' "$t/da" -- audit "$cfg" "$b/vmlinux" &&
		ps_run '[01]' "$t/za" -- audit "$cfg" $sym "$img" &&
		[ "$(grep '^summary' "$t/za")" = "$(grep '^summary' "$t/da")" ] &&
		[ "$(grep -v '^summary' "$t/za" | tail -n +2 | cut -d' ' -f1,2)" = \
			"$(grep -v '^summary' "$t/da" | tail -n +2 | cut -d' ' -f1,2)" ]; then
		ok "$name boot image: audit = on vmlinux: $(grep '^summary' "$t/za")"
	else
		{ cat "$ps_msg"; diff "$t/za" "$t/da" | head -n 20; } >"$t/d" 2>&1
		not_ok "$name boot image: audit = on vmlinux" "$t/d"
	fi
	# the table cleared, the boot image made again
	n=$(wc -l <"$t/want")
	$tab clear "$b/vmlinux" "$t/cleared.vmlinux" || die "$name: mcounttab.py clear failed"
	case $arch in
	x86)
		${cross}objcopy -R .comment -S "$t/cleared.vmlinux" "$t/cleared.bin" &&
			python3 - "$img" "$t/cleared.bin" "$t/cleared.img" <<'EOF' || die "$name: cannot repack the bzImage"
import gzip, lzma, struct, subprocess, sys
src, payload, dst = sys.argv[1:]
b = bytearray(open(src, "rb").read())
setup = b[0x1F1] or 4
off, ln = struct.unpack_from("<II", b, 0x248)
at = (setup + 1) * 512 + off
old = bytes(b[at:at + ln])
data = open(payload, "rb").read()
if old[:2] == b"\x1f\x8b":
    new = gzip.compress(data, 9)
elif old[:6] == b"\xfd7zXZ\0":
    new = lzma.compress(data, lzma.FORMAT_XZ, check=lzma.CHECK_CRC32)
elif old[:4] == b"\x28\xb5\x2f\xfd":
    new = subprocess.run(["zstd", "-q", "-c"], input=data, check=True, capture_output=True).stdout
elif old[0] == 0x5D:
    new = lzma.compress(data, lzma.FORMAT_ALONE)
else:
    sys.exit("payload compression not handled: %r" % old[:4])
new += struct.pack("<I", len(data))     # the size the kernel's build appends
struct.pack_into("<I", b, 0x24C, len(new))
open(dst, "wb").write(bytes(b[:at]) + new + bytes(b[at + ln:]))
EOF
		;;
	arm64 | riscv)
		${cross}objcopy -O binary -R .note -R .note.gnu.build-id -R .comment -S \
			"$t/cleared.vmlinux" "$t/cleared.img" || die "$name: objcopy of the cleared kernel failed"
		;;
	powerpc) ${cross}strip -o "$t/cleared.img" "$t/cleared.vmlinux" || die "$name: strip failed" ;;
	esac
	# shellcheck disable=SC2086
	if ps_run 1 "$t/ca" -- audit "$cfg" $sym "$t/cleared.img" &&
		grep -q "^summary: 0 misaligned, 0 stale, $n missing" "$t/ca" &&
		[ "$(grep -c '^missing: .* site is not in the table$' "$t/ca")" = "$n" ]; then
		ok "$name boot image, table cleared: audit names all $n sites missing"
	else
		{ cat "$ps_msg"; grep -v '^missing' "$t/ca"; } >"$t/d" 2>&1
		not_ok "$name boot image, table cleared: audit names all $n sites missing" "$t/d"
	fi
}
