#!/bin/bash
# tests/kernel/riscv-relax.sh - relaxed riscv64 kernels through the kernel
# integration (contrib/linux/*.patch, 0004 and 0005 for riscv64).
#
# Builds Debian's linux-source-6.12 for riscv64 (tinyconfig plus the
# fragment below) and boots each kernel under qemu-system-riscv64 with an
# initramfs whose /init (tests/kernel/tracefs-init.c) switches the function
# tracer on over every function and counts enabled_functions:
#   stock     CONFIG_PATCHSITE off, the series applied: the kernel's own
#             --no-relax link, no command of the build names patchsite;
#             every self test PASSED, thousands of functions enabled, no
#             "ftrace bug"
#   relaxed   the same objects, the --no-relax line removed from
#             arch/riscv/Makefile by hand (restored afterwards): ftrace_call
#             is a 4-byte jal (objdump) and the boot hangs at the postponed
#             tracer tests (ftrace writes 8 bytes over it)
#   patchsite the same configuration with CONFIG_PATCHSITE=y, built in
#             KERNEL_WORK/riscv-patchsite with PATCHSITE=PATH on make's
#             command line: PATCHSITE_PIN on, no --no-relax in the link,
#             mcount-dyn.o made with `patchsite pin`, every C object with
#             `patchsite repad`; ftrace_call is auipc+jalr (objdump); the
#             table that `record --in-place` wrote names the functions of the
#             linker's own table of the relaxed kernel; every self test
#             PASSED, the same list as stock, as many functions enabled as
#             stock but for the stock table's weak leftovers (see below), no
#             "ftrace bug".  A second make relinks nothing.  With a pin that
#             pins nothing (the same tool path) the link fails on the
#             audit's `short` ftrace_call and leaves no vmlinux.
# and checks `patchsite audit` (the relaxed kernel has a 'short' patch
# point, the stock and patchsite ones do not) and `patchsite record` against
# the kernel's own __mcount_loc region.  Prints the text sizes and the build
# times of stock and patchsite (wall and CPU; from scratch in a fresh
# KERNEL_WORK, the patchsite build taking from ccache the compiles that are
# stock's: it says how many, and its time is then not the integration's
# cost, which bench/RESULTS.md measured without ccache; some of those
# objects are compiled again without ccache and compared).  The three boots
# run two at a time, and each phase's time is in the log (lib.sh's phase).
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/riscv-relax.sh
# KERNEL_WORK (default build-kernel/) keeps the source and the out-of-tree
# builds (KERNEL_WORK/riscv, KERNEL_WORK/riscv-patchsite) between runs;
# tests/kernel/tables.sh reuses the stock kernel.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
HANG_TIMEOUT=${HANG_TIMEOUT:-90}
HANG_STALL=${HANG_STALL:-30}	# silent seconds after the postponed tests begin (hang_boot)
B=$W/riscv			# stock, then relaxed by hand
P=$W/riscv-patchsite		# CONFIG_PATCHSITE=y
# stock and patchsite are one configuration but for CONFIG_PATCHSITE: the
# second build takes from ccache what the first compiled (lib.sh's kbuild)
export KERNEL_CCACHE=1

proof_start "$OUT/riscv-relax" keep

# arch/riscv/Makefile as the series left it: a run stopped while the line
# was removed by hand (step 2) gets it back from the copy taken before
if ! grep -q -- "--no-relax" "$SRC/arch/riscv/Makefile"; then
	[ -f "$W/Makefile.riscv.stock" ] || die "arch/riscv/Makefile has no --no-relax and no copy to restore"
	cp "$W/Makefile.riscv.stock" "$SRC/arch/riscv/Makefile"
fi

# The tool the patchsite build names on make's command line: a link, so
# that the failure check below can put a pin that pins nothing behind the
# same path (the same commands: nothing but what it removes is rebuilt).
ln -sfn "$PATCHSITE" "$T/patchsite"
cat >"$T/nopin" <<EOF
#!/bin/sh
[ "\$1" = pin ] && exit 0
exec "$PATCHSITE" "\$@"
EOF
chmod +x "$T/nopin"

