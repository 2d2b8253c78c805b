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
#   core-handler-replace     the program installs SIGTRAP handlers during
#                            rounds (sigaction, signal): none sees an INT3,
#                            every SIGTRAP it raises reaches its handler
#   core-dormant             a worker blocks every signal after the ops were
#                            attached: a detach of every site of an ops
#                            returns 0 without INT3 (dormant slots), the
#                            ops' count stops, partial detaches and attaches
#                            are refused, a fork child and a later round
#                            once the worker unblocks put the file's NOPs back
# The situations that apply where sites are literal swaps (no INT3, no
# signal: runtime/README.md "Safety") run again for aarch64 and riscv64
# under qemu-user (fixtures/arches.mk's RUN_ lines): core-fork and
# core-two-runtimes must pass there, core-sigblock and core-nested-handler
# must see every round succeed.
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

ps_need_patchsite
if [ "$(uname -m)" != x86_64 ]; then
	not_ok "runs on x86_64 (this is $(uname -m))"
	finish
fi

# Seconds before a case is called a hang.  core-thread-churn (two threads
# creating threads without pause while 25 reclaim rounds ask every thread
# where it stands) took 10 to 34 s beside make check's kernel builds at a
# load of 15 to 23, and once over 60; a hang never ends.
CASE_TIMEOUT=${CASE_TIMEOUT:-180}
arches_mk="$root/fixtures/arches.mk"
for arch in x86_64 aarch64 riscv64; do
	fx=$work/fx-$arch
	runner=$(make -s --no-print-directory -f "$arches_mk" "print-RUN_$arch")
	[ "$runner" = native ] && runner=
	if make -s -j2 -C "$root/fixtures/safety" ARCH=$arch O="$fx" RT="$RT" \
		>"$work/make.log" 2>&1; then
		ok "$arch: build fixtures"
	else
		not_ok "$arch: build fixtures" "$work/make.log"
		continue
	fi
	for t in $(make -s --no-print-directory -C "$root/fixtures/safety" ARCH=$arch print-PROGS); do
		if ps_run 0 /dev/null -- embed "$fx/$t" -o "$fx/$t.emb"; then
			ok "$arch: $t: embed"
		else
			not_ok "$arch: $t: embed" "$ps_msg"
			continue
		fi
		arg=
		[ "$t" = core-two-runtimes ] && arg=$fx/rt/libpatchsite-callops.so
		# shellcheck disable=SC2086 # runner and arg are word lists
		timeout -k 5 "$CASE_TIMEOUT" $runner "$fx/$t.emb" $arg >"$work/$t.out" 2>&1
		rc=$?
		case $rc in
		0)	if grep -qx "$t: ok" "$work/$t.out"; then
				ok "$arch: $t"
			else
				not_ok "$arch: $t (no 'ok' line)" "$work/$t.out"
			fi ;;
		124|137)
			echo "timed out ($CASE_TIMEOUT s): a hang" >>"$work/$t.out"
			not_ok "$arch: $t (hang)" "$work/$t.out" ;;
		*)	[ $rc -gt 128 ] && echo "killed by signal $((rc - 128))" >>"$work/$t.out"
			not_ok "$arch: $t (exit $rc)" "$work/$t.out" ;;
		esac
	done
done

finish
