#!/bin/sh
# tests/e2e/cli.sh - the command line as kernel people's tools have it:
# each command's own --help, -o - for standard output, silence on success
# (--verbose for the report), usage errors in one line that points at the
# help, and conflicting options refused.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/cli.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
ok() { pass=$((pass + 1)); echo "ok - $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $1"; [ -s "$tmp/msg" ] && sed 's/^/#   /' "$tmp/msg" | head -n 20; }
# run NAME WANT-STATUS ARGS...: patchsite ARGS, stdout in $tmp/out, stderr in $tmp/err
run() {
	_n=$1 _want=$2
	shift 2
	(cd "$tmp" && "$PATCHSITE" "$@") >"$tmp/out" 2>"$tmp/err"
	_rc=$?
	{ echo "exit $_rc (want $_want)"; echo "stderr:"; cat "$tmp/err"; } >"$tmp/msg"
	if [ "$_rc" -eq "$_want" ]; then ok "$_n: exit $_want"; else not_ok "$_n: exit $_want"; fi
}
check() { _n=$1; shift; if "$@" >"$tmp/msg" 2>&1; then ok "$_n"; else not_ok "$_n"; fi; }

img=$root/fixtures/minikernel/out/x86_64.elf
obj=$root/fixtures/out/aarch64-callops/lib.o
[ -f "$img" ] && [ -f "$obj" ] || { echo "fixtures missing (make fixtures)"; echo "0 passed, 1 failed"; exit 1; }
objdump -d "$img" | grep -c 'call.*<__fentry__>' >"$tmp/nsites"

for c in record audit pin repad embed; do
	run "$c --help" 0 "$c" --help
	check "$c --help: that command's help, not the others'" sh -c "
		grep -q '^  $c ' '$tmp/out' && [ \$(grep -c '^  [a-z]* [A-Z]' '$tmp/out') -eq 1 ] &&
		[ \$(wc -l <'$tmp/out') -lt 25 ]"
done
run "--help" 0 --help
check "--help: every command" sh -c "for c in record audit pin repad embed; do grep -q \"^  \$c \" '$tmp/out' || exit 1; done"

run "record" 0 record "$img"
check "record: the list on stdout (objdump's count), nothing on stderr" sh -c "
	[ \$(wc -l <'$tmp/out') -eq \$(cat '$tmp/nsites') ] && [ ! -s '$tmp/err' ]"
run "record -v" 0 record -v "$img"
check "record -v: one report line on stderr, not in the form of an error" sh -c "
	[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q '^$img: x86_64 image: ' '$tmp/err'"
run "record -o -" 0 record -o - "$img"
check "record -o -: the list on stdout, no file named '-'" sh -c "
	[ \$(wc -l <'$tmp/out') -eq \$(cat '$tmp/nsites') ] && [ ! -e '$tmp/-' ]"
run "record --format=json -o -" 0 record --format=json -o - "$img"
check "record --format=json -o -: JSON on stdout" python3 -c "import json,sys; json.load(open('$tmp/out'))"
cp "$img" "$tmp/img"
run "record --in-place" 0 record --in-place "$tmp/img"
check "record --in-place: silent" sh -c "[ ! -s '$tmp/out' ] && [ ! -s '$tmp/err' ]"
run "record --in-place -o -" 2 record --in-place -o - "$tmp/img"
check "record --in-place -o -: refused in one line, no file named '-'" sh -c "
	[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -e '$tmp/-' ]"
run "repad -o -" 2 repad "$obj" -o -
check "repad -o -: refused in one line, no file named '-'" sh -c "
	[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -e '$tmp/-' ]"
run "repad -o" 0 repad "$obj" -o "$tmp/pad.o"
check "repad: silent on success" sh -c "[ ! -s '$tmp/out' ] && [ ! -s '$tmp/err' ] && [ -s '$tmp/pad.o' ]"
run "repad -v" 0 repad -v "$obj" -o "$tmp/pad.o"
check "repad -v: the report line" grep -q ': padded [0-9]* functions' "$tmp/out"

run "record --symbolize --format=json" 2 record --symbolize --format=json "$img"
check "record --symbolize --format=json: refused in one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] &&
	grep -q 'symbolize' '$tmp/err' && [ ! -s '$tmp/out' ]"
run "unknown option" 2 record --bogus "$img"
check "unknown option: one line naming it and pointing at the command's help" sh -c "
	[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"'--bogus'\" '$tmp/err' &&
	grep -q \"see 'patchsite record --help'\" '$tmp/err'"
run "missing argument" 2 audit "$img" -j
check "missing argument: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"'-j'\" '$tmp/err'"
run "no image" 2 audit
check "no image: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ]"
run "two layouts stated" 2 record --calls --nop-mcount "$img"
check "two layouts stated: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ]"
run "unknown command" 2 frobnicate
check "unknown command: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"see 'patchsite --help'\" '$tmp/err'"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