# --- the configuration ------------------------------------------------------
# (configured again when a cached configuration predates the initramfs, or
# has FPU, which an earlier version of this test set for a glibc /init, or
# what lib.sh's KERNEL_TRIM turns off, or the EFI stub (77 objects) and
# kexec (its purgatory): qemu's OpenSBI starts the Image itself)
riscv_config() { # BUILD-DIR EXTRA [MAKE-ARGS...] (EXTRA: more scripts/config ARGS)
	local b=$1 extra=$2
	shift 2
	KBUILD_DIR=$b kbuild riscv "$@" tinyconfig >/dev/null || die "tinyconfig failed"
	"$SRC/scripts/config" --file "$b/.config" \
		-e 64BIT -e MMU -e PRINTK -e TTY -e SERIAL_8250 -e SERIAL_8250_CONSOLE \
		-e SERIAL_OF_PLATFORM -e SERIAL_EARLYCON_RISCV_SBI -e HVC_RISCV_SBI \
		-e FTRACE -e FUNCTION_TRACER -e DYNAMIC_FTRACE -e FTRACE_STARTUP_TEST \
		-e KALLSYMS -e RISCV_ISA_C -e NONPORTABLE -e SOC_VIRT \
		-e BINFMT_ELF -e BLK_DEV_INITRD -e PROC_FS -e SYSFS -d FPU -d RD_GZIP -d RD_BZIP2 \
		-d RD_LZMA -d RD_XZ -d RD_LZO -d RD_LZ4 -d RD_ZSTD $KERNEL_TRIM -d EFI -d KEXEC \
		-d KEXEC_FILE $extra
	KBUILD_DIR=$b kbuild riscv "$@" olddefconfig >/dev/null || die "olddefconfig failed"
}
RISCV_WANT="DYNAMIC_FTRACE FTRACE_STARTUP_TEST RISCV_USE_LINKER_RELAXATION RISCV_ISA_C
	BINFMT_ELF BLK_DEV_INITRD PROC_FS SYSFS TRACING"
RISCV_UNWANT="FPU EFI KEXEC_FILE $KERNEL_TRIM_OFF"
kernel_configured riscv "$B" "$RISCV_WANT" "$RISCV_UNWANT" riscv_config "$B" ""
# (CONFIG_PATCHSITE is not in WANT: whether it is on is a check below)
kernel_configured riscv-patchsite "$P" "$RISCV_WANT" "$RISCV_UNWANT" \
	riscv_config "$P" "-e PATCHSITE" PATCHSITE="$T/patchsite"
# the two configurations differ in the integration's options only
if ! grep -q "^CONFIG_PATCHSITE=y" "$B/.config" &&
	grep -q "^CONFIG_PATCHSITE=y" "$P/.config" && grep -q "^CONFIG_PATCHSITE_PIN=y" "$P/.config" &&
	grep -q "^CONFIG_PATCHSITE_VERSION=100$" "$P/.config" &&
	diff <(grep -v "PATCHSITE" "$B/.config") <(grep -v "PATCHSITE" "$P/.config") >"$T/config.diff"; then
	ok "config: CONFIG_PATCHSITE and PATCHSITE_PIN on (PATCHSITE_VERSION 100), off in stock, nothing else differs"
else
	diff "$B/.config" "$P/.config" >>"$T/config.diff"
	not_ok "config: CONFIG_PATCHSITE and PATCHSITE_PIN on, off in stock, nothing else differs" "$T/config.diff"
fi

text_size() { # VMLINUX -> size of .text (readelf's "[ 2]" splits oddly: python)
	riscv64-linux-gnu-readelf -SW "$1" | python3 -c '
import sys
for line in sys.stdin:
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".text":
        print(int(f[5], 16))'
}

# The build's wall time and its CPU time (user + system of make and all it
# ran); "from scratch" when the build directory held no kernel object
# before (the configuration builds the host tools only).
build() { # NAME DIR [MAKE-ARGS...] -> $OUT/NAME.{vmlinux,Image,build.log}, $T/NAME.time
	local name=$1 dir=$2 fresh="from scratch"
	shift 2
	[ ! -e "$dir/init/main.o" ] || fresh=incremental
	kernel_timed "$name" riscv "$dir" "$OUT/$name.build.log" "$@"
	echo "$fresh${KERNEL_CCACHE:+, $(ccache_hits)}" >>"$T/$name.time"
	phase "build $name ($fresh)"
	kernel_copies riscv "$dir" "$OUT/$name"
}

boot() { # NAME TIMEOUT -> $OUT/NAME.boot.log; returns qemu/timeout's status
	timeout "$2" qemu-system-riscv64 -machine virt -bios default -nographic -no-reboot \
		-m 256M -kernel "$OUT/$1.Image" -initrd "$OUT/riscv.cpio" \
		-append "console=ttyS0 earlycon panic=-1" \
		</dev/null >"$OUT/$1.boot.log" 2>&1
}

