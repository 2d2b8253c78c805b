#!/bin/sh
# `record --in-place` edits the image where it lies, under an undo journal
# (elfio/journal.c), and survives SIGKILL at every one of its writes.
#
#   make san all fixtures
#   PATCHSITE=build-san/patchsite PATCHSITE_PLAIN=./patchsite sh tests/e2e/inplace.sh
#
# Images: fixtures/minikernel's x86_64 (its table cleared), aarch64 (table
# only in .rela.dyn R_AARCH64_RELATIVE addends, cleared) and riscv64 (the
# stale table of a relaxed link).  For each, with and without --fsync:
#
#   in place  the uninterrupted run edits the file itself: same inode, a
#             hard link to it sees the new table, only the table's bytes
#             (and .rela.dyn's) differ from the input, no file is left beside
#             it, and a second run writes nothing (same mtime)
#   order     tests/hostile/failshim.c counts every write, pwrite, fsync,
#             rename and unlink on the image and its journal: the journal
#             is written whole before the image's first byte changes, and
#             removed last
#   kill      for N = 1..count: SIGKILL at the Nth of those calls (before
#             it, and for writes also half way through it): exit status 137,
#             and the image is the input or, with its journal beside it,
#             becomes the input or the output once `patchsite audit` (whose
#             exit status must be 0 or 1) has run on it; afterwards no journal
#             and no temporary; `record --in-place` then gives the output
#   fail      a pwrite that fails, a pwrite that lands wrong (the read-back
#             must see it), an fsync that fails, a journal that cannot be
#             created: exit 2, one `patchsite: IMAGE: ` line, the image
#             byte-identical, no journal
#   lock      audit run while a writer is paused between its journal and its
#             first write to the image waits for it (flock), and sees the output
#   journals  a torn journal (a kill half way through writing it) and a
#             stale one (its image replaced by another file) are removed,
#             the image left as it is
#
# The shim runs with the plain build (LD_PRELOAD and ASan do not mix); the
# other runs use PATCHSITE (the sanitizer build).  Prints ok/not ok lines and
# `N passed, M failed`; a missing fixture or tool is a failure.

set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mk=$root/fixtures/minikernel
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
abs() { case $1 in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }
PATCHSITE=$(abs "${PATCHSITE:-build-san/patchsite}")
PATCHSITE_PLAIN=$(abs "${PATCHSITE_PLAIN:-patchsite}")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-inplace.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/lib.sh"
ps_init "$tmp"

for b in "$PATCHSITE" "$PATCHSITE_PLAIN"; do
	if [ ! -x "$b" ]; then
		not_ok "$b is not an executable: run make san all"
		finish
	fi
done
shim=$tmp/failshim.so
if cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$shim" "$root/tests/hostile/failshim.c" -ldl \
	>"$tmp/msg" 2>&1; then
	ok "failshim.so builds"
else
	not_ok "failshim.so builds" "$tmp/msg"
	finish
fi

# the images: a cleared x86_64 and aarch64 table, the stale riscv64 one
src=$tmp/src
mkdir -p "$src"
for f in x86_64.elf aarch64.elf riscv64.elf; do
	if [ ! -f "$mk/out/$f" ]; then
		not_ok "fixture $mk/out/$f is missing: run make fixtures"
		finish
	fi
done
if "$py" "$mk/tools/mkelf.py" clear "$mk/out/x86_64.elf" "$src/x86_64" >"$tmp/msg" 2>&1 &&
	"$py" "$mk/tools/mkelf.py" clear "$mk/out/aarch64.elf" "$src/aarch64" >>"$tmp/msg" 2>&1 &&
	cp "$mk/out/riscv64.elf" "$src/riscv64"; then
	ok "images: x86_64 and aarch64 with their tables cleared, riscv64 with a stale table"
else
	not_ok "images" "$tmp/msg"
	finish
fi

w=$tmp/w	# the directory the image is edited in: nothing else may appear there
mkdir -p "$w"
img=$w/image
jrn=$img.patchsite-journal

# clean: nothing in $w but the image (and what is named)
clean() {
	left=$(ls -A "$w" | grep -v -x -e image -e "$1" | tr '\n' ' ')
	[ -z "$left" ]
}

