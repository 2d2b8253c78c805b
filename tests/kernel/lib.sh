# tests/kernel/lib.sh - shared by the kernel tests (sourced, bash).
#
# One unpacked, pristine copy of Debian's linux-source-6.12 under
# $KERNEL_WORK (default build-kernel/), built out of tree for each arch
# (O=$KERNEL_WORK/riscv, O=$KERNEL_WORK/arm64), so that the riscv and arm64
# tests share the source and its unpacking, and a rebuild is incremental.
#
# Sets PATCHSITE, W, SRC, OUT; provides ok/not_ok/die, kernel_packages,
# kernel_source, kernel_prepare (the two, one script at a time), kbuild
# ARCH TARGET..., arm64_config, boot_arm64, x86_config, boot_x86,
# ppc64le_config, boot_ppc64le, initramfs,
# tracefs_check, selftests LOG, reached_init LOG; phase TEXT (a timestamp
# line: wall and CPU seconds since the start) and side/side_wait (boots two
# at a time); and, through tests/kernel/proof.sh, the steps every proof
# takes (BOOT_TIMEOUT, TAB, proof_start ...).

PATCHSITE=$(readlink -f "${PATCHSITE:-./patchsite}")
W=$(readlink -m "${KERNEL_WORK:-build-kernel}")
SRC=$W/linux-source-6.12
OUT=$W/out
# this script's name: the scratch files of lib.sh's own (phase's times, the
# side boots' end stamps, the harness's) carry it, since make check runs two
# kernel scripts at once (Makefile's KERNEL_CHAIN_A and _B) in one $OUT
KSCRIPT=${0##*/}
KSCRIPT=${KSCRIPT%.sh}
KLIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# the harness of tests/e2e/lib.sh: ok, not_ok, check, finish, and ps_run,
# through which every patchsite run goes, its exit status asserted before
# its output is read (tests/e2e/lint-tests.py)
. "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
# bootimg_check: each kernel audited from its boot image (tests/kernel/bootimg.sh)
. "$(dirname "${BASH_SOURCE[0]}")/bootimg.sh"
# the proofs' skeleton: proof_start, kernel_configured, kernel_built,
# table_oracle, record_is_oracle, audit_clean, audit_missing, the table
# cleared and refilled, the boots' verdicts (tests/kernel/proof.sh)
. "$(dirname "${BASH_SOURCE[0]}")/proof.sh"
ps_init "$OUT/.harness-$KSCRIPT"
ps_detail=tail	# a failed check shows the end of its log (a boot's last lines)

# phase TEXT: "# [+W s wall, C s CPU] TEXT", W and C counted from the start
# of the script (C: user + system of every process it ran that has ended),
# so a log shows where the time goes (builds, record/audit, boots) and how
# much of each phase the two cores were busy (CPU / wall).
phase_t0=$(date +%s)
phase() { # TEXT
	local c
	# (times in a pipe or $(...) would be a subshell's: through a file)
	times >"$OUT/.times-$KSCRIPT"
	c=$(awk '{ for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } }
		END { printf "%.0f", s }' "$OUT/.times-$KSCRIPT")
	echo "# [+$(($(date +%s) - phase_t0)) s wall, $c s CPU] $*"
}

# Boots side by side.  qemu's TCG runs a guest on one thread, so a boot
# leaves the second core idle: the boots of one script that do not depend
# on each other's outcome run two at a time.  `side NAME COMMAND...` starts
# COMMAND in the background (never more than two at once: it first waits
# for the oldest when two run); `side_wait NAME` waits for it, prints its
# wall time and returns its exit status, which is COMMAND's as if it had
# run in the foreground.  The checks read the boots' logs after side_wait,
# exactly as they read them after a foreground boot.
declare -A side_pid side_t0
side() { # NAME COMMAND...
	local name=$1 n
	shift
	while n=$(jobs -pr | wc -l) && [ "$n" -ge 2 ]; do
		wait -n
	done
	side_t0[$name]=$(date +%s)
	rm -f "$OUT/.side-$KSCRIPT.$name"
	{
		"$@"
		st=$?
		date +%s >"$OUT/.side-$KSCRIPT.$name"
		exit $st
	} &
	side_pid[$name]=$!
}
side_wait() { # NAME -> COMMAND's exit status
	local name=$1 st
	wait "${side_pid[$name]}"
	st=$?
	phase "boot $name: exit $st, $(($(cat "$OUT/.side-$KSCRIPT.$name" 2>/dev/null || date +%s) - ${side_t0[$name]})) s (two at a time)"
	rm -f "$OUT/.side-$KSCRIPT.$name"
	return $st
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
		binutils-riscv64-linux-gnu libssl-dev libelf-dev python3 xz-utils time
		qemu-system-x86 busybox-static libc6-dev-arm64-cross libc6-dev-riscv64-cross
		gcc-powerpc64le-linux-gnu binutils-powerpc64le-linux-gnu qemu-system-ppc ccache" missing="" p
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
	mkdir -p "$W" "$OUT"
	[ -n "${KERNEL_PREP:-}" ] || [ -x "$PATCHSITE" ] || die "no patchsite at $PATCHSITE (run make first)"
}

# The source tree (never built in: every build is O=...), with the project's
# kernel integration (contrib/linux/*.patch, in name order) applied: without
# CONFIG_PATCHSITE (off unless a test sets it) it changes nothing, so every
# kernel test builds from this one tree.
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
		# ccache-cc.sh's rule: no source reads a CONFIG_PATCHSITE* option
		if grep -rlE "PATCHSITE" --include="*.[chS]" "$SRC" >"$OUT/patchsite-in-c"; then
			die "a C, header or assembly file names PATCHSITE (tests/kernel/ccache-cc.sh assumes none does): $(head -n 3 "$OUT/patchsite-in-c")"
		fi
		cat contrib/linux/*.patch | md5sum >"$W/contrib-applied"
	elif [ "$(cat contrib/linux/*.patch | md5sum)" != "$(cat "$W/contrib-applied")" ]; then
		die "$SRC has an older contrib/linux applied; remove $W and run again"
	fi
}

# kernel_prepare: kernel_packages and kernel_source, one script at a time
# (make check runs two kernel scripts at once: apt-get takes one lock, and
# two unpackings of one tree would write over each other); the lock ends
# with the function, or with the script when it dies inside
kernel_prepare() {
	mkdir -p "$W" || die "cannot make $W"
	exec 9>"$W/.prepare.lock"
	flock 9 || die "cannot lock $W/.prepare.lock"
	kernel_packages
	kernel_source
	flock -u 9
	exec 9>&-
}

# What every proof's configuration turns off that tinyconfig leaves on but
# no proof reads (issue 27: build only what each proof needs): the virtual
# terminal and the input layer under it (keyboard, serio, HID: the consoles
# are serial, hvc and PL011; about 35 objects a kernel), and the trace event
# start-up tests (each of some 600 events enabled and disabled, twice, on
# every boot: about a third of an x86_64 boot under TCG; the 12 ftrace
# self tests, what the proofs compare, stay).  EXPERT makes them choices.
# KERNEL_TRIM_OFF, the names, is what a cached configuration must not have.
# x86_64 turns off the event tests alone: trimmed wholly, its kernel's own
# table lacks a function the compiler recorded (i8237A_init_ops, in
# vmlinux.o's __mcount_loc): the kernel's scripts/sorttable reads `nm -S` with a format that takes every
# line to have a size, three sizeless absolute symbols `i` just before it
# put the parse out of step, and the function's entry was zeroed as if it
# were a weak leftover.  patchsite's audit names the site missing (as it
# should), and x86.sh's oracle, the kernel's table, would be wrong.  (With
# the input layer on, the line swallowed is i8042_aux_firmware_id's, a BSS
# object, and the table is whole.)
KERNEL_TRIM_OFF="EVENT_TRACE_STARTUP_TEST VT INPUT SERIO HID"
KERNEL_TRIM="-e EXPERT $(printf -- '-d %s ' $KERNEL_TRIM_OFF)"

# The arm64 configuration the kernel tests share: tinyconfig plus ftrace
# (function and graph tracers, dynamic ftrace, start-up tests), a PL011
# console, RELOCATABLE (the table's values live in .rela.dyn), static keys
# and pointer authentication, and what the tracefs initramfs needs (initrd,
# proc, sys; tracefs comes with the tracers); OPT is performance or size.
arm64_config() { # BUILD-DIR OPT [MAKE-ARGS...]
	local b=$1 opt=$2 on=CC_OPTIMIZE_FOR_PERFORMANCE off=CC_OPTIMIZE_FOR_SIZE
	shift 2
	[ "$opt" = size ] && { on=CC_OPTIMIZE_FOR_SIZE; off=CC_OPTIMIZE_FOR_PERFORMANCE; }
	kbuild arm64 "$@" tinyconfig >/dev/null || die "arm64 tinyconfig failed"
	"$SRC/scripts/config" --file "$b/.config" \
		-e PRINTK -e TTY -e SERIAL_AMBA_PL011 -e SERIAL_AMBA_PL011_CONSOLE \
		-e FTRACE -e FUNCTION_TRACER -e FUNCTION_GRAPH_TRACER -e DYNAMIC_FTRACE \
		-e FTRACE_STARTUP_TEST -e KALLSYMS -e EXPERT -e RELOCATABLE -e JUMP_LABEL \
		-e ARM64_PTR_AUTH -e ARM64_PTR_AUTH_KERNEL -e BINFMT_ELF -d "$off" -e "$on" \
		-e BLK_DEV_INITRD -e PROC_FS -e SYSFS -d RD_GZIP -d RD_BZIP2 -d RD_LZMA \
		-d RD_XZ -d RD_LZO -d RD_LZ4 -d RD_ZSTD $KERNEL_TRIM
	kbuild arm64 "$@" olddefconfig >/dev/null || die "arm64 olddefconfig failed"
}

# Boot an arm64 Image under qemu-system-aarch64, with an initramfs if one is
# given (without one there is no root file system: the ftrace start-up tests
# run before init).  Pointer authentication with qemu's IMPLEMENTATION
# DEFINED algorithm (pauth-impdef): the kernel signs and checks return
# addresses all the same (it logs "Address authentication (IMP DEF
# algorithm)"), where TCG's QARMA5, the architected one, made every boot
# take about three times as long (43 s against 16 s for tables.sh's tracefs
# boot on an idle machine).
boot_arm64() { # IMAGE LOG [TIMEOUT [INITRAMFS]]
	timeout "${3:-240}" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -m 256M -nographic -no-reboot -nic none \
		-kernel "$1" ${4:+-initrd "$4"} -append "console=ttyAMA0 earlycon panic=-1" \
		</dev/null >"$2" 2>&1
}

# The x86_64 configuration: tinyconfig (64BIT) plus what distribution
# kernels carry that shapes a function's entry (CALL_PADDING: 16 bytes of
# NOPs before each function, __pfx_ symbols over them; call depth tracking,
# IBT: ENDBR64 before the __fentry__ call; PARAVIRT, and XEN_PV for its
# PARAVIRT_XXL: functions written in inline assembly inside C units, which
# have padding and no __fentry__ call), ftrace with the
# compiler's own table (-mrecord-mcount) and the start-up tests, PVH (qemu
# boots vmlinux itself through its PVH ELF note), DWARF, and what a busybox
# initramfs needs (ttyS0, initrd, ELF and scripts, devtmpfs, proc, sys,
# tracefs).  X86_CONFIG_WANT lists the options that must end up =y.
X86_CONFIG_WANT="64BIT CPU_MITIGATIONS MITIGATION_RETPOLINE MITIGATION_RETHUNK
	CPU_SUP_INTEL MITIGATION_CALL_DEPTH_TRACKING CALL_PADDING CALL_THUNKS
	PREFIX_SYMBOLS X86_KERNEL_IBT HYPERVISOR_GUEST PARAVIRT PVH XEN XEN_PV PARAVIRT_XXL
	FTRACE FUNCTION_TRACER DYNAMIC_FTRACE FUNCTION_GRAPH_TRACER
	FTRACE_MCOUNT_USE_CC BUILDTIME_MCOUNT_SORT FTRACE_STARTUP_TEST
	DEBUG_INFO DEBUG_INFO_DWARF5 PRINTK TTY SERIAL_8250 SERIAL_8250_CONSOLE
	BLK_DEV_INITRD BINFMT_ELF BINFMT_SCRIPT DEVTMPFS PROC_FS SYSFS TRACING
	KALLSYMS"
x86_config() { # BUILD-DIR [MAKE-ARGS...]
	local b=$1 c
	shift
	kbuild x86 "$@" tinyconfig >/dev/null || die "x86 tinyconfig failed"
	"$SRC/scripts/config" --file "$b/.config" \
		-e 64BIT -e CPU_MITIGATIONS -e MITIGATION_RETPOLINE -e MITIGATION_RETHUNK \
		-e CPU_SUP_INTEL -e MITIGATION_CALL_DEPTH_TRACKING -e X86_KERNEL_IBT \
		-e HYPERVISOR_GUEST -e PARAVIRT -e PVH -e XEN -e XEN_PV \
		-e FTRACE -e FUNCTION_TRACER -e DYNAMIC_FTRACE -e FUNCTION_GRAPH_TRACER \
		-e FTRACE_STARTUP_TEST \
		-e DEBUG_KERNEL -e DEBUG_INFO -e DEBUG_INFO_DWARF5 -e DEBUG_INFO_REDUCED \
		-d DEBUG_INFO_NONE -d DEBUG_INFO_BTF \
		-e PRINTK -e TTY -e SERIAL_8250 -e SERIAL_8250_CONSOLE \
		-e BLK_DEV_INITRD -e BINFMT_ELF -e BINFMT_SCRIPT -e DEVTMPFS -e PROC_FS \
		-e SYSFS -e KALLSYMS -d RD_GZIP -d RD_BZIP2 -d RD_LZMA -d RD_XZ -d RD_LZO \
		-d RD_LZ4 -d RD_ZSTD -d EVENT_TRACE_STARTUP_TEST
	kbuild x86 "$@" olddefconfig >/dev/null || die "x86 olddefconfig failed"
	for c in $X86_CONFIG_WANT; do
		grep -q "^CONFIG_$c=y" "$b/.config" || die "x86: CONFIG_$c is not =y after olddefconfig"
	done
	grep -q "^CONFIG_FUNCTION_PADDING_BYTES=16$" "$b/.config" ||
		die "x86: CONFIG_FUNCTION_PADDING_BYTES is not 16"
}

# Boot an x86_64 vmlinux under qemu-system-x86_64 (TCG) through its PVH
# entry, with an initramfs.
boot_x86() { # VMLINUX INITRAMFS LOG [TIMEOUT]
	timeout "${4:-300}" qemu-system-x86_64 -m 256M -nographic -no-reboot -nic none \
		-kernel "$1" -initrd "$2" -append "console=ttyS0 panic=-1" </dev/null >"$3" 2>&1
}

# The ppc64le configuration: tinyconfig (which is 32-bit on powerpc) made
# 64-bit little-endian Book3S (POWER9 tuning), the pseries platform that
# qemu-system-ppc64 -M pseries is (RELOCATABLE comes with it: the kernel is
# linked -pie, its table's values are R_PPC64_RELATIVE addends), its
# hypervisor console (hvc0), no NUMA, PowerNV or PCI hotplug to build;
# ftrace as the other kernels have it (function and graph tracers, dynamic
# ftrace, the start-up tests), and what the tracefs initramfs needs.  The
# ftrace flavour is the compiler's: Debian's GCC 12 fails
# arch/powerpc/tools/gcc-check-fpatchable-function-entry.sh and passes
# gcc-check-mprofile-kernel.sh, so MPROFILE_KERNEL (-pg -mprofile-kernel,
# `mflr r0; bl _mcount` after each function's local entry point) with
# objtool writing the table; PPC64LE_CONFIG_WANT lists the options that
# must end up =y.
PPC64LE_CONFIG_WANT="PPC64 PPC_BOOK3S_64 CPU_LITTLE_ENDIAN PPC64_ELF_ABI_V2 PPC_PSERIES
	RELOCATABLE HVC_CONSOLE PRINTK TTY FTRACE FUNCTION_TRACER DYNAMIC_FTRACE
	FUNCTION_GRAPH_TRACER MPROFILE_KERNEL FTRACE_MCOUNT_USE_OBJTOOL FTRACE_STARTUP_TEST
	KALLSYMS JUMP_LABEL BLK_DEV_INITRD BINFMT_ELF PROC_FS SYSFS TRACING"
ppc64le_config() { # BUILD-DIR [MAKE-ARGS...]
	local b=$1 c
	shift
	kbuild powerpc "$@" tinyconfig >/dev/null || die "ppc64le tinyconfig failed"
	"$SRC/scripts/config" --file "$b/.config" \
		-d PPC32 -d PPC_BOOK3S_32 -e PPC64 -e PPC_BOOK3S_64 -d CPU_BIG_ENDIAN \
		-e CPU_LITTLE_ENDIAN -d GENERIC_CPU -e POWER9_CPU -e PPC_PSERIES \
		-e PPC_OF_BOOT_TRAMPOLINE -e PRINTK -e TTY -e HVC_DRIVER -e HVC_CONSOLE \
		-e FTRACE -e FUNCTION_TRACER -e DYNAMIC_FTRACE -e FUNCTION_GRAPH_TRACER \
		-e FTRACE_STARTUP_TEST -e KALLSYMS -e EXPERT -e JUMP_LABEL -e BINFMT_ELF \
		-e BLK_DEV_INITRD -e PROC_FS -e SYSFS -d RD_GZIP -d RD_BZIP2 -d RD_LZMA \
		-d RD_XZ -d RD_LZO -d RD_LZ4 -d RD_ZSTD -d CC_OPTIMIZE_FOR_SIZE \
		-e CC_OPTIMIZE_FOR_PERFORMANCE -d PPC_POWERNV -d HVC_OPAL -d NUMA -d PCI \
		-d EEH -d SMP -d HOTPLUG_CPU -d PPC_MEM_KEYS $KERNEL_TRIM
	kbuild powerpc "$@" olddefconfig >/dev/null || die "ppc64le olddefconfig failed"
	for c in $PPC64LE_CONFIG_WANT; do
		grep -q "^CONFIG_$c=y" "$b/.config" || die "ppc64le: CONFIG_$c is not =y after olddefconfig"
	done
	! grep -q "^CONFIG_ARCH_USING_PATCHABLE_FUNCTION_ENTRY=y" "$b/.config" ||
		die "ppc64le: the compiler passes gcc-check-fpatchable-function-entry.sh (-fpatchable-function-entry=2, not -mprofile-kernel)"
}

# Boot a ppc64le vmlinux under qemu-system-ppc64 -M pseries (TCG), with
# qemu's Virtual Open Firmware (x-vof=on) in place of SLOF: it loads the ELF
# and enters it through the client interface at once, where SLOF spends
# most of a minute on its own start.
boot_ppc64le() { # VMLINUX INITRAMFS LOG [TIMEOUT]
	timeout "${4:-300}" qemu-system-ppc64 -M pseries,x-vof=on -m 512M -nographic -no-reboot \
		-nic none -kernel "$1" -initrd "$2" -append "console=hvc0 panic=-1" \
		</dev/null >"$3" 2>&1
}

# initramfs ARCH OUT: an uncompressed initramfs (cpio built by the kernel's
# own usr/gen_init_cpio.c) whose /init exercises tracefs and prints
# "TRACEFS ..." lines (read them with tracefs_field): x86 gets busybox-static
# and a shell script, arm64, riscv and ppc64le tests/kernel/tracefs-init.c
# built freestanding with the cross compiler (the same lines; no busybox for
# them here).
initramfs() { # ARCH OUT
	local arch=$1 out=$2 d=$OUT/initramfs.$1 cc
	mkdir -p "$d"
	if [ ! -x "$W/gen_init_cpio" ]; then	# (built aside: two scripts may build it at once)
		gcc -O2 -o "$W/gen_init_cpio.$$" "$SRC/usr/gen_init_cpio.c" &&
			mv -f "$W/gen_init_cpio.$$" "$W/gen_init_cpio" || die "cannot build gen_init_cpio"
	fi
	{
		echo "dir /dev 755 0 0"
		echo "nod /dev/console 600 0 0 c 5 1"
		echo "dir /proc 755 0 0"
		echo "dir /sys 755 0 0"
	} >"$d/list"
	case $arch in
	x86)
		[ -x /bin/busybox ] && ! readelf -l /bin/busybox | grep -q "program interpreter" ||
			die "no static /bin/busybox (apt-get install busybox-static)"
		cat >"$d/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tracefs tracefs /sys/kernel/tracing
cd /sys/kernel/tracing || echo "TRACEFS no tracefs"
echo "TRACEFS available_filter_functions=$(wc -l < available_filter_functions)"
if echo function > current_tracer; then w=ok; else w=failed; fi
echo "TRACEFS function tracer write=$w"
echo "TRACEFS enabled_functions=$(wc -l < enabled_functions)"
echo nop > current_tracer
echo "TRACEFS dmesg ftrace-bug=$(dmesg | grep -c -e 'ftrace bug' -e 'ftrace failed')"
echo "TRACEFS done"
reboot -f
INIT
		echo "dir /bin 755 0 0" >>"$d/list"
		echo "file /bin/busybox /bin/busybox 755 0 0" >>"$d/list"
		;;
	arm64 | riscv | ppc64le)
		cc="aarch64-linux-gnu-gcc -mgeneral-regs-only"
		[ "$arch" = riscv ] && cc="riscv64-linux-gnu-gcc -march=rv64imac -mabi=lp64"
		# no FP, VMX or VSX register: the ppc64le kernel has no ALTIVEC or VSX
		[ "$arch" = ppc64le ] && cc="powerpc64le-linux-gnu-gcc -msoft-float -mno-altivec -mno-vsx"
		$cc -static -nostdlib -ffreestanding -fno-builtin -fno-stack-protector -fno-pie -no-pie \
			-Os -Wall -o "$d/init" tests/kernel/tracefs-init.c >"$d/cc.log" 2>&1 ||
			die "cannot build the $arch init: $(cat "$d/cc.log")"
		;;
	*) die "initramfs: unknown arch $arch" ;;
	esac
	echo "file /init $d/init 755 0 0" >>"$d/list"
	"$W/gen_init_cpio" "$d/list" >"$out" || die "gen_init_cpio failed"
}

# tracefs_field LOG NAME: the value of "TRACEFS NAME=value" in a boot log
# (empty when the line is not there)
tracefs_field() {
	tr -d '\r' <"$1" | sed -n "s/^TRACEFS $2=\\([^ ]*\\).*/\\1/p" | tail -n 1
}

# tracefs_ok LOG [WANT]: the initramfs ran to its end, the function tracer
# was switched on, no "ftrace bug"/"ftrace failed" in the console log or
# dmesg, and enabled_functions is more than 1000 (and WANT if given).
# Prints the count; returns 1 otherwise.
tracefs_ok() {
	local log=$1 want=${2:-} n
	n=$(tracefs_field "$log" enabled_functions)
	echo "${n:-none}"
	grep -q "^TRACEFS done" <(tr -d '\r' <"$log") || return 1
	[ "$(tracefs_field "$log" 'function tracer write')" = ok ] || return 1
	[ "$(tracefs_field "$log" 'dmesg ftrace-bug')" = 0 ] || return 1
	! grep -q -e "ftrace bug" -e "ftrace failed" "$log" || return 1
	[ -n "$n" ] && [ "$n" -gt 1000 ] || return 1
	[ -z "$want" ] || [ "$n" = "$want" ]
}

# kbuild ARCH MAKE-ARGS...: make in the source tree, out of tree in $W/ARCH
# (KBUILD_DIR overrides the directory).  With KERNEL_CCACHE set (exported
# by the scripts that build one configuration twice, the second time with
# CONFIG_PATCHSITE: riscv-relax.sh, call-ops-os.sh) the compiler runs
# through ccache (tests/kernel/ccache-cc.sh: depend mode), its cache in
# $W/ccache: a compile whose source, flags and headers are those of the
# first build (autoconf.h less its CONFIG_PATCHSITE* lines) is its object,
# as the compiler made it (repad, run after the compile, still runs on
# it); riscv-relax.sh compiles some of them again without ccache and
# compares.  The host programs every build compiles alike (conf, dtc,
# kallsyms, sorttable...) always go through ccache, a cache of their own
# (tests/kernel/ccache-host.sh).
kbuild() {
	local arch=$1 cross
	shift
	case $arch in
	riscv) cross=riscv64-linux-gnu- ;;
	arm64) cross=aarch64-linux-gnu- ;;
	x86) cross= ;;	# native: the tests run on x86_64 hosts
	powerpc) cross=powerpc64le-linux-gnu- ;;	# ppc64le (ppc64le_config)
	*) die "kbuild: unknown arch $arch" ;;
	esac
	mkdir -p "${KBUILD_DIR:-$W/$arch}"
	# PATCHSITE in the environment would name the tool the kernel
	# integration (CONFIG_PATCHSITE) finds: only a PATCHSITE=... among the
	# arguments, or PATH, may
	if [ -n "${KERNEL_CCACHE:-}" ]; then
		set -- CC="$KLIB/ccache-cc.sh ${cross}gcc" "$@"
	fi
	env -u PATCHSITE CCACHE_DIR="$W/ccache" CCACHE_BASEDIR="$W" KERNEL_HOSTCCACHE="$W/ccache-host" \
		make -C "$SRC" O="${KBUILD_DIR:-$W/$arch}" ARCH="$arch" HOSTCC="$KLIB/ccache-host.sh" \
		CROSS_COMPILE="$cross" -j"$(nproc)" -s "$@"
}

