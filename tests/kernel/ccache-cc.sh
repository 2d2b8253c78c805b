#!/bin/sh
# tests/kernel/ccache-cc.sh COMPILER ARGS... - the kernel proofs' compiler
# when a script builds one configuration twice, the second time with
# CONFIG_PATCHSITE (lib.sh's kbuild, KERNEL_CCACHE): ccache in depend mode.
#
# Strategy: the second build's objects are the first build's, as the
# compiler made them, whenever no source reads a CONFIG_PATCHSITE* option
# (lib.sh's kernel_source checks the whole tree for the name).  ccache's
# preprocessor mode proved that per object by preprocessing it again (a
# third of a build's CPU); depend mode hashes the source, the flags and
# every header the compiler read, and never runs the preprocessor.  The
# one header the two configurations write differently, autoconf.h, is
# left out of that hash (CCACHE_IGNOREHEADERS), and in its place goes its
# text less the CONFIG_PATCHSITE* lines (CCACHE_EXTRAFILES): any other
# change of the configuration is a miss, as it would be without the rule.
# Runs in the build directory (kbuild's cwd for every compile).
h=include/generated/autoconf.h
x=include/generated/.autoconf.ccache
if [ -f "$h" ]; then
	# written again for every compile (a rename: a compile beside it reads
	# the old file or the new, the same text), never judged by its age
	grep -v "PATCHSITE" "$h" >"$x.$$" && mv -f "$x.$$" "$x" || exit 1
	CCACHE_DEPEND=1 CCACHE_IGNOREHEADERS=$h CCACHE_EXTRAFILES=$x
	export CCACHE_DEPEND CCACHE_IGNOREHEADERS CCACHE_EXTRAFILES
fi
exec ccache "$@"
