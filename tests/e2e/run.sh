#!/bin/sh
# End-to-end tests of `patchsite record` on the fixtures of fixtures/ (built
# with the real compilers for x86_64, aarch64 and riscv64, one directory per
# flavour, see fixtures/Makefile) against oracles that are not patchsite
# (tests/e2e/oracle.py: the linker's __patchable_function_entries, the
# compiler's __mcount_loc, objdump's disassembly).
#
#   make -C fixtures && PATCHSITE=/path/to/patchsite sh tests/e2e/run.sh
#
# For every fixture image:
#   features   the fixture has what it claims (BTI, PAC, ENDBR64, GOT calls,
#              relaxed jal, misaligned CALL_OPS slots, weak leftover, aliases)
#   oracle     oracle.py's ELF reader agrees with readelf
#   run        the program prints expected-output.txt (natively or qemu-user)
#   record     `record IMAGE` equals the oracle exactly: none missing, none extra
#   symbolize  `record --symbolize`: FUNC+0xOFF and FLAVOUR of every site
#   json       `record --format=json` parses and matches
#   asm, elf   `record --format=asm|elf -o F`: the table is linked into a second
#              link of the fixture (linked images: the fixture's own link command
#              plus the table object; ET_REL: `ld -r -o OUT table.o IMAGE`), its
#              __mcount_loc is read back and compared; the relinked program runs
#   elflint    eu-elflint --gnu-ld accepts the --format=elf object
# Then bad input: not ELF, truncated at each header boundary, ELF32,
# big-endian, another machine, a symbol table outside the file: exit 2, one
# line `patchsite: FILE...` on stderr, nothing on stdout, no output file.
#
# Prints `ok - NAME` / `not ok - NAME` per case and `N passed, M failed`.
# A missing tool is a failure, never a skip.  E2E_FILTER=STRING limits the
# fixture images to those whose name contains STRING (for development).

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/out
expected_output=$root/fixtures/expected-output.txt
oracle=$here/oracle.py
check=$here/check.py
filter=${E2E_FILTER:-}
# Debian's python3 (a version manager's shim in PATH costs 0.3 s a call)
if [ -n "${PYTHON3:-}" ]; then
	py=$PYTHON3
elif [ -x /usr/bin/python3 ]; then
	py=/usr/bin/python3
else
	py=python3
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-e2e.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"

# ---------------------------------------------------------------- tools
ps_need_patchsite

for tool in python3 gcc as ld objdump readelf aarch64-linux-gnu-gcc aarch64-linux-gnu-as \
	aarch64-linux-gnu-ld aarch64-linux-gnu-objdump aarch64-linux-gnu-readelf \
	riscv64-linux-gnu-gcc riscv64-linux-gnu-as riscv64-linux-gnu-ld \
	riscv64-linux-gnu-objdump riscv64-linux-gnu-readelf qemu-aarch64 qemu-riscv64 eu-elflint; do
	if command -v "$tool" >/dev/null 2>&1; then
		ok "tool $tool"
	else
		not_ok "tool $tool (install it: sh scripts/install-deps.sh)"
	fi
done

