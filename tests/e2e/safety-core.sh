#!/bin/sh
# The runtime core's safety suite (issue 26): the live runtime never kills,
# hangs or corrupts the program it patches.  Each program of tests/safety/
# core-*.c (built -O2 -pg -mfentry by fixtures/safety, linked with the
# static runtime) is embedded by `patchsite embed` and run under `timeout`;
# it passes if it exits 0 and prints "NAME: ok" (its own checks: counts,
# return values, the bytes at its sites).  A hang (timeout) or a death by
# signal is a failure.  x86_64, native:
#   core-sigblock            a worker blocking every signal calls a traced
#                            function during rounds: rounds refused
#                            (-EDEADLK), site untouched, no death
#   core-nested-handler      a SIGUSR1 handler calling a traced function
#                            cannot nest in the runtime's SIGTRAP handler
#   core-seccomp-membarrier  membarrier denied after registration: attach and
#                            detach return -EPERM, old bytes kept
#   core-leader-exit         the main thread called pthread_exit: reclaim
#                            does not wait on the zombie leader
#   core-thread-churn        threads exiting during reclaim: no 5 s stall
#   core-cancel              a caller canceled inside ps_attach: later calls
#                            do not hang
#   core-two-runtimes        a second copy (the shared library) refuses
#                            with -EBUSY; the first's slots are untouched
#   core-fork                fork during rounds: the child's runtime is
#                            unlocked, no INT3, text R+X, attach works
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/safety-core.sh
# RT=DIR runs the suite against another runtime tree (e.g. an old one, to
# see each program fail there).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
RT=${RT:-$root/runtime}

. "$here/lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"
fx=$work/fx

ps_need_patchsite
if [ "$(uname -m)" != x86_64 ]; then
	not_ok "runs on x86_64 (this is $(uname -m))"
	finish
fi
if make -s -j2 -C "$root/fixtures/safety" O="$fx" RT="$RT" >"$work/make.log" 2>&1; then
	ok "build fixtures"
else
	not_ok "build fixtures" "$work/make.log"
	finish
fi

for src in "$root"/tests/safety/core-*.c; do
	t=$(basename "$src" .c)
	if ps_run 0 /dev/null -- embed "$fx/$t" -o "$fx/$t.emb"; then
		ok "$t: embed"
	else
		not_ok "$t: embed" "$ps_msg"
		continue
	fi
	arg=
	[ "$t" = core-two-runtimes ] && arg=$fx/rt/libpatchsite-callops.so
	timeout -k 5 60 "$fx/$t.emb" $arg >"$work/$t.out" 2>&1
	rc=$?
	case $rc in
	0) grep -qx "$t: ok" "$work/$t.out" && ok "$t" || not_ok "$t (no 'ok' line)" "$work/$t.out" ;;
	124|137) echo "timed out (60 s): a hang" >>"$work/$t.out"; not_ok "$t (hang)" "$work/$t.out" ;;
	*) [ $rc -gt 128 ] && echo "killed by signal $((rc - 128))" >>"$work/$t.out"
	   not_ok "$t (exit $rc)" "$work/$t.out" ;;
	esac
done

finish
