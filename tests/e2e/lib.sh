# tests/e2e/lib.sh - the harness every test script sources (POSIX sh: the
# e2e scripts run under dash, tests/kernel under bash).
#
#   . "$here/lib.sh"        (or . "$root/tests/e2e/lib.sh")
#   ps_init "$tmp"          a scratch directory the script removes at exit
#
# Counting and reporting (`ok - NAME` / `not ok - NAME`, then
# `N passed, M failed`):
#   ok NAME                 a passed check
#   not_ok NAME [FILE]      a failed check; FILE's first 25 lines as detail
#                           (ps_detail=tail: its last 25, as tests/kernel sets)
#   check NAME CMD...       ok if CMD exits 0, else not_ok with its output
#   ps_need_patchsite       ok if $PATCHSITE is an executable; else not_ok, finish
#   note TEXT...            a `# TEXT` line
#   waitline FILE PATTERN [TENTHS], waitfile FILE [TENTHS]: wait for a line or a file
#   finish                  the summary line; exits 0 only if nothing failed
#
# Running patchsite: every run goes through ps_run, which asserts the exit
# status before anything may read the output (tests/e2e/lint-tests.py
# enforces it):
#
#   ps_run [OPTIONS] STATUS OUT -- ARG...
#
# runs "$PATCHSITE" ARG... with stdout in OUT (a file, or /dev/null) and
# stderr in $ps_err; sets $ps_rc to its exit status.  STATUS is what it must
# exit with: a number, or a case pattern such as '[12]' (never '*').  When
# the status is not STATUS, ps_run writes the command, the status and the
# first lines of stderr to $ps_msg (emptied at each run) and returns 1, so
# the caller's check fails with that detail:
#
#   if ps_run 0 "$t/list" -- record "$img" && same_sorted "$t/list" "$t/want"; then
#           ok NAME
#   else
#           not_ok NAME "$ps_msg"
#   fi
#
# or in one call, `ps_check NAME STATUS OUT -- ARG...` (ok/not_ok on the
# status alone; it returns ps_run's status, so the checks of the output
# run only after a run that exited as it should):
#
#   if ps_check "record: exit 0" -e "$t/err" 0 "$t/out" -- record "$img"; then
#           check "record: nothing on stderr" test ! -s "$t/err"
#   fi
#
# Options:
#   -P        run $PATCHSITE_PLAIN (the build without sanitizers)
#   -C DIR    run in DIR
#   -e FILE   stderr in FILE instead of $ps_err (FILE = OUT: both in OUT)
#   -x WORDS  a command prefix, word-split: `-x "timeout 120"`
# Environment for the run goes before the call: `FAILSHIM_TARGET=$img ps_run ...`.
# A run in the background (`ps_run ... &`) is asserted by `wait $!`.

pass=0
fail=0
ps_dir=
ps_err=
ps_msg=
ps_rc=

ps_init() { # ps_init DIR: scratch files of the harness go under DIR/.harness
	ps_dir=$1/.harness
	mkdir -p "$ps_dir" || exit 1
	ps_err=$ps_dir/stderr
	ps_msg=$ps_dir/msg
}

ok() {
	pass=$((pass + 1))
	echo "ok - $1"
}

ps_detail=head	# not_ok shows the first 25 lines of its FILE; `tail`: the last 25

not_ok() { # not_ok NAME [FILE-WITH-DETAILS]
	fail=$((fail + 1))
	echo "not ok - $1"
	if [ $# -gt 1 ] && [ -s "$2" ]; then
		"$ps_detail" -n 25 "$2" | sed 's/^/#   /'
	fi
}

note() { echo "# $*"; }

# waitline FILE PATTERN [TENTHS]: until a line of FILE matches PATTERN
# (grep -E), TENTHS tenths of a second at most (default 1200); says how long
# it waited when it gives up, and returns 1
waitline() {
	_wl=0
	while [ $_wl -lt "${3:-1200}" ]; do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		_wl=$((_wl + 1))
	done
	echo "waited $((${3:-1200} / 10)) s for /$2/ in $1"
	return 1
}
# waitfile FILE [TENTHS]: until FILE exists, as waitline
waitfile() {
	_wf=0
	while [ $_wf -lt "${2:-1200}" ]; do
		[ -e "$1" ] && return 0
		sleep 0.1
		_wf=$((_wf + 1))
	done
	echo "waited $((${2:-1200} / 10)) s for $1"
	return 1
}

check() { # check NAME COMMAND...: ok if COMMAND succeeds; its output is the detail
	_ck_name=$1
	shift
	if "$@" >"$ps_dir/check.out" 2>&1; then
		ok "$_ck_name"
	else
		not_ok "$_ck_name" "$ps_dir/check.out"
	fi
}

finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}

