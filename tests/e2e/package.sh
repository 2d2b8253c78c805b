#!/bin/sh
# tests/e2e/package.sh - audit as the gate of a kernel package: one call over
# a vmlinux and a tree of modules (plain, .ko.gz, .ko.xz, .ko.zst), built here
# from our own sources with the real compilers, as a distribution's build
# makes them (-pg -mfentry -mrecord-mcount, call padding, IBT; functions in
# .init.text and .text, a .modinfo).  The oracle for each module is its own
# __mcount_loc, read by readelf (not patchsite).
#
#   clean tree           exit 0, every image counted in the total, silent
#                        but for the total; -j1 and -j4 print the same
#   one table damaged    that module named (stale + missing), exit 1, the
#                        rest still audited
#   an unreadable one    named on stderr (one line), exit 2, the rest still
#                        audited and totalled
#   module table order   a module's __mcount_loc in descending order is no
#                        finding: the kernel sorts it at load time
#   --ignore=            the findings of those kinds do not fail the run,
#                        and the summary says what was ignored
#   JSON                 schema 1, an entry per image with path and status
#   misaligned left out  after record --in-place leaves a misaligned CALL_OPS
#                        site out, audit reports it once (misaligned), not
#                        also missing
#   no table             a module with sites and no table says so and fails
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/package.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-package.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"
# the output of a run is checked only when it exited as it should
die() { echo "package.sh: $*" >&2; echo "$pass passed, $((fail + 1)) failed"; exit 1; }

for tool in gcc readelf python3 gzip xz zstd; do
	command -v "$tool" >/dev/null 2>&1 || die "missing tool $tool"
done
[ -x "$PATCHSITE" ] || die "no patchsite at $PATCHSITE"

# --- the modules --------------------------------------------------------------
cat >"$tmp/mod.c" <<'EOF'
#define __init __attribute__((section(".init.text"), noinline))
static const char modinfo[] __attribute__((section(".modinfo"), used)) = "license=GPL";
int counter;
__attribute__((noinline)) int m_add(int a, int b) { counter++; return a + b; }
__attribute__((noinline)) int m_mul(int a, int b) { counter++; return a * b; }
__attribute__((noinline)) int m_neg(int a) { counter++; return -a; }
__attribute__((noinline)) int m_sq(int a) { return m_mul(a, a); }
int __init m_init(void) { return m_add(1, 2) + m_neg(3) + m_sq(4); }
void __attribute__((section(".exit.text"), noinline)) m_exit(void) { counter = 0; }
EOF
KFLAGS="-O2 -g -pg -mfentry -mrecord-mcount -fpatchable-function-entry=16,16 -fcf-protection=branch
	-fno-pie -mcmodel=kernel -ffreestanding -fno-asynchronous-unwind-tables"
tree=$tmp/pkg
kdir=$tree/lib/modules/6.12.0-test/kernel
mkdir -p "$kdir/drivers/a" "$kdir/drivers/b" "$kdir/fs" "$tree/boot"
i=0
for name in drivers/a/one drivers/a/two drivers/b/three fs/four fs/five; do
	i=$((i + 1))
	gcc $KFLAGS -DVARIANT=$i -c -o "$kdir/$name.ko" "$tmp/mod.c" || die "cannot compile $name"
done
gzip -9 "$kdir/drivers/a/two.ko"
xz "$kdir/drivers/b/three.ko"
zstd -q --rm "$kdir/fs/four.ko"
cp "$root/fixtures/minikernel/out/x86_64-pad.elf" "$tree/boot/vmlinux-6.12.0-test" ||
	die "no fixtures/minikernel/out/x86_64-pad.elf (make -C fixtures/minikernel)"
nimg=6

# the oracle: each module's own table, by readelf
readelf -rW "$kdir/drivers/a/one.ko" |
	awk "/^Relocation section/ { in_t = /'.rela__mcount_loc'/ } in_t && /R_X86_64_64/ { n++ } END { print n + 0 }" \
	>"$tmp/one.entries"
check "oracle: the module has a __mcount_loc of 6 entries (readelf)" \
	sh -c "[ \$(cat '$tmp/one.entries') -eq 6 ]"

