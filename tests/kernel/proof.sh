# tests/kernel/proof.sh - the skeleton of the kernel proofs (sourced by
# lib.sh, after tests/e2e/lib.sh and bootimg.sh; bash).
#
# Strategy: the kernel scripts (riscv-relax, tables, x86, ppc64le,
# call-ops-os; contrib-x86 for one step) each prove something of their
# own, in one shape: the packages and the source; a configuration, cached
# in BUILD-DIR/.config.patchsite and made again when it misses an option;
# a build with its time and phase lines and its boot image audited; the
# kernel's own table (tests/kernel/mcounttab.py, not patchsite) as the
# oracle; record and audit against it; the table cleared and refilled by
# `record --in-place`; a wrong table; then boots two at a time (lib.sh's
# side: built, refilled, wrong) judged by their ftrace self tests and the
# tracefs /init.  Each step written more than once is one function here,
# called with the architecture's specifics (names, build target, config
# command, the texts of its checks); what one script alone does stays in
# it.  The functions write under $T (proof_start) and read the site count
# $n (table_oracle); a check's text names the script's architecture and
# case (its WHAT or LABEL argument), so each script's ok lines are its own.

BOOT_TIMEOUT=${BOOT_TIMEOUT:-480}
TAB="python3 tests/kernel/mcounttab.py"

# proof_start DIR [keep]: the packages and the source (a phase line), then
# T=DIR, emptied first (a rerun must not read the last run's images) but
# with "keep"
proof_start() {
	kernel_prepare
	phase "packages and source"
	T=$1
	[ "${2:-}" = keep ] || rm -rf "$T"
	mkdir -p "$T"
}

# kernel_configured NAME BUILD-DIR WANT UNWANT COMMAND...: the configuration
# cached in BUILD-DIR/.config.patchsite, made again by COMMAND (and cached)
# when it misses an option of WANT or has one of UNWANT (what an older
# version of a script set); then every option of WANT must be =y
kernel_configured() {
	local name=$1 b=$2 want=$3 unwant=$4 c again=0
	shift 4
	for c in $want; do
		grep -q "^CONFIG_$c=y" "$b/.config.patchsite" 2>/dev/null || again=1
	done
	for c in $unwant; do
		! grep -q "^CONFIG_$c=y" "$b/.config.patchsite" 2>/dev/null || again=1
	done
	if [ "$again" = 1 ]; then
		"$@"
		cp "$b/.config" "$b/.config.patchsite"
	fi
	for c in $want; do
		grep -q "^CONFIG_$c=y" "$b/.config" || die "$name: CONFIG_$c is not set"
	done
}

# kernel_built LABEL NAME ARCH BUILD-DIR TARGET: make TARGET (its log
# $OUT/NAME.build.log, whose tail a failure shows), a line with its wall
# time and a phase line, then its boot image audited (bootimg.sh's checks,
# named NAME) and a phase line
kernel_built() {
	local label=$1 name=$2 arch=$3 b=$4 t0
	t0=$(date +%s)
	KBUILD_DIR=$b kbuild "$arch" "$5" >"$OUT/$name.build.log" 2>&1 || {
		tail -n 30 "$OUT/$name.build.log" >&2
		die "$name kernel build failed"
	}
	echo "# $label kernel build: $(($(date +%s) - t0)) s"
	phase "$label build"
	bootimg_check "$arch" "$b" "$name"
	phase "$label boot image audited"
}

# kernel_timed NAME ARCH BUILD-DIR LOG [MAKE-ARGS...]: make Image (through
# ccache when the script exports KERNEL_CCACHE: its counters zeroed first,
# for ccache_hits), its wall, user and system seconds into $T/NAME.time,
# the log's tail shown when it fails
kernel_timed() {
	local name=$1 arch=$2 b=$3 log=$4
	shift 4
	ccache_zero
	KBUILD_DIR=$b /usr/bin/time -f "%e %U %S" -o "$T/$name.time" \
		bash -c '. tests/kernel/lib.sh; kbuild "$@" Image' kbuild "$arch" "$@" >"$log" 2>&1 || {
		tail -n 30 "$log" >&2
		die "the $name kernel build failed"
	}
}

# kernel_copies ARCH BUILD-DIR PREFIX: the build's vmlinux and boot Image
# (arm64, riscv) copied to PREFIX.vmlinux and PREFIX.Image, what the
# checks and boots read while the build directory is made again
kernel_copies() {
	cp "$2/vmlinux" "$3.vmlinux" || die "cannot copy $2/vmlinux"
	cp "$2/arch/$1/boot/Image" "$3.Image" || die "cannot copy $2/arch/$1/boot/Image"
}

