/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace/inject.h - `patchsite trace -p PID`: load the tracer into an
 * embedded program that is already running (ptrace, no gdb), attach it by
 * globs, and take it out again so the program runs as before.
 */
#ifndef PATCHSITE_TRACE_INJECT_H
#define PATCHSITE_TRACE_INJECT_H

#include <stddef.h>
#include <sys/types.h>

struct trace_attach_opts {
	const char *globs;	/* -F GLOB... joined by ',' (NULL: every function) */
	const char *outdir;	/* -o DIR: the table in DIR/summary.txt (NULL: stdout) */
	const char *format;	/* text (default), tsv, json */
	double duration;	/* --duration SECONDS: detach then (0: at SIGINT/SIGTERM or exit) */
	const char *tracer;	/* --tracer=PATH: libpatchsite-trace-attach.so (NULL: found) */
};

/* 0, or 2 (EXIT_ERROR) after one line `patchsite: ...` on stderr */
int trace_attach_pid(pid_t pid, const struct trace_attach_opts *o);

/* `patchsite trace -p PID [-F GLOB]... [-o DIR] [--duration=SECONDS] [--tracer=PATH]`
   (argv[0] is "trace"); the hook the trace command calls for -p */
int trace_attach_cmd(int argc, char **argv);

#endif /* PATCHSITE_TRACE_INJECT_H */
