/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace/trace.h - `patchsite trace`: run an embedded program under
 * libpatchsite-trace.so in record mode and turn its records into what
 * tools read (uftrace's data directory, Chrome Trace Event JSON) and a
 * summary table.
 *
 *   cmd.c      options, finding the tracer, checking the program, running it
 *   prog.c     the program's ELF: embedded or not, its functions and names
 *   data.c     the tracer's files read back: calls per thread, filtered
 *   output.c   uftrace's data directory, Chrome JSON, the summary
 */
#ifndef PATCHSITE_TRACE_H
#define PATCHSITE_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern const char trace_help[];
int cmd_trace(int argc, char **argv);

/* --- The program (prog.c) --- */

struct trace_sym {
	uint64_t addr;		/* link-time address */
	uint64_t size;
	char *name;
	int global;
	int site;		/* a patch site of the embedded segment starts here */
};

struct trace_prog {
	char *path;		/* absolute */
	uint16_t machine;	/* e_machine */
	uint64_t lo, hi;	/* PT_LOAD span, link-time (lo page-aligned down) */
	struct trace_sym *syms;	/* FUNC symbols, by address */
	size_t nsyms;
	size_t nsites;
	int embedded;		/* it has the segment `patchsite embed` adds */
	char **needed;		/* DT_NEEDED (a program's) */
	size_t nneeded;
	char *runpath;		/* DT_RUNPATH, else DT_RPATH, or NULL */
	struct trace_prog *libs;	/* the embedded libraries it links (trace_prog_libs) */
	size_t nlibs;
};

#define TRACE_PROG_LIB 1	/* a shared library: need not be executable */
#define TRACE_PROG_ANY 2	/* need not be embedded */

/* 0, or -errno after one line `patchsite: PATH: problem` */
int trace_prog_open(struct trace_prog *p, const char *path);
int trace_prog_open_as(struct trace_prog *p, const char *path, int flags);
/* the embedded libraries of p->needed, found as the dynamic linker would
   (LD_LIBRARY_PATH, the program's DT_RUNPATH with $ORIGIN, the system's
   directories; under sysroot for another architecture) into p->libs;
   those not found or not embedded are left out.  0 or -ENOMEM */
int trace_prog_libs(struct trace_prog *p, const char *sysroot);
void trace_prog_free(struct trace_prog *p);
/* the runtime's name of the architecture (x86_64, aarch64, riscv64) or NULL */
const char *trace_prog_arch(const struct trace_prog *p);

/* --- The records (data.c) --- */

struct trace_globs {
	const char **v;		/* elfio_grow'n, elfio_free'd */
	size_t n;
	size_t cap;
};

int trace_globs_match(const struct trace_globs *g, const char *name);

struct trace_filter {
	struct trace_globs F, N;
	unsigned depth;		/* 0: no limit */
	uint64_t min_ns;	/* -t: 0 none */
};

struct trace_event {
	uint64_t ns;		/* CLOCK_MONOTONIC */
	uint32_t fn;		/* index into trace_data.fn */
	uint16_t depth;		/* nesting of the events kept */
	uint8_t exit;
};

struct trace_thread {
	int tid;
	struct trace_event *ev;
	size_t nev;
	uint64_t records, dropped, lost, deep;
	uint64_t first_ns;	/* its first record's time (task.txt) */
};

struct trace_fn {
	uint64_t addr;		/* as the process saw it */
	char *name;
};

/* an embedded shared library the program had loaded (funcs.txt) */
struct trace_object {
	uint64_t bias;
	char *path;		/* as the dynamic linker named it */
};

struct trace_data {
	int pid;
	uint64_t bias;
	struct trace_object *obj;	/* in the order loaded: one opened twice twice */
	size_t nobj;
	struct trace_fn *fn;
	size_t nfn;
	struct trace_thread *th;
	size_t nth;
	uint64_t start_ns, end_ns;
	double ovh_ns;		/* the cost of one record, taken off */
	int incomplete;		/* no threads.txt: the program did not end normally */
};

/* read DIR (the tracer's files: funcs, clock, threads, and with events
   the calls of each thread's TID.dat, filtered); 0 or -errno after a line */
int trace_data_read(struct trace_data *d, const char *dir, const struct trace_filter *f, int events);
void trace_data_free(struct trace_data *d);

/* --- Output (output.c) --- */

struct trace_run {
	const struct trace_prog *prog;
	const struct trace_data *data;
	char **argv;		/* PROG ARGS */
	int wstatus;		/* as waitpid gave it */
	const char *cmdline;	/* patchsite's own */
	int rewrite;		/* filtered: TID.dat written anew from the events */
};

int trace_write_uftrace(const char *dir, const struct trace_run *r);
int trace_write_chrome(const char *file, const struct trace_run *r);
int trace_write_summary(FILE *out, const struct trace_run *r, int per_thread);

#endif /* PATCHSITE_TRACE_H */