# hang_boot NAME TIMEOUT STALL: boot NAME as boot does, but stop it once its
# log has ended with "Running postponed tracer tests:" and not grown for
# STALL seconds (the stock kernel prints its first result there within a
# few seconds): then $OUT/NAME.stalled holds STALL (qemu, stopped by TERM,
# exits 0); otherwise boot's status, and no NAME.stalled
hang_boot() {
	local pid size=-1 still=0 n
	rm -f "$OUT/$1.stalled"
	boot "$1" "$2" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		n=$(stat -c %s "$OUT/$1.boot.log" 2>/dev/null || echo 0)
		if [ "$n" = "$size" ] &&
			tr -d '\r' <"$OUT/$1.boot.log" | tail -n 1 | grep -q "^Running postponed tracer tests:"; then
			still=$((still + 1))
			if [ "$still" -ge "$3" ]; then
				echo "$3" >"$OUT/$1.stalled"
				pkill -TERM -P "$pid"
				break
			fi
		else
			still=0
			size=$n
		fi
	done
	wait "$pid"
}

# ftrace_call's instructions in a linked kernel, by objdump (a relaxed jal is
# followed by the next instructions)
ftrace_call_insns() { # VMLINUX -> mnemonics of the 8 bytes at ftrace_call
	local a
	a=$(riscv64-linux-gnu-nm "$1" | awk '$3 == "ftrace_call" { print $1 }')
	[ -n "$a" ] || { echo "no ftrace_call"; return; }
	riscv64-linux-gnu-objdump -d --start-address="0x$a" --stop-address="$(printf '0x%x' $((0x$a + 8)))" "$1" |
		awk -F'\t' '/^ *[0-9a-f]+:/ { split($3, m, " "); printf "%s ", m[1] }'
}


# --- 1. stock: CONFIG_PATCHSITE off, --no-relax -------------------------------
build stock "$B"
bootimg_check riscv "$B" riscv
grep -q -- "--no-relax" "$SRC/arch/riscv/Makefile" || die "the stock Makefile lost --no-relax"
grep -l -r --include='.*.cmd' -e patchsite "$B" >"$T/stock.cmds" 2>/dev/null
ncmd=$(find "$B" -name '.*.o.cmd' | wc -l)
if grep -q -e "--no-relax" "$B/.vmlinux.cmd" && [ ! -s "$T/stock.cmds" ] && [ "$ncmd" -gt 300 ]; then
	ok "stock: vmlinux linked with --no-relax, none of its $ncmd object commands names patchsite"
else
	echo "$(wc -l <"$T/stock.cmds") of $ncmd commands name patchsite; link: $(cat "$B/.vmlinux.cmd")" >>"$T/stock.cmds"
	not_ok "stock: --no-relax, no command names patchsite" "$T/stock.cmds"
fi

# --- 2. relaxed: the --no-relax line removed by hand --------------------------
cp "$SRC/arch/riscv/Makefile" "$W/Makefile.riscv.stock"
sed -i '/LDFLAGS_vmlinux += --no-relax/d' "$SRC/arch/riscv/Makefile"
build relaxed "$B"
cp "$W/Makefile.riscv.stock" "$SRC/arch/riscv/Makefile"

# --- 3. patchsite: CONFIG_PATCHSITE=y, PATCHSITE=PATH on make's command line --
build patchsite "$P" PATCHSITE="$T/patchsite"
if ! grep -q -e "--no-relax" "$P/.vmlinux.cmd" &&
	grep -q -F "$T/patchsite pin arch/riscv/kernel/mcount-dyn.o" "$P/arch/riscv/kernel/.mcount-dyn.o.cmd" &&
	grep -q -F "$T/patchsite repad --in-place --quiet kernel/fork.o" "$P/kernel/.fork.o.cmd"; then
	ok "patchsite: vmlinux linked without --no-relax, mcount-dyn.o made with patchsite pin, C objects with repad"
else
	cat "$P/.vmlinux.cmd" "$P/arch/riscv/kernel/.mcount-dyn.o.cmd" >"$T/patchsite.cmds" 2>&1
	not_ok "patchsite: no --no-relax, pin and repad in the object commands" "$T/patchsite.cmds"
