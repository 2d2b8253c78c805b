#!/bin/sh
# tests/testrun.sh - runs one test script for make and counts its checks;
# sums them for `make unit`, `make e2e`, `make kernel-check`, `make check`.
#
#   sh tests/testrun.sh run NAME COMMAND...
#   sh tests/testrun.sh summary NAME...
#
# Strategy: `run` is each test target's recipe (e2e-tracer: tests/e2e/tracer.sh,
# unit: build-san/check_main, ...).  It runs COMMAND with its output in
# $TEST_LOGS/NAME.log, also shown as it comes (make -O, which `make e2e`
# passes, holds a target's output back until it ends, so two scripts run side
# by side never interleave), and writes $TEST_LOGS/NAME.result: the checks
# that passed and failed by the script's own last summary line (`N passed,
# M failed` as tests/e2e/lib.sh's finish prints it, or Check's `NN%: Checks:
# N, Failures: F, Errors: E`), its exit status and its time.  A script that
# ends without that line (killed, a syntax error, a `set -e` exit) is one
# failed check; so is a nonzero exit after a line with no failure.  Exits
# with COMMAND's status, so `make e2e-tracer` alone fails as the script does.
#
# `summary` reads the .result of each NAME (one that never ran, because a
# prerequisite such as the build failed, is one failed check) and prints the
# total as its last-but-list line, `N passed, M failed`, then the scripts
# that failed, one a line; exits 1 if any did.
#
# COMMAND runs without make's MAKEFLAGS (-k, -O, -j and the jobserver are for
# the test targets, not for the makes a script runs itself) and under
# `timeout $TEST_TIMEOUT` (seconds; 0: none), so a hung script is a failure
# with its log, not the end of `make check`.
#
# Each .result also holds COMMAND's CPU seconds (user + system of it and
# every process it waited for), and `summary` prints them beside the wall
# seconds, and the sums: so a run's log shows how busy the cores were
# (CPU / (cores x wall)), script by script and over the pool
# (bench/RESULTS.md reads `make check`'s from CI's log).
set -u

logs=${TEST_LOGS:-build/test-logs}

case ${1:-} in
run)
	shift
	name=$1
	shift
	mkdir -p "$logs" || exit 2
	log=$logs/$name.log
	rm -f "$logs/$name.result"
	echo "=== $name: $*"
	t0=$(date +%s)
	to=${TEST_TIMEOUT:-0}
	case $to in '' | *[!0-9]*) to=0 ;; esac
	# the status of COMMAND, not of tee's: through a file.  timeout puts
	# COMMAND in a process group of its own, which a ^C at the terminal
	# does not reach: the trap hands it on (timeout ends the group)
	{
		if [ "$to" -gt 0 ]; then
			env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
				timeout -k 30 "$to" "$@" </dev/null &
			tpid=$!
			trap 'kill -TERM $tpid 2>/dev/null' INT TERM HUP
			while :; do
				wait $tpid
				st=$?
				kill -0 $tpid 2>/dev/null || break
			done
		else
			env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES "$@" </dev/null
			st=$?
		fi
		echo $st >"$log.rc"
		# this group is a subshell of its own: its children's times are
		# COMMAND's (timeout's, which waited for COMMAND); `times` in a
		# pipe would be a further subshell's: through a file
		times >"$log.cpu"
		awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } }
			END { printf "%.0f\n", s }' "$log.cpu" >"$log.cpu.s" && mv "$log.cpu.s" "$log.cpu"
	} 2>&1 | tee "$log"
	rc=$(cat "$log.rc" 2>/dev/null || echo 99)
	cpu=$(cat "$log.cpu" 2>/dev/null || echo -)
	rm -f "$log.rc" "$log.cpu"
	secs=$(($(date +%s) - t0))
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$|^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+$' \
		"$log" | tail -n 1)
	note=
	case $line in
	*%:*)
		set -- $(echo "$line" | tr -dc '0-9 ')
		# NN Checks Failures Errors
		p=$(($2 - $3 - $4)) f=$(($3 + $4)) ;;
	?*)
		set -- $line
		p=$1 f=$3 ;;
	*)
		p=0 f=1
		note="ended without its 'N passed, M failed' line" ;;
	esac
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		note="exit status $rc after a summary with no failure"
	fi
	[ "$rc" = 124 ] && note="timed out after ${TEST_TIMEOUT:-?} s${note:+; $note}"
	echo "$name $p $f $rc $secs $cpu $note" >"$logs/$name.result"
	echo "=== $name: exit $rc, $p checks passed and $f failed, $secs s, $cpu s CPU${note:+ ($note)}"
	exit "$rc"
	;;
summary)
	shift
	tp=0 tf=0 ts=0 tc=0
	: >"$logs/.failed" 2>/dev/null || { mkdir -p "$logs" && : >"$logs/.failed"; }
	for name in "$@"; do
		if [ -f "$logs/$name.result" ]; then
			read -r _ p f rc secs cpu note <"$logs/$name.result"
		else
			p=0 f=1 rc=- secs=- cpu=- note="did not run (a prerequisite failed: see make's output above)"
		fi
		tp=$((tp + p)) tf=$((tf + f))
		case $secs in *[!0-9]* | '') ;; *) ts=$((ts + secs)) ;; esac
		case $cpu in *[!0-9]* | '') ;; *) tc=$((tc + cpu)) ;; esac
		printf '%6s s %6s s CPU  %-28s %s checks passed, %s failed\n' "$secs" "$cpu" "$name" "$p" "$f" \
			>>"$logs/.times"
		if [ "$f" -gt 0 ]; then
			[ "$rc" = - ] && st= || st=", exit status $rc"
			echo "  $name: $f of $((p + f)) checks failed$st${note:+, $note}; log $logs/$name.log" \
				>>"$logs/.failed"
		fi
	done
	if [ -f "$logs/.times" ]; then
		echo "# time and checks per script:"
		sed 's/^/# /' "$logs/.times"
		echo "# the scripts' own times summed: $ts s wall, $tc s CPU"
		# make check's parts, as its recipe marked them (Makefile's CHECK_MARK)
		[ ! -f "$logs/.marks" ] || cat "$logs/.marks"
		rm -f "$logs/.times"
	fi
	echo "$tp passed, $tf failed"
	if [ -s "$logs/.failed" ]; then
		echo "failed scripts:"
		cat "$logs/.failed"
		rm -f "$logs/.failed"
		exit 1
	fi
	rm -f "$logs/.failed"
	exit 0
	;;
*)
	echo "usage: sh tests/testrun.sh run NAME COMMAND... | summary NAME..." >&2
	exit 2
	;;
esac
