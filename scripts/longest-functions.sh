#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# longest-functions.sh: the length in lines of every C function, longest
# first, as issue 27 counts them (Universal Ctags: a function's line to its
# end line, both included).
#
#   sh scripts/longest-functions.sh [DIR|FILE...]    (default: the product's sources)
#   sh scripts/longest-functions.sh | head -10
#
# Prints `LINES FILE:LINE NAME`, one function a line.
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- base arch elfio recordsites rewriter runtime trace patchsite.c
ctags -R --languages=C --kinds-C=f --fields=+ne -o - "$@" |
awk -F'\t' '{
	n = ""; e = ""
	for (i = 4; i <= NF; i++) {
		if ($i ~ /^line:/) n = substr($i, 6)
		if ($i ~ /^end:/) e = substr($i, 5)
	}
	if (n != "" && e != "") print e - n + 1, $2 ":" n, $1
}' | sort -k1,1nr -k2,2
