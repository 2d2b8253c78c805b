#!/bin/sh
# tests/doc/install.sh - `make install` from a fresh clone, with only the
# host's compiler, into a scratch prefix; what it installed works; `make
# uninstall` removes it all.
#
# Strategy: clone what is committed (so a file left out of git fails here),
# and build it with a PATH on which every cross compiler and binutils
# (*-linux-gnu-*) is hidden: /usr/bin's other programs are linked into a
# directory that stands in for it.  Then the oracles are not make's word:
# readelf says the installed runtime is for the host's machine, the
# installed patchsite embeds a program whose own count of calls the
# installed tracer must print, a program compiled against the installed
# headers and library counts its calls, man renders the installed pages,
# and find lists nothing under the prefix after uninstall.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/e2e/lib.sh"
t=$(mktemp -d /var/tmp/install-test.XXXX); trap 'rm -rf "$t"' EXIT
ps_init "$t"
arch=$(uname -m)
case $arch in
x86_64) pfe=-fpatchable-function-entry=5; mach='X86-64' ;;
aarch64) pfe='-fpatchable-function-entry=4,2 -falign-functions=8'; mach=AArch64 ;;
riscv64) pfe='-fpatchable-function-entry=8,4 -falign-functions=8'; mach=RISC-V ;;
*) pfe=; mach= ;;
esac

mkdir "$t/bin"
for f in /usr/bin/* /usr/sbin/*; do
	case ${f##*/} in *-linux-gnu-*|*-linux-gnu) ;; *) ln -sf "$f" "$t/bin/" ;; esac
done
hostpath=$t/bin
check "the cross compilers are hidden" sh -c "! PATH=$hostpath command -v aarch64-linux-gnu-gcc"

git clone -q "$top" "$t/src" || { not_ok "git clone"; finish; }
pfx=$t/prefix
if PATH=$hostpath nice make -C "$t/src" -j2 install PREFIX="$pfx" > "$t/install.log" 2>&1; then
	ok "make install with only the host compiler"
else
	not_ok "make install with only the host compiler" "$t/install.log"; finish
fi
skipped=$(grep '^patchsite: runtime not built for' "$t/install.log")
want=
for a in aarch64 riscv64 x86_64; do [ "$a" = "$arch" ] || want="$want $a"; done
if [ "$skipped" = "patchsite: runtime not built for$want (no cross compiler; RT_ARCHES names the architectures)" ]; then
	ok "one line names the runtimes skipped:$want"
else
	not_ok "no line naming the skipped runtimes ($want)" "$t/install.log"
fi
for a in $want; do
	if [ -e "$pfx/lib/patchsite/$a" ]; then not_ok "$a runtime installed without its compiler"
	else ok "no $a runtime"; fi
done

P=$pfx/bin/patchsite
if PATCHSITE=$P ps_run 0 "$t/v" -- --version && grep -q '^patchsite [0-9]' "$t/v"; then
	ok "installed patchsite --version"
else not_ok "installed patchsite --version" "$ps_msg"; fi
for m in patchsite patchsite-record patchsite-audit patchsite-pin patchsite-repad \
		patchsite-embed patchsite-arches patchsite-trace; do
	if MANPATH=$pfx/share/man man -w "$m" > /dev/null 2>&1 &&
		MANPATH=$pfx/share/man MANWIDTH=80 man "$m" 2>&1 | grep -q '^NAME'; then
		ok "man $m"
	else not_ok "man $m is not installed"; fi
done
if MANPATH=$pfx/share/man man -w 3 patchsite-runtime > /dev/null 2>&1; then ok "man 3 patchsite-runtime"
else not_ok "man 3 patchsite-runtime is not installed"; fi
for f in include/patchsite/callops.h include/patchsite/segment.h share/doc/patchsite/README.md \
		share/doc/patchsite/NEWS share/doc/patchsite/doc/patchsite-record.md; do
	if [ -s "$pfx/$f" ]; then ok "installed $f"; else not_ok "$f is not installed"; fi
done

lib=$pfx/lib/patchsite/$arch
if [ -z "$mach" ]; then
	note "no runtime for $arch: only the tool is checked"
	ok "no runtime expected on $arch"