# audit_tree NAME WANT-STATUS ARGS...: stdout in $tmp/NAME.out, stderr .err;
# ps_check's status (the checks of the output run only when it is 0)
audit_tree() {
	_n=$1 _want=$2
	shift 2
	ps_check "$_n: exit $_want" -e "$tmp/$_n.err" "$_want" "$tmp/$_n.out" -- audit "$@"
}

# --- a clean package ------------------------------------------------------------
if audit_tree clean 0 "$tree/boot/vmlinux-6.12.0-test" "$tree/lib/modules/6.12.0-test"; then
	check "clean: one line, the total, every image counted" sh -c "[ \$(wc -l <'$tmp/clean.out') -eq 1 ] &&
		grep -qx 'total: $nimg images: $nimg clean, 0 with findings, 0 could not be read' '$tmp/clean.out'"
	check "clean: nothing on stderr" test ! -s "$tmp/clean.err"
fi
audit_tree clean-j1 0 -j1 "$tree"
ran_j1=$?
if audit_tree clean-j4 0 -j4 "$tree" && [ "$ran_j1" = 0 ]; then
	check "clean: -j1 and -j4 print the same" cmp "$tmp/clean-j1.out" "$tmp/clean-j4.out"
fi
if audit_tree verbose 0 -v -j3 "$tree"; then
	check "verbose: a line per image, in path order, each naming its image" sh -c "
		[ \$(grep -c ': x86_64 ' '$tmp/verbose.out') -eq $nimg ] &&
		grep ': x86_64 ' '$tmp/verbose.out' | cut -d: -f1 >'$tmp/order' && sort -c '$tmp/order' &&
		grep -q 'drivers/b/three.ko.xz: x86_64 object: 6 sites' '$tmp/verbose.out' &&
		grep -q 'fs/four.ko.zst: x86_64 object: 6 sites' '$tmp/verbose.out' &&
		grep -q 'drivers/a/two.ko.gz: x86_64 object: 6 sites' '$tmp/verbose.out'"
fi

# --- one module damaged: its first entry moved by one byte -----------------------
cp -r "$tree" "$tmp/bad"
python3 "$here/mcountrel.py" shift "$tmp/bad/lib/modules/6.12.0-test/kernel/fs/five.ko" ||
	not_ok "damage the table"
if audit_tree damaged 1 "$tmp/bad"; then
	check "damaged: the module is named, with a stale entry and its missing site" sh -c "
		grep -q '^$tmp/bad/lib/modules/6.12.0-test/kernel/fs/five.ko: stale: ' '$tmp/damaged.out' &&
		grep -q '^$tmp/bad/lib/modules/6.12.0-test/kernel/fs/five.ko: missing: ' '$tmp/damaged.out' &&
		! grep -v '/fs/five.ko: \|^total: ' '$tmp/damaged.out'"
	check "damaged: the total counts every image and the one with findings" \
		grep -qx "total: $nimg images: $((nimg - 1)) clean, 1 with findings (1 stale, 1 missing), 0 could not be read" \
		"$tmp/damaged.out"
fi
audit_tree ignored 0 --ignore=stale,missing "$tmp/bad" &&
	check "--ignore=stale,missing: exit 0, and the total says what was ignored" \
		grep -qx "total: $nimg images: $nimg clean, 0 with findings, 0 could not be read; ignored: 1 stale, 1 missing" \
		"$tmp/ignored.out"
audit_tree ignored-one 1 --ignore=missing "$tmp/bad" &&
	check "--ignore=missing: the stale entry still fails the run" grep -q "five.ko: stale: " "$tmp/ignored-one.out"
if ps_run -e "$tmp/bogus.err" 2 "$tmp/bogus.out" -- audit --ignore=bogus "$tmp/bad"; then
	check "--ignore=bogus: a usage error, exit 2" grep -q 'ignore' "$tmp/bogus.err"
else
	not_ok "--ignore=bogus: a usage error, exit 2" "$ps_msg"
fi

