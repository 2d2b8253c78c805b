#!/bin/sh
# tests/doc/options.sh - every command's page and its --help list the same
# options, and every command `patchsite --help` lists has a page.
#
# Strategy: the options of `patchsite COMMAND --help` are the words that
# begin with '-' in its option column (the lines indented six spaces, up to
# the two-space gap before the text), so that flags quoted in the prose
# (-fpatchable-function-entry) do not count; the page's are the
# backquoted words beginning with '-' at the head of each `- ` item of its
# OPTIONS section (doc/docs.md).  --help, which every command has, is taken
# from both sides alike.  The two sorted lists must be equal.
# usage: PATCHSITE=./patchsite sh tests/doc/options.sh
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/e2e/lib.sh"
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ps_init "$t"
if [ -x "${PATCHSITE:-}" ]; then ok "patchsite: $PATCHSITE"
else not_ok "PATCHSITE is not an executable: '${PATCHSITE:-}'"; finish; fi

help_opts() { # FILE: the option column's words that begin with -
	sed -n 's/^      \(-[^ ].*\)$/\1/p' "$1" | sed 's/  .*//' |
		tr ', ' '\n\n' | sed -n 's/^\(--*[A-Za-z][A-Za-z-]*\).*/\1/p' |
		grep -vx -- --help | sort -u
}
page_opts() { # PAGE: the head of each item of the OPTIONS section
	awk '/^## /{on = ($0 == "## OPTIONS")} on && /^- `/' "$1" |
		sed 's/^- \(\(`[^`]*`[, ]*\)*\).*/\1/' | tr -s ', `' '\n\n\n' |
		sed -n 's/^\(--*[A-Za-z][A-Za-z-]*\).*/\1/p' | grep -vx -- --help | sort -u
}

# the commands `patchsite --help` lists: its lines "  NAME ..." at indent 2
if ps_run 0 "$t/all" -- --help; then
	cmds=$(sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' "$t/all" | sort -u)
	if [ -n "$cmds" ]; then ok "patchsite --help lists commands: $(echo $cmds)"
	else not_ok "patchsite --help lists no command" "$t/all"; fi
else
	not_ok "patchsite --help" "$ps_msg"; cmds=
fi

for c in $cmds; do
	page=$top/doc/patchsite-$c.md
	if [ ! -f "$page" ]; then
		not_ok "$c: no page doc/patchsite-$c.md"; continue
	fi
	ok "$c: has a page"
	if ! ps_run 0 "$t/$c.help" -- "$c" --help; then
		not_ok "$c --help" "$ps_msg"; continue
	fi
	help_opts "$t/$c.help" > "$t/$c.h"
	page_opts "$page" > "$t/$c.p"
	if cmp -s "$t/$c.h" "$t/$c.p"; then
		ok "$c: --help and the page list the same options ($(echo $(cat "$t/$c.h")))"
	else
		diff "$t/$c.h" "$t/$c.p" | sed 's/^</--help only:/; s/^>/page only:/' > "$t/$c.diff"
		not_ok "$c: --help and doc/patchsite-$c.md differ" "$t/$c.diff"
	fi
done
# the general page and the general options
if ps_run 0 "$t/v" -- --version && grep -q '^patchsite ' "$t/v"; then ok "--version"
else not_ok "--version" "$ps_msg"; fi
if grep -q '^- `--version`' "$top/doc/patchsite.md"; then ok "patchsite.md lists --version"
else not_ok "patchsite.md does not list --version"; fi
finish
