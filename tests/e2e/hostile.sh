#!/bin/sh
# Hostile input and crash safety (SPEC.md "Reliability").
#
#   make san all && make -C fixtures
#   PATCHSITE=build-san/patchsite PATCHSITE_PLAIN=./patchsite sh tests/e2e/hostile.sh
#
# PATCHSITE is the ASan+UBSan build (the leak checker is on), PATCHSITE_PLAIN
# the plain one (LD_PRELOAD failure injection does not mix with ASan).
#
#   corpus       tests/hostile/mkcorpus.py breaks real fixtures ~800 ways
#                (truncations at every header and table boundary, offsets and
#                sizes past EOF, overlaps, bad string indexes, huge counts,
#                sh_link loops, self-referencing relocations, odd tables,
#                SHN_XINDEX tricks, lying SHF_COMPRESSED headers, bad .gz/.xz/
#                .zst); record, record --format=json and audit on each, 10 s
#                timeout: exit 2 with one `patchsite: FILE...` line, or exit
#                0/1 with a well-formed result; never a signal, a sanitizer
#                report, a leak or a hang (tests/hostile/runcorpus.py)
#   inject       every writing command (record, pin, repad, embed) with write/pwrite/fsync/rename/
#                copy_file_range/fchmod/close/mkostemp failing (failshim.so):
#                exit 2, target byte-identical, no .patchsite.* left
#   diskfull     the same on a full tmpfs (mounted here; the shim's ENOSPC
#                mode if mounting is impossible, which the output says)
#   kill         record --in-place of a 200 MB image killed with SIGKILL at
#                20 random points: original or complete result, never a mix
#   determinism  every output form identical under other locales, TZ, cwd,
#                image path and output names
#   scale        an image with 1,000,000 functions: exit 0, 1,000,000 sites
#                (peak RSS printed for the record)
#   fuzz         the harnesses of fuzz/ replay their regression files and
#                committed seeds, then each fuzzes for FUZZ_SMOKE_TIME s
#                (default 3, ~25 s in all) from corpora made from the
#                fixtures, with a fixed seed and the corpus left unchanged
#                (`make -C fuzz fuzz-smoke`; `make fuzz` runs longer)
#
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`; exits 1 if
# anything failed.  A missing tool is installed with apt-get or is a failure.
# HOSTILE_ONLY=corpus,kill,... runs a subset (for development).

set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
hostile=$root/tests/hostile
fix=$root/fixtures/out
only=${HOSTILE_ONLY:-}
if [ -n "${PYTHON3:-}" ]; then
	py=$PYTHON3
elif [ -x /usr/bin/python3 ]; then
	py=/usr/bin/python3	# Debian's; a version manager's shim costs 0.3 s a call
else
	py=python3
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/patchsite-hostile.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
started=$(date +%s)
. "$here/lib.sh"
ps_init "$tmp"

# the harness's summary, after the time the run took
finish_timed() {
	note "hostile.sh: $(($(date +%s) - started)) s"
	finish
}

want() { # want PART: is this part selected?
	[ -z "$only" ] && return 0
	case ",$only," in *",$1,"*) return 0 ;; esac
	return 1
}

# step NAME CMD...: run a helper that prints ok/not ok lines, count them.
# A helper that fails without saying why is a failure of its own.
step() {
	name=$1
	shift
	{ "$@" 2>&1; echo $? >"$tmp/step.rc"; } | tee "$tmp/step.out"
	p=$(grep -c '^ok - ' "$tmp/step.out")
	f=$(grep -c '^not ok - ' "$tmp/step.out")
	pass=$((pass + p))
	fail=$((fail + f))
	rc=$(cat "$tmp/step.rc")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		tail -n 20 "$tmp/step.out" >"$tmp/msg"
		not_ok "$name: exit status $rc" "$tmp/msg"
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		not_ok "$name: ran no check"
	fi
}

# ---------------------------------------------------------------- tools
# need COMMAND PACKAGE: install PACKAGE with apt-get when COMMAND is missing
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "# installing $2 for $1"
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	if ! { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$2" ||
		{ $SUDO apt-get update -qq &&
		  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$2"; }; } \
		>"$tmp/apt.log" 2>&1 || ! command -v "$1" >/dev/null 2>&1; then
		not_ok "tool $1 (apt-get install $2 failed)" "$tmp/apt.log"
		return 1
	fi
}
tools_ok=1
for t in "python3 python3" "cc gcc" "as binutils" "ld binutils" "objcopy binutils" \
	"clang clang" "zstd zstd" "mount mount" "timeout coreutils"; do
	# shellcheck disable=SC2086
	need $t || tools_ok=0
done
if [ ! -x /usr/bin/time ]; then
	need /usr/bin/time time || tools_ok=0
fi
[ $tools_ok -eq 1 ] && ok "tools"

abs() { case $1 in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }
PATCHSITE=$(abs "${PATCHSITE:-build-san/patchsite}")
PATCHSITE_PLAIN=$(abs "${PATCHSITE_PLAIN:-patchsite}")
for b in "$PATCHSITE" "$PATCHSITE_PLAIN"; do
	if [ ! -x "$b" ]; then
		echo "$b is not an executable: run make san all" >"$tmp/msg"
		not_ok "patchsite builds" "$tmp/msg"
		finish_timed
	fi
done
nm "$PATCHSITE" >"$tmp/nm" 2>&1
if ! grep -q __asan_init "$tmp/nm"; then
	echo "PATCHSITE=$PATCHSITE is not an AddressSanitizer build" >"$tmp/msg"
	not_ok "patchsite builds" "$tmp/msg"
	finish_timed
fi
ok "patchsite builds (sanitizers: $PATCHSITE, plain: $PATCHSITE_PLAIN)"
export ASAN_OPTIONS="detect_leaks=1:exitcode=86"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"

img_inject=$fix/aarch64-callops/pie	# a table, .rela.dyn entries to rewrite, misaligned sites
img_kill=$fix/x86_64-pfe-5-0-cet/pie	# host objcopy can pad it
for f in "$img_inject" "$img_kill" "$fix/x86_64-fentry/exec" "$fix/riscv64-mcount/vmlinux.o" \
	"$fix/x86_64-mcount/lib.o"; do
	if [ ! -f "$f" ]; then
		echo "$f is missing: run make -C fixtures" >"$tmp/msg"
		not_ok "fixtures built" "$tmp/msg"
		finish_timed
	fi
done
ok "fixtures built"

# The 1M-function image takes a while to assemble: start it now, on the side.
scale_dir=$tmp/scale
if want scale; then
	mkdir -p "$scale_dir"
	(
		cd "$scale_dir" &&
		$py "$hostile/mkfuncs.py" 1000000 f.s &&
		as --64 -o f.o f.s && rm f.s &&
		ld -static -e _start -o f1m f.o && rm f.o
	) >"$scale_dir/build.log" 2>&1 &
	scale_pid=$!
fi

# ---------------------------------------------------------------- corpus
if want corpus; then
	if $py "$hostile/mkcorpus.py" --fixtures "$fix" "$tmp/corpus" >"$tmp/msg" 2>&1; then
		ok "corpus: $(cat "$tmp/msg")"
		step "corpus" $py "$hostile/runcorpus.py" --patchsite "$PATCHSITE" --jobs 2 \
			--timeout 10 "$tmp/corpus"
	else
		not_ok "corpus: mkcorpus.py failed" "$tmp/msg"
	fi
	rm -rf "$tmp/corpus"
fi

# ---------------------------------------------------------------- writes
shim=$tmp/failshim.so
if want inject || want diskfull; then
	if cc -shared -fPIC -O2 -Wall -Wextra -o "$shim" "$hostile/failshim.c" -ldl >"$tmp/msg" 2>&1
	then
		ok "failshim.so builds"
	else
		not_ok "failshim.so builds" "$tmp/msg"
	fi
fi
# the rewriting commands' inputs (make fixtures builds them)
rewrite_images="--pin-image $fix/riscv64-mcount/lib.o --repad-image $root/fixtures/repad/out/a.o
	--embed-image $root/fixtures/embed/out/prog-dyn"
if want inject && [ -f "$shim" ]; then
	step "inject" $py "$hostile/writes.py" inject --patchsite "$PATCHSITE_PLAIN" \
		--shim "$shim" --image "$img_inject" $rewrite_images
fi
if want diskfull; then
	step "diskfull" $py "$hostile/writes.py" diskfull --patchsite "$PATCHSITE" \
		--image "$img_inject" --shim "$shim" --plain "$PATCHSITE_PLAIN" $rewrite_images
fi
if want kill; then
	step "kill" $py "$hostile/writes.py" kill --patchsite "$PATCHSITE_PLAIN" \
		--image "$img_kill" --objcopy objcopy --pad-mb 200 --kills 20 --budget 50 \
		--workdir "$tmp"
fi

# ---------------------------------------------------------------- determinism
if want determinism; then
	gzip -9 -n -c "$fix/x86_64-mcount/lib.o" >"$tmp/lib.o.gz"
	step "determinism" $py "$hostile/determinism.py" --patchsite "$PATCHSITE" \
		"$fix/x86_64-fentry/exec" "$img_inject" "$fix/riscv64-mcount/vmlinux.o" \
		"$img_kill" "$tmp/lib.o.gz" "$root/fixtures/repad/out/a.o" \
		"$root/fixtures/repad/out/rv-g-relax/a.o" "$root/fixtures/embed/out/prog-pie"
fi

# ---------------------------------------------------------------- scale
# record's stderr on success: its one summary line, naming the image
summary_line() { # ERRFILE IMAGE: record -v's one report line
	[ "$(wc -l <"$1")" -eq 1 ] && grep -q "^$2: " "$1"
}

if want scale; then
	if wait "$scale_pid" && [ -f "$scale_dir/f1m" ]; then
		img=$scale_dir/f1m
		timed="/usr/bin/time -f %M -o $scale_dir/rss timeout 120"
		if ! ps_run -x "$timed" -e "$scale_dir/err" 0 "$scale_dir/list" -- record -v "$img"; then
			not_ok "scale: record of 1,000,000 functions" "$ps_msg"
		elif n=$(wc -l <"$scale_dir/list") && [ "$n" -eq 1000000 ] &&
			summary_line "$scale_dir/err" "$img"; then
			ok "scale: record of 1,000,000 functions finds 1,000,000 sites (sanitizer build, peak RSS $(tail -n 1 "$scale_dir/rss") KB)"
		else
			echo "$n sites" | cat - "$scale_dir/err" >"$tmp/msg"
			not_ok "scale: record of 1,000,000 functions" "$tmp/msg"
		fi
		if ! ps_run -P -x "$timed" -e "$scale_dir/err" 0 "$scale_dir/json" -- record --format=json "$img"; then
			not_ok "scale: record --format=json of 1,000,000 functions" "$ps_msg"
		elif count=$($py -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["site_count"] if j["site_count"] == len(j["sites"]) else -1)' \
			"$scale_dir/json" 2>>"$scale_dir/err") && [ "$count" = 1000000 ]; then
			ok "scale: record --format=json of 1,000,000 functions (plain build, peak RSS $(tail -n 1 "$scale_dir/rss") KB)"
		else
			echo "count $count" | cat - "$scale_dir/err" >"$tmp/msg"
			not_ok "scale: record --format=json of 1,000,000 functions" "$tmp/msg"
		fi
		if ! ps_run -P -x "timeout 120" -e "$scale_dir/err" 0 "$scale_dir/audit" -- audit "$img"; then
			not_ok "scale: audit of 1,000,000 functions" "$ps_msg"
		elif tail -n 1 "$scale_dir/audit" >"$scale_dir/audit.last" &&
			grep -q '^summary: 0 misaligned, 0 stale' "$scale_dir/audit.last"; then
			ok "scale: audit of 1,000,000 functions is clean"
		else
			{ tail -n 3 "$scale_dir/audit"; cat "$scale_dir/err"; } >"$tmp/msg"
			not_ok "scale: audit of 1,000,000 functions" "$tmp/msg"
		fi
	else
		not_ok "scale: build the 1,000,000-function image" "$scale_dir/build.log"
	fi
	rm -rf "$scale_dir"
fi

# ---------------------------------------------------------------- fuzz
if want fuzz; then
	if make -s -j2 -C "$root/fuzz" all >"$tmp/fuzzbuild" 2>&1; then
		ok "fuzz harnesses build"
		step "fuzz smoke" make -k -s --no-print-directory -C "$root/fuzz" fuzz-smoke
	else
		not_ok "fuzz harnesses build" "$tmp/fuzzbuild"
	fi
fi

finish_timed
