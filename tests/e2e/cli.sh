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
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"
# run, then_check: tests/e2e/lib.sh (patchsite in $tmp, its output read
# only when it exited as it should)

img=$root/fixtures/minikernel/out/x86_64.elf
obj=$root/fixtures/out/aarch64-callops/lib.o
[ -f "$img" ] && [ -f "$obj" ] || { not_ok "fixtures missing (make fixtures)"; finish; }
objdump -d "$img" | grep -c 'call.*<__fentry__>' >"$tmp/nsites"

for c in record audit pin repad embed; do
	run "$c --help" 0 "$c" --help
	then_check "$c --help: that command's help, not the others'" sh -c "
		grep -q '^  $c ' '$tmp/out' && [ \$(grep -c '^  [a-z]* [A-Z]' '$tmp/out') -eq 1 ] &&
		[ \$(wc -l <'$tmp/out') -lt 25 ]"
done
run "--help" 0 --help
then_check "--help: every command" sh -c "for c in record audit pin repad embed; do grep -q \"^  \$c \" '$tmp/out' || exit 1; done"

run "record" 0 record "$img"
then_check "record: the list on stdout (objdump's count), nothing on stderr" sh -c "
	[ \$(wc -l <'$tmp/out') -eq \$(cat '$tmp/nsites') ] && [ ! -s '$tmp/err' ]"
run "record -v" 0 record -v "$img"
then_check "record -v: one report line on stderr, not in the form of an error" sh -c "
	[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q '^$img: x86_64 image: ' '$tmp/err'"
run "record -o -" 0 record -o - "$img"
then_check "record -o -: the list on stdout, no file named '-'" sh -c "
	[ \$(wc -l <'$tmp/out') -eq \$(cat '$tmp/nsites') ] && [ ! -e '$tmp/-' ]"
run "record --format=json -o -" 0 record --format=json -o - "$img"
then_check "record --format=json -o -: JSON on stdout" python3 -c "import json,sys; json.load(open('$tmp/out'))"
cp "$img" "$tmp/img"
run "record --in-place" 0 record --in-place "$tmp/img"
then_check "record --in-place: silent" sh -c "[ ! -s '$tmp/out' ] && [ ! -s '$tmp/err' ]"
run "record --in-place -o -" 2 record --in-place -o - "$tmp/img"
then_check "record --in-place -o -: refused in one line, no file named '-'" sh -c "
	[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -e '$tmp/-' ]"
run "repad -o -" 2 repad "$obj" -o -
then_check "repad -o -: refused in one line, no file named '-'" sh -c "
	[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -e '$tmp/-' ]"
run "repad -o" 0 repad "$obj" -o "$tmp/pad.o"
then_check "repad: silent on success" sh -c "[ ! -s '$tmp/out' ] && [ ! -s '$tmp/err' ] && [ -s '$tmp/pad.o' ]"
run "repad -v" 0 repad -v "$obj" -o "$tmp/pad.o"
then_check "repad -v: the report line" grep -q ': padded [0-9]* functions' "$tmp/out"

run "record --symbolize --format=json" 2 record --symbolize --format=json "$img"
then_check "record --symbolize --format=json: refused in one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] &&
	grep -q 'symbolize' '$tmp/err' && [ ! -s '$tmp/out' ]"
run "unknown option" 2 record --bogus "$img"
then_check "unknown option: one line naming it and pointing at the command's help" sh -c "
	[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"'--bogus'\" '$tmp/err' &&
	grep -q \"see 'patchsite record --help'\" '$tmp/err'"
run "missing argument" 2 audit "$img" -j
then_check "missing argument: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"'-j'\" '$tmp/err'"
run "no image" 2 audit
then_check "no image: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ]"
run "two layouts stated" 2 record --calls --nop-mcount "$img"
then_check "two layouts stated: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ]"
run "unknown command" 2 frobnicate
then_check "unknown command: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"see 'patchsite --help'\" '$tmp/err'"

finish