fi
# The patchsite build's objects came from ccache (the stock build's
# compiles, tests/kernel/ccache-cc.sh's rule): some of them, C and
# assembly, made again by their own commands from the build's .cmd files
# without ccache (the compiler, then repad or pin as the build ran them)
# must be the build's objects byte for byte.
recompiled() { # OBJECT... (paths in $P) -> ok when each is the build's own
	local o cmd bad=""
	mkdir -p "$T/cc"
	for o in "$@"; do
		mkdir -p "$T/cc/$(dirname "$o")"
		cmd=$(sed -n 's/^savedcmd_[^ ]* := //p' "$P/$(dirname "$o")/.$(basename "$o").cmd")
		cmd=$(printf '%s\n' "$cmd" | sed "s#$KLIB/ccache-cc.sh ##; s#-Wp,-MMD,[^ ]*##; s# $o\\b# $T/cc/$o#g")
		case $cmd in *ccache*|"") bad="$bad $o(command)"; continue ;; esac
		(cd "$P" && eval "$cmd") >"$T/cc/$o.log" 2>&1 || { bad="$bad $o(failed)"; continue; }
		cmp -s "$T/cc/$o" "$P/$o" || bad="$bad $o"
	done
	if [ -z "$bad" ]; then
		ok "ccache: $# objects of the patchsite build made again without ccache are the build's, byte for byte ($*)"
	else
		echo "differ or failed:$bad" >"$T/cc.msg"
		not_ok "ccache: objects made again without ccache are the build's" "$T/cc.msg"
	fi
}
# (mm/pgtable-generic.o and kernel/params.o hold __FILE__ strings: a
# ccache that rewrote the source path, as preprocessor mode with a base
# directory did, changes them)
recompiled init/main.o kernel/fork.o kernel/trace/ftrace.o mm/slub.o lib/string.o \
	mm/pgtable-generic.o kernel/params.o arch/riscv/kernel/ftrace.o arch/riscv/kernel/mcount-dyn.o
for k in stock relaxed patchsite; do
	ftrace_call_insns "$OUT/$k.vmlinux" >"$T/$k.ftrace_call"
done
if [ "$(cat "$T/stock.ftrace_call")" = "auipc jalr " ] && [ "$(cut -d' ' -f1 "$T/relaxed.ftrace_call")" = jal ] &&
	[ "$(cat "$T/patchsite.ftrace_call")" = "auipc jalr " ]; then
	ok "objdump ftrace_call: stock auipc+jalr, relaxed by hand jal, patchsite auipc+jalr"
else
	echo "stock: $(cat "$T/stock.ftrace_call"); relaxed: $(cat "$T/relaxed.ftrace_call"); patchsite: $(cat "$T/patchsite.ftrace_call")" >"$T/ftrace_call.log"
	not_ok "objdump ftrace_call: auipc+jalr, jal, auipc+jalr" "$T/ftrace_call.log"
fi

# a second make has nothing to do (pin rewrote mcount-dyn.o inside its own
# rule, not behind its archive)
before=$(stat -c %Y.%y "$P/vmlinux")
KBUILD_DIR=$P kbuild riscv PATCHSITE="$T/patchsite" Image >"$T/again.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ "$(stat -c %Y.%y "$P/vmlinux")" = "$before" ]; then
	ok "patchsite: a second make relinks nothing"
else
	echo "make exit $rc; vmlinux $before -> $(stat -c %Y.%y "$P/vmlinux")" >>"$T/again.log"
	not_ok "patchsite: a second make relinks nothing" "$T/again.log"
fi

# a pin that pins nothing behind the same path: mcount-dyn.o made again
# unpinned, the relaxed link shortens ftrace_call, the audit fails the build
ps_run -e "$T/fail.expected" 1 "$T/fail.expected" -- audit "$OUT/relaxed.vmlinux" ||
	die "audit of the relaxed kernel did not report findings (exit 1): $(head -n 3 "$ps_msg")"
ln -sfn "$T/nopin" "$T/patchsite"
rm -f "$P/arch/riscv/kernel/mcount-dyn.o"
KBUILD_DIR=$P kbuild riscv PATCHSITE="$T/patchsite" Image >"$T/fail.log" 2>&1
rc=$?
ln -sfn "$PATCHSITE" "$T/patchsite"
rm -f "$P/arch/riscv/kernel/mcount-dyn.o"	# the next make pins it again
if [ "$rc" -ne 0 ] && grep -q "^short: .*'ftrace_call'" "$T/fail.log" &&
	grep -q "Failed to audit the patch-site table of vmlinux" "$T/fail.log" && [ ! -e "$P/vmlinux" ]; then
	ok "patchsite, a pin that pins nothing: the link fails on the short ftrace_call (exit $rc), no vmlinux left"
