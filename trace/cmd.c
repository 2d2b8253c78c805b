// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace/cmd.c - `patchsite trace`: run a program `patchsite embed` prepared
 * under libpatchsite-trace.so, in the shape of `uftrace record`.
 *
 * Strategy: everything that can be wrong with the command line is found
 * before the program runs, and said in one line with exit 2, nothing
 * written: the program is read (embedded, or linking an embedded library;
 * the traceable functions of both), every -F and -N glob must match one
 * of them, the tracer library must be found
 * (--tracer, then the installed $(PREFIX)/lib/patchsite/ARCH/ beside the
 * binary's bin/, then the build tree's build/runtime/ARCH/), the output
 * directory must be made.  Then the program runs with the tracer preloaded
 * in record mode (PATCHSITE_TRACE='*', PATCHSITE_TRACE_RECORD=DIR: every
 * function attached; its writer thread writes uftrace's TID.dat files
 * there itself), patchsite waits for it, reads what it needs (data.c:
 * the filters are applied when the records are read, with the meaning
 * uftrace gives them at record time, and the kept calls written anew),
 * writes the rest of the output (output.c) and exits with the
 * program's status (128 + N after signal N).  A program of another
 * architecture runs under qemu-user (qemu-ARCH -L SYSROOT -E ...).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfio/elfio.h"
#include "trace/trace.h"

#define EXIT_ERROR 2

const char trace_help[] =
	"  trace [OPTIONS] [--] PROG [ARGS...]   run a program `patchsite embed` prepared\n"
	"                       under libpatchsite-trace.so, recording the entry and exit\n"
	"                       of every call (as `uftrace record`), and exit with its status\n"
	"      -F, --filter=GLOB    record only GLOB's functions and what they call (repeatable)\n"
	"      -N, --notrace=GLOB   do not record GLOB's functions nor what they call\n"
	"                           (repeatable)\n"
	"      -D, --depth=DEPTH    record calls nested at most DEPTH deep\n"
	"      -t, --time-filter=TIME  record calls that ran TIME or longer (N, Nns, Nus,\n"
	"                           Nms, Ns)\n"
	"      -o, --output=DIR     uftrace's data directory (default uftrace.data; one there\n"
	"                           is moved to DIR.old), or FILE.json: Chrome Trace Event JSON\n"
	"      --format=FMT         uftrace (default) or chrome\n"
	"      --summary            print calls, total, self, avg, min, max per function\n"
	"      --per-thread         the summary a row per thread and function\n"
	"      --buffer-size=N      records per thread buffer, a power of 2 (default 2^20);\n"
	"                           calls that do not fit are not recorded, and counted\n"
	"      --tracer=PATH        the libpatchsite-trace.so to preload\n"
	"  trace -p PID [-F GLOB]... [-o DIR] [--duration=S] [--format=FMT]\n"
	"                       attach to a running embedded program (x86_64): count calls\n"
	"                       until SIGINT, SIGTERM, S seconds or its end, then leave it\n"
	"                       as it was; -o DIR: the table in DIR/summary.txt\n";

struct opts {
	struct trace_filter filter;
	const char *out;
	const char *tracer;
	const char *bufsize;
	int chrome, summary, per_thread;
};

static int glob_add(struct trace_globs *g, const char *s)
{
	if (elfio_grow(&g->v, &g->cap, g->n + 1, sizeof(*g->v)))
		return -ENOMEM;
	g->v[g->n++] = s;
	return 0;
}

/* N[ns|us|ms|s] into nanoseconds; -EINVAL */
static int parse_time(const char *s, uint64_t *ns)
{
	char *end;
	double v;
	uint64_t unit = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -EINVAL;
	if (!strcmp(end, "us"))
		unit = 1000;
	else if (!strcmp(end, "ms"))
		unit = 1000000;
	else if (!strcmp(end, "s") || !strcmp(end, "sec"))
		unit = 1000000000;
	else if (*end && strcmp(end, "ns"))
		return -EINVAL;
	*ns = (uint64_t)(v * (double)unit);
	return 0;
}

/* PROG as execvp would find it */
static char *find_prog(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/') || !path)
		return elfio_strdup(name);
	while (*path) {
		size_t l = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)l, path, l ? "/" : "", name);
		if (access(buf, X_OK) == 0)
			return elfio_strdup(buf);
		path += l;
		if (*path == ':')
			path++;
	}
	return elfio_strdup(name);
}

