#!/bin/bash
# tests/kernel/riscv-relax.sh - issue 7's proof on a real kernel.
#
# Builds Debian's linux-source-6.12 for riscv64 (tinyconfig plus the
# fragment below), links it three ways, and boots each under
# qemu-system-riscv64 with an initramfs whose /init
# (tests/kernel/tracefs-init.c) switches the function tracer on over every
# function and counts enabled_functions:
#   stock    the kernel's own --no-relax link: every self test PASSED,
#            thousands of functions enabled, no "ftrace bug"
#   relaxed  --no-relax removed: the boot hangs at the postponed tracer
#            tests (ftrace writes 8 bytes over a relaxed 4-byte jal)
#   pinned   --no-relax removed, `patchsite pin vmlinux.a` before the final
#            link: every self test PASSED, the same list as stock, the
#            same number of functions enabled, no "ftrace bug"
# and checks `patchsite audit` (the relaxed kernel has a 'short' patch
# point, the pinned one does not) and `patchsite record` against the
# kernel's own __mcount_loc region.  Prints the text sizes.
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/riscv-relax.sh
# KERNEL_WORK (default build-kernel/) keeps the source and the out-of-tree
# build (KERNEL_WORK/riscv) between runs; tests/kernel/tables.sh reuses both.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
BOOT_TIMEOUT=${BOOT_TIMEOUT:-240}
HANG_TIMEOUT=${HANG_TIMEOUT:-90}
B=$W/riscv			# the out-of-tree build

kernel_packages
kernel_source

# objects that an earlier run pinned are rebuilt from source, so that the
# relaxed kernel really is the unpinned one
if [ -f "$W/pinned-objects" ]; then
	xargs -r rm -f <"$W/pinned-objects"
	rm -f "$W/pinned-objects"
fi
[ -f "$W/Makefile.riscv.stock" ] || cp "$SRC/arch/riscv/Makefile" "$W/Makefile.riscv.stock"
cp "$W/Makefile.riscv.stock" "$SRC/arch/riscv/Makefile"

# --- the configuration ------------------------------------------------------
# (configured again when a cached configuration predates the initramfs, or
# has FPU, which an earlier version of this test set for a glibc /init)
if [ ! -f "$B/.config.patchsite" ] || ! grep -q "^CONFIG_BLK_DEV_INITRD=y" "$B/.config.patchsite" ||
	grep -q "^CONFIG_FPU=y" "$B/.config.patchsite"; then
	kbuild riscv tinyconfig >/dev/null || die "tinyconfig failed"
	"$SRC/scripts/config" --file "$B/.config" \
		-e 64BIT -e MMU -e PRINTK -e TTY -e SERIAL_8250 -e SERIAL_8250_CONSOLE \
		-e SERIAL_OF_PLATFORM -e SERIAL_EARLYCON_RISCV_SBI -e HVC_RISCV_SBI \
		-e FTRACE -e FUNCTION_TRACER -e DYNAMIC_FTRACE -e FTRACE_STARTUP_TEST \
		-e KALLSYMS -e RISCV_ISA_C -e NONPORTABLE -e SOC_VIRT \
		-e BINFMT_ELF -e BLK_DEV_INITRD -e PROC_FS -e SYSFS -d FPU -d RD_GZIP -d RD_BZIP2 \
		-d RD_LZMA -d RD_XZ -d RD_LZO -d RD_LZ4 -d RD_ZSTD
	kbuild riscv olddefconfig >/dev/null || die "olddefconfig failed"
	cp "$B/.config" "$B/.config.patchsite"
fi
for c in DYNAMIC_FTRACE FTRACE_STARTUP_TEST RISCV_USE_LINKER_RELAXATION RISCV_ISA_C \
	BINFMT_ELF BLK_DEV_INITRD PROC_FS SYSFS TRACING; do
	grep -q "^CONFIG_$c=y" "$B/.config" || die "CONFIG_$c is not set"
done

build() { # NAME
	kbuild riscv Image >"$OUT/$1.build.log" 2>&1 || {
		tail -n 30 "$OUT/$1.build.log" >&2
		die "kernel build ($1) failed"
	}
	cp "$B/vmlinux" "$OUT/$1.vmlinux"
	cp "$B/arch/riscv/boot/Image" "$OUT/$1.Image"
}

text_size() { # VMLINUX -> size of .text (readelf's "[ 2]" splits oddly: python)
	riscv64-linux-gnu-readelf -SW "$1" | python3 -c '
import sys
for line in sys.stdin:
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".text":
        print(int(f[5], 16))'
}