else
	for f in libpatchsite-callops.a libpatchsite-callops.so libpatchsite-trace.so libpatchsite-trace-attach.so; do
		if [ "$f" = libpatchsite-callops.a ]; then
			m=$(readelf -h "$lib/$f" 2>/dev/null | sed -n 's/^ *Machine: *//p' | head -n 1)
		else
			m=$(readelf -h "$lib/$f" 2>/dev/null | sed -n 's/^ *Machine: *//p')
		fi
		case $m in *"$mach"*) ok "$f is for $mach" ;; *) not_ok "$arch/$f: machine '$m'" ;; esac
	done
	# the installed tracer on a program that counts its own calls
	cat > "$t/p.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) int step(int x) { return x * 3 + 1; }
int main(void) { int s = 0, n = 0; for (int i = 0; i < 37; i++, n++) s += step(i); printf("%d calls\n", n); return s == 37 * 36 / 2 * 3 + 37 ? 0 : 1; }
C
	cc -O2 $pfe -o "$t/p" "$t/p.c" || not_ok "compile the program"
	if PATCHSITE=$P ps_run 0 /dev/null -- embed "$t/p" -o "$t/p.emb"; then
		PATCHSITE_TRACE=step PATCHSITE_TRACE_TIME=off PATCHSITE_TRACE_OUT=$t/trace \
			LD_PRELOAD=$lib/libpatchsite-trace.so "$t/p.emb" > "$t/p.out" 2>&1
		rc=$?
		got=$(awk '$NF == "step" { print $1 }' "$t/trace" 2>/dev/null)
		if [ $rc -eq 0 ] && grep -qx '37 calls' "$t/p.out" && [ "$got" = 37 ]; then
			ok "the installed tracer counts the program's 37 calls"
		else
			cat "$t/p.out" "$t/trace" > "$t/d" 2>&1; not_ok "installed tracer: exit $rc, counted '$got'" "$t/d"
		fi
	else
		not_ok "installed patchsite embed" "$ps_msg"
	fi
	# a program built against the installed headers and runtime
	cat > "$t/c.c" <<'C'
#include <stdio.h>
#include <callops.h>
static long calls;
PS_NOTRACE static void hit(unsigned long ip, unsigned long pip, struct ps_ops *o, void *r)
{ (void)ip; (void)pip; (void)o; (void)r; calls++; }
static struct ps_ops ops = { .func = hit };
__attribute__((noinline)) int work(int x) { return x + 1; }
int main(void) { int rc = ps_attach((void *)work, &ops), s = 0;
	for (int i = 0; i < 5; i++) s += work(i);
	printf("%d %d %ld\n", rc, s, calls); return 0; }
C
	if cc -O2 $pfe -I "$pfx/include/patchsite" -o "$t/c" "$t/c.c" -L "$lib" -lpatchsite-callops \
			-Wl,-rpath,"$lib" -lpthread 2> "$t/cc.err" &&
		PATCHSITE=$P ps_run 0 /dev/null -- embed "$t/c" -o "$t/c.emb" &&
		[ "$("$t/c.emb")" = "0 15 5" ]; then
		ok "a program built on the installed headers and library counts 5 calls"
	else
		not_ok "installed headers and library" "$t/cc.err"
	fi
fi

# RT_ARCHES naming an architecture without its compiler is an error
other=${want# }; other=${other%% *}
if [ -n "$other" ]; then
	if PATH=$hostpath make -C "$t/src" runtime RT_ARCHES="$other" > "$t/rt.log" 2>&1; then
		not_ok "RT_ARCHES=$other without its compiler succeeded" "$t/rt.log"
	elif grep -q "RT_ARCHES names $other, but .*gcc is not installed" "$t/rt.log"; then
		ok "RT_ARCHES=$other without its compiler: one line, an error"
	else
		not_ok "RT_ARCHES=$other: no line" "$t/rt.log"
	fi
fi

if PATH=$hostpath make -C "$t/src" uninstall PREFIX="$pfx" > "$t/un.log" 2>&1; then
	ok "make uninstall"
else not_ok "make uninstall" "$t/un.log"; fi
left=$(find "$pfx" -type f -o -type l)
if [ -z "$left" ]; then ok "uninstall leaves no file under the prefix"
else echo "$left" > "$t/left"; not_ok "uninstall left files" "$t/left"; fi
finish
