# tests/kernel/lib.sh - shared by the kernel tests (sourced, bash).
#
# One unpacked, pristine copy of Debian's linux-source-6.12 under
# $KERNEL_WORK (default build-kernel/), built out of tree for each arch
# (O=$KERNEL_WORK/riscv, O=$KERNEL_WORK/arm64), so that the riscv and arm64
# tests share the source and its unpacking, and a rebuild is incremental.
#
# Sets PATCHSITE, W, SRC, OUT; provides ok/not_ok/die, kernel_packages,
# kernel_source, kbuild ARCH TARGET..., arm64_config, boot_arm64,
# selftests LOG, reached_init LOG.

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
		binutils-riscv64-linux-gnu libssl-dev libelf-dev python3 xz-utils time" missing="" p
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

# The source tree (never built in: every build is O=...), with the project's
# kernel integration (contrib/linux/*.patch, in name order) applied: without
# PATCHSITE=... on make's command line it changes nothing, so every kernel
# test builds from this one tree.
kernel_source() {
	local p
	if [ ! -f "$SRC/Makefile" ]; then
		rm -f "$W/contrib-applied"
		tar -xf /usr/src/linux-source-6.12.tar.xz -C "$W" || die "cannot unpack the kernel source"
	fi
	# an in-tree build would make every O= build refuse to start
	[ ! -f "$SRC/.config" ] || die "$SRC holds an in-tree build; remove $W and run again"
	if [ ! -f "$W/contrib-applied" ]; then
		for p in contrib/linux/*.patch; do
			patch -d "$SRC" -p1 -s -N <"$p" >"$OUT/patch.log" 2>&1 ||
				die "contrib patch $p does not apply: $(cat "$OUT/patch.log")"
		done
		cat contrib/linux/*.patch | md5sum >"$W/contrib-applied"
	elif [ "$(cat contrib/linux/*.patch | md5sum)" != "$(cat "$W/contrib-applied")" ]; then
		die "$SRC has an older contrib/linux applied; remove $W and run again"
	fi
}

# The arm64 configuration the kernel tests share: tinyconfig plus ftrace
# (function and graph tracers, dynamic ftrace, start-up tests), a PL011
# console, RELOCATABLE (the table's values live in .rela.dyn), static keys
# and pointer authentication; OPT is performance or size.
arm64_config() { # BUILD-DIR OPT [MAKE-ARGS...]
	local b=$1 opt=$2 on=CC_OPTIMIZE_FOR_PERFORMANCE off=CC_OPTIMIZE_FOR_SIZE
	shift 2
	[ "$opt" = size ] && { on=CC_OPTIMIZE_FOR_SIZE; off=CC_OPTIMIZE_FOR_PERFORMANCE; }
	kbuild arm64 "$@" tinyconfig >/dev/null || die "arm64 tinyconfig failed"
	"$SRC/scripts/config" --file "$b/.config" \
		-e PRINTK -e TTY -e SERIAL_AMBA_PL011 -e SERIAL_AMBA_PL011_CONSOLE \
		-e FTRACE -e FUNCTION_TRACER -e FUNCTION_GRAPH_TRACER -e DYNAMIC_FTRACE \
		-e FTRACE_STARTUP_TEST -e KALLSYMS -e EXPERT -e RELOCATABLE -e JUMP_LABEL \
		-e ARM64_PTR_AUTH -e ARM64_PTR_AUTH_KERNEL -e BINFMT_ELF -d "$off" -e "$on"
	kbuild arm64 "$@" olddefconfig >/dev/null || die "arm64 olddefconfig failed"
}

# Boot an arm64 Image under qemu-system-aarch64 (no root file system: the
# ftrace start-up tests run before init).
boot_arm64() { # IMAGE LOG [TIMEOUT]
	timeout "${3:-240}" qemu-system-aarch64 -M virt -cpu max -m 256M -nographic -no-reboot -nic none \
		-kernel "$1" -append "console=ttyAMA0 earlycon panic=-1" </dev/null >"$2" 2>&1
}

# kbuild ARCH MAKE-ARGS...: make in the source tree, out of tree in $W/ARCH
# (KBUILD_DIR overrides the directory).
kbuild() {
	local arch=$1 cross
	shift
	case $arch in
	riscv) cross=riscv64-linux-gnu- ;;
	arm64) cross=aarch64-linux-gnu- ;;
	*) die "kbuild: unknown arch $arch" ;;
	esac
	mkdir -p "${KBUILD_DIR:-$W/$arch}"
	# PATCHSITE in the environment would turn the kernel integration on:
	# only a PATCHSITE=... among the arguments may
	env -u PATCHSITE make -C "$SRC" O="${KBUILD_DIR:-$W/$arch}" ARCH="$arch" \
		CROSS_COMPILE="$cross" -j"$(nproc)" -s "$@"
}

# The "Testing ...: PASSED" lines of a boot log, normalised.
selftests() {
	tr -d '\r' <"$1" | sed -n 's/^\[[ 0-9.]*\] //; /^Testing .*: PASSED$/p'
}

# Did the boot reach the point where it looks for init (no root file system)?
reached_init() {
	grep -q "No working init\|VFS: Unable to mount\|Run /bin/sh as init" "$1"
}
