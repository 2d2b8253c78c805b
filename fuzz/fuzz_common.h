/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_common.h - helpers shared by the libFuzzer harnesses in fuzz/.
 *
 * patchsite opens paths, not buffers, so every harness hands its input to
 * the code under test as a file: a memfd, named by its /proc/self/fd/N
 * path (no disk traffic, and elfio_write_edited can reopen it), or, where
 * a command must rename over its input, a real file in a private scratch
 * directory on tmpfs (/dev/shm when there is one, so fsync costs nothing).
 *
 * Invariant violations that ASan/UBSan cannot see (a wrong exit status, a
 * temporary left behind, an input changed by a failed write) abort() with
 * a message, so libFuzzer records them like any crash.
 */
#ifndef PATCHSITE_FUZZ_COMMON_H
#define PATCHSITE_FUZZ_COMMON_H

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_CHECK(cond, ...)                                                    \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "fuzz invariant failed: %s: ", #cond);   \
			fprintf(stderr, __VA_ARGS__);                            \
			fputc('\n', stderr);                                     \
			abort();                                                 \
		}                                                                \
	} while (0)

static int fuzz_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A memfd holding data; path receives "/proc/self/fd/N".  Aborts on failure. */
static int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t pathlen)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);

	FUZZ_CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
	FUZZ_CHECK(fuzz_write_all(fd, data, size) == 0, "write memfd: %s", strerror(errno));
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	return fd;
}

static char fuzz_scratch_dir[256];

/* Remove the scratch directory and what is in it (atexit). */
static void fuzz_scratch_cleanup(void)
{
	DIR *d = opendir(fuzz_scratch_dir);
	struct dirent *de;
	char p[512];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", fuzz_scratch_dir, de->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(fuzz_scratch_dir);
}

/* The scratch directory, made once per process, removed at exit. */
static const char *fuzz_scratch(void)
{
	char *dir = fuzz_scratch_dir;

	if (!dir[0]) {
		struct stat st;
		const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
					   access("/dev/shm", W_OK) == 0
					   ? "/dev/shm"
					   : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		snprintf(dir, sizeof(fuzz_scratch_dir), "%s/patchsite-fuzz.XXXXXX", base);
		FUZZ_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
		atexit(fuzz_scratch_cleanup);
	}
	return dir;
}

/* Write data to a fresh file NAME in the scratch directory. */
static void fuzz_put_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	FUZZ_CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	FUZZ_CHECK(fuzz_write_all(fd, data, size) == 0, "write %s: %s", path, strerror(errno));
	close(fd);
}

/* Whole file into a malloc'd buffer; NULL if it does not exist. */
static uint8_t *fuzz_slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	FUZZ_CHECK(fstat(fd, &st) == 0, "fstat %s", path);
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	FUZZ_CHECK(buf != NULL, "malloc");
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
		FUZZ_CHECK(r > 0, "read %s", path);
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return buf;
}

/* Number of entries in dir whose name starts with prefix. */
static int fuzz_count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	FUZZ_CHECK(d != NULL, "opendir %s", dir);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

/*
 * Send stdout to /dev/null: record/audit print their tables there, and the
 * bytes are of no interest (only that producing them is safe).  libFuzzer
 * writes its own output to stderr.
 */
static void fuzz_quiet_stdout(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		fflush(stdout);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
}

#endif /* PATCHSITE_FUZZ_COMMON_H */