static int file_ok(const char *path)
{
	return access(path, R_OK) == 0;
}

/* the tracer: --tracer, installed, build tree; NULL after a message */
static char *find_tracer(const char *given, const char *arch, const char *prog)
{
	char exe[PATH_MAX], buf[PATH_MAX + 64], *slash;
	ssize_t n;

	if (given) {
		if (!file_ok(given)) {
			elfio_error(given, "%s", strerror(errno));
			return NULL;
		}
		return elfio_strdup(given);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;	/* exe: the binary's directory */
			/* the build tree: ./patchsite beside build/ */
			snprintf(buf, sizeof(buf), "%s/build/runtime/%s/libpatchsite-trace.so", exe, arch);
			if (file_ok(buf))
				return elfio_strdup(buf);
			slash = strrchr(exe, '/');
			if (slash) {
				*slash = 0;	/* exe: PREFIX, or the build tree's root */
				snprintf(buf, sizeof(buf), "%s/lib/patchsite/%s/libpatchsite-trace.so",
					 exe, arch);
				if (file_ok(buf))
					return elfio_strdup(buf);
				snprintf(buf, sizeof(buf), "%s/build/runtime/%s/libpatchsite-trace.so",
					 exe, arch);
				if (file_ok(buf))
					return elfio_strdup(buf);
			}
		}
	}
	elfio_error(prog, "no libpatchsite-trace.so for %s (not installed beside patchsite, not "
		    "built by 'make runtime'): give --tracer=PATH", arch);
	return NULL;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int rm_tree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* the output directory made (an old one moved to DIR.old); 0 or -errno */
static int make_dir(const char *dir)
{
	struct stat st;
	char old[PATH_MAX + 8];

	if (lstat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			elfio_error(dir, "exists and is not a directory");
			return -EEXIST;
		}
		snprintf(old, sizeof(old), "%s.old", dir);
		if (lstat(old, &st) == 0 && rm_tree(old)) {
			elfio_error(old, "cannot remove: %s", strerror(errno));
			return -errno;
		}
		if (rename(dir, old)) {
			elfio_error(dir, "cannot move to %s: %s", old, strerror(errno));
			return -errno;
		}
	}
	if (mkdir(dir, 0755)) {
		int err = -errno;

		elfio_error(dir, "cannot create: %s", strerror(errno));
		return err;
	}
	return 0;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = elfio_calloc(len + 16, 1);
	if (!s)
		return NULL;
	strcpy(s, "patchsite");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static const char *host_arch(void)
{
	static struct utsname u;

	if (uname(&u))
		return "";
	return u.machine;
}

/*
 * Run PROG with the tracer; *wstatus as waitpid gives it.  0, or -errno
 * after a message (the program could not be started).
 */
