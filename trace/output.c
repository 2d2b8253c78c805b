// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace/output.c - what `patchsite trace` writes from the calls it read:
 * uftrace's data directory, Chrome Trace Event JSON, the summary table.
 *
 * Strategy: uftrace's data directory as uftrace 0.13 reads it (facts read
 * in its uftrace.h, cmds/info.c, utils/symbol.c, utils/session.c; no code
 * taken): `info` (a 40-byte header, "Ftrace!", version 4, then the text
 * lines its info mask announces, in bit order), `task.txt` (SESS and TASK
 * lines), `sid-SID.map` (the program's mapping, /proc/PID/maps style),
 * `PROG.sym` (its functions, nm style, addresses relative to the mapping's
 * start: the SYM_REL_ADDR feature) and one `TID.dat` per thread, 16-byte
 * records (time; type, magic 5, depth and address in one word), which the
 * tracer's writer thread writes itself (recfile.h): they are written
 * here only when filters chose the calls.  Chrome's
 * JSON is one object with a "traceEvents" array of B and E events, in
 * microseconds.  The summary is computed from the same kept calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elfio/elfio.h"
#include "runtime/tracer/recfile.h"
#include "trace/trace.h"

/* uftrace 0.13's format (uftrace.h) */
#define UFT_FILE_VERSION 4
enum {
	UFT_FEAT_TASK_SESSION = 1 << 1,
	UFT_FEAT_SYM_REL_ADDR = 1 << 5,
	UFT_FEAT_MAX_STACK = 1 << 6,
};
enum {
	UFT_INFO_EXE_NAME = 1 << 0,
	UFT_INFO_EXIT_STATUS = 1 << 2,
	UFT_INFO_CMDLINE = 1 << 3,
	UFT_INFO_CPUINFO = 1 << 4,
	UFT_INFO_TASKINFO = 1 << 7,
	UFT_INFO_RECORD_DATE = 1 << 11,
	UFT_INFO_PATTERN_TYPE = 1 << 12,
};

struct uft_header {
	char magic[8];
	uint32_t version;
	uint16_t header_size;
	uint8_t endian;		/* 1: little */
	uint8_t elf_class;	/* 2: 64-bit */
	uint64_t feat_mask;
	uint64_t info_mask;
	uint16_t max_stack;
	uint16_t unused1;
	uint32_t unused2;
};
_Static_assert(sizeof(struct uft_header) == 40, "uftrace's header is 40 bytes");

static FILE *open_out(const char *dir, const char *name, char *path, size_t len)
{
	FILE *f;

	if (snprintf(path, len, "%s/%s", dir, name) >= (int)len) {
		elfio_error(dir, "name too long");
		return NULL;
	}
	f = fopen(path, "w");
	if (!f)
		elfio_error(path, "%s", strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if (ferror(f) | fclose(f)) {
		elfio_error(path, "write error: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void ns_split(uint64_t ns, unsigned long long *s, unsigned long *frac)
{
	*s = ns / 1000000000u;
	*frac = (unsigned long)(ns % 1000000000u);
}

/* PATH.sym (PATH's base name): p's functions, nm style, relative to its
   first mapping (uftrace's SYM_REL_ADDR); `# path name` must be the map's */
static int write_sym(const char *dir, const struct trace_prog *p, const char *mapped)
{
	char name[4096], path[4096];
	uint64_t end = 0;
	FILE *f;

	snprintf(name, sizeof(name), "%s.sym", base_name(mapped));
	f = open_out(dir, name, path, sizeof(path));
	if (!f)
		return -EIO;
	fprintf(f, "# symbols: %zu\n# path name: %s\n", p->nsyms + 1, mapped);
	for (size_t i = 0; i < p->nsyms; i++) {
		const struct trace_sym *y = &p->syms[i];

		fprintf(f, "%016llx %c %s\n", (unsigned long long)(y->addr - p->lo),
			y->global ? 'T' : 't', y->name);
		if (y->addr + y->size > end)
			end = y->addr + y->size;
	}
	if (end)
		fprintf(f, "%016llx ? __func_end\n", (unsigned long long)(end - p->lo));
	return close_out(f, path);
}

/* the file read for object k (the first of its path), or NULL */
static const struct trace_prog *lib_of(const struct trace_data *d, const struct trace_prog *libs,
				       size_t k)
{
	for (size_t j = 0; j <= k; j++)
		if (!strcmp(d->obj[j].path, d->obj[k].path))
			return libs[j].path ? &libs[j] : NULL;
	return NULL;
}

/* info: the 40-byte header, then the lines its info mask announces, in bit order. */
static int write_info(const char *dir, const struct trace_run *r)
{
	const struct trace_data *d = r->data;
	const struct trace_prog *p = r->prog;
	struct uft_header h = { "Ftrace!", UFT_FILE_VERSION, sizeof(h), 1, 2,
				UFT_FEAT_TASK_SESSION | UFT_FEAT_SYM_REL_ADDR | UFT_FEAT_MAX_STACK,
				UFT_INFO_EXE_NAME | UFT_INFO_EXIT_STATUS | UFT_INFO_CMDLINE |
				UFT_INFO_CPUINFO | UFT_INFO_TASKINFO | UFT_INFO_RECORD_DATE |
				UFT_INFO_PATTERN_TYPE, 1024, 0, 0 };
	char path[4096], date[64];
	unsigned long long s;
	unsigned long frac;
	time_t now = time(NULL);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), cpus_all = sysconf(_SC_NPROCESSORS_CONF);
	FILE *f = open_out(dir, "info", path, sizeof(path));

	if (!f)
		return -EIO;
	fwrite(&h, sizeof(h), 1, f);
	fprintf(f, "exename:%s\n", p->path);
	fprintf(f, "exit_status:%d\n", r->wstatus);
	fprintf(f, "cmdline:%s\n", r->cmdline);
	fprintf(f, "cpuinfo:lines=2\ncpuinfo:nr_cpus=%ld / %ld (online/possible)\n", cpus, cpus_all);
	fprintf(f, "cpuinfo:desc=%s\n", p->machine == 183 ? "ARM64 (patchsite trace)" :
		p->machine == 243 ? "RISC-V 64 (patchsite trace)" : "x86_64 (patchsite trace)");
	fprintf(f, "taskinfo:lines=2\ntaskinfo:nr_tid=%zu\ntaskinfo:tids=", d->nth);
	for (size_t i = 0; i < d->nth; i++)
		fprintf(f, "%s%d", i ? "," : "", d->th[i].tid);
	strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", localtime(&now));
	ns_split(d->end_ns - d->start_ns, &s, &frac);
	fprintf(f, "\nrecord_date:%s\nelapsed_time:%llu.%09lu sec\n", date, s, frac);
	fprintf(f, "pattern_type:glob\n");
	return close_out(f, path);
}

/* task.txt: the session (from the first record), then a task per thread (its first record). */
static int write_task(const char *dir, const struct trace_run *r, const char *sid)
{
	const struct trace_data *d = r->data;
	char path[4096];
	unsigned long long s;
	unsigned long frac;
	uint64_t first = d->start_ns;
	FILE *f;

	for (size_t i = 0; i < d->nth; i++)
		if (d->th[i].first_ns < first)
			first = d->th[i].first_ns;
	f = open_out(dir, "task.txt", path, sizeof(path));
	if (!f)
		return -EIO;
	ns_split(first, &s, &frac);
	fprintf(f, "SESS timestamp=%llu.%09lu pid=%d sid=%s exename=\"%s\"\n", s, frac, d->pid, sid,
		r->prog->path);
	for (size_t i = 0; i < d->nth; i++) {
		ns_split(d->th[i].first_ns, &s, &frac);
		fprintf(f, "TASK timestamp=%llu.%09lu tid=%d pid=%d\n", s, frac, d->th[i].tid, d->pid);
	}
	return close_out(f, path);
}

/*
 * The embedded libraries: each file read once (one opened twice is listed
 * twice, maybe at another address); libs[k].path NULL for a repeat or a
 * file not read (said).  0 or -ENOMEM said.
 */
static int read_libs(const char *dir, const struct trace_data *d, struct trace_prog **libsp)
{
	struct trace_prog *libs = elfio_calloc(d->nobj ? d->nobj : 1, sizeof(*libs));

	if (!libs) {
		elfio_error(dir, "out of memory");
		return -ENOMEM;
	}
	for (size_t k = 0; k < d->nobj; k++) {
		size_t j = 0;

		while (j < k && strcmp(d->obj[j].path, d->obj[k].path))
			j++;
		if (j < k || trace_prog_open_as(&libs[k], d->obj[k].path,
						TRACE_PROG_LIB | TRACE_PROG_ANY))
			libs[k].path = NULL;	/* the first's, or not read (said) */
	}
	*libsp = libs;
	return 0;
}

/*
 * sid-SID.map: the program's mapping, from its load address, then each
 * library's (uftrace finds a library's symbols by its file's base name,
 * PATH.sym, relative to its first mapping's start), then a stack.
 */
static int write_map(const char *dir, const struct trace_run *r, const char *sid,
		     const struct trace_prog *libs)
{
	const struct trace_data *d = r->data;
	const struct trace_prog *p = r->prog;
	char name[64], path[4096];
	const char *last = p->path;
	FILE *f;

	snprintf(name, sizeof(name), "sid-%s.map", sid);
	f = open_out(dir, name, path, sizeof(path));
	if (!f)
		return -EIO;
	fprintf(f, "%llx-%llx r-xp 00000000 00:00 0 %s\n",
		(unsigned long long)(d->bias + p->lo),
		(unsigned long long)((d->bias + p->hi + 0xfff) & ~0xfffull), p->path);
	for (size_t k = 0; k < d->nobj; k++) {
		const struct trace_prog *l = lib_of(d, libs, k);
		size_t j = 0;

		while (j < k && (d->obj[j].bias != d->obj[k].bias ||
				 strcmp(d->obj[j].path, d->obj[k].path)))
			j++;
		if (!l || j < k)
			continue;	/* not read, or the same mapping again */
		/* uftrace takes a line of the same file as the line before
		   for more of that mapping: a library's second life, mapped
		   elsewhere, comes after an empty line of the program's */
		if (!strcmp(last, d->obj[k].path))
			fprintf(f, "%llx-%llx ---p 00000000 00:00 0 %s\n",
				(unsigned long long)(d->bias + p->lo),
				(unsigned long long)(d->bias + p->lo), p->path);
		last = d->obj[k].path;
		fprintf(f, "%llx-%llx r-xp 00000000 00:00 0 %s\n",
			(unsigned long long)(d->obj[k].bias + l->lo),
			(unsigned long long)((d->obj[k].bias + l->hi + 0xfff) & ~0xfffull),
			d->obj[k].path);
	}
	/* uftrace tells user from kernel addresses by where the stack is
	   (guess_kernel_base): without this line every address is the
	   kernel's.  This process's stack stands for the program's */
	fprintf(f, "%llx-%llx rw-p 00000000 00:00 0 [stack]\n",
		(unsigned long long)((uintptr_t)&name & ~0xfffull),
		(unsigned long long)(((uintptr_t)&name & ~0xfffull) + 0x21000));
	return close_out(f, path);
}

/* PROG.sym and each library's LIB.sym: every function, relative to the mapping's start. */
static int write_syms(const char *dir, const struct trace_run *r, const struct trace_prog *libs)
{
	const struct trace_data *d = r->data;
	int err = write_sym(dir, r->prog, r->prog->path);

	for (size_t k = 0; !err && k < d->nobj; k++)
		if (libs[k].path)
			err = write_sym(dir, &libs[k], d->obj[k].path);
	return err;
}

/* TID.dat: the tracer wrote them; the calls the filters kept, anew (r->rewrite). */
static int write_dats(const char *dir, const struct trace_run *r)
{
	const struct trace_data *d = r->data;
	char path[4096];

	for (size_t i = 0; r->rewrite && i < d->nth; i++) {
		const struct trace_thread *t = &d->th[i];
		char name[64];
		FILE *f;
		int err;

		snprintf(name, sizeof(name), "%d.dat", t->tid);
		f = open_out(dir, name, path, sizeof(path));
		if (!f)
			return -EIO;
		setvbuf(f, NULL, _IOFBF, 1 << 20);
		for (size_t k = 0; k < t->nev; k++) {
			const struct trace_event *e = &t->ev[k];
			uint64_t rec[2];

			rec[0] = e->ns;
			rec[1] = TRACE_UREC(e->exit, e->depth, d->fn[e->fn].addr);
			fwrite(rec, sizeof(rec), 1, f);
		}
		err = close_out(f, path);
		if (err)
			return err;
	}
	return 0;
}

int trace_write_uftrace(const char *dir, const struct trace_run *r)
{
	const struct trace_data *d = r->data;
	struct trace_prog *libs = NULL;
	char sid[17];
	int err;

	snprintf(sid, sizeof(sid), "%016llx",
		 (unsigned long long)(d->start_ns * 0x9e3779b97f4a7c15ull ^ (uint64_t)d->pid));
	if ((err = write_info(dir, r)) || (err = write_task(dir, r, sid)) ||
	    (err = read_libs(dir, d, &libs)))
		return err;
	if (!(err = write_map(dir, r, sid, libs)) && !(err = write_syms(dir, r, libs)))
		err = write_dats(dir, r);
	for (size_t k = 0; k < d->nobj; k++)
		trace_prog_free(&libs[k]);
	elfio_free(libs);
	return err;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int trace_write_chrome(const char *file, const struct trace_run *r)
{
	const struct trace_data *d = r->data;
	FILE *f = fopen(file, "w");
	int first = 1;
	uint64_t dropped = 0;

	if (!f) {
		elfio_error(file, "%s", strerror(errno));
		return -EIO;
	}
	fputs("{\"traceEvents\": [", f);
	for (size_t i = 0; i < d->nth; i++) {
		const struct trace_thread *t = &d->th[i];

		dropped += t->dropped + t->deep;
		for (size_t k = 0; k < t->nev; k++) {
			const struct trace_event *e = &t->ev[k];
			uint64_t rel = e->ns - d->start_ns;

			fprintf(f, "%s\n{\"name\": ", first ? "" : ",");
			json_str(f, d->fn[e->fn].name);
			fprintf(f, ", \"ph\": \"%c\", \"ts\": %llu.%03u, \"pid\": %d, \"tid\": %d}",
				e->exit ? 'E' : 'B', (unsigned long long)(rel / 1000),
				(unsigned)(rel % 1000), d->pid, t->tid);
			first = 0;
		}
	}
	fprintf(f, "\n], \"displayTimeUnit\": \"ns\", \"otherData\": {\"program\": ");
	json_str(f, r->prog->path);
	fprintf(f, ", \"calls_dropped\": %llu}}\n", (unsigned long long)dropped);
	return close_out(f, file);
}

/* --- The summary ----------------------------------------------------------- */

struct stat_row {
	uint32_t fn;
	int tid;		/* 0: all threads */
	uint64_t calls, timed, total, self, min, max;
};

static const struct trace_data *sort_data;

static int row_cmp(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(sort_data->fn[x->fn].name, sort_data->fn[y->fn].name);
}

struct open_call {
	uint32_t fn;
	uint64_t t0, child;
};

/* the thread's calls into rows (one per function), open[] zeroed */
static int thread_stats(const struct trace_thread *t, struct stat_row *rows, uint32_t *open)
{
	struct open_call *st = elfio_calloc(t->nev ? t->nev : 1, sizeof(*st));
	size_t sp = 0;

	if (!st)
		return -ENOMEM;
	for (size_t k = 0; k < t->nev; k++) {
		const struct trace_event *e = &t->ev[k];
		struct stat_row *row = &rows[e->fn];

		if (!e->exit) {
			st[sp].fn = e->fn;
			st[sp].t0 = e->ns;
			st[sp].child = 0;
			sp++;
			row->calls++;
			open[e->fn]++;
			continue;
		}
		if (!sp)
			continue;
		{
			struct open_call *c = &st[--sp];
			uint64_t dur = e->ns - c->t0;

			row->timed++;
			row->self += dur > c->child ? dur - c->child : 0;
			if (row->timed == 1 || dur < row->min)
				row->min = dur;
			if (dur > row->max)
				row->max = dur;
			/* a recursive call's time is its outermost activation's */
			if (--open[e->fn] == 0)
				row->total += dur;
			if (sp)
				st[sp - 1].child += dur;
		}
	}
	while (sp)
		open[st[--sp].fn]--;
	elfio_free(st);
	return 0;
}

int trace_write_summary(FILE *out, const struct trace_run *r, int per_thread)
{
	const struct trace_data *d = r->data;
	size_t groups = per_thread ? d->nth : 1, n = 0;
	struct stat_row *rows = elfio_calloc((d->nfn ? d->nfn : 1) * groups, sizeof(*rows));
	struct stat_row *list = elfio_calloc((d->nfn ? d->nfn : 1) * groups, sizeof(*list));
	uint32_t *open = elfio_calloc(d->nfn ? d->nfn : 1, sizeof(*open));
	uint64_t records = 0, dropped = 0, deep = 0, lost = 0, called = 0;
	int err = -ENOMEM;

	if (!rows || !list || !open)
		goto out;
	for (size_t i = 0; i < d->nth; i++) {
		struct stat_row *g = rows + (per_thread ? i : 0) * d->nfn;

		records += d->th[i].records;
		dropped += d->th[i].dropped;
		deep += d->th[i].deep;
		lost += d->th[i].lost;
		if (thread_stats(&d->th[i], g, open))
			goto out;
		for (size_t fi = 0; per_thread && fi < d->nfn; fi++)
			g[fi].tid = d->th[i].tid;
	}
	for (size_t k = 0; k < d->nfn * groups; k++) {
		if (!rows[k].calls)
			continue;
		rows[k].fn = (uint32_t)(k % d->nfn);
		list[n++] = rows[k];
	}
	for (size_t fi = 0; fi < d->nfn; fi++)
		for (size_t g = 0; g < groups; g++)
			if (rows[g * d->nfn + fi].calls) {
				called++;
				break;
			}
	sort_data = d;
	qsort(list, n, sizeof(*list), row_cmp);
	fprintf(out, "# patchsite trace: pid %d, %llu functions called, %zu threads, %llu records",
		d->pid, (unsigned long long)called, d->nth, (unsigned long long)records);
	if (dropped || deep || lost)
		fprintf(out, "; NOT RECORDED: %llu calls (buffer full, or in the tracer's hook), %llu "
			"calls (deeper than 512), %llu records (write failed)", (unsigned long long)dropped,
			(unsigned long long)deep, (unsigned long long)lost);
	fputc('\n', out);
	fprintf(out, "%s%12s %12s %12s %12s %12s %12s  %s\n", per_thread ? "       tid" : "", "calls",
		"total_ms", "self_ms", "avg_us", "min_us", "max_us", "function");
	for (size_t k = 0; k < n; k++) {
		const struct stat_row *x = &list[k];

		if (per_thread)
			fprintf(out, "%10d", x->tid);
		fprintf(out, "%12llu %12.3f %12.3f %12.3f %12.3f %12.3f  %s\n",
			(unsigned long long)x->calls, (double)x->total / 1e6, (double)x->self / 1e6,
			x->timed ? (double)x->total / (double)x->timed / 1e3 : 0.0,
			(double)x->min / 1e3, (double)x->max / 1e3, d->fn[x->fn].name);
	}
	err = fflush(out) ? -EIO : 0;
out:
	if (err == -ENOMEM)
		elfio_error("trace", "out of memory for the summary");
	elfio_free(rows);
	elfio_free(list);
	elfio_free(open);
	return err;
}