else
	echo "make exit $rc, vmlinux $([ -e "$P/vmlinux" ] && echo left || echo removed)" >>"$T/fail.log"
	not_ok "patchsite, a pin that pins nothing: the link fails on the short ftrace_call" "$T/fail.log"
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
if ! ps_run -e "$OUT/stock.audit" '[01]' "$OUT/stock.audit" -- audit "$OUT/stock.vmlinux"; then
	not_ok "audit stock: no short patch point" "$ps_msg"
elif ! grep -q "^short: " "$OUT/stock.audit" && grep -q "^summary: .* 0 short" "$OUT/stock.audit"; then
	ok "audit stock: no short patch point (exit $ps_rc)"
else
	not_ok "audit stock: no short patch point" "$OUT/stock.audit"
fi
# the table the build wrote: clean
if ! ps_run -e "$OUT/patchsite.audit" 0 "$OUT/patchsite.audit" -- audit "$OUT/patchsite.vmlinux"; then
	cat "$OUT/patchsite.audit" >>"$ps_msg"
	not_ok "audit patchsite: clean (exit 0)" "$ps_msg"
elif grep -q "^summary: .* 0 short" "$OUT/patchsite.audit"; then
	ok "audit patchsite: clean (exit 0), no short patch point"
else
	not_ok "audit patchsite: clean, no short patch point" "$OUT/patchsite.audit"
fi
# record against the kernel's own table: the __start/__stop_mcount_loc
# region holds the linker's __patchable_function_entries
for k in stock relaxed; do
	if ! ps_run -e "$OUT/$k.record.err" 0 "$OUT/$k.sites" -- record "$OUT/$k.vmlinux"; then
		not_ok "record $k: equals the kernel's own table" "$ps_msg"
		continue
	fi
	python3 - "$OUT/$k.vmlinux" "$OUT/$k.sites" >"$OUT/$k.table.cmp" 2>&1 <<'EOF'
import sys
sys.path.insert(0, "tests/kernel")
from rvtable import Table
# the kernel's sorttable rule: entries outside every sized function symbol
# (the code of overridden weak functions) are dropped (zeroed at build or
# skipped at boot); the patch area here follows the symbol
t = Table(sys.argv[1])
kernel = sorted(v for v in t.vals if v and t.owner(v))
got = [int(l, 16) for l in open(sys.argv[2])]
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

# The patchsite kernel's table was written by `record --in-place`: its
# entries, as function+offset, against the linker's own table
# (__patchable_function_entries) of the relaxed kernel, made from the same
# objects but for the pinned ftrace_call (which shifts addresses, not names)
python3 - "$OUT/relaxed.vmlinux" "$OUT/patchsite.vmlinux" >"$T/table.cmp" 2>&1 <<'EOF'
import sys
sys.path.insert(0, "tests/kernel")
from rvtable import Table
def table(img):
    t = Table(img)
    named = []
    for v in t.vals:
        f = t.owner(v)
        if f:
            named.append((f[2], v - f[0]))
    return sorted(named), sum(1 for v in t.vals if v)
linker, _ = table(sys.argv[1])
written, nonzero = table(sys.argv[2])
print("linker's table (relaxed): %d entries in functions; written (patchsite): %d, %d non-zero slots"
      % (len(linker), len(written), nonzero))
if linker != written or nonzero != len(written):
    a, b = set(linker), set(written)
    print("missing %s extra %s" % (sorted(a - b)[:10], sorted(b - a)[:10]))
    sys.exit(1)
EOF
if [ $? -eq 0 ]; then
	ok "patchsite: the table written names the linker's table ($(head -n 1 "$T/table.cmp"))"
else
	not_ok "patchsite: the table written names the linker's table" "$T/table.cmp"
fi

# --- boots ----------------------------------------------------------------
# two at a time (lib.sh's side): the stock boot and the relaxed one's hang
# (HANG_TIMEOUT of its own), then the patchsite boot as soon as one ends
phase "record, audit, tables"
initramfs riscv "$OUT/riscv.cpio"
side stock boot stock "$BOOT_TIMEOUT"
side relaxed hang_boot relaxed "$HANG_TIMEOUT" "$HANG_STALL"
side patchsite boot patchsite "$BOOT_TIMEOUT"
side_wait stock
if self_tests "$OUT/stock.boot.log" "$OUT/stock.tests" && reached_init "$OUT/stock.boot.log"; then
	ok "boot stock (--no-relax): $nt self tests PASSED, none FAILED, reached init"