boot() { # NAME TIMEOUT -> $OUT/NAME.boot.log; returns qemu/timeout's status
	timeout "$2" qemu-system-riscv64 -machine virt -bios default -nographic -no-reboot \
		-m 256M -kernel "$OUT/$1.Image" -initrd "$OUT/riscv.cpio" \
		-append "console=ttyS0 earlycon panic=-1" \
		</dev/null >"$OUT/$1.boot.log" 2>&1
}


# --- 1. stock: --no-relax -------------------------------------------------
build stock
grep -q -- "--no-relax" "$SRC/arch/riscv/Makefile" || die "the stock Makefile lost --no-relax"

# --- 2. relaxed: the --no-relax line removed ----------------------------
sed -i '/LDFLAGS_vmlinux += --no-relax/d' "$SRC/arch/riscv/Makefile"
build relaxed

# --- 3. pinned: patchsite pin on the objects before the final link --------
ps_run -e "$OUT/pin.log" 0 "$OUT/pin.log" -- pin -v "$B/vmlinux.a" || {
	cat "$ps_msg" "$OUT/pin.log" >&2
	die "patchsite pin failed"
}
sed -n 's/^\(.*\.o\): .*: pinned$/\1/p' "$OUT/pin.log" | sort -u >"$W/pinned-objects"
build pinned
cp "$W/Makefile.riscv.stock" "$SRC/arch/riscv/Makefile"

if grep -q "ftrace_call at .*: pinned" "$OUT/pin.log"; then
	ok "pin: ftrace_call pinned in the objects of vmlinux.a"
else
	not_ok "pin: ftrace_call pinned in the objects of vmlinux.a" "$OUT/pin.log"
fi

# --- audit and record on the linked kernels -------------------------------
if ! ps_run -e "$OUT/relaxed.audit" 1 "$OUT/relaxed.audit" -- audit "$OUT/relaxed.vmlinux"; then
	cat "$OUT/relaxed.audit" >>"$ps_msg"
	not_ok "audit relaxed: the relaxed ftrace_call is reported short (exit 1)" "$ps_msg"
elif grep -q "^short: .*'ftrace_call'" "$OUT/relaxed.audit"; then
	ok "audit relaxed: the relaxed ftrace_call is reported short (exit 1)"
else
	not_ok "audit relaxed: the relaxed ftrace_call is reported short (exit 1)" "$OUT/relaxed.audit"
fi
for k in stock pinned; do
	if ! ps_run -e "$OUT/$k.audit" '[01]' "$OUT/$k.audit" -- audit "$OUT/$k.vmlinux"; then
		not_ok "audit $k: no short patch point" "$ps_msg"
		continue
	fi
	rc=$ps_rc
	if ! grep -q "^short: " "$OUT/$k.audit" &&
		grep -q "^summary: .* 0 short" "$OUT/$k.audit"; then
		ok "audit $k: no short patch point (exit $rc)"
	else
		not_ok "audit $k: no short patch point" "$OUT/$k.audit"
	fi
done
# record against the kernel's own table: the __start/__stop_mcount_loc
# region holds the linker's __patchable_function_entries
for k in stock relaxed pinned; do
	if ! ps_run -e "$OUT/$k.record.err" 0 "$OUT/$k.sites" -- record "$OUT/$k.vmlinux"; then
		not_ok "record $k: equals the kernel's own table" "$ps_msg"
		continue
	fi
	python3 - "$OUT/$k.vmlinux" "$OUT/$k.sites" >"$OUT/$k.table.cmp" 2>&1 <<'EOF'
