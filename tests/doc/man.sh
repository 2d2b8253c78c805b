#!/bin/sh
# tests/doc/man.sh - the committed man pages are what doc/'s pages make, and
# man renders each without a warning.
#
# Strategy: convert every doc/patchsite*.md again with doc/md2man.py into a
# scratch directory and compare byte for byte with doc/man/ (a page edited
# without `make man` fails here); then let man(1) (groff) format each
# committed page with its warnings on: any warning is a failure.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/e2e/lib.sh"
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ps_init "$t"
version=$(sed -n 's/^VERSION *:= *//p' "$top/Makefile")
n=0
for f in "$top"/doc/patchsite*.md; do
	b=$(basename "$f" .md)
	s=$(sed -n '1s/.*(\([0-9]\)).*/\1/p' "$f")
	page=$top/doc/man/$b.$s
	n=$((n + 1))
	if ! python3 "$top/doc/md2man.py" "$f" "$version" > "$t/$b.$s" 2> "$t/err"; then
		not_ok "$b: md2man.py failed" "$t/err"; continue
	fi
	if cmp -s "$t/$b.$s" "$page"; then ok "$b.$s is current"
	else diff "$page" "$t/$b.$s" > "$t/diff" 2>&1; not_ok "$b.$s differs from its page (run make man)" "$t/diff"; fi
	if MANWIDTH=80 man --warnings -l "$page" > "$t/out" 2> "$t/warn" && [ ! -s "$t/warn" ] &&
		grep -q NAME "$t/out"; then
		ok "$b.$s renders without warnings"
	else
		not_ok "$b.$s: man warns" "$t/warn"
	fi
done
# every page has its man page, and no man page is left without its page
for m in "$top"/doc/man/*.[0-9]; do
	b=$(basename "$m"); b=${b%.*}
	if [ -f "$top/doc/$b.md" ]; then ok "$b: made from doc/$b.md"
	else not_ok "doc/man/$(basename "$m") has no page doc/$b.md"; fi
done
[ "$n" -ge 9 ] && ok "$n pages" || not_ok "only $n pages"
finish
