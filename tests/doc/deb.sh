#!/bin/sh
# tests/doc/deb.sh - the Debian packages: build, lintian, install, run, purge.
#
# Strategy: build from a fresh clone of what is committed with
# `dpkg-buildpackage -us -uc -b` (debian/), so a file missing from git or
# from debian/*.install fails here.  lintian must report no error and no
# warning.  The packages are installed with dpkg -i, and what they installed
# is judged by oracles that are not patchsite: the installed patchsite's
# sites of the bundled minikernel must be the calls objdump finds, the
# installed tracer must count what the program counts itself, man must find
# the pages.  Then both are purged and nothing of them may be left.
# Needs root (dpkg -i), as make check's dependencies do: sudo otherwise.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/e2e/lib.sh"
t=$(mktemp -d /var/tmp/deb-test.XXXX)
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
purge() { $SUDO dpkg --purge patchsite-runtime patchsite > /dev/null 2>&1; }
trap 'purge; rm -rf "$t"' EXIT
ps_init "$t"
arch=$(uname -m)
case $arch in
x86_64) pfe=-fpatchable-function-entry=5 ;;
aarch64) pfe='-fpatchable-function-entry=4,2 -falign-functions=8' ;;
riscv64) pfe='-fpatchable-function-entry=8,4 -falign-functions=8' ;;
esac
img=$top/fixtures/minikernel/out/$arch.elf
[ -f "$img" ] || img=$top/fixtures/minikernel/out/x86_64.elf

if dpkg-query -W -f='${Status}' patchsite 2>/dev/null | grep -q 'ok installed'; then
	not_ok "patchsite is installed already: the test would purge it"; finish
fi
git clone -q "$top" "$t/src" || { not_ok "git clone"; finish; }
if (cd "$t/src" && nice timeout 1800 dpkg-buildpackage -us -uc -b) > "$t/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b"
else
	ps_detail=tail not_ok "dpkg-buildpackage -us -uc -b" "$t/build.log"; finish
fi
deb=$(ls "$t"/patchsite_*.deb 2>/dev/null)
rdeb=$(ls "$t"/patchsite-runtime_*.deb 2>/dev/null)
if [ -f "$deb" ] && [ -f "$rdeb" ]; then ok "two packages: patchsite, patchsite-runtime"
else ls "$t" > "$t/ls"; not_ok "the packages are missing" "$t/ls"; finish; fi

lintian --fail-on error,warning "$t"/patchsite_*.changes > "$t/lintian" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -q '^[EW]: ' "$t/lintian"; then ok "lintian: no error, no warning"
else not_ok "lintian (exit $rc)" "$t/lintian"; fi

dpkg-deb -c "$deb" > "$t/c1"; dpkg-deb -c "$rdeb" > "$t/c2"
for f in usr/bin/patchsite usr/share/man/man1/patchsite-record.1.gz usr/share/doc/patchsite/README.md; do
	if grep -q " \./$f\(\.gz\)\?\$" "$t/c1"; then ok "patchsite has $f"; else not_ok "patchsite lacks $f" "$t/c1"; fi
done
for f in usr/include/patchsite/callops.h "usr/lib/patchsite/$arch/libpatchsite-trace.so" \
		"usr/lib/patchsite/$arch/libpatchsite-callops.a" usr/share/man/man3/patchsite-runtime.3.gz; do
	if grep -q " \./$f\$" "$t/c2"; then ok "patchsite-runtime has $f"; else not_ok "patchsite-runtime lacks $f" "$t/c2"; fi
done

if $SUDO dpkg -i "$deb" "$rdeb" > "$t/i.log" 2>&1; then ok "dpkg -i"
else not_ok "dpkg -i" "$t/i.log"; finish; fi

# the installed patchsite on a bundled image: its sites are objdump's calls
P=/usr/bin/patchsite
if PATCHSITE=$P ps_run 0 "$t/list" -- record "$img"; then
	objdump -d "$img" | sed -n 's/^ *\([0-9a-f]*\):.*call.*<\(__fentry__\|_mcount\|mcount\)>.*/0x\1/p' |
		sort > "$t/want"
	sort "$t/list" > "$t/got"
	if [ -s "$t/want" ] && cmp -s "$t/want" "$t/got"; then
		ok "installed patchsite: $(wc -l < "$t/got") sites, objdump's calls"
	else
		diff "$t/want" "$t/got" > "$t/d"; not_ok "installed patchsite's sites are not objdump's" "$t/d"
	fi
else
	not_ok "installed patchsite record" "$ps_msg"
fi
if man -w patchsite-audit > /dev/null 2>&1 && man -w 3 patchsite-runtime > /dev/null 2>&1; then
	ok "man finds the installed pages"
else not_ok "man does not find the installed pages"; fi

# the installed tracer on a program that counts its own calls
cat > "$t/p.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) int step(int x) { return x * 3 + 1; }
int main(void) { int n = 0, s = 0; for (int i = 0; i < 41; i++, n++) s += step(i); printf("%d calls\n", n); return s > 0 ? 0 : 1; }
C
lib=/usr/lib/patchsite/$arch
if cc -O2 $pfe -o "$t/p" "$t/p.c" && PATCHSITE=$P ps_run 0 /dev/null -- embed "$t/p" -o "$t/p.emb"; then
	PATCHSITE_TRACE=step PATCHSITE_TRACE_TIME=off PATCHSITE_TRACE_OUT=$t/trace \
		LD_PRELOAD=$lib/libpatchsite-trace.so "$t/p.emb" > "$t/p.out" 2>&1
	rc=$?
	got=$(awk '$NF == "step" { print $1 }' "$t/trace" 2>/dev/null)
	if [ $rc -eq 0 ] && grep -qx '41 calls' "$t/p.out" && [ "$got" = 41 ]; then
		ok "the installed tracer counts the program's 41 calls"
	else
		cat "$t/p.out" "$t/trace" > "$t/d" 2>&1; not_ok "installed tracer: exit $rc, counted '$got'" "$t/d"
	fi
else
	not_ok "embed with the installed patchsite" "$ps_msg"
fi

if $SUDO dpkg --purge patchsite-runtime patchsite > "$t/p.log" 2>&1; then ok "dpkg --purge"
else not_ok "dpkg --purge" "$t/p.log"; fi
if [ ! -e /usr/bin/patchsite ] && [ ! -e "$lib" ] && [ ! -e /usr/include/patchsite ] &&
	! dpkg-query -W -f='${Status}' patchsite 2>/dev/null | grep -q 'ok installed'; then
	ok "nothing left after the purge"
else not_ok "files left after the purge"; fi
finish
