// SPDX-License-Identifier: GPL-2.0-only
/*
 * batch.c - one command over a whole kernel package: many images, and
 * directories walked for vmlinux, .ko and compressed modules (the package
 * audit, package.c, runs on it).
 *
 * Strategy: the paths are collected first (a directory is walked for files
 * named vmlinux* and *.ko, *.ko.gz, *.ko.xz, *.ko.zst; the walk's results
 * are sorted, so that the order never depends on the filesystem), then
 * audited by as many forked workers as there are cores.  Worker k takes
 * images k, k+N, k+2N...; for each it captures what the audit prints (its
 * report, and its error line, which elfio prints to standard error) into
 * memory files, and sends both with the exit status and a fixed-size block
 * of data the caller counts (the audit's findings by kind) through a pipe.  The
 * parent hands every image's result on in path order as soon as the
 * results before it are in, so the output is the same whatever the
 * scheduling.  Workers are processes, not threads: libelf, libdw and the
 * error counter are per process, and a crash in one image takes one worker,
 * which the parent reports, not the run.
 *
 * The status is the worst of the images': 2 when one could not be read
 * (each is named on standard error), else 1 when one has findings, else 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recordsites/batch.h"
#include "elfio/elfio.h"

/* --- Collecting the images -------------------------------------------------- */

struct paths {
	char **v;
	size_t n, cap;
};

static int paths_add(struct paths *p, const char *s)
{
	if (elfio_grow(&p->v, &p->cap, p->n + 1, sizeof(*p->v)))
		return -ENOMEM;
	if (!(p->v[p->n] = elfio_strdup(s)))
		return -ENOMEM;
	p->n++;
	return 0;
}

/* Is this file name one a kernel package's image has? */
static bool image_name(const char *path)
{
	static const char *const ends[] = { ".ko", ".ko.gz", ".ko.xz", ".ko.zst" };
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	/* vmlinuz: a boot image (elfio/bootimg.c) */
	if ((!strncmp(base, "vmlinux", 7) || !strncmp(base, "vmlinuz", 7)) && !strstr(base, ".sig") &&
	    !strstr(base, ".map"))
		return true;
	len = strlen(base);
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t e = strlen(ends[i]);
		if (len > e && !strcmp(base + len - e, ends[i]))
			return true;
	}
	return false;
}

static struct paths *walk_into;
static int walk_err;

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_F && image_name(path) && paths_add(walk_into, path)) {
		walk_err = -ENOMEM;
		return 1;
	}
	if (flag == FTW_DNR) {
		elfio_error(path, "cannot read the directory");
		walk_err = -EACCES;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		elfio_free(b->paths[i]);
	elfio_free(b->paths);
	memset(b, 0, sizeof(*b));
}

int batch_collect(struct batch *b, char **args, int nargs)
{
	struct paths p = { 0 };
	int ret = 0;

	memset(b, 0, sizeof(*b));
	for (int i = 0; i < nargs && !ret; i++) {
		struct stat st;
		if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			size_t first = p.n;
			walk_into = &p;
			walk_err = 0;
			if (nftw(args[i], walk_one, 32, FTW_PHYS) < 0 && !walk_err) {
				walk_err = -errno;
				if (walk_err != -ENOMEM)
					elfio_error(args[i], "cannot walk the directory: %s",
						    strerror(errno));
			}
			ret = walk_err == -ENOMEM ? -ENOMEM : 0;
			b->unreadable += walk_err && walk_err != -ENOMEM;
			if (p.n == first && !walk_err)
				elfio_error(args[i], "holds no vmlinux, .ko or compressed module");
			b->unreadable += p.n == first && !walk_err;
			qsort(p.v + first, p.n - first, sizeof(*p.v), cmp_str);
			b->dirs++;
		} else {
			/* a file, or what is not there: the audit names the problem */
			ret = paths_add(&p, args[i]);
		}
	}
	b->paths = p.v;
	b->n = p.n;
	if (ret) {
		elfio_error(args[0], "out of memory for the list of images (%zu so far)", p.n);
		batch_free(b);
	}
	return ret;
}

/* --- Running them ------------------------------------------------------------- */

/* One image's result, as a worker sends it. */
struct result_hdr {
	uint32_t index;
	int32_t status;		/* 0, 1, 2; 3: the worker died on it */
	uint64_t outlen, errlen;	/* then ressize bytes of data, the report, the errors */
};

struct result {
	bool done, oom;		/* oom: no memory for its report */
	int status;
	unsigned char data[BATCH_RESULT_MAX];	/* fn's res */
	char *out, *err;
	size_t outlen, errlen;
};

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * Send len bytes of fd (a memfd) to the pipe through a buffer on the stack,
 * then empty fd: a worker that has its result allocates nothing more.
 */