metas=$(ls "$fix"/*/*.meta 2>/dev/null)
if [ -z "$metas" ]; then
	not_ok "fixtures built (run make -C fixtures)"
	finish
fi
ok "fixtures built"

meta_get() { # meta_get IMAGE KEY
	sed -n "s/^$2=//p" "$1.meta"
}

run_prog() { # run_prog IMAGE PROGRAM OUT
	r=$(meta_get "$1" run)
	if [ "$r" = native ]; then
		"$2" >"$3" 2>&1
	else
		$r "$2" >"$3" 2>&1
	fi
}

# ---------------------------------------------------------------- fixtures
for m in $metas; do
	img=${m%.meta}
	name=${img#"$fix"/}
	case $name in *"$filter"*) ;; *) continue ;; esac
	t=$tmp/work
	rm -rf "$t"
	mkdir -p "$t"
	type=$(meta_get "$img" type)
	objdump=$(meta_get "$img" objdump)
	asm=$(echo "$objdump" | sed 's/objdump$/as/')
	ld=$(meta_get "$img" ld)

	if ! $py "$oracle" --detail "$img" >"$t/detail.json" 2>"$t/err"; then
		not_ok "oracle $name" "$t/err"
		continue
	fi
	# at least one site: one `"site":` key (each entry of "sites" has one,
	# nothing else is named so); a Python start per fixture read it before
	if ! grep -q '"site":' "$t/detail.json"; then
		not_ok "oracle $name (no sites)"
		continue
	fi
	if $py "$oracle" --selfcheck "$img" >"$t/msg" 2>&1; then
		ok "oracle $name"
	else
		not_ok "oracle $name" "$t/msg"
	fi

	if $py "$check" features "$img" "$t/detail.json" >"$t/msg" 2>&1; then
		ok "features $name"
	else
		not_ok "features $name" "$t/msg"
	fi

	if [ "$type" != REL ]; then
		if run_prog "$img" "$img" "$t/run.out" && cmp -s "$t/run.out" "$expected_output"; then
			ok "run $name"
		else
			not_ok "run $name" "$t/run.out"
		fi
	fi

	# record
	if ! ps_run 0 "$t/got" -- record "$img"; then
		not_ok "record $name" "$ps_msg"
	elif $py "$check" record "$img" "$t/detail.json" "$t/got" >"$t/msg" 2>&1; then
		ok "record $name"
	else
		not_ok "record $name" "$t/msg"
	fi

	# --symbolize
	if ! ps_run 0 "$t/got" -- record --symbolize "$img"; then
		not_ok "symbolize $name" "$ps_msg"
	elif $py "$check" symbolize "$img" "$t/detail.json" "$t/got" >"$t/msg" 2>&1; then
		ok "symbolize $name"
	else
		not_ok "symbolize $name" "$t/msg"
	fi

	# --format=json (check.py json parses it first: `not JSON: ...` if it
	# does not; a second parse by `python3 -m json.tool` proved nothing more)
	if ! ps_run 0 "$t/got" -- record --format=json "$img"; then
		not_ok "json $name" "$ps_msg"
	elif $py "$check" json "$img" "$t/detail.json" "$t/got" >"$t/msg" 2>&1; then
		ok "json $name"
	else
		not_ok "json $name" "$t/msg"
	fi

	# --format=asm and --format=elf, linked into a second link
	for f in asm elf; do
		rm -f "$t/table.s" "$t/table.o" "$t/relinked" "$t/relinked.o"
		st=0
		if [ $f = asm ]; then
			if ps_run 0 "$t/got" -- record --format=asm -o "$t/table.s" "$img"; then
				$asm -o "$t/table.o" "$t/table.s" >"$ps_msg" 2>&1 ||
					{ echo "the assembler rejected it" >>"$ps_msg"; st=1; }
			else
				st=1
			fi
		else
			ps_run 0 "$t/got" -- record --format=elf -o "$t/table.o" "$img" || st=1
		fi
		if [ $st -ne 0 ] || [ ! -s "$t/table.o" ]; then
			[ $st -ne 0 ] || echo "exit status 0 and no table object" >"$ps_msg"
			not_ok "$f $name" "$ps_msg"
			[ $f = elf ] && not_ok "elflint $name (no object)"
			continue
		fi
		if [ $f = elf ]; then
			if eu-elflint --gnu-ld "$t/table.o" >"$t/msg" 2>&1; then
				ok "elflint $name"
			else
				not_ok "elflint $name" "$t/msg"
			fi
		fi
		if [ "$type" = REL ]; then
			# the contract: table object first, each input section at offset 0
			if ! $ld -r -o "$t/relinked.o" "$t/table.o" "$img" >"$t/msg" 2>&1; then
				not_ok "$f $name (ld -r failed)" "$t/msg"
			elif $py "$check" readback "$img" "$t/detail.json" "$t/table.o" \
				"$t/relinked.o" >"$t/msg" 2>&1; then
				ok "$f $name"
			else
				not_ok "$f $name" "$t/msg"
			fi
		else
			# the fixture's own link, the table object last
			if ! sh -c "$(cat "$img.link") '$t/table.o' -o '$t/relinked'" >"$t/msg" 2>&1; then
				not_ok "$f $name (second link failed)" "$t/msg"
			elif ! $py "$check" readback "$img" "$t/detail.json" "$t/table.o" \
				"$t/relinked" >"$t/msg" 2>&1; then
				not_ok "$f $name" "$t/msg"
			elif ! run_prog "$img" "$t/relinked" "$t/run.out" ||
				! cmp -s "$t/run.out" "$expected_output"; then
				not_ok "$f $name (relinked program does not run)" "$t/run.out"
			else
				ok "$f $name"
			fi
		fi
	done
done

# ---------------------------------------------------------------- bad input
bad=$tmp/bad
mkdir -p "$bad"

# expect_bad NAME FILE: exit 2, one line `patchsite: ...FILE...` on stderr,
# nothing on stdout, no output file for --format=elf -o
expect_bad() {
	ps_run -e "$bad/err" 2 "$bad/out" -- record "$2"
	rc=$ps_rc
	nl=$(wc -l <"$bad/err")
	last=$(tail -c 1 "$bad/err" | od -An -c | tr -d ' ')
	first=$(head -n 1 "$bad/err")
	why=""
	[ $rc -eq 2 ] || why="exit status $rc, expected 2"
	[ -s "$bad/out" ] && why="$why; stdout not empty"
	{ [ "$nl" -eq 1 ] && [ "$last" = '\n' ]; } || why="$why; stderr is not exactly one line"
	case $first in "patchsite: "*) ;; *) why="$why; stderr does not start with 'patchsite: '" ;; esac
	case $first in *"$2"*) ;; *) why="$why; stderr does not name the file" ;; esac
	if [ -z "$why" ]; then
		rm -f "$bad/table.o"
		ps_run 2 /dev/null -- record --format=elf -o "$bad/table.o" "$2" ||
			why="--format=elf -o: exit status $ps_rc, expected 2"
		[ -e "$bad/table.o" ] && why="$why; --format=elf -o wrote an output file"
	fi
	if [ -z "$why" ]; then
		ok "bad input $1"
	else
		{
			echo "$why"
			echo "stderr:"
			head -c 600 "$bad/err"
			echo "stdout:"
			head -c 300 "$bad/out"
		} >"$bad/msg"
		not_ok "bad input $1" "$bad/msg"
	fi
}

printf 'this is not an ELF file\n' >"$bad/notelf"
expect_bad "not-elf" "$bad/notelf"
: >"$bad/empty"
expect_bad "empty" "$bad/empty"
printf '\177EL' >"$bad/magic3"
expect_bad "three-bytes-of-magic" "$bad/magic3"
expect_bad "missing-file" "$bad/does-not-exist"

for base in x86_64-fentry/exec aarch64-callops-bti/pie riscv64-mcount/vmlinux.o; do
	src=$fix/$base
	tag=$(echo "$base" | tr '/' '-')
	if [ ! -f "$src" ]; then
		not_ok "bad input base $base (fixture missing)"
		continue
	fi
	kinds="trunc-ident trunc-ehdr trunc-ehsize trunc-shdrs trunc-mid-shdr trunc-last-shdr
	       trunc-symtab trunc-mid-symtab bigendian-flip machine-20 machine-22
	       symtab-offset-outside symtab-size-outside symtab-offset-wraps shoff-outside"
	[ "$(meta_get "$src" type)" != REL ] && kinds="$kinds trunc-mid-phdr trunc-last-phdr"
	for k in $kinds; do
		if $py "$check" mkbad "$k" "$src" "$bad/$tag-$k" >"$bad/msg" 2>&1; then
			expect_bad "$k $base" "$bad/$tag-$k"
		else
			not_ok "bad input $k $base (could not make it)" "$bad/msg"
		fi
	done
done

# a real ELF32 object and a crafted one
printf 'int f(int x) { return x + 1; }\n' >"$bad/e32.c"
if gcc -m32 -c -o "$bad/elf32.o" "$bad/e32.c" >"$bad/msg" 2>&1; then
	expect_bad "elf32-gcc-m32" "$bad/elf32.o"
else
	not_ok "bad input elf32-gcc-m32 (gcc -m32 -c failed)" "$bad/msg"
fi
$py "$check" mkbad elf32-crafted - "$bad/elf32-crafted.o"
expect_bad "elf32-crafted" "$bad/elf32-crafted.o"

# a real big-endian ELF64 object (aarch64_be)
printf '\t.text\n\t.globl f\n\t.type f, %%function\nf:\n\tnop\n\tret\n\t.size f, .-f\n' >"$bad/be.s"
if aarch64-linux-gnu-as -EB -o "$bad/be.o" "$bad/be.s" >"$bad/msg" 2>&1; then
	expect_bad "bigendian-aarch64_be" "$bad/be.o"
else
	not_ok "bad input bigendian-aarch64_be (as -EB failed)" "$bad/msg"
fi

finish
