#!/bin/sh
# run.sh replay HARNESS BUILD        run the harness once on regressions/HARNESS/*
#                                     and seeds/HARNESS/* (no fuzzing)
# run.sh fuzz HARNESS BUILD SECONDS   fuzz it from BUILD/corpus/HARNESS for SECONDS
#                                     (new inputs are added to that corpus)
# run.sh smoke HARNESS BUILD SECONDS  the same with a fixed seed (FUZZ_SEED,
#                                     default 1) and the corpus left as it is:
#                                     new inputs go to a scratch directory, so
#                                     every run starts from the same state and
#                                     follows the same mutation sequence (what
#                                     make check runs)
#
# Prints `ok - ...` or `not ok - ...` (with the sanitizer report); exit 1 on
# a crash, leak, timeout or invariant failure.  Called by fuzz/Makefile.
set -u
cd "$(dirname "$0")"
mode=$1 h=$2 b=$3
bin=$b/fuzz_$h
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

report() { # report LOG
	grep -m1 -B2 -A40 -E 'ERROR: |runtime error|fuzz invariant|Test unit written|==[0-9]+==' "$1" |
		head -n 60 | sed 's/^/#   /'
}

case $mode in
replay)
	files=$(ls -d regressions/"$h"/* seeds/"$h"/* 2>/dev/null)
	if [ -z "$files" ]; then
		echo "not ok - fuzz replay $h: no regression or seed files"
		exit 1
	fi
	log=$b/replay-$h.log
	# shellcheck disable=SC2086
	if ./"$bin" -runs=1 -timeout=20 $files >"$log" 2>&1; then
		echo "ok - fuzz replay $h ($(echo "$files" | wc -l) files)"
	else
		echo "not ok - fuzz replay $h (log: fuzz/$log)"
		report "$log"
		exit 1
	fi
	;;
fuzz|smoke)
	secs=$4
	log=$b/$mode-$h.log
	mkdir -p "$b/corpus/$h" "$b/artifacts/$h"
	if [ "$mode" = smoke ]; then
		rm -rf "$b/smoke-new/$h"
		mkdir -p "$b/smoke-new/$h"
		dirs="$b/smoke-new/$h $b/corpus/$h"
		seed="-seed=${FUZZ_SEED:-1}"
	else
		dirs="$b/corpus/$h"
		seed=
	fi
	# shellcheck disable=SC2086
	if ./"$bin" ${FUZZ_OPTS:-} $seed -max_total_time="$secs" -artifact_prefix="$b/artifacts/$h/" \
		$dirs >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "ok - fuzz $h ($secs s${seed:+, $seed}, ${runs:-?} runs)"
	else
		echo "not ok - fuzz $h (log: fuzz/$log; input in fuzz/$b/artifacts/$h/)"
		report "$log"
		exit 1
	fi
	;;
*)
	echo "usage: run.sh replay|fuzz|smoke HARNESS BUILD [SECONDS]" >&2
	exit 2
	;;
esac
