#!/bin/sh
# make demo: record and audit the bundled example images (built from
# fixtures/src by `make -C fixtures demo`).  audit exits 1 on findings; the
# arm64 image has misaligned CALL_OPS literals on purpose (-Os, assembly),
# so that status is shown, not treated as a failure of the demo.
set -u
P=./patchsite
D=fixtures/out/demo
for img in "$D/fentry-x86_64" "$D/callops-arm64"; do
	echo "==> patchsite record -v --symbolize $img"
	$P record -v --symbolize "$img" || exit 2
	echo
	echo "==> patchsite audit $img"
	$P audit "$img"
	st=$?
	echo "(audit exit status $st: 0 clean, 1 findings, 2 error)"
	[ "$st" -le 1 ] || exit 2
	echo
done
