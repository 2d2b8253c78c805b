# patchsite - post-link ftrace patch-site tool
#
#   make            build ./patchsite
#   make check      install test dependencies (apt-get, when root), build with
#                   ASan+UBSan, run the Check unit tests and the end-to-end tests
#   make demo       install dependencies, build, record and audit a bundled image
#   make install    PREFIX=/usr/local DESTDIR= RT_ARCHES= (doc/install.md)
#   make uninstall  the same variables

VERSION   := 0.1.0
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
MANDIR    ?= $(PREFIX)/share/man
CC        ?= cc
CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
             -Wno-missing-field-initializers
CPPFLAGS  += -D_GNU_SOURCE -DPATCHSITE_VERSION='"$(VERSION)"' -I.
# Nothing here may run a tool that `make deps` installs: make parses this file
# before deps runs (a fresh machine has no pkg-config).  These are the
# libraries patchsite calls directly; Debian's pkg-config files add nothing.
LIBS      := -ldw -lelf -lz -llzma -lzstd -llz4 -lbz2 -llzo2
CHECK_LIBS := -lcheck -lsubunit -lm -lrt -lpthread

LIB_SRCS  := $(sort $(wildcard base/*.c arch/*.c elfio/*.c recordsites/*.c rewriter/*.c))
CLI_SRCS  := patchsite.c $(sort $(wildcard trace/*.c))
TEST_SRCS := $(sort $(wildcard tests/check_*.c tests/arch/*.c)) tests/elfgen.c

BUILD     ?= build
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/tests/arch_cases.o
DEPS      := $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_OBJS:.o=.d)

SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all clean check unit e2e deps demo install uninstall man doc-check fixtures bench bench-inplace bench-package bench-repad boot-check-arm64 san kernel-check runtime fuzz safety-core vmlinuz vmlinuz-debian realserver
all: patchsite

patchsite: $(BUILD)/patchsite
	cp $< $@

$(BUILD)/patchsite: $(CLI_OBJS) $(LIB_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/check_main: $(TEST_OBJS) $(LIB_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) $(CHECK_LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -MP -c -o $@ $<

# The decoder test's table: every architecture of fixtures/arches.mk has its
# cases in tests/arch/ARCH.cases, assembled by its own binutils and checked
# against its objdump by tests/arch/gen.py (tests/arch/README).  arches.mk
# only sets variables: it runs nothing while make parses this file.
include fixtures/arches.mk
ARCH_CASES := $(ARCHES:%=tests/arch/%.cases)

ARCH_CROSS := $(foreach a,$(ARCHES),$(a)=$(CROSS_$(a)))

# first, gen.py must refuse every wrong case of tests/arch/refused/
$(BUILD)/tests/arch-refused.stamp: tests/arch/gen.py fixtures/arches.mk \
		$(wildcard tests/arch/refused/*.cases)
	@mkdir -p $(dir $@)
	python3 tests/arch/gen.py --refused $@ $(BUILD)/tests/arch-refused tests/arch/refused \
		$(ARCH_CROSS)

$(BUILD)/tests/arch_cases.c: tests/arch/gen.py fixtures/arches.mk $(ARCH_CASES) \
		$(wildcard tests/arch/*.c) $(BUILD)/tests/arch-refused.stamp
	@mkdir -p $(dir $@)
	python3 tests/arch/gen.py $@ $(BUILD)/tests/arch-cases tests/arch $(ARCH_CROSS)

$(BUILD)/tests/arch_cases.o: $(BUILD)/tests/arch_cases.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -MP -c -o $@ $<

-include $(DEPS)

deps:
	sh scripts/install-deps.sh

# A kernel as it ships (doc/audit-vmlinuz.md): bzImages made from the
# minikernel fixtures, read through their kallsyms tables or a System.map.
vmlinuz: e2e-vmlinuz

# Not in `make check`: downloads Debian's 6.12 and 6.1 cloud-amd64 and cloud-arm64
# kernel packages and their -dbg packages (about 1.4 GB, into VMLINUZ_CACHE) and
# compares what patchsite reads from vmlinuz with the -dbg vmlinux, entry for entry.
VMLINUZ_CACHE ?= $(HOME)/.cache/patchsite-vmlinuz
vmlinuz-debian: all
	CACHE=$(VMLINUZ_CACHE) PATCHSITE=$(CURDIR)/patchsite DEB_ARCH=amd64 sh tests/vmlinuz-debian.sh
	CACHE=$(VMLINUZ_CACHE) PATCHSITE=$(CURDIR)/patchsite DEB_ARCH=arm64 sh tests/vmlinuz-debian.sh
	CACHE=$(VMLINUZ_CACHE) PATCHSITE=$(CURDIR)/patchsite DEB_ARCH=amd64 DEB_SERIES=6.1 sh tests/vmlinuz-debian.sh
	CACHE=$(VMLINUZ_CACHE) PATCHSITE=$(CURDIR)/patchsite DEB_ARCH=arm64 DEB_SERIES=6.1 sh tests/vmlinuz-debian.sh

# The sanitizer build lives in its own tree so that a plain `make` stays fast.
san:
	$(MAKE) BUILD=build-san CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" \
		build-san/patchsite build-san/check_main

# --- the tests -------------------------------------------------------------
# Every test script is a target of its own (unit, e2e-NAME, kernel-NAME) run
# through tests/testrun.sh, which keeps its output in $(TEST_LOGS)/NAME.log
# and its checks in NAME.result; `make e2e`, `make kernel-check` and
# `make check` run theirs past any failure and end with the total,
# `N passed, M failed` (checks, summed over the scripts' own last lines),
# then the scripts that failed; they exit 1 if any did.
TEST_LOGS     ?= build/test-logs
TESTRUN       := TEST_LOGS=$(TEST_LOGS) sh tests/testrun.sh
# seconds before a hung script is stopped (a failure, with its log)
E2E_TIMEOUT   ?= 1800
KERNEL_TIMEOUT ?= 5400
# scripts run side by side (each one mostly one process); make -O keeps
# each one's output together
E2E_JOBS      ?= 2

.PHONY: unit-run
unit:
	@rm -f $(TEST_LOGS)/unit.result
	-@$(MAKE) --no-print-directory unit-run
	@$(TESTRUN) summary unit
# Check's per-test timeouts (4 s unless a case sets its own) times five: in
# `make check` the unit tests run under the sanitizers beside an e2e script
# and a kernel build, and a test that takes 1 s alone took over 4 s at a
# load of 11 (23 of 1,121 timed out); a hang is still a failure
unit-run: san
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CK_FORK=yes CK_TIMEOUT_MULTIPLIER=5 \
		$(TESTRUN) run unit ./build-san/check_main

fixtures: san
	$(MAKE) -C fixtures
	$(MAKE) -C fixtures/minikernel
	$(MAKE) -C fixtures/repad
	$(MAKE) -C fixtures/embed
	$(MAKE) -C fixtures/nearmiss
	$(MAKE) -C fixtures/repad-kernel
	$(MAKE) -C fixtures/realprog-x86
	$(MAKE) -C fixtures/realserver

# The end-to-end scripts: `make e2e-NAME` runs tests/e2e/NAME.sh with
# PATCHSITE (the ASan+UBSan build) and PATCHSITE_PLAIN (the plain one).  To
# add a script, add its NAME to E2E_SCRIPTS; a second run of one script with
# other settings is a VARIANT: its name in E2E_VARIANTS, its script in
# E2E_SCRIPT_<variant>, its environment in E2E_ENV_<variant>.  The slowest
# come first (by one sequential run: realprog-riscv64 573 s, stress 370,
# run 349, hostile 273, runtime-x86 271 ... cli 3, at load 6-18), so that
# `make e2e`'s two at a time end together.
E2E_SCRIPTS := realprog-riscv64 realserver stress run hostile runtime-x86 repad-zlib allocfail \
	realprog-x86 tracer safety-core safety-tracer embed-x86 embed repad vmlinuz \
	repad-kernel inplace bench-x86 minikernel nearmiss package arches trace-attach cli ppc64le \
	trace-uftrace trace-cases shlib
E2E_VARIANTS := embed-riscv64 embed-riscv64-noc
E2E_SCRIPT_embed-riscv64 := embed
E2E_ENV_embed-riscv64 := ARCH=riscv64
E2E_SCRIPT_embed-riscv64-noc := embed
E2E_ENV_embed-riscv64-noc := ARCH=riscv64 VARIANT=noc
# lint-tests.py: every patchsite run in tests/ goes through ps_run
# (tests/e2e/lib.sh), its exit status asserted before its output is read
E2E_TESTS := e2e-lint $(addprefix e2e-,$(E2E_VARIANTS) $(E2E_SCRIPTS))
E2E_RUNS := $(addprefix e2e-,$(E2E_VARIANTS) $(E2E_SCRIPTS))
.PHONY: e2e-build e2e-all $(E2E_TESTS)

e2e-build: san all fixtures
e2e-lint:
	@$(TESTRUN) run e2e-lint python3 tests/e2e/lint-tests.py
$(E2E_RUNS): e2e-%: e2e-build
	@TEST_TIMEOUT=$(E2E_TIMEOUT) $(TESTRUN) run $@ env PATCHSITE=$(CURDIR)/build-san/patchsite \
		PATCHSITE_PLAIN=$(CURDIR)/patchsite $(E2E_ENV_$*) sh tests/e2e/$(or $(E2E_SCRIPT_$*),$*).sh
# the tests of a group, past any failure (make -k), E2E_JOBS at a time for e2e
e2e-all:
	-@$(MAKE) --no-print-directory -k -j$(E2E_JOBS) -Otarget $(E2E_TESTS)

e2e:
	@rm -f $(E2E_TESTS:%=$(TEST_LOGS)/%.result)
	@$(MAKE) --no-print-directory e2e-all; $(TESTRUN) summary $(E2E_TESTS)

# the runtime's and the tracer's safety suites alone (issue 26:
# tests/safety/core-*.c, tests/safety/tracer-*.c)
.PHONY: safety-core safety-tracer
safety-core: e2e-safety-core
safety-tracer: e2e-safety-tracer
# issue 26's real-server test alone: Debian's nginx under load and churn
.PHONY: realserver
realserver: e2e-realserver

# libFuzzer harnesses for every reader (make check replays their corpora and
# fuzzes each for 3 s with a fixed seed: tests/e2e/hostile.sh)
fuzz: san fixtures
	$(MAKE) -C fuzz fuzz

# Real kernels from Debian's linux-source-6.12 (one source tree, built out of
# tree per arch in build-kernel/, contrib/linux applied): a riscv64 kernel
# linked --no-relax, relaxed by hand, and relaxed through contrib/linux's
# CONFIG_PATCHSITE (pin, record, audit in the build), each booted under
# qemu-system-riscv64; then arm64 -Os with CALL_OPS: the guard lifted
# alone (misaligned, fails to boot), and with CONFIG_PATCHSITE (boots,
# passes the configuration's ftrace self tests); then the tables of the
# riscv64 kernel and of the guard kernel cleared, moved and shifted, and the
# CONFIG_PATCHSITE one booted as built, refilled and wrong (tables.sh); then
# an x86_64 kernel with call padding,
# IBT and call depth tracking, built natively: its table against the
# kernel's own with and without DWARF, cleared and refilled, booted under
# qemu-system-x86_64 (PVH) as built, refilled and wrong; then a ppc64le
# kernel cross-built with Debian's GCC 12 (-mprofile-kernel: mflr r0;
# bl _mcount at each local entry point), its table against objdump's
# calls, cleared and refilled (the kernel as built but for the table, sorted,
# and its relocations), booted under qemu-system-ppc64 (pseries) as built,
# refilled and wrong (ppc64le.sh); then record and audit of that kernel
# (build-kernel/powerpc/vmlinux, ppc64le-table.sh: no kernel is a failure)
# against its own table, weak leftovers and all.  The
# riscv64, arm64, x86_64 and ppc64le boots run an initramfs that turns the
# function tracer on over every function and counts enabled_functions.
# Two chains side by side, each one script at a time in its order
# (tables.sh reuses riscv-relax.sh's stock kernel and call-ops-os.sh's two,
# ppc64le-table.sh ppc64le.sh's; the two chains share nothing but
# the source, unpacked once under a lock: lib.sh's kernel_prepare): `make
# kernel-NAME` runs one.  A chain alone keeps about 1.2 cores busy (boots
# and the record/audit steps are one thread): two fill both.  Their
# boots run two at a time or beside a build (a TCG guest is one thread),
# and the second build of one configuration (riscv-relax.sh's patchsite
# build, call-ops-os.sh's patched one) takes from ccache what the first
# compiled (tests/kernel/lib.sh: side, KERNEL_CCACHE); each log has a
# `# [+W s wall, C s CPU] PHASE` line per phase.
KERNEL_CHAIN_A := riscv-relax call-ops-os tables
KERNEL_CHAIN_B := x86 ppc64le ppc64le-table
KERNEL_SCRIPTS := $(KERNEL_CHAIN_A) $(KERNEL_CHAIN_B)
KERNEL_TESTS := $(addprefix kernel-,$(KERNEL_SCRIPTS))
KERNEL_TESTS_A := $(addprefix kernel-,$(KERNEL_CHAIN_A))
KERNEL_TESTS_B := $(addprefix kernel-,$(KERNEL_CHAIN_B))
.PHONY: kernel-all kernel-deps $(KERNEL_TESTS)
$(KERNEL_TESTS): kernel-%: all
	@TEST_TIMEOUT=$(KERNEL_TIMEOUT) $(TESTRUN) run $@ env PATCHSITE=$(CURDIR)/patchsite \
		bash tests/kernel/$*.sh
kernel-all:
	-@$(MAKE) --no-print-directory -k -j1 $(KERNEL_TESTS_A) & \
	$(MAKE) --no-print-directory -k -j1 $(KERNEL_TESTS_B); wait
# what the kernel proofs install (tests/kernel/lib.sh's kernel_packages) and
# the kernel source they share, unpacked with contrib/linux applied
# (kernel_source), for `make check` to do while it builds patchsite: apt-get
# and dpkg take one lock, which a proof's install would take from an e2e
# script's, and neither needs the build (KERNEL_PREP: no patchsite yet)
kernel-deps:
	@env KERNEL_PREP=1 PATCHSITE=$(CURDIR)/patchsite bash -c '. tests/kernel/lib.sh; kernel_prepare'

kernel-check:
	@rm -f $(KERNEL_TESTS:%=$(TEST_LOGS)/%.result)
	@$(MAKE) --no-print-directory kernel-all; $(TESTRUN) summary $(KERNEL_TESTS)

# deps; the two builds every part reads, and beside them the kernel proofs'
# packages and source (kernel-deps: apt-get and xz, no build needed); then
# the kernel proofs (two chains, each one script at a time) beside the
# unit tests and the e2e and doc scripts (E2E_JOBS at a time), every
# group past any failure; one total at the end.  The proofs are two thirds
# of the CPU, and neither they nor the pool keep both cores busy alone
# (qemu-user guests of one thread, servers waiting on clients, boots of
# one thread): side by side they fill both.  Each part's wall time (from
# the common start) and
# the CPU seconds its scripts used (.result's sixth field) go to
# $(TEST_LOGS)/.marks, which the summary prints, so CI's own log says how
# busy the cores were.
comma := ,
CHECK_MARK = echo "\# $(1): $$(($$(date +%s) - t0)) s wall, \
	$$(cat $(2:%=$(TEST_LOGS)/%.result) 2>/dev/null | awk '{ s += $$6 } END { print s + 0 }') s CPU \
	in its scripts" >>$(TEST_LOGS)/.marks
check: deps
	@rm -rf $(TEST_LOGS); mkdir -p $(TEST_LOGS)
	@tb=$$(date +%s); \
	$(MAKE) --no-print-directory kernel-deps >$(TEST_LOGS)/kernel-deps.log 2>&1 & kd=$$!; \
	$(MAKE) --no-print-directory -j$$(nproc) all san; st=$$?; \
	wait $$kd || { echo "make check: kernel-deps failed (each kernel proof tries again):"; \
		tail -n 5 $(TEST_LOGS)/kernel-deps.log; }; \
	echo "# build and kernel-deps: $$(($$(date +%s) - tb)) s wall" >>$(TEST_LOGS)/.marks; exit $$st
	-@t0=$$(date +%s); \
	{ $(MAKE) --no-print-directory -k -j1 $(KERNEL_TESTS_A); \
	  $(call CHECK_MARK,kernel proofs $(KERNEL_CHAIN_A)$(comma) one at a time,$(KERNEL_TESTS_A)); } & \
	{ $(MAKE) --no-print-directory -k -j1 $(KERNEL_TESTS_B); \
	  $(call CHECK_MARK,kernel proofs $(KERNEL_CHAIN_B)$(comma) one at a time,$(KERNEL_TESTS_B)); } & \
	$(MAKE) --no-print-directory -k -j$(E2E_JOBS) -Otarget unit-run $(E2E_TESTS) $(DOC_TESTS); \
	$(call CHECK_MARK,unit$(comma) e2e and doc scripts$(comma) $(E2E_JOBS) at a time,unit $(E2E_TESTS) $(DOC_TESTS)); \
	wait
	@$(TESTRUN) summary unit $(E2E_TESTS) $(DOC_TESTS) $(KERNEL_TESTS)

# deps, then the build in a make of its own: nothing of the build is read
# before the dependencies are there
demo: deps
	$(MAKE) all
	$(MAKE) -C fixtures demo
	sh scripts/demo.sh

bench: all
	sh bench/run.sh
	sh bench/attach/run.sh

# Debian's cloud-amd64 kernel package (vmlinux and 1,138 .ko.xz) audited in
# one call, beside xz -dc of its modules on one core (downloads ~350 MB once)
bench-package: all
	sh bench/package/run.sh

# record --in-place on Debian's 340 MB x86_64 vmlinux with DWARF, beside the
# kernel's own scripts/sorttable built from linux-source-6.12, interleaved
# (bench/inplace/run.sh)
bench-inplace: all
	sh bench/inplace/run.sh

# repad on a 40,000-function `ld -r` object (and 160,000), beside objcopy and
# ld -r (bench/repad/RESULTS.md; the first run compiles for ~5 minutes)
bench-repad: all
	sh bench/repad/run.sh

# embedded programs booted under real arm64 kernels (4 and 64 KiB pages) in
# qemu-system-aarch64; builds two kernels, about 20 minutes on 2 cores, so
# it is not part of make check (fixtures/embed/boot-check.sh)
boot-check-arm64: all
	PATCHSITE=$(CURDIR)/patchsite sh fixtures/embed/boot-check.sh

# the runtime that `patchsite embed` fills in (its core and the target's
# patcher, runtime/README.md) and the ready tracer, for each architecture
# with a runtime: build/runtime/<arch>/.  The host's is built with the host's
# gcc; another's with its cross gcc (aarch64-linux-gnu-gcc, ...).  Without
# RT_ARCHES, every architecture whose compiler is found, and one line names
# those skipped; RT_ARCHES="aarch64 x86_64" names them (a missing compiler
# is then an error).  build/runtime/arches lists what was built, for install.
RT_ALL    := aarch64 riscv64 x86_64
RT_ARCHES ?=
HOST_ARCH := $(shell uname -m)
DOCDIR    ?= $(PREFIX)/share/doc/patchsite
INCDIR    ?= $(PREFIX)/include/patchsite
RTLIBDIR  ?= $(PREFIX)/lib/patchsite
runtime:
	@set -e; mkdir -p build/runtime; built=; skipped=; \
	for a in $(if $(RT_ARCHES),$(RT_ARCHES),$(RT_ALL)); do \
		case $$a in aarch64|riscv64|x86_64) ;; \
			*) echo "patchsite: RT_ARCHES: no runtime for '$$a' (aarch64, riscv64, x86_64)" >&2; exit 2 ;; esac; \
		if [ $$a = $(HOST_ARCH) ]; then c=; else c=$$a-linux-gnu-; fi; \
		if ! command -v $${c}gcc >/dev/null 2>&1; then \
			if [ -n '$(RT_ARCHES)' ]; then echo "patchsite: RT_ARCHES names $$a, but $${c}gcc is not installed" >&2; exit 2; fi; \
			skipped="$$skipped $$a"; continue; \
		fi; \
		mkdir -p build/runtime/$$a; \
		$(MAKE) -C runtime O=$(CURDIR)/build/runtime/$$a CROSS=$$c; \
		$(MAKE) -C runtime/tracer O=$(CURDIR)/build/runtime/$$a CROSS=$$c; \
		built="$$built $$a"; \
	done; \
	echo $$built > build/runtime/arches; \
	if [ -n "$$skipped" ]; then echo "patchsite: runtime not built for$$skipped (no cross compiler; RT_ARCHES names the architectures)"; fi

# the man pages, made from doc/'s pages (doc/md2man.py; committed, so that
# install needs no python): edit the page, then `make man`
MAN_PAGES := $(sort $(wildcard doc/patchsite*.md))
man:
	@set -e; for f in $(MAN_PAGES); do \
		b=$$(basename $$f .md); s=$$(sed -n '1s/.*(\([0-9]\)).*/\1/p' $$f); \
		python3 doc/md2man.py $$f $(VERSION) > doc/man/$$b.$$s.tmp; \
		mv doc/man/$$b.$$s.tmp doc/man/$$b.$$s; \
	done

# the documentation's examples run, --help against the pages, the man
# pages current, install from a fresh clone, the Debian package (doc/docs.md)
DOC_TESTS := doc-blocks doc-options doc-man doc-install doc-deb
.PHONY: doc-build $(DOC_TESTS)
doc-build: e2e-build runtime
	$(MAKE) -C fixtures demo
	$(MAKE) -C fixtures/minikernel
doc-blocks: doc-build
	@$(TESTRUN) run $@ python3 tests/doc/run-blocks.py $(CURDIR)
doc-options: doc-build
	@$(TESTRUN) run $@ env PATCHSITE=$(CURDIR)/patchsite sh tests/doc/options.sh
doc-man:
	@$(TESTRUN) run $@ sh tests/doc/man.sh
doc-install:
	@$(TESTRUN) run $@ sh tests/doc/install.sh
doc-deb: doc-build
	@$(TESTRUN) run $@ sh tests/doc/deb.sh
doc-check:
	@rm -f $(DOC_TESTS:%=$(TEST_LOGS)/%.result)
	-@$(MAKE) --no-print-directory -k $(DOC_TESTS)
	@$(TESTRUN) summary $(DOC_TESTS)

install: all runtime
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(INCDIR)/patcher $(DESTDIR)$(DOCDIR)/doc
	install -m 0755 patchsite $(DESTDIR)$(BINDIR)/patchsite
	install -m 0644 $(wildcard doc/man/*.1) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(wildcard doc/man/*.3) $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 runtime/callops.h runtime/segment.h $(DESTDIR)$(INCDIR)/
	install -m 0644 $(filter-out %-stats.h,$(wildcard runtime/patcher/*.h)) $(DESTDIR)$(INCDIR)/patcher/
	install -m 0644 README.md NEWS $(DESTDIR)$(DOCDIR)/
	install -m 0644 $(wildcard doc/*.md) $(DESTDIR)$(DOCDIR)/doc/
	@set -e; for a in $$(cat build/runtime/arches); do \
		d=$(DESTDIR)$(RTLIBDIR)/$$a; \
		install -d $$d; \
		install -m 0644 build/runtime/$$a/libpatchsite-callops.a $$d/; \
		install -m 0644 build/runtime/$$a/libpatchsite-callops.so $$d/; \
		install -m 0644 build/runtime/$$a/libpatchsite-trace.so $$d/; \
		install -m 0644 build/runtime/$$a/libpatchsite-trace-attach.so $$d/; \
		echo "installed the runtime and tracer for $$a in $$d"; \
	done

# what install put there (the runtime of every architecture, whichever built)
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/patchsite
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard doc/man/*.1)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(wildcard doc/man/*.3)))
	rm -rf $(DESTDIR)$(INCDIR) $(DESTDIR)$(DOCDIR)
	rm -f $(foreach a,$(RT_ALL),$(addprefix $(DESTDIR)$(RTLIBDIR)/$(a)/,libpatchsite-callops.a libpatchsite-callops.so libpatchsite-trace.so libpatchsite-trace-attach.so))
	-rmdir $(foreach a,$(RT_ALL),$(DESTDIR)$(RTLIBDIR)/$(a)) $(DESTDIR)$(RTLIBDIR) 2>/dev/null

clean:
	rm -rf build build-san patchsite build-kernel
	$(MAKE) -C fixtures clean
	$(MAKE) -C fixtures/minikernel clean
	$(MAKE) -C fixtures/repad clean
	$(MAKE) -C fixtures/embed clean
	$(MAKE) -C fixtures/tracer clean
	$(MAKE) -C fixtures/trace clean
	$(MAKE) -C fixtures/nearmiss clean
	$(MAKE) -C fixtures/repad-kernel clean
	$(MAKE) -C fixtures/realprog-x86 clean
	$(MAKE) -C fixtures/realserver clean
	$(MAKE) -C bench/attach clean
	$(MAKE) -C fuzz clean