ps_run() {
	if [ -z "$ps_dir" ]; then
		echo "ps_run: ps_init was not called" >&2
		exit 99
	fi
	: >"$ps_msg"
	_ps_bin=${PATCHSITE:-}
	_ps_cd=
	_ps_wrap=
	ps_err=$ps_dir/stderr
	while [ $# -gt 0 ]; do
		case $1 in
		-P) _ps_bin=${PATCHSITE_PLAIN:-}; shift ;;
		-C) _ps_cd=$2; shift 2 ;;
		-e) ps_err=$2; shift 2 ;;
		-x) _ps_wrap=$2; shift 2 ;;
		*) break ;;
		esac
	done
	if [ $# -lt 3 ] || [ "$3" != -- ]; then
		echo "ps_run: usage: ps_run [-P] [-C DIR] [-e FILE] [-x WORDS] STATUS OUT -- ARG..." >&2
		exit 99
	fi
	_ps_want=$1
	_ps_out=$2
	shift 3
	case $_ps_want in
	'*' | '') echo "ps_run: STATUS '$_ps_want' checks nothing" >&2; exit 99 ;;
	esac
	if [ "$ps_err" = "$_ps_out" ]; then
		if [ -n "$_ps_cd" ]; then
			(cd "$_ps_cd" && $_ps_wrap "$_ps_bin" "$@") >"$_ps_out" 2>&1
		else
			$_ps_wrap "$_ps_bin" "$@" >"$_ps_out" 2>&1
		fi
	else
		if [ -n "$_ps_cd" ]; then
			(cd "$_ps_cd" && $_ps_wrap "$_ps_bin" "$@") >"$_ps_out" 2>"$ps_err"
		else
			$_ps_wrap "$_ps_bin" "$@" >"$_ps_out" 2>"$ps_err"
		fi
	fi
	ps_rc=$?
	# shellcheck disable=SC2254 # STATUS is a pattern
	case $ps_rc in
	$_ps_want) return 0 ;;
	esac
	{
		echo "${_ps_wrap:+$_ps_wrap }patchsite $*"
		echo "exit status $ps_rc, expected $_ps_want"
		if [ -s "$ps_err" ]; then
			head -n 5 "$ps_err" | sed 's/^/stderr: /'
		else
			echo "stderr: (empty)"
		fi
	} >"$ps_msg"
	return 1
}

ps_check() { # ps_check NAME [OPTIONS] STATUS OUT -- ARG...: ok/not_ok on the status
	_pc_name=$1
	shift
	if ps_run "$@"; then
		ok "$_pc_name"
		return 0
	fi
	not_ok "$_pc_name" "$ps_msg"
	return 1
}

# ps_need_patchsite: the script cannot run without $PATCHSITE (a check, so a
# missing build is a failure, never a skip)
ps_need_patchsite() {
	if [ -n "${PATCHSITE:-}" ] && [ -x "$PATCHSITE" ]; then
		ok "patchsite executable"
		return 0
	fi
	echo "PATCHSITE='${PATCHSITE:-}' is not an executable" >"$ps_dir/need.msg"
	not_ok "patchsite executable" "$ps_dir/need.msg"
	finish
}

# arch_var VAR: a variable of fixtures/arches.mk (ARCHES, CROSS_riscv64, ...).
# The make runs outside any make that started this script: an inherited
# MAKEFLAGS/MAKELEVEL turns on "make[2]: Entering directory" lines, which
# would be read as values (make check's e2e under CI did exactly that).
arch_var() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
		make -s --no-print-directory -f "${here:?}/../../fixtures/arches.mk" "print-$1"
}
