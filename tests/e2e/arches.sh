#!/bin/sh
# tests/e2e/arches.sh - the capability matrix: `patchsite arches` against
# doc/patchsite-arches.md's table (either changing alone fails), the
# matrix against what the commands do on each architecture's fixtures (a
# `no` is the one-line refusal with nothing written, a `yes` runs: repad's
# x86_64 output compared byte for byte with cmp), and a machine no row names
# refused with the table's architectures.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/arches.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-arches.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"
# every run: patchsite in $tmp, stdout in $tmp/out, stderr in $tmp/err; its
# output read only when it exited as it should

fx=$root/fixtures/out
mk=$root/fixtures/minikernel/out
# Each architecture's fixtures, one line each: its row in the table, its name
# in fixtures/arches.mk, a fixtures/out directory with lib.o and exec (for
# embed, a CALL_OPS build), and a minikernel image with its own table.
cat >"$tmp/fixtures" <<EOF
x86_64 x86_64 x86_64-fentry x86_64
arm64 aarch64 aarch64-callops aarch64
riscv64 riscv64 riscv64-callops-c riscv64-norelax
powerpc64le powerpc64le powerpc64le-mprofile powerpc64le
EOF
while read -r a f d k; do
	[ -f "$fx/$d/lib.o" ] && [ -f "$fx/$d/exec" ] && [ -f "$mk/$k.elf" ] ||
		{ not_ok "fixtures missing (make fixtures)"; finish; }
done <"$tmp/fixtures"
# every architecture the fixtures are built for is checked below
arch_var ARCHES | tr ' ' '\n' | sed '/^$/d' | sort >"$tmp/mk-arches"
awk '{print $2}' "$tmp/fixtures" | sort >"$tmp/our-arches"
check "every architecture of fixtures/arches.mk has its line here" \
	diff -u "$tmp/mk-arches" "$tmp/our-arches"

# --- the table, and doc/patchsite-arches.md's copy of it -----------------------
awk '/^```sh run$/ {blk = 1; next} blk && /^```$/ {exit} blk && !/^\$ / {print}' \
	"$root/doc/patchsite-arches.md" >"$tmp/readme"
: >"$tmp/matrix"
if ps_check "arches: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/matrix" -- arches; then
	check "arches: nothing on stderr" sh -c "[ ! -s '$tmp/err' ]"
	check "doc/patchsite-arches.md's table is what 'patchsite arches' prints" \
		diff -u "$tmp/readme" "$tmp/matrix"
fi
check "arches: a header of the commands, then rows of yes/no, no trailing blanks" sh -c "
	head -n 1 '$tmp/matrix' | grep -qx 'arch  *record  *audit  *in-place  *repad  *pin  *embed  *runtime' &&
	[ \$(wc -l <'$tmp/matrix') -ge 4 ] && ! grep -q ' \$' '$tmp/matrix' &&
	tail -n +2 '$tmp/matrix' | awk 'NF != 8 { exit 1 } { for (i = 2; i <= 8; i++)
		if (\$i != \"yes\" && \$i != \"no\") exit 1 }'"
tail -n +2 "$tmp/matrix" | awk '{print $1}' >"$tmp/names"
# "a, b and c", as the unsupported-machine line lists them
list=$(awk '{ n[NR] = $0 } END { for (i = 1; i <= NR; i++)
	printf "%s%s", (i == 1 ? "" : i == NR ? " and " : ", "), n[i] }' "$tmp/names")
if ps_check "--version: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- --version; then
	check "--version: the table's architectures" sh -c "
		grep -qx \"architectures: $(tr '\n' ',' <"$tmp/names" | sed 's/,$//; s/,/, /g') ('patchsite arches' lists what each supports)\" '$tmp/out'"
fi
if ps_check "arches --help: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- arches --help; then
	check "arches --help: its own help" sh -c "grep -q '^  arches ' '$tmp/out' && ! grep -q '^  record ' '$tmp/out'"
fi
if ps_check "--help: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- --help; then
	check "--help: arches among the commands" grep -q '^  arches ' "$tmp/out"
fi
if ps_check "arches EXTRA: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- arches extra; then
	check "arches EXTRA: one line" sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -s '$tmp/out' ]"
fi