# table_oracle IMAGE VALUES [NAME]: the kernel's own table under the
# sorttable rule (mcounttab.py sites: the oracle) into $T/oracle, n its
# count (more than 1000), and the table's entries as they stand into VALUES
table_oracle() {
	local p=${3:+$3: }
	$TAB sites "$1" >"$T/oracle" || die "${p}mcounttab.py cannot read the kernel's table"
	$TAB dump "$1" >"$2" || die "${p}mcounttab.py dump failed"
	n=$(wc -l <"$T/oracle")
	[ "$n" -gt 1000 ] || die "${p}the kernel's table has only $n sites"
	echo "# ${p}the kernel's table: $(wc -l <"$2") entries, $n inside a function"
}

# table_cleared IMAGE CLEARED VALUES: IMAGE with its table cleared
# (mcounttab.py clear: every slot and its addend zero), its entries (none)
# into VALUES
table_cleared() {
	$TAB clear "$1" "$2" || die "mcounttab.py clear failed"
	$TAB dump "$2" >"$3" || die "mcounttab.py dump failed"
	[ ! -s "$3" ] || die "the cleared table is not all zero"
}

# record_is_oracle WHAT IMAGE NAME [PATTERN MORE]: record IMAGE (exit 0)
# into $T/NAME.record, which is $T/oracle; with PATTERN, record -v, whose
# stderr must match it.  "WHAT: record = the kernel's table ($n sites)MORE"
record_is_oracle() {
	local r=$T/$3.record v=
	[ -z "${4:-}" ] || v=-v
	if ps_run -e "$r.err" 0 "$r" -- record $v "$2" && cmp -s "$r" "$T/oracle" &&
		{ [ -z "${4:-}" ] || grep -q "$4" "$r.err"; }; then
		ok "$1: record = the kernel's table ($n sites)${5:-}"
	else
		{
			cat "$ps_msg"
			diff "$T/oracle" "$r" | head -n 12
		} >>"$r.err"
		not_ok "$1: record = the kernel's table" "$r.err"
	fi
}

# audit_clean WHAT IMAGE AUDIT: audit IMAGE (its output into AUDIT) exits
# 0.  "WHAT: audit is clean (exit 0)"
audit_clean() {
	local rc
	ps_run -e "$3" 0 "$3" -- audit "$2"
	rc=$ps_rc
	if [ "$rc" -eq 0 ]; then
		ok "$1: audit is clean (exit 0)"
	else
		echo "audit exit status $rc" >>"$3"
		not_ok "$1: audit is clean (exit $rc)" "$3"
	fi
}

# audit_missing WHAT IMAGE AUDIT [MORE [SUMMARY]]: audit IMAGE exits 1 and
# names each of the $n sites missing (and has a line matching SUMMARY).
# "WHAT: audit names the $n sites missingMORE (exit 1)"
audit_missing() {
	local rc
	ps_run -e "$3" 1 "$3" -- audit "$2"
	rc=$ps_rc
	if [ "$rc" -eq 1 ] && [ "$(grep -c "^missing: " "$3")" -eq "$n" ] &&
		{ [ -z "${5:-}" ] || grep -q "$5" "$3"; }; then
		ok "$1: audit names the $n sites missing${4:-} (exit 1)"
	else
		echo "audit exit status $rc, $(grep -c "^missing: " "$3") missing" >>"$3"
		not_ok "$1: audit names every site missing" "$3"
	fi
}

# table_refilled WHAT NAME [OPTION...]: $T/NAME.cleared copied to
# $T/NAME.refilled and refilled by record --in-place OPTION... (exit 0), its
# table ($T/NAME.refilled.values) the oracle.  "WHAT: record --in-place
# [OPTION...] writes back the kernel's table"
table_refilled() {
	local k=$T/$2 what=$1
	shift 2
	cp "$k.cleared" "$k.refilled"
	if ps_run -e "$k.refill.err" 0 "$k.refill.err" -- record --in-place "$@" "$k.refilled" &&
		$TAB dump "$k.refilled" >"$k.refilled.values" && cmp -s "$k.refilled.values" "$T/oracle"; then
		ok "$what: record --in-place${1:+ $*} writes back the kernel's table ($n entries)"
	else
		{
			cat "$ps_msg"
			diff "$T/oracle" "$k.refilled.values" 2>&1 | head -n 12
		} >>"$k.refill.err"
		not_ok "$what: record --in-place${1:+ $*} writes back the kernel's table" "$k.refill.err"
	fi
}

# self_tests LOG TESTS [REF]: the boot in LOG passed its ftrace self tests:
# their list (lib.sh's selftests) into TESTS, nt of them, at least one, none
# FAILED, and given REF (another boot's list) the same list, else the
# difference is appended to LOG
self_tests() {
	selftests "$1" >"$2"
	nt=$(wc -l <"$2")
	[ "$nt" -gt 0 ] && ! grep -q FAILED "$1" && { [ -z "${3:-}" ] || cmp -s "$3" "$2"; } && return 0
	[ -z "${3:-}" ] || diff "$3" "$2" >>"$1" 2>&1
	return 1
}