# one line on stderr naming the image
one_line() { # ERRFILE
	[ "$(wc -l <"$1")" -eq 1 ] && grep -q "^patchsite: $img: " "$1"
}

for name in x86_64 aarch64 riscv64; do
	in=$src/$name
	out=$tmp/$name.out
	for mode in "" --fsync; do
		tag="$name${mode:+ $mode}"
		rm -rf "$w" && mkdir -p "$w"
		# ---- the uninterrupted run: in place
		cp "$in" "$img"
		ln "$img" "$w/link"
		ino1=$(stat -c %i "$img")
		if ! ps_run 0 "$tmp/o" -- record --in-place $mode "$img"; then
			not_ok "$tag: record --in-place" "$ps_msg"
			continue
		fi
		ino2=$(stat -c %i "$img")
		cp "$img" "$out"
		if cmp -s "$in" "$out"; then
			not_ok "$tag: record --in-place changed nothing: the test would prove nothing"
			continue
		fi
		if [ "$ino1" = "$ino2" ] && cmp -s "$img" "$w/link" && clean link; then
			ok "$tag: edited in place (inode $ino1 kept, a hard link sees the new table, nothing left beside it)"
		else
			echo "inode $ino1 -> $ino2; beside it: $(ls -A "$w")" >"$tmp/msg"
			cmp "$img" "$w/link" >>"$tmp/msg" 2>&1
			not_ok "$tag: edited in place" "$tmp/msg"
		fi
		rm -f "$w/link"
		# only bytes of the table and .rela.dyn differ
		if "$py" - "$in" "$out" "$name" >"$tmp/msg" 2>&1 <<'EOF'
import subprocess, sys
a, b, name = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3]
assert len(a) == len(b), "sizes differ"
ro = {"x86_64": "readelf", "aarch64": "aarch64-linux-gnu-readelf",
      "riscv64": "riscv64-linux-gnu-readelf"}[name]
secs = []
for ln in subprocess.run([ro, "-SW", sys.argv[1]], capture_output=True, text=True,
                         check=True).stdout.splitlines():
    f = ln.replace("[ ", "[").split()
    if len(f) > 6 and f[0].startswith("[") and f[0] != "[Nr]":
        secs.append((f[1], int(f[4], 16), int(f[5], 16)))
touched = set()
for i in range(len(a)):
    if a[i] != b[i]:
        hit = [s for s in secs if s[1] <= i < s[1] + s[2]]
        assert hit, "byte at 0x%x is in no section" % i
        touched.add(hit[-1][0])
print(" ".join(sorted(touched)))
ok_names = {"__mcount_loc", ".rela.dyn", "__patchable_function_entries", ".data", ".rodata",
            ".init.data", "mcount_table"}
bad = touched - ok_names
assert not bad, "bytes changed outside the table: %s" % bad
EOF
		then
			ok "$tag: only the table's sections differ: $(cat "$tmp/msg")"
		else
			not_ok "$tag: only the table's sections differ" "$tmp/msg"
		fi
		# a second run: nothing written
		m1=$(stat -c %y "$img")
		if ! ps_run -e "$tmp/e" 0 /dev/null -- record --in-place -v $mode "$img"; then
			not_ok "$tag: a second run writes nothing" "$ps_msg"
		else
			m2=$(stat -c %y "$img")
			if [ "$m1" = "$m2" ] && grep -q 'already up to date' "$tmp/e" &&
				cmp -s "$img" "$out" && clean ""; then
				ok "$tag: a second run writes nothing (mtime kept)"
			else
				echo "mtime $m1 -> $m2" | cat - "$tmp/e" >"$tmp/msg"
				not_ok "$tag: a second run writes nothing" "$tmp/msg"
			fi
		fi

		# ---- count the writes, and their order
		cp "$in" "$img"
		log=$tmp/count
		rm -f "$log"
		if ! LD_PRELOAD=$shim FAILSHIM_CALL='*' FAILSHIM_NTH=0 FAILSHIM_COUNT=$log \
			FAILSHIM_TARGET=$img ps_run -P 0 /dev/null -- record --in-place $mode "$img"; then
			not_ok "$tag: count the writes under the shim" "$ps_msg"
			continue
		fi
		if ! cmp -s "$img" "$out" || [ ! -s "$log" ]; then
			echo "exit 0, and not the output or no log" | cat - "$ps_err" "$log" >"$tmp/msg" 2>/dev/null
			not_ok "$tag: count the writes under the shim" "$tmp/msg"
			continue
		fi
		count=$(wc -l <"$log")
		# the journal's write comes before the image's first pwrite; the unlink is last
		if "$py" - "$log" "$img" "$mode" >"$tmp/msg" 2>&1 <<'EOF'
