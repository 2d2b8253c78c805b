# tests/kernel/lib.sh - shared by the kernel tests (sourced, bash).
#
# One unpacked, pristine copy of Debian's linux-source-6.12 under
# $KERNEL_WORK (default build-kernel/), built out of tree for each arch
# (O=$KERNEL_WORK/riscv, O=$KERNEL_WORK/arm64), so that the riscv and arm64
# tests share the source and its unpacking, and a rebuild is incremental.
#
# Sets PATCHSITE, W, SRC, OUT; provides ok/not_ok/die, kernel_packages,
# kernel_source, kbuild ARCH TARGET..., selftests LOG.

PATCHSITE=$(readlink -f "${PATCHSITE:-./patchsite}")
W=$(readlink -m "${KERNEL_WORK:-build-kernel}")
SRC=$W/linux-source-6.12
OUT=$W/out
pass=0
fail=0

ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() {
	echo "not ok - $1"
	[ -n "${2:-}" ] && [ -f "$2" ] && sed -e 's/^/#   /' "$2" | tail -n 25
	fail=$((fail + 1))
}
die() {
	echo "${0##*/}: $*" >&2
	echo "$pass passed, $((fail + 1)) failed"
	exit 1
}

# Install what the kernel tests need (apt-get, as root or through sudo).
kernel_packages() {
	local need="linux-source-6.12 qemu-system-misc qemu-system-arm opensbi flex bison bc make
		gcc-riscv64-linux-gnu gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
		binutils-riscv64-linux-gnu libssl-dev libelf-dev python3 xz-utils" missing="" p
	for p in $need; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		local SUDO=""
		[ "$(id -u)" -eq 0 ] || SUDO=sudo
		export DEBIAN_FRONTEND=noninteractive
		$SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends \
			$missing >/dev/null || die "cannot install:$missing"
	fi
	[ -x "$PATCHSITE" ] || die "no patchsite at $PATCHSITE (run make first)"
	mkdir -p "$W" "$OUT"
}

# The pristine source tree (never built in: every build is O=...).
kernel_source() {
	if [ ! -f "$SRC/Makefile" ]; then
		tar -xf /usr/src/linux-source-6.12.tar.xz -C "$W" || die "cannot unpack the kernel source"
	fi
	# an in-tree build would make every O= build refuse to start
	[ ! -f "$SRC/.config" ] || die "$SRC holds an in-tree build; remove $W and run again"
}

# kbuild ARCH MAKE-ARGS...: make in the source tree, out of tree in $W/ARCH.
kbuild() {
	local arch=$1 cross
	shift
	case $arch in
	riscv) cross=riscv64-linux-gnu- ;;
	arm64) cross=aarch64-linux-gnu- ;;
	*) die "kbuild: unknown arch $arch" ;;
	esac
	mkdir -p "$W/$arch"
	make -C "$SRC" O="$W/$arch" ARCH="$arch" CROSS_COMPILE="$cross" -j"$(nproc)" -s "$@"
}

# The "Testing ...: PASSED" lines of a boot log, normalised.
selftests() {
	tr -d '\r' <"$1" | sed -n 's/^\[[ 0-9.]*\] //; /^Testing .*: PASSED$/p'
}

# Did the boot reach the point where it looks for init (no root file system)?
reached_init() {
	grep -q "No working init\|VFS: Unable to mount\|Run /bin/sh as init" "$1"
}
