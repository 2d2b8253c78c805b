#!/bin/bash
# compare-outputs.sh: the refactoring guard.  Runs every patchsite command
# on every fixture image (and, with --bench, the bench images) with two
# patchsite binaries, and compares exit status, stdout, stderr and every
# written file byte for byte.
#
#   tests/compare-outputs.sh OLD_PATCHSITE NEW_PATCHSITE [--bench] [--keep DIR]
#                            [-j N] [--filter STR] [--corpus] [--deb DIR]...
#                            [--deb-every N] [--allocfail N] [--no-fixtures]
#
# Using it for a refactor (a change that must not change any output):
#
#   git worktree add /tmp/ps-before HEAD        # the commit before the refactor
#   make -C /tmp/ps-before patchsite            # -> /tmp/ps-before/patchsite
#   make                                        # the refactored tree -> ./patchsite
#   make fixtures                               # once; or make -C fixtures,
#                                               # fixtures/minikernel, fixtures/repad,
#                                               # fixtures/embed, fixtures/nearmiss
#   tests/compare-outputs.sh /tmp/ps-before/patchsite ./patchsite          # ~2 min
#   tests/compare-outputs.sh /tmp/ps-before/patchsite ./patchsite --bench  # + bench/out
#   git worktree remove /tmp/ps-before
#
# Both binaries run on the same fixture files, so build the fixtures once and
# do not rebuild them between the two binaries (this script runs both itself).
# Exit 0: nothing differs, the refactor changed no output.  Exit 1: one
# "DIFFER IMAGE :: COMMAND :: what" line per differing (image, command), with
# the first lines of a diff, then "N comparisons, M differ".  Exit 2: setup
# error (a binary that does not run, a fixture directory missing or empty,
# bench/out missing with --bench); nothing is ever skipped silently.
#
# What runs, for each ELF file under fixtures/out, fixtures/minikernel/out,
# fixtures/nearmiss/out, fixtures/embed/out, fixtures/repad/out (and
# bench/out with --bench; other files there, .meta/.link/sources/*.json, are
# counted and named as not inputs):
#   record; record --symbolize; record --format=json; record --format=asm;
#   record --format=elf -o out.o; record --in-place -o out; record --in-place
#   (on the copy: the journal's write where the file lies); audit;
#   audit --format=json; ET_REL: repad IN -o out.o; riscv64 ET_REL:
#   pin --dry-run, pin (on the copy); arm64 programs of fixtures/embed/out:
#   embed IN -o out.
# With --corpus, the same on every file (ELF or not: a refusal is compared
# too) of the hostile corpus (tests/hostile/mkcorpus.py, made from
# fixtures/out into a temporary directory), fuzz/seeds and fuzz/regressions.
# With --deb DIR (Debian's linux-image packages unpacked in DIR, as
# /work/cache/deb/amd64): every vmlinux and vmlinuz under it and every
# --deb-every'th module (.ko, .ko.xz; default 10), in path order, and the
# package audit of DIR/lib/modules (audit -j 2 DIR, audit -v --format=json).  With
# --allocfail N: record, record --format=json, record --in-place (-o), audit
# and audit --format=json on the seven fixtures of tests/e2e/allocfail.sh,
# each run with one allocation failing (tests/hostile/allocshim.c, built
# here; give the plain builds, not ASan's), for N allocations spread evenly
# over those the run makes: the error paths, byte for byte.  --no-fixtures
# leaves the fixture directories out (with the options above).
#
# Issue 27's proof of a refactor, all of it:
#   tests/compare-outputs.sh OLD NEW --corpus --allocfail 60 \
#       --deb /work/cache/deb/amd64 --deb /work/cache/deb/arm64
#
# No normalisation (but the random name of a temporary that a message
# about a failed write names: compare_outputs.py's TEMP_NAME): OLD runs, then NEW runs, in the same scratch directory
# (same absolute path, cwd, file names, environment with LC_ALL=C), and the
# directory is moved aside between the two runs.  A command that writes gets
# its own copy of the input there (in/NAME), and everything left in the
# directory afterwards (outputs, stray temporaries, the input copy) is
# compared, with file modes.  Read-only commands read the fixture by its
# absolute path, which both runs share; a fixture whose size/mtime/inode
# changes during a run is reported as a difference.
#
# --keep DIR keeps both runs (res/N/{old,new}/{stdout,stderr,tree/}) of every
# comparison that differs, and report.txt.  -j N runs N comparisons at once
# (default: the number of CPUs, at least 2).  --filter STR limits the images
# to paths containing STR (development only; the output says how many were
# left out).  PYTHON3 selects the python3 (default /usr/bin/python3).

set -u

here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${PYTHON3:-}" ]; then
	py=$PYTHON3
elif [ -x /usr/bin/python3 ]; then
	py=/usr/bin/python3     # not a version manager's slow shim
else
	py=python3
fi
if ! command -v "$py" >/dev/null 2>&1; then
	echo "compare-outputs: $py not found" >&2
	exit 2
fi
if [ ! -f "$here/compare_outputs.py" ]; then
	echo "compare-outputs: $here/compare_outputs.py missing" >&2
	exit 2
fi
exec "$py" "$here/compare_outputs.py" "$@"
