// SPDX-License-Identifier: GPL-2.0-only
/*
 * mem.c - the one allocator family: every allocation of patchsite (the big
 * arrays of symbols, relocations, shapes and sites, and the small objects
 * and strings alike: elfio_calloc, elfio_strdup, elfio_free) and the one
 * growth helper every growable array uses.
 *
 * Strategy: on the virtual machines patchsite is measured on, a page fault
 * costs about 25 us, and glibc's malloc hands out large blocks in 4 KiB
 * pages: the 6 MB symbol array of a kernel-sized image alone cost 1,500
 * faults, a third of `record`.  A block of 1 MiB or more is mapped here,
 * rounded to 2 MiB and marked MADV_HUGEPAGE (transparent huge pages are
 * "madvise" by default on Debian), so that it faults in a few 2 MiB pages.
 * Smaller blocks are malloc's.  A mapped block grows with mremap, its pages
 * moved, not copied.  Each block starts with a header that says which it
 * is, so one free works for both.  Where huge pages are not to be
 * had, the mapping simply stays 4 KiB pages.
 *
 * elfio_grow() is the one growth helper: every growable array of patchsite
 * grows with it (and is freed with elfio_free).  One family, so that who
 * frees what is never a question: raw malloc/free remain only where a
 * library hands over or takes back malloc'd memory (getline, realpath,
 * open_memstream, asprintf, libelf), each marked where it is.  The one sorted lookup and
 * the one little-endian accessor are in base/base.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"

#define BIG		(1u << 20)
#define HUGE_PAGE	(2u << 20)
#define MAGIC_HEAP	0x70617463685f6d31ull	/* "patch_m1" */
#define MAGIC_MAP	0x70617463685f6d32ull

struct hdr {
	size_t mapped;		/* bytes mapped (MAGIC_MAP), else 0 */
	uint64_t magic;
	size_t usable;		/* bytes after the header */
	size_t lead;		/* MAGIC_MAP: bytes mapped before the header (elfio_map_file's
				   block), else 0; keeps the payload 32-byte aligned */
};

static void *block(size_t bytes, bool zero)
{
	struct hdr *h;

	if (bytes > SIZE_MAX - sizeof(*h) - HUGE_PAGE) {
		errno = ENOMEM;
		return NULL;
	}
	if (bytes >= BIG) {
		size_t len = (bytes + sizeof(*h) + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			errno = ENOMEM;
			return NULL;
		}
#ifdef MADV_HUGEPAGE
		madvise(m, len, MADV_HUGEPAGE);	/* best effort */
#endif
		h = m;
		*h = (struct hdr){ len, MAGIC_MAP, len - sizeof(*h), 0 };
		return h + 1;		/* anonymous pages are zero already */
	}
	h = zero ? calloc(1, sizeof(*h) + bytes) : malloc(sizeof(*h) + bytes);
	if (!h)
		return NULL;
	*h = (struct hdr){ 0, MAGIC_HEAP, bytes, 0 };
	return h + 1;
}

void *elfio_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	size_t bytes = n * size;
	return block(bytes ? bytes : 1, true);
}

char *elfio_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = elfio_calloc(n, 1);

	if (d)
		memcpy(d, s, n);
	return d;
}

void elfio_free(void *p)
{
	struct hdr *h;

	if (!p)
		return;
	h = (struct hdr *)p - 1;
	if (h->magic == MAGIC_MAP) {
		h->magic = 0;
		munmap((char *)h - h->lead, h->mapped);
	} else {
		h->magic = 0;
		free(h);
	}
}

/*
 * A file's bytes inside a block without copying them: the block's bytes
 * [at, at + len) are a private mapping of the file (the page cache's own
 * pages, read-only until a write copies the one page written), the rest
 * anonymous zeroes.  A kernel Image copied into the ELF made from it cost
 * its 34 MB twice more, in zeroed fresh pages and in the copy: a fifth of
 * auditing an arm64 Image (perf).  The block's payload starts a page into
 * its mapping (the header just before it), so at must be a multiple of the
 * page size.  elfio_grow copies such a block (mremap moves one mapping,
 * not a file's and anonymous pages together).
 */
void *elfio_map_file(int fd, size_t len, size_t at, size_t total)
{
	long pl = sysconf(_SC_PAGESIZE);
	size_t pg = pl > 0 ? (size_t)pl : 4096;

	if (at % pg || total < at || len > total - at || total > SIZE_MAX / 2) {
		errno = EINVAL;
		return NULL;
	}
	size_t maplen = (pg + total + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	uint8_t *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
#ifdef MADV_HUGEPAGE
	madvise(m, maplen, MADV_HUGEPAGE);	/* best effort: the anonymous part */
#endif
	uint8_t *p = m + pg;
	size_t flen = (len + pg - 1) & ~(pg - 1);
	if (len && mmap(p + at, flen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
			   MAP_FAILED) {
		int err = errno;
		munmap(m, maplen);
		errno = err;
		return NULL;
	}
#ifdef MADV_POPULATE_READ
	/* the page tables in one call, the pages still shared (a populate for
	   writing, MAP_POPULATE's on a writable mapping, would copy them all) */
	if (len)
		madvise(p + at, flen, MADV_POPULATE_READ);	/* best effort */
#endif
	struct hdr *h = (struct hdr *)p - 1;
	*h = (struct hdr){ maplen, MAGIC_MAP, maplen - pg, pg - sizeof(*h) };
	return p;
}

/* Only elfio_grow() resizes: the new part is not zeroed. */
static void *elfio_realloc(void *p, size_t n, size_t size)
{
	struct hdr *h;
	void *np;

	if (!p)
		return elfio_calloc(n, size);
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	size_t bytes = n * size;
	if (!bytes)
		bytes = 1;
	h = (struct hdr *)p - 1;
	if (bytes <= h->usable)
		return p;
	if (h->magic == MAGIC_MAP && !h->lead && bytes <= SIZE_MAX - sizeof(*h) - HUGE_PAGE) {
		/* a mapped block grows by moving its pages, not copying them */
		size_t len = (bytes + sizeof(*h) + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
		void *m = mremap(h, h->mapped, len, MREMAP_MAYMOVE);
		if (m == MAP_FAILED) {
			errno = ENOMEM;
			return NULL;
		}
		h = m;
		h->mapped = len;
		h->usable = len - sizeof(*h);
		return h + 1;
	}
	np = block(bytes, false);
	if (!np)
		return NULL;
	memcpy(np, p, h->usable);
	elfio_free(p);
	return np;
}

int elfio_grow(void *vp, size_t *cap, size_t need, size_t size)
{
	void **v = vp;
	size_t ncap = *cap ? *cap : 16;

	if (need <= *cap && *v)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	void *nv = elfio_realloc(*v, ncap, size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}