static int run_prog(const struct opts *o, const char *tracer, const char *raw, const char *arch,
		    char **pargv, int pargc, int *wstatus)
{
	char preload[PATH_MAX * 2], rec[PATH_MAX + 64], qname[64], sysroot_arg[PATH_MAX],
		bufenv[64], pidenv[64];
	const char *old = getenv("LD_PRELOAD");
	int qemu = strcmp(arch, host_arch()) != 0;
	char **argv = elfio_calloc((size_t)pargc + 16, sizeof(*argv));
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int pipefd[2] = { -1, -1 }, err = 0, child_errno = 0;
	pid_t pid;
	ssize_t r;

	if (!argv) {
		elfio_error(pargv[0], "out of memory");
		return -ENOMEM;
	}
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s%s%s", tracer, old && *old && !qemu ? ":" : "",
		 old && !qemu ? old : "");
	snprintf(rec, sizeof(rec), "PATCHSITE_TRACE_RECORD=%s", raw);
	if (qemu) {
		const char *sysroot = getenv("QEMU_LD_PREFIX");
		int k = 0;

		snprintf(qname, sizeof(qname), "qemu-%s", arch);
		argv[k++] = qname;
		if (!sysroot) {
			snprintf(sysroot_arg, sizeof(sysroot_arg), "/usr/%s-linux-gnu", arch);
			argv[k++] = "-L";
			argv[k++] = sysroot_arg;
		}
		argv[k++] = "-E";
		argv[k++] = preload;
		argv[k++] = "-E";
		argv[k++] = "PATCHSITE_TRACE=*";
		argv[k++] = "-E";
		argv[k++] = rec;
		argv[k++] = "-E";
		argv[k++] = pidenv;
		if (o->bufsize) {
			snprintf(bufenv, sizeof(bufenv), "PATCHSITE_TRACE_BUFSIZE=%s", o->bufsize);
			argv[k++] = "-E";
			argv[k++] = bufenv;
		}
		for (int i = 0; i < pargc; i++)
			argv[k++] = pargv[i];
	} else {
		for (int i = 0; i < pargc; i++)
			argv[i] = pargv[i];
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		elfio_error(pargv[0], "pipe: %s", strerror(errno));
		elfio_free(argv);
		return -errno;
	}
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		close(pipefd[0]);
		/* the tracer's configuration is ours: the program's own tables off */
		unsetenv("PATCHSITE_TRACE_OUT");
		unsetenv("PATCHSITE_TRACE_CTL");
		unsetenv("PATCHSITE_TRACE_SIGNAL");
		unsetenv("PATCHSITE_TRACE_TIME");
		unsetenv("PATCHSITE_TRACE_FORMAT");
		/* only this process records: what it runs is left alone */
		snprintf(pidenv, sizeof(pidenv), "PATCHSITE_TRACE_RECORD_PID=%ld", (long)getpid());
		if (!qemu) {
			putenv(pidenv);
			putenv(preload);
			setenv("PATCHSITE_TRACE", "*", 1);
			putenv(rec);
			if (o->bufsize)
				setenv("PATCHSITE_TRACE_BUFSIZE", o->bufsize, 1);
		}
		execvp(argv[0], argv);
		child_errno = errno;
		if (write(pipefd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		err = -errno;
		elfio_error(pargv[0], "fork: %s", strerror(errno));
		goto out;
	}
	r = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
		;
	if (r == (ssize_t)sizeof(child_errno)) {
		elfio_error(argv[0], "cannot run: %s", strerror(child_errno));
		err = -child_errno;
	}
out:
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	close(pipefd[0]);
	elfio_free(argv);
	return err;
}

/* where another architecture's libraries are (qemu-user's -L), or "" */
static const char *prog_sysroot(const struct trace_prog *p)
{
	static char buf[64];
	const char *env = getenv("QEMU_LD_PREFIX");

	if (!strcmp(trace_prog_arch(p), host_arch()))
		return "";
	if (env)
		return env;
	snprintf(buf, sizeof(buf), "/usr/%s-linux-gnu", trace_prog_arch(p));
	return buf;
}

static const char *ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail) ? s + a - b : NULL;
}

enum { O_SUMMARY = 256, O_PER_THREAD, O_TRACER, O_FORMAT, O_BUFSIZE };

/* trace's options into *o (optind at the program): 0, 1 after --help
   (printed), or -EINVAL (said) */