else
	not_ok "boot stock (--no-relax): self tests PASSED" "$OUT/stock.boot.log"
fi
tracer_on "boot stock" "$OUT/stock.boot.log"
fs=$enabled

side_wait relaxed
rc=$?
if [ -s "$OUT/relaxed.stalled" ]; then
	how="nothing printed for $(cat "$OUT/relaxed.stalled") s after they began"
else
	how="timeout ${HANG_TIMEOUT}s"
fi
if { [ "$rc" -eq 124 ] || [ -s "$OUT/relaxed.stalled" ]; } &&
	grep -q "Running postponed tracer tests" "$OUT/relaxed.boot.log" &&
	! reached_init "$OUT/relaxed.boot.log"; then
	ok "boot relaxed without patchsite: hangs in the postponed tracer tests ($how)"
else
	echo "qemu/timeout status $rc" >>"$OUT/relaxed.boot.log"
	not_ok "boot relaxed without patchsite: hangs in the postponed tracer tests" "$OUT/relaxed.boot.log"
fi

side_wait patchsite
if self_tests "$OUT/patchsite.boot.log" "$OUT/patchsite.tests" "$OUT/stock.tests" &&
	reached_init "$OUT/patchsite.boot.log"; then
	ok "boot patchsite (relaxed): $nt self tests PASSED, the same list as stock"
else
	not_ok "boot patchsite (relaxed): the same self tests PASSED as stock" "$OUT/patchsite.boot.log"
fi
# The stock table keeps entries for the code of overridden weak functions
# (outside every sized function symbol: riscv64 6.12 does not zero them at
# build time), which ftrace lists and enables like functions once past
# init; the table that record wrote has none.  So the patchsite kernel
# enables stock's count less those in core text, counted from the stock
# kernel's own table and symbols (nm, readelf).
python3 - "$OUT/stock.vmlinux" >"$T/leftovers" 2>&1 <<'EOF'
import sys
sys.path.insert(0, "tests/kernel")
from rvtable import Table
t = Table(sys.argv[1])
init = (t.syms["_sinittext"], t.syms["_einittext"])
print(sum(1 for v in t.vals if v and not t.owner(v) and not init[0] <= v < init[1]))
EOF
[ $? -eq 0 ] || die "cannot count the stock table's weak leftovers: $(cat "$T/leftovers")"
lo=$(cat "$T/leftovers")
want=$((${fs:-0} - lo))
tracer_on "boot patchsite (relaxed)" "$OUT/patchsite.boot.log" "$want" \
	", stock's $fs less its $lo weak leftovers" " (stock's $fs less $lo weak leftovers)"

# --- sizes and build times ---------------------------------------------------
s=$(text_size "$OUT/stock.vmlinux")
r=$(text_size "$OUT/relaxed.vmlinux")
p=$(text_size "$OUT/patchsite.vmlinux")
echo "# .text bytes: stock (--no-relax) $s, relaxed $r, patchsite (relaxed, pinned) $p"
python3 -c "import sys; s,r,p=map(int,sys.argv[1:]); print('# patchsite is %.1f%% (%d bytes) smaller than stock; pinning costs %d bytes' % (100.0*(s-p)/s, s-p, p-r))" "$s" "$r" "$p"
read -r ws us ss fs_ <<<"$(tr '\n' ' ' <"$T/stock.time")"
read -r wp up sp fp_ <<<"$(tr '\n' ' ' <"$T/patchsite.time")"
python3 -c "import sys; a,b,c,d=map(float,sys.argv[1:5]); print('# build: stock %.0f s wall, %.0f s CPU (%s); patchsite %.0f s wall (%+.1f%%), %.0f s CPU (%+.1f%%) (%s)' % (a, c, sys.argv[5], b, 100.0*(b-a)/a, d, 100.0*(d-c)/c, sys.argv[6]))" \
	"$ws" "$wp" "$(echo "$us + $ss" | bc)" "$(echo "$up + $sp" | bc)" "$fs_" "$fp_"
if [ "$p" -lt "$s" ] && [ "$p" -ge "$r" ]; then
	ok "text: patchsite is smaller than the --no-relax text, not smaller than the unpinned relaxed one"
else
	not_ok "text: relaxed $r <= patchsite $p < stock $s"
fi

finish
