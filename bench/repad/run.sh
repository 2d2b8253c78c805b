#!/bin/sh
# Benchmark of `patchsite repad` on a big vmlinux.o-like relocatable object
# (issue 4: "seconds at most"), beside a baseline of comparable work: objcopy
# and `ld -r` of the same object.  Also checks that the output is right.
#
#   sh bench/repad/run.sh   (PATCHSITE=..., FUNCS=40000, FILES=8, RUNS=5, SCALE=4,
#                            PATCHSITE_BEFORE=/path/to/older/patchsite)
#
# 1. gen.py writes FUNCS functions in FILES C files (plus main.c); each is
#    compiled with aarch64-linux-gnu-gcc -Os -g -fpatchable-function-entry=4,2
#    (2 at a time), and `aarch64-linux-gnu-ld -r` combines them into big.o,
#    whose .text has every function, like vmlinux.o.  Cached in
#    bench/out/repad/ while gen.py and the parameters are the same.
#    SCALE renamed copies of big.o, combined with ld -r, give big4.o, a
#    kernel-sized object (160,000 functions, 179 MB), measured the same way.
# 2. RUNS rounds, each running, side by side:
#      patchsite repad big.o -o padded.o
#      aarch64-linux-gnu-objcopy big.o copy.o
#      aarch64-linux-gnu-ld -r big.o -o relinked.o
#      patchsite audit big.o
#    under /usr/bin/time -f '%e %U %S %M'; reports the median wall and CPU
#    time, the largest peak RSS, and the ratios to repad.
#    With PATCHSITE_BEFORE (an older build, e.g. from a `git worktree` of an
#    earlier commit), each round also runs
#      $PATCHSITE_BEFORE repad big.o -o big.padded-before.o
#    in the same rounds (before the new build in odd rounds, after it in
#    even ones, so that neither always gets the warmer cache), and the
#    report adds its row and a `before / after` line (median wall, median
#    CPU, peak RSS; above 1 means the new build is faster or smaller).
#    Its output must be byte-identical to the new one's (cmp): an ok/not ok
#    check like the others, so a change of output is reported, not hidden.
# 3. Checks, for each: eu-elflint --gnu-ld accepts padded.o; big.o has
#    misaligned literals and padded.o none; a static program linked from
#    padded.o (and main.o, repadded too) has no misaligned literal and as many
#    sites as the one linked from big.o, and prints the same under
#    qemu-aarch64.  The literals are counted by tests/e2e/literals.py, from
#    the compiler's and linker's own __patchable_function_entries, not by
#    patchsite; `patchsite audit` must agree (exit 1 and the same count, or
#    exit 0 and none; exit 2 fails), and `patchsite record` (exit 0) must
#    list as many sites as literals.py counts literals.  The program's
#    output is a checksum over every function of copy 0 (main.o calls only
#    those; the other copies are linked, audited and counted, but not run).
# Prints `ok - NAME` / `not ok - NAME` for the checks and exits nonzero if one
# fails.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
CROSS=${CROSS:-aarch64-linux-gnu-}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
FUNCS=${FUNCS:-40000}
FILES=${FILES:-8}
RUNS=${RUNS:-5}
SCALE=${SCALE:-4}
PATCHSITE_BEFORE=${PATCHSITE_BEFORE:-}
CFLAGS_A64="-Os -g -fpatchable-function-entry=4,2"
out=${OUT:-$root/bench/out/repad}
TIME=/usr/bin/time

fail=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; fail=$((fail + 1)); }
check() { name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }

if [ -n "$PATCHSITE_BEFORE" ] && [ ! -x "$PATCHSITE_BEFORE" ]; then
	echo "# PATCHSITE_BEFORE=$PATCHSITE_BEFORE: not an executable" >&2
	exit 2
fi

