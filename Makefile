# patchsite - post-link ftrace patch-site tool
#
#   make            build ./patchsite
#   make check      install test dependencies (apt-get, when root), build with
#                   ASan+UBSan, run the Check unit tests and the end-to-end tests
#   make demo       install dependencies, build, record and audit a bundled image
#   make install    PREFIX=/usr/local DESTDIR=

VERSION   := 0.1.0
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
MANDIR    ?= $(PREFIX)/share/man
CC        ?= cc
CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
             -Wno-missing-field-initializers
CPPFLAGS  += -D_GNU_SOURCE -DPATCHSITE_VERSION='"$(VERSION)"' -I. -Ibase -Iarch -Ielfio -Irecordsites -Irewriter -Iruntime -Itests
# Nothing here may run a tool that `make deps` installs: make parses this file
# before deps runs (a fresh machine has no pkg-config).  These are the
# libraries patchsite calls directly; Debian's pkg-config files add nothing.
LIBS      := -ldw -lelf -lz -llzma -lzstd
CHECK_LIBS := -lcheck -lsubunit -lm -lrt -lpthread

LIB_SRCS  := $(sort $(wildcard base/*.c arch/*.c elfio/*.c recordsites/*.c rewriter/*.c))
CLI_SRCS  := patchsite.c batch.c
TEST_SRCS := $(sort $(wildcard tests/check_*.c tests/arch/*.c)) tests/elfgen.c

BUILD     ?= build
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/tests/arch_cases.o
DEPS      := $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_OBJS:.o=.d)

SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all clean check unit e2e deps demo install fixtures bench bench-inplace bench-package bench-repad boot-check-arm64 san kernel-check runtime fuzz
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

# The sanitizer build lives in its own tree so that a plain `make` stays fast.
san:
	$(MAKE) BUILD=build-san CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" \
		build-san/patchsite build-san/check_main

unit: san
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CK_FORK=yes ./build-san/check_main

fixtures: san
	$(MAKE) -C fixtures
	$(MAKE) -C fixtures/minikernel
	$(MAKE) -C fixtures/repad
	$(MAKE) -C fixtures/embed
	$(MAKE) -C fixtures/nearmiss
	$(MAKE) -C fixtures/repad-kernel
	$(MAKE) -C fixtures/realprog-x86

# lint-tests.py first: every patchsite run in tests/ goes through ps_run
# (tests/e2e/lib.sh), its exit status asserted before its output is read
e2e: san all fixtures
	python3 tests/e2e/lint-tests.py
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/run.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/minikernel.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite PATCHSITE_PLAIN=$(CURDIR)/patchsite \
		sh tests/e2e/inplace.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/repad.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/repad-kernel.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/repad-zlib.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/embed.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite ARCH=riscv64 sh tests/e2e/embed.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite ARCH=riscv64 VARIANT=noc sh tests/e2e/embed.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/embed-x86.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/tracer.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/runtime-x86.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/stress.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/realprog-x86.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/realprog-riscv64.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/bench-x86.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/nearmiss.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/package.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/cli.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/arches.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite sh tests/e2e/ppc64le.sh
	PATCHSITE=$(CURDIR)/build-san/patchsite PATCHSITE_PLAIN=$(CURDIR)/patchsite \
		sh tests/e2e/hostile.sh
	PATCHSITE_PLAIN=$(CURDIR)/patchsite sh tests/e2e/allocfail.sh

# libFuzzer harnesses for every reader (make check replays their corpora and
# fuzzes each for 3 s with a fixed seed: tests/e2e/hostile.sh)
fuzz: san fixtures
	$(MAKE) -C fuzz fuzz

# Real kernels from Debian's linux-source-6.12 (one source tree, built out of
# tree per arch in build-kernel/, contrib/linux applied): a riscv64 kernel
# linked --no-relax, relaxed by hand, and relaxed through contrib/linux's
# CONFIG_PATCHSITE (pin, record, audit in the build), each booted under
# qemu-system-riscv64; then the tables of that kernel and of an arm64
# CALL_OPS kernel cleared, moved and shifted, and the arm64 one booted as
# built, refilled and wrong; then arm64 -Os with CALL_OPS: the guard lifted
# alone (misaligned, fails to boot), and with CONFIG_PATCHSITE (boots, passes
# the -O2 kernel's ftrace self tests); then an x86_64 kernel with call padding,
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
kernel-check: all
	PATCHSITE=$(CURDIR)/patchsite bash tests/kernel/riscv-relax.sh
	PATCHSITE=$(CURDIR)/patchsite bash tests/kernel/tables.sh
	PATCHSITE=$(CURDIR)/patchsite bash tests/kernel/call-ops-os.sh
	PATCHSITE=$(CURDIR)/patchsite bash tests/kernel/x86.sh
	PATCHSITE=$(CURDIR)/patchsite bash tests/kernel/ppc64le.sh
	PATCHSITE=$(CURDIR)/patchsite bash tests/kernel/ppc64le-table.sh

check: deps
	$(MAKE) unit
	$(MAKE) e2e
	$(MAKE) all
	$(MAKE) kernel-check

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
# with a runtime: build/runtime/<arch>/ (compilers from fixtures/arches.mk;
# x86_64's CROSS_ is empty: the host's gcc, so an x86_64 host)
RT_ARCHES := aarch64 riscv64 x86_64
runtime:
	@set -e; for a in $(RT_ARCHES); do \
		case $$a in aarch64) c='$(CROSS_aarch64)' ;; riscv64) c='$(CROSS_riscv64)' ;; \
			x86_64) c='$(CROSS_x86_64)' ;; esac; \
		mkdir -p build/runtime/$$a; \
		$(MAKE) -C runtime O=$(CURDIR)/build/runtime/$$a CROSS=$$c; \
		$(MAKE) -C runtime/tracer O=$(CURDIR)/build/runtime/$$a CROSS=$$c; \
	done

install: all runtime
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(PREFIX)/include/patchsite/arch
	install -m 0755 patchsite $(DESTDIR)$(BINDIR)/patchsite
	install -m 0644 doc/patchsite.1 $(DESTDIR)$(MANDIR)/man1/patchsite.1
	install -m 0644 runtime/callops.h $(DESTDIR)$(PREFIX)/include/patchsite/callops.h
	install -m 0644 runtime/segment.h $(DESTDIR)$(PREFIX)/include/patchsite/segment.h
	install -m 0644 $(filter-out %-stats.h,$(wildcard runtime/arch/*.h)) \
		$(DESTDIR)$(PREFIX)/include/patchsite/arch/
	@set -e; for a in $(RT_ARCHES); do \
		d=$(DESTDIR)$(PREFIX)/lib/patchsite/$$a; \
		install -d $$d; \
		install -m 0644 build/runtime/$$a/libpatchsite-callops.a $$d/; \
		install -m 0755 build/runtime/$$a/libpatchsite-callops.so $$d/; \
		install -m 0755 build/runtime/$$a/libpatchsite-trace.so $$d/; \
	done

clean:
	rm -rf build build-san patchsite build-kernel
	$(MAKE) -C fixtures clean
	$(MAKE) -C fixtures/minikernel clean
	$(MAKE) -C fixtures/repad clean
	$(MAKE) -C fixtures/embed clean
	$(MAKE) -C fixtures/tracer clean
	$(MAKE) -C fixtures/nearmiss clean
	$(MAKE) -C fixtures/repad-kernel clean
	$(MAKE) -C fixtures/realprog-x86 clean
	$(MAKE) -C bench/attach clean
	$(MAKE) -C fuzz clean