static int send_fd(int pipefd, int fd, size_t len)
{
	char buf[1 << 14];

	for (size_t at = 0; at < len;) {
		size_t n = len - at < sizeof(buf) ? len - at : sizeof(buf);
		ssize_t got = pread(fd, buf, n, (off_t)at);
		int ret;
		if (got != (ssize_t)n)
			return got < 0 ? -errno : -EIO;
		if ((ret = write_full(pipefd, buf, n)))
			return ret;
		at += n;
	}
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		return -errno;
	return 0;
}

static size_t written(int fd)
{
	off_t end = lseek(fd, 0, SEEK_CUR);

	return end > 0 ? (size_t)end : 0;
}

static void worker(const struct batch *b, size_t k, size_t nworkers, int pipefd,
		   size_t ressize, batch_fn fn, void *ctx)
{
	int outfd = memfd_create("patchsite-out", 0), errfd = memfd_create("patchsite-err", 0);

	if (outfd < 0 || errfd < 0 || dup2(errfd, STDERR_FILENO) < 0)
		_exit(3);
	for (size_t i = k; i < b->n; i += nworkers) {
		int dfd = dup(outfd);
		FILE *o = dfd < 0 ? NULL : fdopen(dfd, "w");
		unsigned char data[BATCH_RESULT_MAX];
		int st;

		memset(data, 0, sizeof(data));
		if (!o && dfd >= 0 && errno == ENOMEM)
			elfio_error(b->paths[i], "out of memory for the stream of its report");
		else if (!o)
			elfio_error(b->paths[i], "cannot open its report: %s", strerror(errno));
		if (!o && dfd >= 0)
			close(dfd);
		st = o ? fn(b->paths[i], o, data, ctx) : 2;
		if (o && fclose(o))
			st = 2;
		fflush(stderr);

		struct result_hdr h = { (uint32_t)i, st, written(outfd), written(errfd) };
		if (write_full(pipefd, &h, sizeof(h)) || write_full(pipefd, data, ressize) ||
		    send_fd(pipefd, outfd, h.outlen) ||
		    send_fd(pipefd, errfd, h.errlen))
			_exit(3);
	}
	_exit(0);
}

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;	/* 0: the worker ended early */
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Hand image i's result to done(), and free it. */
static void report(const struct batch *b, struct result *res, size_t i, batch_done_fn done,
		   void *ctx)
{
	struct result *r = &res[i];

	if (r->oom) {
		char msg[600];
		int n = snprintf(msg, sizeof(msg), "patchsite: %s: out of memory for the report of "
				 "its audit (%zu bytes)\n", b->paths[i], r->outlen);
		memset(r->data, 0, sizeof(r->data));
		done(b->paths[i], 2, r->data, "", 0, msg, (size_t)(n > 0 ? n : 0), ctx);
	} else {
		done(b->paths[i], r->status, r->data, r->out, r->outlen, r->err, r->errlen, ctx);
	}
	elfio_free(r->out);
	elfio_free(r->err);
	r->out = r->err = NULL;
}

/*
 * Fork the nw workers, each with a pipe back to us (pfd[k]); *live: how
 * many started.  0, or -errno (said) where one could not be: those that
 * started still run.
 */
static int start_workers(const struct batch *b, size_t nw, struct pollfd *pfd, pid_t *pid,
			 size_t *live, size_t ressize, batch_fn fn, void *ctx)
{
	fflush(stdout);
	fflush(stderr);
	for (size_t k = 0; k < nw && b->n; k++) {
		int p[2];
		if (pipe(p)) {
			elfio_error(b->paths[k], "cannot make a pipe: %s", strerror(errno));
			return -errno;
		}
		pid[k] = fork();
		if (pid[k] < 0) {
			elfio_error(b->paths[k], "cannot fork: %s", strerror(errno));
			close(p[0]);
			close(p[1]);
			return -EAGAIN;
		}
		if (pid[k] == 0) {
			close(p[0]);
			for (size_t j = 0; j < k; j++)
				close(pfd[j].fd);
			worker(b, k, nw, p[1], ressize, fn, ctx);
		}
		close(p[1]);
		pfd[k] = (struct pollfd){ .fd = p[0], .events = POLLIN };
		(*live)++;
	}
	return 0;
}

/* A worker's pipe is done with: closed, and one fewer live. */
static void hang_up(struct pollfd *pf, size_t *live)
{
	close(pf->fd);
	pf->fd = -1;
	(*live)--;
}

/*
 * Where there is no memory for a report: read past it, and mark the
 * result so that report() says why it is missing.
 */