static int trace_options(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "filter", required_argument, NULL, 'F' },
		{ "notrace", required_argument, NULL, 'N' },
		{ "depth", required_argument, NULL, 'D' },
		{ "time-filter", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "summary", no_argument, NULL, O_SUMMARY },
		{ "per-thread", no_argument, NULL, O_PER_THREAD },
		{ "tracer", required_argument, NULL, O_TRACER },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "buffer-size", required_argument, NULL, O_BUFSIZE },
		/* -p PID (attach to a running program) comes here */
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+F:N:D:t:o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'F':
		case 'N':
			if (!*optarg) {
				elfio_error("trace", "-%c: an empty glob", c);
				return -EINVAL;
			}
			if (glob_add(c == 'F' ? &o->filter.F : &o->filter.N, optarg)) {
				elfio_error("trace", "out of memory");
				return -ENOMEM;
			}
			break;
		case 'D':
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 1024) {
				elfio_error("trace", "-D %s: not a depth from 1 to 1024", optarg);
				return -EINVAL;
			}
			o->filter.depth = (unsigned)v;
			break;
		case 't':
			if (parse_time(optarg, &o->filter.min_ns)) {
				elfio_error("trace", "-t %s: not a time (N, Nns, Nus, Nms, Ns)", optarg);
				return -EINVAL;
			}
			break;
		case 'o':
			o->out = optarg;
			break;
		case O_SUMMARY:
			o->summary = 1;
			break;
		case O_PER_THREAD:
			o->summary = o->per_thread = 1;
			break;
		case O_TRACER:
			o->tracer = optarg;
			break;
		case O_FORMAT:
			if (strcmp(optarg, "uftrace") && strcmp(optarg, "chrome")) {
				elfio_error("trace", "--format=%s: not uftrace or chrome", optarg);
				return -EINVAL;
			}
			o->chrome = !strcmp(optarg, "chrome");
			break;
		case O_BUFSIZE:
			v = strtol(optarg, &end, 0);
			if (*end || v < 4 || v > (1l << 30) || (v & (v - 1))) {
				elfio_error("trace", "--buffer-size=%s: not a power of 2 from 4 to 2^30",
					    optarg);
				return -EINVAL;
			}
			o->bufsize = optarg;
			break;
		case 'h':
			fputs(trace_help, stdout);
			return 1;
		default:
			elfio_error("trace", "bad option '%s' (unknown, or without its argument; see "
				    "'patchsite trace --help')",
				    argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		elfio_error("trace", "no program given: patchsite trace [OPTIONS] -- PROG [ARGS...]");
		return -EINVAL;
	}
	if (o->out && ends_with(o->out, ".json"))
		o->chrome = 1;
	return 0;
}

/* where the trace goes: -o, or the format's default (DIR/ is DIR, so that
   DIR.old lands beside it, not inside); buf holds a name it trims */
static const char *trace_out_name(const struct opts *o, char *buf, size_t cap)
{
	const char *dir = o->out ? o->out : o->chrome ? "trace.json" : "uftrace.data";

	if (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/') {
		snprintf(buf, cap, "%s", dir);
		while (strlen(buf) > 1 && buf[strlen(buf) - 1] == '/')
			buf[strlen(buf) - 1] = 0;
		dir = buf;
	}
	return dir;
}

/* every -F and -N glob matches a function the program, or an embedded
   library it links, can trace (one dlopen()ed later is not known here):
   0, or -ENOENT (said) */
static int trace_globs_found(const struct opts *o, const struct trace_prog *prog, const char *name)
{
	for (int k = 0; k < 2; k++) {
		const struct trace_globs *g = k ? &o->filter.N : &o->filter.F;

		for (size_t i = 0; i < g->n; i++) {
			struct trace_globs one = { &g->v[i], 1, 1 };
			size_t j = 0, found = 0;

			for (size_t m = 0; m <= prog->nlibs && !found; m++) {
				const struct trace_prog *q = m ? &prog->libs[m - 1] : prog;

				for (j = 0; j < q->nsyms && !found; j++)
					found = q->syms[j].site && trace_globs_match(&one, q->syms[j].name);
			}
			if (!found) {
				elfio_error(name, "-%c %s: matches no function it can trace",
					    k ? 'N' : 'F', g->v[i]);
				return -ENOENT;
			}
		}
	}
	return 0;
}

/* the output made before the run: a directory the tracer writes into
   (raw is it), or a JSON file and a scratch directory beside it (raw);
   0, or -errno (said); *made once there is something to take back */
static int trace_make_output(const struct opts *o, const char *dir, char *raw, size_t cap, int *made)
{
	if (o->chrome) {
		int fd, err;

		snprintf(raw, cap, "%s.rawXXXXXX", dir);
		if (!mkdtemp(raw)) {
			err = -errno;
			elfio_error(dir, "cannot create: %s", strerror(-err));
			raw[0] = 0;
			return err;
		}
		*made = 1;
		fd = open(dir, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			err = -errno;
			elfio_error(dir, "cannot create: %s", strerror(-err));
			return err;
		}
		close(fd);
		return 0;
	}
	if (make_dir(dir))
		return -EIO;
	*made = 1;
	/* the tracer writes TID.dat there itself, and its own three files */
	snprintf(raw, cap, "%s", dir);
	return 0;
}

/* the trace written (and the summary), then what was not recorded said:
   0, or -errno (said) */