# --- the matrix against the commands ------------------------------------------
# cell ARCH COLUMN: yes or no, from the table
cell() {
	awk -v a="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == a { print $(col[c]) }' "$tmp/matrix"
}
# refused NAME FILE OUT COMMAND-WORDS ARCH ARGS...: one line, exit 2, OUT not
# written; returns 1 when the run did not exit 2
refused() {
	_n=$1 _f=$2 _o=$3 _c=$4 _a=$5
	shift 5
	rm -f "$_o"
	ps_check "$_n: refused: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- "$@" || return 1
	check "$_n: the one line naming $_c and $_a, nothing written" sh -c "
		[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -e '$_o' ] && grep -qxF \"patchsite: $_f: $_c is not \
supported on $_a (patchsite arches lists what each architecture supports)\" '$tmp/err'"
	return 0
}
while read -r a f d k; do
	d=$fx/$d k=$mk/$k.elf
	check "$a: a row of the table" grep -qx "$a" "$tmp/names"
	for c in record audit in-place repad pin embed; do
		v=$(cell "$a" "$c")
		case "$c:$v" in
		record:yes) ps_check "$a record: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- record "$d/lib.o" &&
			check "$a record: sites listed" test -s "$tmp/out" ;;
		record:no) refused "$a record" "$d/lib.o" "$tmp/none" record "$a" record "$d/lib.o" ;;
		audit:yes) ps_check "$a audit: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- audit "$k" ;;
		audit:no) refused "$a audit" "$k" "$tmp/none" audit "$a" audit "$k" ;;
		in-place:yes) rm -f "$tmp/ip"
			ps_check "$a record --in-place: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- record --in-place -o "$tmp/ip" "$k" &&
			check "$a record --in-place: written" test -s "$tmp/ip" ;;
		in-place:no) refused "$a record --in-place" "$k" "$tmp/ip" "record --in-place" "$a" \
			record --in-place -o "$tmp/ip" "$k" ;;
		repad:yes) if ! ps_check "$a repad: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- repad "$d/lib.o" -o "$tmp/rp.o"; then
				:
			elif [ "$a" = x86_64 ]; then
				check "$a repad: nothing to pad, the object byte for byte" cmp "$d/lib.o" "$tmp/rp.o"
			else
				check "$a repad: written" test -s "$tmp/rp.o"
			fi ;;
		repad:no) refused "$a repad" "$d/lib.o" "$tmp/rp.o" repad "$a" repad "$d/lib.o" -o "$tmp/rp.o" ;;
		pin:yes) cp "$d/lib.o" "$tmp/pin.o"
			ps_check "$a pin: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- pin "$tmp/pin.o" ;;
		pin:no) cp "$d/lib.o" "$tmp/pin.o"
			refused "$a pin" "$tmp/pin.o" "$tmp/none" pin "$a" pin "$tmp/pin.o" &&
			check "$a pin: the object untouched" cmp "$d/lib.o" "$tmp/pin.o" ;;
		embed:yes) ps_check "$a embed: exit 0" -C "$tmp" -e "$tmp/err" 0 "$tmp/out" -- embed "$d/exec" -o "$tmp/emb" &&
			check "$a embed: written" test -s "$tmp/emb" ;;
		embed:no) refused "$a embed" "$d/exec" "$tmp/emb" embed "$a" embed "$d/exec" -o "$tmp/emb" ;;
		*) echo "no cell for $a $c" >"$tmp/msg"; not_ok "$a $c: yes or no in the table" "$tmp/msg" ;;
		esac
	done </dev/null
done <"$tmp/fixtures"

# --- a machine no row names (SPARC v9, e_machine 43, in an x86_64 object) -----
cp "$fx/x86_64-fentry/lib.o" "$tmp/sparc.o"
printf '\053\000' | dd of="$tmp/sparc.o" bs=1 seek=18 conv=notrunc 2>/dev/null
for c in record audit repad pin embed; do
	rm -f "$tmp/sp.out"
	case $c in
	record|audit|pin) set -- ;;
	*) set -- -o "$tmp/sp.out" ;;
	esac
	ps_check "unknown machine: $c: exit 2" -C "$tmp" -e "$tmp/err" 2 "$tmp/out" -- $c "$tmp/sparc.o" "$@" &&
	check "unknown machine: $c: one line listing the table's architectures" sh -c "
		[ \$(wc -l <'$tmp/err') -eq 1 ] && [ ! -e '$tmp/sp.out' ] &&
		grep -qx \"patchsite: $tmp/sparc.o: unsupported machine .* (e_machine 43); patchsite handles $list\" '$tmp/err'"
done

finish
