#!/bin/bash
# tests/kernel/contrib-x86.sh - the kernel integration (contrib/linux) built
# for real on x86_64 with CONFIG_PATCHSITE=y: x86.sh's configuration (lib.sh's
# x86_config) plus the option, in a tree of its own (KERNEL_WORK/x86-patchsite),
# the tool found on PATH.  x86.sh runs 0001's repad and 0003's record + audit
# by hand on an unswitched build; this is the build that runs them itself.
#
# The `patchsite` on PATH is a wrapper around the real one that keeps a copy
# of each object before `repad --in-place` and compares it after.
#   1. Kconfig offers the option on x86_64: CONFIG_PATCHSITE=y after
#      olddefconfig, PATCHSITE_VERSION is the tool's;
#   2. the build succeeds, and patchsite prints nothing in it;
#   3. 0001: every object of vmlinux.a with patch sites (__mcount_loc) was
#      made with repad --in-place, every repad exited 0 and left its object
#      byte for byte (x86_64 has no ops literal to align);
#   4. 0003: record --in-place and audit ran on vmlinux (the build would
#      have failed otherwise); audit of the result is clean (exit 0), and
#      record's table is the one the kernel holds.
#
# Usage (from the top of the tree, after `make`):
#   PATCHSITE=./patchsite bash tests/kernel/contrib-x86.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/kernel/lib.sh
X=$W/x86-patchsite
T=$OUT/contrib-x86

kernel_prepare
# from scratch: the wrapper must see every object made (an object left from
# an earlier build is not made again)
rm -rf "$T" "$X"
mkdir -p "$T/bin" "$T/pre" "$X"

# the wrapper: the real tool, with each repad's object kept and compared
cat >"$T/bin/patchsite" <<EOF
#!/bin/sh
if [ "\$1" = repad ] && [ "\$2" = --in-place ] && [ "\$3" = --quiet ] && [ \$# -eq 4 ]; then
	pre=\$(mktemp "$T/pre/obj.XXXXXX") || exit 2
	cp "\$4" "\$pre" || exit 2
	"$PATCHSITE" "\$@"
	rc=\$?
	if cmp -s "\$pre" "\$4"; then same=same; else same=changed; fi
	echo "\$rc \$same \$4" >>"$T/repad.log"
	rm -f "\$pre"
	exit \$rc
fi
echo "\$*" >>"$T/other.log"
exec "$PATCHSITE" "\$@"
EOF
chmod +x "$T/bin/patchsite"
export PATH="$T/bin:$PATH"
export KBUILD_DIR=$X

# --- 1. the configuration ------------------------------------------------------
x86_config "$X"
"$SRC/scripts/config" --file "$X/.config" -e PATCHSITE
kbuild x86 olddefconfig >/dev/null || die "x86 olddefconfig failed"
want=$(sh "$SRC/scripts/patchsite-version.sh" "$PATCHSITE")
if grep -q "^CONFIG_PATCHSITE=y" "$X/.config" && [ "$want" -ge 100 ] &&
	grep -q "^CONFIG_PATCHSITE_VERSION=$want$" "$X/.config"; then
	ok "x86_64: CONFIG_PATCHSITE=y after olddefconfig, PATCHSITE_VERSION=$want (the tool on PATH)"
else
	grep PATCHSITE "$X/.config" >"$T/config.msg"
	not_ok "x86_64: CONFIG_PATCHSITE=y, PATCHSITE_VERSION the tool's" "$T/config.msg"
fi
for c in $X86_CONFIG_WANT; do
	grep -q "^CONFIG_$c=y" "$X/.config" || die "x86: CONFIG_$c is not set with CONFIG_PATCHSITE"
done

# --- 2. the build ----------------------------------------------------------------
: >"$T/repad.log"
: >"$T/other.log"
t0=$(date +%s)
kbuild x86 vmlinux >"$T/build.log" 2>&1
rc=$?
echo "# x86_64 build with CONFIG_PATCHSITE: $(($(date +%s) - t0)) s"
if [ "$rc" -eq 0 ] && ! grep -qi patchsite "$T/build.log"; then
	ok "x86_64 CONFIG_PATCHSITE build succeeds, nothing printed by patchsite"
else
	echo "make exit status $rc" >>"$T/build.log"
	not_ok "x86_64 CONFIG_PATCHSITE build succeeds quietly" "$T/build.log"
	finish
fi

# --- 3. 0001 -----------------------------------------------------------------------
objects_repadded "$X" readelf __mcount_loc "$T/vmlinux.a"
nr=$(wc -l <"$T/repad.log")
nbad=$(awk '$1 != 0 || $2 != "same"' "$T/repad.log" | wc -l)
if [ "$nsit" -gt 100 ] && [ ! -s "$T/vmlinux.a.norepad" ] && [ "$nr" -ge "$nrep" ] && [ "$nbad" -eq 0 ]; then
	ok "x86_64 (0001): each of the $nsit objects of vmlinux.a with patch sites (__mcount_loc) made with repad --in-place ($nrep of the $no in all); all $nr repad runs exit 0 and leave the object byte for byte"
else
	{
		head -n 5 "$T/vmlinux.a.norepad"
		awk '$1 != 0 || $2 != "same"' "$T/repad.log" | head -n 5
		echo "$(wc -l <"$T/vmlinux.a.norepad") of $nsit objects with sites not repadded; $nbad of $nr repad runs failed or changed the object"
	} >"$T/repad.msg"
	not_ok "x86_64 (0001): every object with sites repadded, byte for byte" "$T/repad.msg"
fi

# --- 4. 0003 -----------------------------------------------------------------------
ps_run -e "$T/audit" 0 "$T/audit" -- audit "$X/vmlinux"
arc=$ps_rc
ps_run -e "$T/record.err" 0 "$T/record" -- record "$X/vmlinux"
rrc=$ps_rc
$TAB sites "$X/vmlinux" >"$T/table" || die "mcounttab.py cannot read the kernel's table"
if grep -q -x "record --in-place vmlinux" "$T/other.log" && grep -q -x "audit vmlinux" "$T/other.log" &&
	[ "$arc" -eq 0 ] && [ "$rrc" -eq 0 ] && [ -s "$T/table" ] && cmp -s "$T/table" "$T/record"; then
	ok "x86_64 (0003): the link ran record --in-place and audit on vmlinux; audit of the result clean (exit 0), the table ($(wc -l <"$T/table") sites) is record's"
else
	{
		echo "audit exit $arc, record exit $rrc; the link ran:"
		cat "$T/other.log"
		head -n 5 "$T/audit"
		diff "$T/table" "$T/record" | head -n 5
	} >"$T/audit.msg"
	not_ok "x86_64 (0003): audit clean, the table is record's" "$T/audit.msg"
fi

finish