static void skip_report(struct pollfd *pf, struct result *r, const struct result_hdr *h,
			size_t *live)
{
	char skip[1 << 12];
	int bad = 0;

	for (size_t left = h->outlen + h->errlen; !bad && left;) {
		size_t n = left < sizeof(skip) ? left : sizeof(skip);
		bad = read_full(pf->fd, skip, n);
		left -= n;
	}
	elfio_free(r->out);
	elfio_free(r->err);
	r->out = r->err = NULL;
	r->oom = true;
	r->outlen = h->outlen + h->errlen;
	r->status = 2;
	r->done = !bad;
	if (bad)
		hang_up(pf, live);
}

/*
 * One result from the worker at pf into res[].  Whether one came (else
 * the worker's pipe broke, and is closed).
 */
static bool receive(const struct batch *b, struct result *res, size_t ressize,
		    struct pollfd *pf, size_t *live)
{
	struct result_hdr h;

	if (read_full(pf->fd, &h, sizeof(h)) || h.index >= b->n ||
	    h.outlen > SIZE_MAX / 2 || h.errlen > SIZE_MAX / 2 ||
	    read_full(pf->fd, res[h.index].data, ressize)) {
		hang_up(pf, live);
		return false;
	}
	struct result *r = &res[h.index];
	r->out = elfio_calloc(h.outlen + 1, 1);
	r->err = elfio_calloc(h.errlen + 1, 1);
	if (!r->out || !r->err) {
		skip_report(pf, r, &h, live);
		return true;
	}
	if (read_full(pf->fd, r->out, h.outlen) || read_full(pf->fd, r->err, h.errlen)) {
		hang_up(pf, live);
		return false;
	}
	r->outlen = h.outlen;
	r->errlen = h.errlen;
	r->status = h.status;
	r->done = true;
	return true;
}

/*
 * The results as they come, handed to done() in path order as soon as
 * the ones before are in; *next: the first not handed yet.
 */
static void collect(const struct batch *b, struct result *res, size_t ressize,
		    struct pollfd *pfd, size_t nw, size_t live, size_t *next, batch_done_fn done,
		    void *ctx)
{
	while (live) {
		if (poll(pfd, nw, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (size_t k = 0; k < nw; k++) {
			if (pfd[k].fd < 0 || !(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (!receive(b, res, ressize, &pfd[k], &live))
				continue;
			for (; *next < b->n && res[*next].done; (*next)++)
				report(b, res, *next, done, ctx);
		}
	}
}

/* Wait for every worker that was started. */
static void reap(const pid_t *pid, size_t nw)
{
	for (size_t k = 0; k < nw; k++) {
		int st;
		if (pid[k] > 0)
			while (waitpid(pid[k], &st, 0) < 0 && errno == EINTR)
				;
	}
}

/* The rest in path order: an image whose worker died before it answered says so. */
static void report_rest(const struct batch *b, struct result *res, size_t next,
			batch_done_fn done, void *ctx)
{
	static const unsigned char zeros[BATCH_RESULT_MAX];

	for (; next < b->n; next++) {
		char msg[600];
		int n = snprintf(msg, sizeof(msg), "patchsite: %s: the audit of this image did not "
				 "finish (its worker died)\n", b->paths[next]);
		if (!res[next].done)
			done(b->paths[next], 2, zeros, "", 0, msg, (size_t)(n > 0 ? n : 0), ctx);
		else
			report(b, res, next, done, ctx);
	}
}

int batch_run(const struct batch *b, unsigned int jobs, size_t ressize, batch_fn fn,
	      batch_done_fn done, void *ctx)
{
	size_t nw = jobs ? jobs : (size_t)sysconf(_SC_NPROCESSORS_ONLN);
	struct result *res = elfio_calloc(b->n, sizeof(*res));
	struct pollfd *pfd = NULL;
	pid_t *pid = NULL;
	size_t next = 0, live = 0;
	int ret = 0;

	if (ressize > BATCH_RESULT_MAX) {
		elfio_free(res);
		return -EINVAL;
	}
	if (nw < 1)
		nw = 1;
	if (nw > b->n)
		nw = b->n ? b->n : 1;
	pfd = elfio_calloc(nw, sizeof(*pfd));
	pid = elfio_calloc(nw, sizeof(*pid));
	for (size_t k = 0; pfd && k < nw; k++)
		pfd[k].fd = -1;
	if (!res || !pfd || !pid) {
		elfio_error(b->n ? b->paths[0] : "patchsite", "out of memory for %zu images",
			    b->n);
		ret = -ENOMEM;
		goto out;
	}
	ret = start_workers(b, nw, pfd, pid, &live, ressize, fn, ctx);
	collect(b, res, ressize, pfd, nw, live, &next, done, ctx);
	reap(pid, nw);
	report_rest(b, res, next, done, ctx);
out:
	elfio_free(res);
	elfio_free(pfd);
	elfio_free(pid);
	return ret;
}
