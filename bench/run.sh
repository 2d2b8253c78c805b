#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/run.sh - the performance benchmark (SPEC.md, "Performance").
#
#   make bench              builds ./patchsite, then runs this from the top
#   sh bench/run.sh         the same, with ./patchsite already built
#
# 1. Installs what it needs when missing (Debian: binutils for as/ld/objcopy/
#    objdump, binutils-aarch64-linux-gnu for the arm64 image, time for
#    /usr/bin/time, python3; valgrind is optional).
# 2. bench/gen.py makes the kernel-sized images in bench/out/ (cached: about
#    2 minutes on 2 cores the first time, nothing after): four x86_64 ones
#    and vmlinux-arm64-50k, a relocatable arm64 CALL_OPS kernel.
# 3. bench/bench.py times `patchsite record`, `patchsite audit` and the
#    `objdump -d IMAGE | grep -c` baseline (arm64: aarch64-linux-gnu-objdump
#    -d | awk) side by side, checks that the site counts agree, and prints the
#    table (also written to bench/out/results.md).
# 4. bench/scale.py measures peak memory and time of record, record
#    --format=json and audit at 125k, 250k, 500k and 1M functions, beside
#    objdump, fits a line and fails unless memory grows linearly (appended
#    to bench/out/results.md).
#
# Environment: PATCHSITE (binary, default ./patchsite), RUNS_PATCHSITE (7),
# RUNS_OBJDUMP (3), BENCH_CALLGRIND=0 to skip the callgrind instruction count,
# BENCH_IMAGES=name,... to time only those images (the targets need all four
# x86_64 ones),
# SCALE_SIZES, SCALE_RUNS (5), BENCH_SCALE=0 to skip step 4.
set -eu
cd "$(dirname "$0")/.."

need=""
command -v python3 >/dev/null 2>&1 || need="$need python3"
for t in as ld objcopy objdump readelf; do
	command -v $t >/dev/null 2>&1 || { need="$need binutils"; break; }
done
for t in as ld objcopy objdump; do
	command -v aarch64-linux-gnu-$t >/dev/null 2>&1 ||
		{ need="$need binutils-aarch64-linux-gnu"; break; }
done
[ -x /usr/bin/time ] || need="$need time"
if [ -n "$need" ]; then
	echo "bench: installing$need"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends $need
fi
command -v valgrind >/dev/null 2>&1 ||
	echo "bench: valgrind not installed; skipping the callgrind instruction count"

PATCHSITE=${PATCHSITE:-$(pwd)/patchsite}
[ -x "$PATCHSITE" ] || { echo "bench: $PATCHSITE not built: run 'make bench'" >&2; exit 1; }
export PATCHSITE

python3 bench/gen.py
python3 bench/bench.py
[ "${BENCH_SCALE:-1}" = 0 ] || python3 bench/scale.py