import subprocess, sys, struct
img, sites = sys.argv[1], sys.argv[2]
syms = {}
for line in subprocess.run(["riscv64-linux-gnu-nm", img], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3:
        syms[f[2]] = int(f[0], 16)
start, stop = syms["__start_mcount_loc"], syms["__stop_mcount_loc"]
# read the region through the section headers
out = subprocess.run(["riscv64-linux-gnu-readelf", "-SW", img], capture_output=True, text=True).stdout
data = open(img, "rb").read()
table = None
for line in out.splitlines():
    line = line.replace("[ ", "[")
    f = line.split()
    if len(f) > 6 and f[0].startswith("[") and f[2] in ("PROGBITS",):
        addr, off, size = int(f[3], 16), int(f[4], 16), int(f[5], 16)
        if addr <= start and stop <= addr + size:
            b = data[off + start - addr: off + stop - addr]
            table = [struct.unpack_from("<Q", b, i)[0] for i in range(0, len(b), 8)]
if table is None:
    sys.exit("no section holds the region")
# the kernel's sorttable rule: entries outside every sized function symbol
# (the code of overridden weak functions) are dropped (zeroed at build or
# skipped at boot); the patch area here follows the symbol
funcs = []
for line in subprocess.run(["riscv64-linux-gnu-nm", "-S", "--defined-only", img],
                           capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in "tTwW":
        funcs.append((int(f[0], 16), int(f[1], 16)))
funcs.sort()
import bisect
starts = [a for a, _ in funcs]
def inside(v):
    i = bisect.bisect_right(starts, v) - 1
    while i >= 0 and starts[i] > v - (1 << 20):
        a, n = funcs[i]
        if a <= v < a + n:
            return True
        i -= 1
    return False
kernel = sorted(v for v in table if v and inside(v))
got = [int(l, 16) for l in open(sites)]
print("kernel table: %d entries, record: %d sites" % (len(kernel), len(got)))
if kernel != got:
    print("differ: missing %s extra %s" % ([hex(v) for v in sorted(set(kernel) - set(got))][:10],
                                           [hex(v) for v in sorted(set(got) - set(kernel))][:10]))
    sys.exit(1)
EOF
	if [ $? -eq 0 ]; then
		ok "record $k: equals the kernel's own table ($(head -n 1 "$OUT/$k.table.cmp"))"
	else
		not_ok "record $k: equals the kernel's own table" "$OUT/$k.table.cmp"
	fi
done

# --- boots ----------------------------------------------------------------
initramfs riscv "$OUT/riscv.cpio"
boot stock "$BOOT_TIMEOUT"
selftests "$OUT/stock.boot.log" >"$OUT/stock.tests"
nstock=$(wc -l <"$OUT/stock.tests")
if [ "$nstock" -gt 0 ] && ! grep -q "FAILED" "$OUT/stock.boot.log" &&
	reached_init "$OUT/stock.boot.log"; then
	ok "boot stock (--no-relax): $nstock self tests PASSED, none FAILED, reached init"
else
	not_ok "boot stock (--no-relax): self tests PASSED" "$OUT/stock.boot.log"
fi
if fs=$(tracefs_ok "$OUT/stock.boot.log"); then
	ok "boot stock: function tracer on over every function: $fs enabled, no ftrace bug"
else
	not_ok "boot stock: function tracer on, thousands enabled, no ftrace bug (enabled_functions $fs)" \
		"$OUT/stock.boot.log"
fi

boot relaxed "$HANG_TIMEOUT"
rc=$?
if [ "$rc" -eq 124 ] && grep -q "Running postponed tracer tests" "$OUT/relaxed.boot.log" &&
	! reached_init "$OUT/relaxed.boot.log"; then
	ok "boot relaxed without patchsite: hangs in the postponed tracer tests (timeout ${HANG_TIMEOUT}s)"
else
	echo "qemu/timeout status $rc" >>"$OUT/relaxed.boot.log"
	not_ok "boot relaxed without patchsite: hangs in the postponed tracer tests" "$OUT/relaxed.boot.log"
fi

boot pinned "$BOOT_TIMEOUT"
selftests "$OUT/pinned.boot.log" >"$OUT/pinned.tests"
if [ -s "$OUT/pinned.tests" ] && ! grep -q "FAILED" "$OUT/pinned.boot.log" &&
	reached_init "$OUT/pinned.boot.log" &&
	cmp -s "$OUT/stock.tests" "$OUT/pinned.tests"; then
	ok "boot relaxed + patchsite pin: $(wc -l <"$OUT/pinned.tests") self tests PASSED, the same list as stock"
else
	diff "$OUT/stock.tests" "$OUT/pinned.tests" >>"$OUT/pinned.boot.log" 2>&1
	not_ok "boot relaxed + patchsite pin: the same self tests PASSED as stock" "$OUT/pinned.boot.log"
fi
if fp=$(tracefs_ok "$OUT/pinned.boot.log" "$fs"); then
	ok "boot relaxed + patchsite pin: function tracer on over every function: $fp enabled as stock, no ftrace bug"
else
	not_ok "boot relaxed + patchsite pin: $fs functions enabled as stock, no ftrace bug (got $fp)" \
		"$OUT/pinned.boot.log"
fi

# --- sizes ------------------------------------------------------------------
s=$(text_size "$OUT/stock.vmlinux")
r=$(text_size "$OUT/relaxed.vmlinux")
p=$(text_size "$OUT/pinned.vmlinux")
echo "# .text bytes: stock (--no-relax) $s, relaxed $r, relaxed+pin $p"
python3 -c "import sys; s,r,p=map(int,sys.argv[1:]); print('# relaxed+pin is %.1f%% smaller than stock; pinning costs %d bytes' % (100.0*(s-p)/s, p-r))" "$s" "$r" "$p"
if [ "$p" -lt "$s" ]; then
	ok "relaxed+pin text is smaller than the --no-relax text"
else
	not_ok "relaxed+pin text is smaller than the --no-relax text"
fi

finish
