#!/bin/sh
# Benchmark of `patchsite repad` on a big vmlinux.o-like relocatable object
# (issue 4: "seconds at most"), beside a baseline of comparable work: objcopy
# and `ld -r` of the same object.  Also checks that the output is right.
#
#   sh bench/repad/run.sh            (PATCHSITE=..., FUNCS=40000, FILES=8, RUNS=5)
#
# 1. gen.py writes FUNCS functions in FILES C files (plus main.c); each is
#    compiled with aarch64-linux-gnu-gcc -Os -g -fpatchable-function-entry=4,2
#    (2 at a time), and `aarch64-linux-gnu-ld -r` combines them into big.o,
#    whose .text has every function, like vmlinux.o.  Cached in
#    bench/out/repad/ while gen.py and the parameters are the same.
# 2. RUNS rounds, each running, side by side:
#      patchsite repad big.o -o padded.o
#      aarch64-linux-gnu-objcopy big.o copy.o
#      aarch64-linux-gnu-ld -r big.o -o relinked.o
#      patchsite audit big.o
#    under /usr/bin/time -f '%e %U %S %M'; reports the median wall and CPU
#    time, the largest peak RSS, and the ratios to repad.
# 3. Checks: eu-elflint --gnu-ld accepts padded.o; audit finds misaligned
#    literals in big.o and none in padded.o; a static program linked from
#    padded.o (and main.o, repadded too) has no misaligned site, as many sites as the one linked from
#    big.o, and prints the same under qemu-aarch64 (its output is a checksum
#    over every function).
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
CFLAGS_A64="-Os -g -fpatchable-function-entry=4,2"
out=${OUT:-$root/bench/out/repad}
TIME=/usr/bin/time

fail=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; fail=$((fail + 1)); }
check() { name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }

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

big=$out/big.o
nfunc=$("$PATCHSITE" record "$big" | wc -l)
size=$(wc -c <"$big")
text=$(${CROSS}readelf -SW "$big" | awk '$2 == ".text" { print strtonum("0x" $6) }' 2>/dev/null)
[ -n "$text" ] || text=$(${CROSS}size -A "$big" | awk '$1 == ".text" { print $2 }')
nrela=$(${CROSS}readelf -rW "$big" | grep -c '^[0-9a-f]\{16\} ')
nsym=$(${CROSS}readelf -sW "$big" | grep -c '^ *[0-9]*:')
echo "# input: $big: $size bytes, .text $text bytes, $nfunc sites, $nsym symbols, $nrela relocations"

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

rm -f "$out"/t.*
i=0
while [ "$i" -lt "$RUNS" ]; do
	rm -f "$out/padded.o" "$out/copy.o" "$out/relinked.o"
	timed repad "$PATCHSITE" repad "$big" -o "$out/padded.o"
	timed objcopy ${CROSS}objcopy "$big" "$out/copy.o"
	timed ldr ${CROSS}ld -r "$big" -o "$out/relinked.o"
	timed audit "$PATCHSITE" audit "$big"
	i=$((i + 1))
done
cat "$out/log.repad"

# median of column $2 of file $1 (odd RUNS: the middle one)
median() { sort -n -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
cpu() { awk '{ print $2 + $3 }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
rss() { sort -n -k4,4 "$1" | tail -n 1 | awk '{ printf "%.1f", $4 / 1024 }'; }

rw=$(median "$out/t.repad" 1); rc=$(cpu "$out/t.repad")
echo
echo "| command (on big.o, $RUNS runs) | median wall | median CPU | peak RSS | wall / repad | CPU / repad |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for n in repad objcopy ldr audit; do
	case $n in
	repad) cmd="patchsite repad big.o -o padded.o" ;;
	objcopy) cmd="${CROSS}objcopy big.o copy.o" ;;
	ldr) cmd="${CROSS}ld -r big.o -o relinked.o" ;;
	audit) cmd="patchsite audit big.o" ;;
	esac
	w=$(median "$out/t.$n" 1); c=$(cpu "$out/t.$n")
	echo "| \`$cmd\` | $w s | $c s | $(rss "$out/t.$n") MiB | $(awk -v a="$w" -v b="$rw" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') | $(awk -v a="$c" -v b="$rc" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') |"
done
echo
for n in repad objcopy ldr audit; do echo "# raw $n (wall user sys rss_kb): $(tr '\n' ';' <"$out/t.$n")"; done
echo

# ---------------------------------------------------------------- checks
padded=$out/padded.o
misaligned() { "$PATCHSITE" audit "$1" 2>/dev/null | grep -c '^misaligned:'; }
m0=$(misaligned "$big")
check "audit big.o: $m0 misaligned literals before repad (want > 0)" [ "$m0" -gt 0 ]
check "eu-elflint --gnu-ld accepts padded.o" eu-elflint --gnu-ld --quiet "$padded"
m1=$(misaligned "$padded")
check "audit padded.o: $m1 misaligned" [ "$m1" -eq 0 ]
${CROSS}gcc -static -o "$out/prog.orig" "$out/main.o" "$big" || notok "link big.o"
"$PATCHSITE" repad "$out/main.o" -o "$out/main.pad.o" >/dev/null || notok "repad main.o"
${CROSS}gcc -static -o "$out/prog.pad" "$out/main.pad.o" "$padded" || notok "link padded.o"
m2=$(misaligned "$out/prog.orig"); m3=$(misaligned "$out/prog.pad")
check "program from big.o: $m2 misaligned sites (want > 0)" [ "$m2" -gt 0 ]
check "program from padded.o: $m3 misaligned sites" [ "$m3" -eq 0 ]
s2=$("$PATCHSITE" record "$out/prog.orig" | wc -l); s3=$("$PATCHSITE" record "$out/prog.pad" | wc -l)
check "programs: $s3 sites padded, $s2 unpadded" [ "$s2" -eq "$s3" ]
"$QEMU" -L "$SYSROOT" "$out/prog.orig" >"$out/run.orig" 2>&1; r1=$?
"$QEMU" -L "$SYSROOT" "$out/prog.pad" >"$out/run.pad" 2>&1; r2=$?
check "programs print the same under qemu ($(tail -n 1 "$out/run.pad"))" \
	sh -c "[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && grep -q '^$FUNCS functions' '$out/run.pad' && cmp -s '$out/run.orig' '$out/run.pad'"
[ "$fail" -eq 0 ]