# --- an unreadable image among them ----------------------------------------------
cp -r "$tree" "$tmp/unr"
head -c 1000 "$kdir/fs/five.ko" >"$tmp/unr/lib/modules/6.12.0-test/kernel/fs/five.ko"
printf 'not ELF\n' | xz >"$tmp/unr/lib/modules/6.12.0-test/kernel/fs/six.ko.xz"
if audit_tree unreadable 2 "$tmp/unr"; then
	check "unreadable: each named on stderr in one line" sh -c "[ \$(wc -l <'$tmp/unreadable.err') -eq 2 ] &&
		grep -q '^patchsite: $tmp/unr/lib/modules/6.12.0-test/kernel/fs/five.ko: ' '$tmp/unreadable.err' &&
		grep -q '^patchsite: $tmp/unr/lib/modules/6.12.0-test/kernel/fs/six.ko.xz: ' '$tmp/unreadable.err'"
	check "unreadable: a file cut before its section headers says so, not 'no section headers'" \
		grep -q 'five.ko: is truncated: the section header table at offset 0x[0-9a-f]* lies past the end of the file (1000 bytes)' \
		"$tmp/unreadable.err"
	check "unreadable: the others still audited, and the total says so" \
		grep -qx "total: $((nimg + 1)) images: $((nimg - 1)) clean, 0 with findings, 2 could not be read" \
		"$tmp/unreadable.out"
fi

# --- a module's table in descending order is sorted by the kernel at load ----------
cp "$kdir/drivers/a/one.ko" "$tmp/rev.ko"
python3 "$here/mcountrel.py" reverse "$tmp/rev.ko" || not_ok "reverse the table"
readelf -rW "$tmp/rev.ko" | grep -A7 "'.rela__mcount_loc'" | awk '/R_X86_64_64/ { print $5 $6 $7 }' >"$tmp/rev.order"
check "oracle: the module's table now descends (readelf)" sh -c "! sort -c '$tmp/rev.order' 2>/dev/null"
audit_tree module-order 0 "$tmp/rev.ko" &&
	check "module-order: no 'unsorted' finding" sh -c "! grep -q unsorted: '$tmp/module-order.out'"

# --- JSON ---------------------------------------------------------------------------
audit_tree json 1 --format=json "$tmp/bad" &&
	check "json: schema 1, an entry per image with path and status, the total" python3 - "$tmp/json.out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1, d.get("schema")
imgs = d["images"]
assert len(imgs) == 6, len(imgs)
assert [i["path"] for i in imgs] == sorted(i["path"] for i in imgs)
bad = [i for i in imgs if i["status"] == 1]
assert len(bad) == 1 and bad[0]["path"].endswith("/fs/five.ko"), bad
assert bad[0]["audit"]["summary"]["stale"] == 1 and bad[0]["audit"]["summary"]["missing"] == 1
assert d["total"] == {"images": 6, "clean": 5, "with_findings": 1, "unreadable": 0}, d["total"]
EOF

check "json: record, audit and a batch audit have exactly the fields doc/patchsite.md documents (doc/man/patchsite.1)" \
	python3 "$here/json-schema.py" "$PATCHSITE" "$root/doc/man/patchsite.1" \
	"$root/fixtures/out/aarch64-callops-bti/exec" "$root/fixtures/out/x86_64-fentry-cet/lib.o"

# --- a misaligned site that record --in-place left out is one finding ---------------
cp "$root/fixtures/out/aarch64-callops-bti/exec" "$tmp/callops"
if ps_run -e "$tmp/callops.err" 0 /dev/null -- record --in-place -v "$tmp/callops"; then
	check "misaligned: record --in-place -v exits 0 and says it left a misaligned site out" \
		grep -q '1 misaligned sites left out' "$tmp/callops.err"
else
	not_ok "misaligned: record --in-place -v exits 0 and says it left a misaligned site out" "$ps_msg"
fi
audit_tree misaligned 1 "$tmp/callops" &&
	check "misaligned: one finding (misaligned), not also missing" \
		grep -qx "summary: 1 misaligned, 0 stale, 0 missing, 0 duplicate, 0 short, 0 unsorted, 0 shifted" \
	"$tmp/misaligned.out"

# --- a module with sites and no table --------------------------------------------------
gcc $KFLAGS -mno-record-mcount -c -o "$tmp/notable.ko" "$tmp/mod.c" || die "cannot compile notable.ko"
check "oracle: no __mcount_loc in it (readelf)" sh -c "! readelf -SW '$tmp/notable.ko' | grep -q __mcount_loc"
audit_tree notable 1 "$tmp/notable.ko" &&
	check "notable: says there is no table, that this is an error for a module" sh -c "
		grep -q 'no table (.*): an error for a module' '$tmp/notable.out' &&
		grep -q '^missing: .*the module has 6 sites and no __mcount_loc' '$tmp/notable.out'"

finish
