/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * base.h - the helpers every layer uses, arch/ included (which knows nothing
 * of ELF and must not include elfio.h): the one little-endian accessor and
 * the one sorted lookup.  Header only, all inline: the decoders call the
 * accessors once an instruction, and the lookup's element size and key
 * offset must be constants in each caller (see bound()).
 *
 * The one growth helper, elfio_grow(), stays with the allocator it grows
 * with (elfio/mem.c): arch/ allocates nothing.
 */
#ifndef PATCHSITE_BASE_H
#define PATCHSITE_BASE_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Little-endian loads and stores at any alignment (instruction words,
 * ELF and DWARF fields, table slots): memcpy, which compilers turn into
 * one load or store, then the byte order.  get_le/put_le take the width
 * (1 to 8 bytes) at run time, for DWARF's and ELF's sized fields.
 */
static inline uint16_t get_le16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t get_le32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t get_le64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline void put_le16(void *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_le32(void *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_le64(void *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint64_t get_le(const void *p, unsigned int n)
{
	const uint8_t *b = (const uint8_t *)p;
	uint64_t v = 0;

	for (unsigned int i = 0; i < n && i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static inline void put_le(void *p, uint64_t v, unsigned int n)
{
	uint8_t *b = (uint8_t *)p;

	for (unsigned int i = 0; i < n && i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

/*
 * The sorted lookup, the one binary search of patchsite: over indexes
 * [0, n) whose KEY (an expression of the index named i) does not go down,
 * the first index whose KEY is >= key (upper: > key); n if none.  An
 * expression, not a callback, so that it works for arrays of records and
 * of pointers alike and compiles to the loop a hand-written search would.
 */
#define BOUND_BY(n, i, KEY, key, upper) __extension__ ({				\
	size_t bound_lo_ = 0, bound_hi_ = (n);						\
	while (bound_lo_ < bound_hi_) {							\
		size_t i = bound_lo_ + (bound_hi_ - bound_lo_) / 2;			\
		if ((upper) ? (KEY) <= (key) : (KEY) < (key))				\
			bound_lo_ = i + 1;						\
		else									\
			bound_hi_ = i;							\
	}										\
	bound_lo_;									\
})

static inline uint64_t bound_key_(const void *v, size_t i, size_t size, size_t key_off)
{
	uint64_t k;

	memcpy(&k, (const unsigned char *)v + i * size + key_off, sizeof(k));
	return k;
}

/*
 * BOUND_BY over v[0..n), elements of `size` bytes sorted by the uint64_t
 * at byte offset key_off.  BOUND names the field.
 */
static inline size_t bound(const void *v, size_t n, size_t size, size_t key_off, uint64_t key,
			   bool upper)
{
	/*
	 * Inline, so that each caller's size and key_off are constants: out of
	 * line, the multiply and the unaligned load cost repad more than twice
	 * the hand-written searches it replaced (callgrind: 900 M against
	 * 400 M instructions on the 40,000-function bench object).
	 */
	return BOUND_BY(n, m, bound_key_(v, m, size, key_off), key, upper);
}
#define BOUND(v, n, field, key, upper)							\
	bound((v), (n), sizeof(*(v)), offsetof(__typeof__(*(v)), field), (key), (upper))

/* --- Memory --------------------------------------------------------------- */

/* The names keep their elfio_ prefix: the layers above call them by it. */

/*
 * The allocator of patchsite (base/mem.c): zeroed, blocks of 1 MiB and more on
 * transparent huge pages.  Everything from these is freed with elfio_free,
 * nothing else is.  Raw malloc/free remain only where a library's API hands
 * over or takes back malloc'd memory (each such place says so).  NULL with errno set on failure (overflow included).
 */
void *elfio_calloc(size_t n, size_t size);
void elfio_free(void *p);
/*
 * A zeroed block of `total` bytes whose bytes [at, at + len) are the first
 * len bytes of the file fd, mapped (not copied; private: a write changes
 * only this block).  at: a multiple of the page size.  Freed with
 * elfio_free.  NULL with errno set (the caller copies instead).
 */
void *elfio_map_file(int fd, size_t len, size_t at, size_t total);
/* A copy of s from elfio_calloc (freed with elfio_free), or NULL with errno set. */
char *elfio_strdup(const char *s);
/*
 * The growth helper, the one way an array of patchsite grows: make *(T **)v
 * (NULL, or from elfio_calloc/elfio_grow) hold at least `need` elements of
 * `size` bytes (capacity in *cap, doubled as needed).  0, or -ENOMEM with
 * *v and *cap unchanged.
 */
int elfio_grow(void *v, size_t *cap, size_t need, size_t size);

#endif
