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
# every run: patchsite in $tmp, stdout in $tmp/out, stderr in $tmp/err; its
# output read only when it exited as it should

img=$root/fixtures/minikernel/out/x86_64.elf
obj=$root/fixtures/out/aarch64-callops/lib.o
[ -f "$img" ] && [ -f "$obj" ] || { not_ok "fixtures missing (make fixtures)"; finish; }
objdump -d "$img" | grep -c 'call.*<__fentry__>' >"$tmp/nsites"

for c in record audit pin repad embed; do
	if ps_check "$c --help: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- "$c" --help; then
		check "$c --help: that command's help, not the others'" sh -c "
			grep -q '^  $c ' '$tmp/out' && [ \$(grep -c '^  [a-z]* [A-Z]' '$tmp/out') -eq 1 ] &&
			[ \$(wc -l <'$tmp/out') -lt 40 ]"
	fi
done
if ps_check "--help: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- --help; then
	check "--help: every command" sh -c "for c in record audit pin repad embed; do grep -q \"^  \$c \" '$tmp/out' || exit 1; done"
fi

if ps_check "record: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- record "$img"; then
	check "record: the list on stdout (objdump's count), nothing on stderr" sh -c "
		[ \$(wc -l <'$tmp/out') -eq \$(cat '$tmp/nsites') ] && [ ! -s '$tmp/err' ]"
fi
if ps_check "record -v: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- record -v "$img"; then
	check "record -v: one report line on stderr, not in the form of an error" sh -c "
		[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q '^$img: x86_64 image: ' '$tmp/err'"
fi
if ps_check "record -o -: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- record -o - "$img"; then
	check "record -o -: the list on stdout, no file named '-'" sh -c "
		[ \$(wc -l <'$tmp/out') -eq \$(cat '$tmp/nsites') ] && [ ! -e '$tmp/-' ]"
fi
if ps_check "record --format=json -o -: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- record --format=json -o - "$img"; then
	check "record --format=json -o -: JSON on stdout" python3 -c "import json,sys; json.load(open('$tmp/out'))"
fi
cp "$img" "$tmp/img"
if ps_check "record --in-place: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- record --in-place "$tmp/img"; then
	check "record --in-place: silent" sh -c "[ ! -s '$tmp/out' ] && [ ! -s '$tmp/err' ]"
fi
if ps_check "record --in-place -o -: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- record --in-place -o - "$tmp/img"; then
	check "record --in-place -o -: refused in one line, no file named '-'" sh -c "
		[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -e '$tmp/-' ]"
fi
if ps_check "repad -o -: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- repad "$obj" -o -; then
	check "repad -o -: refused in one line, no file named '-'" sh -c "
		[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -e '$tmp/-' ]"
fi
if ps_check "repad -o: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- repad "$obj" -o "$tmp/pad.o"; then
	check "repad: silent on success" sh -c "[ ! -s '$tmp/out' ] && [ ! -s '$tmp/err' ] && [ -s '$tmp/pad.o' ]"
fi
if ps_check "repad -v: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- repad -v "$obj" -o "$tmp/pad.o"; then
	check "repad -v: the report line" grep -q ': padded [0-9]* functions' "$tmp/out"
fi

if ps_check "record --symbolize --format=json: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- record --symbolize --format=json "$img"; then
	check "record --symbolize --format=json: refused in one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] &&
		grep -q 'symbolize' '$tmp/err' && [ ! -s '$tmp/out' ]"
fi
if ps_check "unknown option: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- record --bogus "$img"; then
	check "unknown option: one line naming it and pointing at the command's help" sh -c "
		[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"'--bogus'\" '$tmp/err' &&
		grep -q \"see 'patchsite record --help'\" '$tmp/err'"
fi
if ps_check "missing argument: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- audit "$img" -j; then
	check "missing argument: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"'-j'\" '$tmp/err'"
fi
if ps_check "no image: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- audit; then
	check "no image: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ]"
fi
if ps_check "two layouts stated: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- record --calls --nop-mcount "$img"; then
	check "two layouts stated: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ]"
fi
if ps_check "unknown command: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- frobnicate; then
	check "unknown command: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"see 'patchsite --help'\" '$tmp/err'"
fi

finish