# tracer_on WHAT LOG [WANT MORE WANT-MORE]: the tracefs /init of the boot
# in LOG switched the function tracer on over every function (lib.sh's
# tracefs_ok: thousands, or WANT, enabled, no ftrace bug), enabled their
# count.  "WHAT: function tracer on over every function: N enabledMORE, no
# ftrace bug"
tracer_on() {
	if enabled=$(tracefs_ok "$2" "${3:-}"); then
		ok "$1: function tracer on over every function: $enabled enabled${4:-}, no ftrace bug"
	elif [ -z "${3:-}" ]; then
		not_ok "$1: function tracer on, thousands enabled, no ftrace bug (enabled_functions $enabled)" "$2"
	else
		not_ok "$1: $3 functions enabled${5:-}, no ftrace bug (got $enabled)" "$2"
	fi
}

# built_boots LABEL MORE [CHECK...]: the kernel as built booted
# ($T/built.boot.log) with its self tests PASSED, none FAILED (their list
# $T/built.tests, nb of them), the function tracer on over every function
# (fb enabled, no ftrace bug) and the command CHECK true.  "LABEL as built
# boots: nb ftrace self tests PASSED, none FAILEDMORE, function tracer on
# fb functions, no ftrace bug"
built_boots() {
	local label=$1 more=$2 st
	shift 2
	self_tests "$T/built.boot.log" "$T/built.tests"
	st=$?
	nb=$nt
	fb=$(tracefs_ok "$T/built.boot.log")
	if [ $? -eq 0 ] && [ "$st" -eq 0 ] && { [ $# -eq 0 ] || "$@"; }; then
		ok "$label as built boots: $nb ftrace self tests PASSED, none FAILED$more, function tracer on $fb functions, no ftrace bug"
	else
		not_ok "$label as built boots, passes its self tests, traces every function (enabled_functions $fb)" \
			"$T/built.boot.log"
	fi
}

# boots_as_built NAME WANT: the boot of $T/NAME.boot.log passed the same
# self tests as the built one ($T/NAME.tests = $T/built.tests), none FAILED,
# and the function tracer was on over WANT functions (fr, no ftrace bug);
# what differs is appended to the log
boots_as_built() {
	local st
	self_tests "$T/$1.boot.log" "$T/$1.tests" "$T/built.tests"
	st=$?
	fr=$(tracefs_ok "$T/$1.boot.log" "$2")
	[ $? -eq 0 ] && [ "$st" -eq 0 ] && return 0
	echo "enabled_functions $fr, want $2" >>"$T/$1.boot.log"
	return 1
}

# wrong_boots LABEL WHERE [MORE]: the kernel with the wrong table booted
# ($T/wrong.boot.log): it logs "ftrace bug", enables no function, its
# tracefs /init ran to its end, and its self tests are not the built
# kernel's (so the proof can fail).  "LABEL with every entry WHERE: the
# kernel logs 'ftrace bug'MORE, enables 0 functions, K of the nb self tests
# PASSED"
wrong_boots() {
	local fw
	selftests "$T/wrong.boot.log" >"$T/wrong.tests"
	fw=$(tracefs_field "$T/wrong.boot.log" enabled_functions)
	if grep -q "ftrace bug" "$T/wrong.boot.log" && [ "$fw" = 0 ] &&
		grep -q "^TRACEFS done" <(tr -d '\r' <"$T/wrong.boot.log") &&
		! cmp -s "$T/built.tests" "$T/wrong.tests"; then
		ok "$1 with every entry $2: the kernel logs 'ftrace bug'${3:-}, enables $fw functions, $(wc -l <"$T/wrong.tests") of the $nb self tests PASSED"
	else
		echo "enabled_functions ${fw:-none}" >>"$T/wrong.boot.log"
		not_ok "$1 with a wrong table: 'ftrace bug', no function enabled" "$T/wrong.boot.log"
	fi
}

# objects_repadded BUILD-DIR READELF SECTION OUT: of the objects of
# BUILD-DIR's vmlinux.a (their list OUT.objects, no of them), those whose
# kbuild command (.NAME.o.cmd) names `patchsite repad --in-place --quiet`
# (nrep) and those with patch sites, a SECTION section by READELF (nsit);
# the ones with sites that were not repadded are listed in OUT.norepad
objects_repadded() {
	local b=$1 readelf=$2 sec=$3 out=$4 o r
	(cd "$b" && ar t vmlinux.a) >"$out.objects" || die "cannot list vmlinux.a"
	no=$(wc -l <"$out.objects")
	: >"$out.norepad"
	nsit=0
	nrep=0
	while read -r o; do
		r=0
		grep -q -F "patchsite repad --in-place --quiet $o" "$b/$(dirname "$o")/.$(basename "$o").cmd" 2>/dev/null && r=1
		nrep=$((nrep + r))
		if $readelf -S -W "$b/$o" | grep -q "$sec"; then
			nsit=$((nsit + 1))
			[ "$r" -eq 1 ] || echo "$o" >>"$out.norepad"
		fi
	done <"$out.objects"
}
