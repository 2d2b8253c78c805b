#!/bin/sh
# tests/kernel/ccache-host.sh ARGS... - every kernel proof's host compiler
# (lib.sh's kbuild: HOSTCC): gcc through ccache in depend mode, its cache in
# KERNEL_HOSTCCACHE (build-kernel/ccache-host).
#
# Strategy: the four configurations the proofs build (one an
# architecture) each compile the same host programs from the same sources
# with the same flags (Kconfig's conf, dtc and libfdt, kallsyms,
# sorttable...): the first build compiles them, the others take its
# objects (bench/RESULTS.md).  Depend mode hashes the source, the
# flags and every header the compiler read (the -Wp,-MMD list kbuild asks
# for), so a host program that reads a header of its build's own (a
# generated parser, an architecture's) is compiled again when that differs.
# A cache of its own: the target compiles' cache (KERNEL_CCACHE) counts its
# hits for the build-time lines, and two proofs build at once.
CCACHE_DIR=${KERNEL_HOSTCCACHE:?} CCACHE_DEPEND=1 exec ccache gcc "$@"