mkdir -p "$out"
key="$(cat "$here/gen.py" | cksum) $FUNCS $FILES $CFLAGS_A64 $(${CROSS}gcc --version | head -1)"
if [ "$(cat "$out/key" 2>/dev/null)" != "$key" ]; then
	rm -rf "$out/src" "$out"/*.o "$out/key"
	echo "# generating $FUNCS functions in $FILES files"
	python3 "$here/gen.py" "$out/src" --functions "$FUNCS" --files "$FILES" || exit 2
	echo "$key" >"$out/key"
fi
if [ ! -f "$out/big.o" ]; then
	echo "# compiling (2 at a time): ${CROSS}gcc $CFLAGS_A64 -c"
	t0=$(date +%s)
	# Each object is written under a temporary name, so an interrupted run
	# compiles only what is missing.
	(cd "$out/src" && ls *.c) | xargs -P 2 -I{} sh -c \
		"[ -f '$out/src/{}.o' ] || { nice ${CROSS}gcc $CFLAGS_A64 -c '$out/src/{}' -o '$out/src/{}.tmp.o' && mv '$out/src/{}.tmp.o' '$out/src/{}.o'; }" || exit 2
	t1=$(date +%s)
	echo "# compiled in $((t1 - t0)) s"
	objs=""
	k=0
	while [ "$k" -lt "$FILES" ]; do objs="$objs $out/src/f$k.c.o"; k=$((k + 1)); done
	${CROSS}ld -r -o "$out/big.o" $objs || exit 2
	cp "$out/src/main.c.o" "$out/main.o"
else
	echo "# using cached $out/big.o"
fi

# SCALE copies of big.o, renamed apart (cK_ before every fN and fK_tab/fK_n;
# copy 0 keeps its names so that main.o links to it) and combined by ld -r:
# a kernel-sized object without compiling SCALE times as much C.
if [ "$SCALE" -gt 1 ] && { [ ! -f "$out/big$SCALE.o" ] || [ "$out/big$SCALE.o" -ot "$out/big.o" ]; }; then
	echo "# building big$SCALE.o: $SCALE renamed copies of big.o, ld -r"
	${CROSS}nm "$out/big.o" | awk '$3 ~ /^f[0-9]/ { print $3 }' | sort -u >"$out/names"
	copies="$out/big.o"
	k=1
	while [ "$k" -lt "$SCALE" ]; do
		awk -v p="c${k}_" '{ print $1, p $1 }' "$out/names" >"$out/names.$k"
		${CROSS}objcopy --redefine-syms="$out/names.$k" "$out/big.o" "$out/copy$k.o" || exit 2
		copies="$copies $out/copy$k.o"
		k=$((k + 1))
	done
	${CROSS}ld -r -o "$out/big$SCALE.o" $copies || exit 2
	rm -f $(echo "$copies" | sed "s|$out/big.o||")
fi

# One timed command: appends "wall user sys maxrss_kb" to $out/t.NAME.
# Exit status 1 is allowed for audit (it means findings).
timed() {
	name=$1; shift
	$TIME -f '%e %U %S %M' -o "$out/t.one" "$@" >"$out/log.$name" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && ! { [ "$name" = audit ] && [ "$rc" -eq 1 ]; }; then
		echo "# $name failed ($rc):"; tail -n 5 "$out/log.$name"; fail=$((fail + 1))
	fi
	tail -n 1 "$out/t.one" >>"$out/t.$name"
}
# median of column $2 of file $1 (odd RUNS: the middle one)
median() { sort -n -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
cpu() { awk '{ print $2 + $3 }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
rss() { sort -n -k4,4 "$1" | tail -n 1 | awk '{ printf "%.1f", $4 / 1024 }'; }
# literals.py (not patchsite): sets $nmis (misaligned literals) and $nlit (all
# literals) of IMAGE; fails, with its message, when it cannot count.
count_literals() { # IMAGE
	nmis='?' nlit='?'
	_c=$(python3 "$root/tests/e2e/literals.py" counts "$1") || return 1
	set -- $_c
	[ $# -eq 2 ] || return 1
	nmis=$1 nlit=$2
}
has_misaligned() { count_literals "$1" && [ "$nmis" -gt 0 ]; }
none_misaligned() { count_literals "$1" && [ "$nlit" -gt 0 ] && [ "$nmis" -eq 0 ]; }
# patchsite audit IMAGE agrees with literals.py: exit 1 and as many
# `misaligned:` lines, or exit 0 and none; any other status fails.
audit_agrees() { # IMAGE
	count_literals "$1" || return 1
	"$PATCHSITE" audit "$1" >"$out/audit.out" 2>"$out/audit.err"
	_rc=$?
	_got=$(grep -c '^misaligned:' "$out/audit.out")
	_exp=0
	[ "$nmis" -gt 0 ] && _exp=1
	[ "$_rc" -eq "$_exp" ] && [ "$_got" -eq "$nmis" ] || {
		echo "# patchsite audit $1: exit $_rc (want $_exp), $_got misaligned; literals.py: $nmis of $nlit"
		sed -n '1,3s/^/# /p' "$out/audit.err"
		return 1
	}
}
# sites IMAGE: `patchsite record IMAGE` exits 0; its lines in $nsite
sites() {
	nsite='?'
	"$PATCHSITE" record "$1" >"$out/record.out" 2>"$out/record.err" ||
		{ echo "# patchsite record $1: exit $?: $(head -n 1 "$out/record.err")"; return 1; }
	nsite=$(wc -l <"$out/record.out")
}

# bench IN.o: time repad and the baselines on IN.o, then check the output.
bench() {
	in=$1
	b=$(basename "$in" .o)
	padded=$out/$b.padded.o
	before=$out/$b.padded-before.o
	size=$(wc -c <"$in")
	text=$(${CROSS}size -A "$in" | awk '$1 == ".text" { print $2 }')
	count_literals "$in" || notok "literals.py counts the literals of $b.o"
	nrela=$(${CROSS}readelf -rW "$in" | grep -c '^[0-9a-f]\{16\} ')
	nsym=$(${CROSS}readelf -sW "$in" | grep -c '^ *[0-9]*:')
	echo
	echo "## $b.o: $size bytes, .text $text bytes, $nlit sites, $nsym symbols, $nrela relocations"
	rm -f "$out"/t.*
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		rm -f "$padded" "$before" "$out/copy.o" "$out/relinked.o"
		if [ -n "$PATCHSITE_BEFORE" ] && [ $((i % 2)) -eq 0 ]; then
			timed before "$PATCHSITE_BEFORE" repad "$in" -o "$before"
			timed repad "$PATCHSITE" repad "$in" -o "$padded"
		elif [ -n "$PATCHSITE_BEFORE" ]; then
			timed repad "$PATCHSITE" repad "$in" -o "$padded"
			timed before "$PATCHSITE_BEFORE" repad "$in" -o "$before"
		else
			timed repad "$PATCHSITE" repad "$in" -o "$padded"
		fi
		timed objcopy ${CROSS}objcopy "$in" "$out/copy.o"
		timed ldr ${CROSS}ld -r "$in" -o "$out/relinked.o"
		timed audit "$PATCHSITE" audit "$in"
		i=$((i + 1))
	done
	rm -f "$out/copy.o" "$out/relinked.o"
	sed 's/^/# /' "$out/log.repad"
	names="repad objcopy ldr audit"
	if [ -n "$PATCHSITE_BEFORE" ]; then
		names="repad before objcopy ldr audit"
		sed 's/^/# before: /' "$out/log.before"
	fi
	rw=$(median "$out/t.repad" 1); rc=$(cpu "$out/t.repad")
	echo
	echo "| command ($RUNS runs each, interleaved) | median wall | median CPU | peak RSS | wall / repad | CPU / repad |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: |"
	for n in $names; do
		case $n in
		repad) cmd="patchsite repad $b.o -o $b.padded.o" ;;
		before) cmd="$PATCHSITE_BEFORE repad $b.o -o $b.padded-before.o" ;;
		objcopy) cmd="${CROSS}objcopy $b.o copy.o" ;;
		ldr) cmd="${CROSS}ld -r $b.o -o relinked.o" ;;
		audit) cmd="patchsite audit $b.o" ;;
		esac
		w=$(median "$out/t.$n" 1); c=$(cpu "$out/t.$n")
		echo "| \`$cmd\` | $w s | $c s | $(rss "$out/t.$n") MiB | $(awk -v a="$w" -v b="$rw" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') | $(awk -v a="$c" -v b="$rc" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') |"
	done
	if [ -n "$PATCHSITE_BEFORE" ]; then
		bw=$(median "$out/t.before" 1); bc=$(cpu "$out/t.before")
		echo
		echo "before / after ($b.o): median wall $bw s / $rw s = $(awk -v a="$bw" -v b="$rw" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'),\
 median CPU $bc s / $rc s = $(awk -v a="$bc" -v b="$rc" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'),\
 peak RSS $(rss "$out/t.before") / $(rss "$out/t.repad") MiB = $(awk -v a="$(rss "$out/t.before")" -v b="$(rss "$out/t.repad")" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
	fi
	echo
	for n in $names; do echo "# raw $n (wall user sys rss_kb): $(tr '\n' ';' <"$out/t.$n")"; done
	echo

	if [ -n "$PATCHSITE_BEFORE" ]; then
		if [ -s "$padded" ] && [ -s "$before" ] && cmp -s "$before" "$padded"; then
			ok "$b.o: the before build's output is byte-identical to this one's ($(wc -c <"$padded") bytes)"
		else
			notok "$b.o: the before build's output differs from this one's"
			echo "# $(cmp "$before" "$padded" 2>&1 | head -n 1); sizes: $(wc -c <"$before" 2>/dev/null) before, $(wc -c <"$padded" 2>/dev/null) after"
		fi
		rm -f "$before"
	fi

	has_misaligned "$in"; r=$?
	check "$b.o: literals.py: $nmis of $nlit literals misaligned before repad (want > 0)" [ "$r" -eq 0 ]
	check "$b.o: audit agrees (exit 1, $nmis misaligned)" audit_agrees "$in"
	check "$b.o: eu-elflint --gnu-ld accepts the padded object" sh -c \
		"[ -s '$padded' ] && eu-elflint --gnu-ld --quiet '$padded'"
	none_misaligned "$padded"; r=$?
	check "$b.o: literals.py: padded object: $nmis of $nlit misaligned (want 0 of > 0)" [ "$r" -eq 0 ]
	check "$b.o: audit of the padded object agrees (exit 0, none misaligned)" audit_agrees "$padded"
	${CROSS}gcc -static -o "$out/$b.prog.orig" "$out/main.o" "$in" || notok "link $b.o"
	${CROSS}gcc -static -o "$out/$b.prog.pad" "$out/main.pad.o" "$padded" || notok "link $b.padded.o"
	has_misaligned "$out/$b.prog.orig"; r=$?
	check "$b.o: program linked from it: literals.py: $nmis of $nlit misaligned (want > 0)" [ "$r" -eq 0 ]
	l2=$nlit
	check "$b.o: program linked from it: audit agrees (exit 1, $nmis misaligned)" audit_agrees "$out/$b.prog.orig"
	none_misaligned "$out/$b.prog.pad"; r=$?
	check "$b.o: program linked from the padded object: literals.py: $nmis of $nlit misaligned (want 0)" [ "$r" -eq 0 ]
	l3=$nlit
	check "$b.o: program linked from the padded object: audit agrees (exit 0, none misaligned)" \
		audit_agrees "$out/$b.prog.pad"
	sites "$out/$b.prog.orig"; r2=$?; s2=$nsite
	sites "$out/$b.prog.pad"; r3=$?; s3=$nsite
	check "$b.o: programs: record (exit 0) lists $s3 sites padded, $s2 unpadded; literals.py counts $l3 and $l2" \
		sh -c "[ $r2 -eq 0 ] && [ $r3 -eq 0 ] && [ '$l2' -gt 0 ] && [ '$s2' -eq '$l2' ] && [ '$s3' -eq '$l3' ] && [ '$s2' -eq '$s3' ]"
	"$QEMU" -L "$SYSROOT" "$out/$b.prog.orig" >"$out/$b.run.orig" 2>&1; r1=$?
	"$QEMU" -L "$SYSROOT" "$out/$b.prog.pad" >"$out/$b.run.pad" 2>&1; r2=$?
	check "$b.o: programs print the same under qemu-aarch64 ($(tail -n 1 "$out/$b.run.pad"))" \
		sh -c "[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && grep -q '^$FUNCS functions' '$out/$b.run.pad' && cmp -s '$out/$b.run.orig' '$out/$b.run.pad'"
	rm -f "$out/$b.prog.orig" "$out/$b.prog.pad"
}

"$PATCHSITE" repad "$out/main.o" -o "$out/main.pad.o" >/dev/null || notok "repad main.o"
bench "$out/big.o"
[ "$SCALE" -gt 1 ] && bench "$out/big$SCALE.o"
[ "$fail" -eq 0 ]