import sys
calls = [l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
img, fsync = sys.argv[2], sys.argv[3] == "--fsync"
kinds = [(c, "journal" if p.startswith(img + ".patchsite-journal") else
          "image" if p == img else p) for c, p in calls]
print(" ".join("%s(%s)" % k for k in kinds))
first_img = next(i for i, k in enumerate(kinds) if k == ("pwrite", "image"))
assert ("write", "journal") in kinds[:first_img], "the image is written before the journal"
assert kinds[-1] == ("unlink", "journal"), "the journal is not removed last"
assert not [k for k in kinds if k[1] not in ("journal", "image")], "a write to another file"
if fsync:
    assert ("fsync", "journal") in kinds[:first_img], "journal not fsync'd before the image"
    last_img = max(i for i, k in enumerate(kinds) if k[1] == "image")
    assert kinds[last_img] == ("fsync", "image"), "the image is not fsync'd after its writes"
else:
    assert not [k for k in kinds if k[0] == "fsync"], "fsync without --fsync"
EOF
		then
			ok "$tag: $count writes, the journal whole before the image, removed last: $(cat "$tmp/msg")"
		else
			not_ok "$tag: order of the writes" "$tmp/msg"
		fi

		# ---- kill at each of them
		kills=0
		bad=0
		states=""
		n=1
		while [ $n -le "$count" ]; do
			call=$(sed -n "${n}p" "$log" | cut -d' ' -f1)
			hows=before
			case $call in write | pwrite) hows="before half" ;; esac
			for how in $hows; do
				rm -rf "$w" && mkdir -p "$w"
				cp "$in" "$img"
				kills=$((kills + 1))
				why=""
				LD_PRELOAD=$shim FAILSHIM_CALL='*' FAILSHIM_NTH=$n FAILSHIM_KILL=$how \
					FAILSHIM_TARGET=$img ps_run -P 137 /dev/null -- record --in-place $mode \
					"$img" || why="exit $ps_rc, expected 137 (SIGKILL)"
				state=""
				if [ -e "$jrn" ]; then
					state="journal"
				elif cmp -s "$img" "$in"; then
					state="input"
				else
					why="$why; no journal, and the image is not the input"
				fi
				# the next command recovers
				ps_run '[01]' /dev/null -- audit "$img" ||
					why="$why; audit exit $ps_rc: $(head -c 300 "$ps_err")"
				if cmp -s "$img" "$in"; then
					state="$state>input"
				elif cmp -s "$img" "$out"; then
					state="$state>output"
				else
					why="$why; after audit the image is neither the input nor the output"
				fi
				clean "" || why="$why; left beside it: $(ls -A "$w" | tr '\n' ' ')"
				{ ps_run 0 /dev/null -- record --in-place $mode "$img" &&
					cmp -s "$img" "$out" && clean ""; } ||
					why="$why; record --in-place afterwards: exit $ps_rc, not the output"
				if [ -n "$why" ]; then
					bad=$((bad + 1))
					echo "kill $how call $n ($call): $why" >>"$tmp/kill.msg"
				fi
				case " $states " in *" $state "*) ;; *) states="$states $state" ;; esac
			done
			n=$((n + 1))
		done
		if [ $bad -eq 0 ]; then
			ok "$tag: SIGKILL at each of $count calls ($kills kills): states seen:$states"
		else
			not_ok "$tag: SIGKILL at each of $count calls: $bad of $kills wrong" "$tmp/kill.msg"
		fi
		rm -f "$tmp/kill.msg"

		# ---- failures: exit 2, one line, the image as it was, no journal
		for f in "pwrite:EIO" "pwrite:corrupt" "write:ENOSPC" "unlink:EIO" ${mode:+fsync:EIO} \
			${mode:+fsync#2:EIO}; do
			call=${f%%:*}
			err=${f#*:}
			nth=1
			case $call in *#*) nth=${call#*#} call=${call%#*} ;; esac
			rm -rf "$w" && mkdir -p "$w"
			cp "$in" "$img"
			if [ "$err" = corrupt ]; then
				env="FAILSHIM_CORRUPT=1"
			else
				env="FAILSHIM_ERRNO=$err"
			fi
			why=""
			LD_PRELOAD="$shim" FAILSHIM_CALL="$call" FAILSHIM_NTH=$nth \
				FAILSHIM_TARGET="$img" ps_run -P -x "env $env" -e "$tmp/e" 2 /dev/null -- \
				record --in-place $mode "$img" || why="exit $ps_rc, expected 2"
			one_line "$tmp/e" || why="$why; stderr is not one line naming the image"
			cmp -s "$img" "$in" || why="$why; the image changed"
			if [ "$call" = unlink ]; then
				# the journal could not be removed: the next command does it
				ps_run '[01]' /dev/null -- audit "$img" || why="$why; audit exit $ps_rc"
				cmp -s "$img" "$in" || why="$why; the image changed after audit"
			fi
			clean "" || why="$why; left beside it: $(ls -A "$w" | tr '\n' ' ')"
			if [ -z "$why" ]; then
				ok "$tag: $call #$nth fails ($err): exit 2, one line, image byte-identical: $(cut -c1-150 "$tmp/e")"
			else
				echo "$why" | cat - "$tmp/e" >"$tmp/msg"
				not_ok "$tag: $call #$nth fails ($err)" "$tmp/msg"
			fi
		done
	done
done

# ---- the recovery itself killed at each of its writes: the next command finishes it
in=$src/aarch64
out=$tmp/aarch64.out
rm -rf "$w" && mkdir -p "$w"
kill_before_unlink() {
	cp "$in" "$img"
	LD_PRELOAD=$shim FAILSHIM_CALL=unlink FAILSHIM_NTH=1 FAILSHIM_KILL=before \
		FAILSHIM_TARGET=$img ps_run -P 137 /dev/null -- record --in-place "$img" &&
		[ -s "$jrn" ] && cmp -s "$img" "$out"
}
if kill_before_unlink; then
	log=$tmp/rcount
	rm -f "$log"
	LD_PRELOAD=$shim FAILSHIM_CALL='*' FAILSHIM_NTH=0 FAILSHIM_COUNT=$log FAILSHIM_TARGET=$img \
		ps_run -P -e "$tmp/e" '[01]' /dev/null -- audit "$img"
	rc=$ps_rc
	count=$(wc -l <"$log" 2>/dev/null || echo 0)
	if [ $rc -le 1 ] && [ "$count" -ge 2 ] && cmp -s "$img" "$in" && clean ""; then
		ok "a journal left by a kill before its unlink: audit rolls it back ($(cut -d' ' -f1 "$log" | tr '\n' ' '))"
	else
		echo "exit $rc, $count calls" | cat - "$tmp/e" >"$tmp/msg"
		not_ok "audit rolls back a complete journal" "$tmp/msg"
	fi
	bad=0
	n=1
	while [ $n -le "$count" ]; do
		for how in before half; do
			kill_before_unlink || { bad=$((bad + 1)); continue; }
			LD_PRELOAD=$shim FAILSHIM_CALL='*' FAILSHIM_NTH=$n FAILSHIM_KILL=$how \
				FAILSHIM_TARGET=$img ps_run -P 137 /dev/null -- audit "$img"
			rc=$ps_rc
			ps_run '[01]' /dev/null -- audit "$img"
			arc=$ps_rc
			if [ $rc -ne 137 ] || [ $arc -gt 1 ] || ! cmp -s "$img" "$in" || ! clean ""; then
				bad=$((bad + 1))
				echo "call $n $how: exit $rc, then audit $arc; beside: $(ls -A "$w")" >>"$tmp/kill.msg"
			fi
		done
		n=$((n + 1))
	done
	if [ $bad -eq 0 ]; then
		ok "the roll back killed at each of its $count calls (before and half way): the next audit finishes it, the image is the input"
	else
		not_ok "the roll back killed at each of its calls: $bad wrong" "$tmp/kill.msg"
	fi
else
	not_ok "a kill before the journal's unlink leaves the journal and the output"
fi

# ---- a live writer's journal is not another command's to roll back: the
# writer pauses 1.5 s with its journal written and the image not yet, while
# audit runs; audit waits for the writer's lock, and both end well
in=$src/x86_64
out=$tmp/x86_64.out
rm -rf "$w" && mkdir -p "$w"
cp "$in" "$img"
LD_PRELOAD=$shim FAILSHIM_CALL=pwrite FAILSHIM_NTH=1 FAILSHIM_PAUSE=1500 FAILSHIM_TARGET=$img \
	ps_run -P -e "$tmp/we" 0 /dev/null -- record --in-place "$img" &
writer=$!
i=0
while [ ! -e "$jrn" ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
if [ -e "$jrn" ]; then
	t0=$(date +%s%N)
	ps_run -P -e "$tmp/ae" 0 "$tmp/ao" -- audit "$img"
	arc=$ps_rc
	t1=$(date +%s%N)
	wait $writer
	wrc=$?
	waited=$(((t1 - t0) / 1000000))
	if [ $wrc -eq 0 ] && [ $arc -eq 0 ] && cmp -s "$img" "$out" && clean "" && [ $waited -ge 500 ]; then
		ok "audit during a live in-place write waits for it (${waited} ms) and sees the output; the writer exits 0"
	else
		echo "writer exit $wrc, audit exit $arc after $waited ms" | cat - "$tmp/we" "$tmp/ae" >"$tmp/msg"
		not_ok "audit during a live in-place write" "$tmp/msg"
	fi
else
	wait $writer
	not_ok "the paused writer never made its journal"
fi

# ---- torn and stale journals
in=$src/x86_64
rm -rf "$w" && mkdir -p "$w"
cp "$in" "$img"
LD_PRELOAD=$shim FAILSHIM_CALL=write FAILSHIM_NTH=1 FAILSHIM_KILL=half FAILSHIM_TARGET=$img \
	ps_run -P 137 /dev/null -- record --in-place "$img"
rc=$ps_rc
if [ $rc -eq 137 ] && [ -s "$jrn" ] && cmp -s "$img" "$in"; then
	ps_run -e "$tmp/e" 0 /dev/null -- record "$img"
	rc=$ps_rc
	if [ $rc -eq 0 ] && cmp -s "$img" "$in" && clean ""; then
		ok "torn journal (killed half way through writing it): removed by record, the image untouched"
	else
		echo "exit $rc" | cat - "$tmp/e" >"$tmp/msg"
		not_ok "torn journal removed" "$tmp/msg"
	fi
else
	not_ok "torn journal: the kill did not leave one (exit $rc)"
fi
for repl in size content; do
	rm -rf "$w" && mkdir -p "$w"
	cp "$in" "$img"
	LD_PRELOAD=$shim FAILSHIM_CALL=pwrite FAILSHIM_NTH=1 FAILSHIM_KILL=half FAILSHIM_TARGET=$img \
		ps_run -P 137 /dev/null -- record --in-place "$img"
	rc=$ps_rc
	if [ $rc -ne 137 ] || [ ! -s "$jrn" ]; then
		not_ok "stale journal ($repl): the kill did not leave a journal (exit $rc)"
		continue
	fi
	# the image is replaced (a relink): another size, or the same size with
	# other bytes where the journal's ranges are
	rm -f "$img"
	if [ $repl = size ]; then
		cp "$src/aarch64" "$img"
	else
		"$py" "$mk/tools/mkelf.py" reverse "$mk/out/x86_64.elf" "$img" >/dev/null 2>&1
	fi
	cp "$img" "$tmp/replaced"
	ps_run -e "$tmp/e" '[01]' /dev/null -- audit "$img"
	rc=$ps_rc
	if [ $rc -le 1 ] && cmp -s "$img" "$tmp/replaced" && clean ""; then
		ok "stale journal (the image replaced, other $repl): removed, the new image left alone"
	else
		echo "exit $rc" | cat - "$tmp/e" >"$tmp/msg"
		not_ok "stale journal ($repl)" "$tmp/msg"
	fi
done

finish
