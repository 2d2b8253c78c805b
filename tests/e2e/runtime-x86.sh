#!/bin/sh
# End-to-end test of the x86_64 runtime (runtime/patcher/x86_64.c and .S), run
# natively: the programs of fixtures/runtime-x86, in four site flavours
# (clang -fpatchable-function-entry=5; gcc -fpatchable-function-entry=5
# -fcf-protection, ENDBR64 first; gcc -pg -mfentry -mnop-mcount; gcc -pg
# -mfentry -fcf-protection, calls to __fentry__) linked static, dynamic,
# PIE and static PIE, and five of them with the runtime and the program
# under ASan+UBSan, are embedded and run their tests (fixtures/runtime-x86/
# main.c; each checks what the program computes and what the runtime
# reports against the program's own view):
#   embed          `patchsite embed PROG -o PROG.emb` succeeds
#   run            the embedded program prints what the original prints
#   count          ps_attach_all / ps_detach_all over 4,108 functions: one
#                  round, 3 syncs each way; every call counted exactly;
#                  ps_attach/ps_detach, the _list forms, -ENOENT
#   regs           ip, parent_ip (the function's own return address),
#                  regs->ret, regs->pc, the integer argument registers, al of
#                  a variadic call, xmm0-7 of double arguments; a callback
#                  that changes regs->di changes the argument
#   direct         direct_call called by the site itself; one out of rel32
#                  reach through a slot's `jmp *0(%rip)`; func never called;
#                  its detach while a thread blocks SIGTRAP is -EDEADLK and
#                  it is still called (no cell: never a dormant slot)
#   several        two ops on one function: the site calls the core's list
#                  ops through its own slot, both ops called; -EBUSY for a
#                  direct_call; ps_detach_ops leaves the other
#   midbatch       a worker calls the function between the protocol's steps:
#                  INT3 seen, CALL (attach) or NOP (detach) emulated, counts
#                  exact after each step
#   reexec         a thread whose INT3 is handled after its round (and a later
#                  one) is over: the site runs again (CALL traced, result right)
#   sigtrap        the program's SIGTRAP handler still gets its int3, also
#                  after it replaced ours (put back at the next round); with
#                  SIG_DFL an int3 still kills with SIGTRAP
#   many           4,096 distinct ops attached at once, each sees only its
#                  function; twice (slots reused)
#   free           a thread parked inside a retired slot keeps it from reuse,
#                  and so does one parked at common's load of the slot's cell;
#                  a thread that cannot answer means nothing is reused
#   threads        two threads call every function while the main thread
#                  attaches and detaches (100 rounds): results unchanged; then
#                  no call lost or doubled while attached
#   not-embedded   the original program: every call -ENODEV
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/runtime-x86.sh
# Prints `ok - NAME` / `not ok - NAME` and `N passed, M failed`.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fix=$root/fixtures/runtime-x86
PATCHSITE=${PATCHSITE:-$root/patchsite}
PY=/usr/bin/python3

. "$here/lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ps_init "$work"
fx=$work/fx

ps_need_patchsite
for t in gcc clang "$PY" timeout; do
	command -v "$t" >/dev/null 2>&1 || not_ok "tool $t is installed"
done
if [ "$(uname -m)" != x86_64 ]; then
	not_ok "runs on x86_64 (this is $(uname -m))"
	finish
fi

if make -s -j2 -C "$fix" O="$fx" >"$work/make.log" 2>&1; then
	ok "build fixtures"
else
	not_ok "build fixtures" "$work/make.log"
	finish
fi

TESTS="count regs direct several midbatch reexec sigtrap many free threads"

for p in $(cd "$fx" && ls prog-* san-* | grep -v '\.'); do
	img=$fx/$p
	emb=$fx/$p.emb
	if ps_run 0 /dev/null -- embed "$img" -o "$emb"; then
		ok "$p: embed"
	else
		not_ok "$p: embed" "$ps_msg"
		continue
	fi
	"$img" >"$work/want" 2>&1
	"$emb" >"$work/got" 2>&1
	check "$p: run (same output as the original)" cmp "$work/want" "$work/got"
	for t in $TESTS not-embedded; do
		exe=$emb
		[ "$t" = not-embedded ] && exe=$img
		if timeout 120 "$exe" "$t" >"$work/t.out" 2>&1 && grep -qx "$t: ok" "$work/t.out"; then
			ok "$p: $t"
		else
			not_ok "$p: $t" "$work/t.out"
		fi
	done
done

finish