# ccache_zero, then ccache_hits after a build: "H of N compiles from
# ccache" (nothing without KERNEL_CCACHE), for the build-time lines
ccache_zero() {
	[ -z "${KERNEL_CCACHE:-}" ] || CCACHE_DIR="$W/ccache" ccache -z >/dev/null
}
ccache_hits() {
	[ -n "${KERNEL_CCACHE:-}" ] || return 0
	CCACHE_DIR="$W/ccache" ccache --print-stats | awk -F'\t' '
		$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
		$1 == "cache_miss" { m += $2 }
		END { printf "%d of %d compiles from ccache", h, h + m }'
}

# The "Testing ...: PASSED" lines of a boot log, normalised.  A test whose
# PASSED (a pr_cont) comes after another message (under TCG the clocksource
# watchdog's, say) is the "Testing ...: " line and a bare "PASSED" line
# further on: joined.  (The ops tests print their counts and timings before
# PASSED: left out, as when they are on one line.)
selftests() {
	tr -d '\r' <"$1" | sed 's/^\[[ 0-9.]*\] //' | awk '
		/^Testing .*: PASSED$/ { print; p = ""; next }
		/^Testing .*: $/ { p = ($0 ~ /ops #/) ? "" : $0; next }
		/^Testing / { p = ""; next }
		/^PASSED$/ && p != "" { print p "PASSED"; p = "" }'
}

# Did the boot reach the point where it looks for init (no root file system)
# or runs the initramfs's /init?
reached_init() {
	grep -q "No working init\|VFS: Unable to mount\|Run /bin/sh as init\|Run /init as init" "$1"
}