static int trace_write(const struct opts *o, const char *dir, struct trace_run *r, const char *name)
{
	const struct trace_data *data = r->data;
	uint64_t dropped = 0, deep = 0, lost = 0;

	if (o->chrome ? trace_write_chrome(dir, r) : trace_write_uftrace(dir, r))
		return -EIO;
	if (o->summary && trace_write_summary(stderr, r, o->per_thread))
		return -EIO;
	for (size_t i = 0; i < data->nth; i++) {
		dropped += data->th[i].dropped;
		deep += data->th[i].deep;
		lost += data->th[i].lost;
	}
	if (data->incomplete)
		fprintf(stderr, "patchsite: %s: the program did not end through exit: its last "
			"records (up to 5 ms) are not in the trace, and what was dropped is "
			"not known\n", name);
	if (dropped || deep || lost)
		fprintf(stderr, "patchsite: %s: not recorded: %llu calls (buffer full: "
			"--buffer-size; or made by a signal handler inside the tracer's own "
			"hook), %llu calls (deeper than 512), %llu records (write failed)\n",
			name, (unsigned long long)dropped,
			(unsigned long long)deep, (unsigned long long)lost);
	return 0;
}

/* the tracer's scratch taken away: the JSON's scratch directory, or the
   tracer's own three files in the uftrace directory */
static void trace_drop_raw(const char *raw, int chrome)
{
	static const char *const own[] = { "funcs.txt", "clock.txt", "threads.txt" };

	if (!raw[0])
		return;
	if (chrome) {
		rm_tree(raw);
		return;
	}
	for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++) {
		char p[PATH_MAX + 64];

		if (snprintf(p, sizeof(p), "%s/%s", raw, own[k]) < (int)sizeof(p))
			unlink(p);
	}
}

int cmd_trace(int argc, char **argv)
{
	struct opts o = { 0 };
	struct trace_prog prog = { 0 };
	struct trace_data data = { 0 };
	char *progpath = NULL, *tracer = NULL, *cmdline = NULL, raw[PATH_MAX + 16], outbuf[PATH_MAX];
	const char *dir = NULL, *name;
	int rc = EXIT_ERROR, wstatus = 0, made = 0, filtered, err;

	raw[0] = 0;
	if ((err = trace_options(argc, argv, &o))) {
		rc = err > 0 ? 0 : EXIT_ERROR;
		goto out;
	}
	name = argv[optind];
	dir = trace_out_name(&o, outbuf, sizeof(outbuf));
	progpath = find_prog(name);
	if (!progpath || trace_prog_open_as(&prog, progpath, TRACE_PROG_ANY))
		goto out;
	/* the embedded libraries it links are traced too: a program not
	   embedded is traced for theirs */
	if (trace_prog_libs(&prog, prog_sysroot(&prog))) {
		elfio_error(name, "out of memory");
		goto out;
	}
	if (!prog.embedded && !prog.nlibs) {
		elfio_error(name, "not embedded, nor any library it links: run 'patchsite "
			    "embed %s -o OUT' first", name);
		goto out;
	}
	if (trace_globs_found(&o, &prog, name))
		goto out;
	if (!(tracer = find_tracer(o.tracer, trace_prog_arch(&prog), name)))
		goto out;
	if (trace_make_output(&o, dir, raw, sizeof(raw), &made))
		goto out;
	if (run_prog(&o, tracer, raw, trace_prog_arch(&prog), argv + optind, argc - optind, &wstatus))
		goto out;
	filtered = o.filter.F.n || o.filter.N.n || o.filter.depth || o.filter.min_ns;
	if (trace_data_read(&data, raw, &o.filter, o.chrome || o.summary || filtered))
		goto out;
	cmdline = join_args(argc, argv);
	{
		struct trace_run r = { &prog, &data, argv + optind, wstatus,
				       cmdline ? cmdline : "patchsite trace", filtered && !o.chrome };

		if (trace_write(&o, dir, &r, name))
			goto out;
	}
	made = 0;	/* the output stays */
	rc = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) :
	     WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : EXIT_ERROR;
out:
	trace_drop_raw(raw, o.chrome);
	if (made)
		o.chrome ? (void)unlink(dir) : (void)rm_tree(dir);
	trace_data_free(&data);
	trace_prog_free(&prog);
	elfio_free(o.filter.F.v);
	elfio_free(o.filter.N.v);
	elfio_free(progpath);
	elfio_free(tracer);
	elfio_free(cmdline);
	return rc;
}
