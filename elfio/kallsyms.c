// SPDX-License-Identifier: GPL-2.0-only
/*
 * kallsyms.c - the kernel's own symbol table, read from its image.
 *
 * Strategy: scripts/kallsyms.c writes, into .rodata, every label after a
 * `.balign 8`: kallsyms_num_syms (.long), kallsyms_names (per symbol a
 * ULEB128 length of one or two bytes, then that many token numbers),
 * kallsyms_markers (.long: the names offset of every 256th symbol),
 * kallsyms_token_table (256 NUL-terminated strings), kallsyms_token_index
 * (256 .short offsets into it), kallsyms_offsets (.long per symbol),
 * kallsyms_relative_base (a pointer) and kallsyms_seqs_of_names (3 bytes
 * per symbol).  6.10 and later write them in that order; 6.1 to 6.9 wrote
 * offsets and relative base first, then num_syms, names, markers, (from
 * 6.2) seqs_of_names, token table and index.  Nothing here relies on
 * symbols: the token table is found by its digits ("0".."9" are tokens of
 * their own at indexes 48..57, since every kernel has names with digits),
 * checked whole against the index that follows it; the names are found by
 * trying each aligned place before the token table as kallsyms_num_syms,
 * decoding that many names and requiring the markers after them to equal
 * the offsets the decoding saw and the next table to start where the
 * layout puts it.  Only then are the offsets read.  Every read is bounded
 * by the blob; a table that does not decode is refused with where.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "elfio/bootimg.h"
#include "elfio/elfio.h"

#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)
#define MAX_SYMS	(1u << 24)	/* seqs_of_names holds 3 bytes a symbol */
/* how far before the token table the names may start */
#define MAX_NAMES_SPAN	(256u << 20)

struct tokens {
	const uint8_t *tab;	/* the token table */
	uint16_t idx[256];
	size_t len[256];
};

/* Is the token index at q, with the token '0' at p, the one for a table before it? */
static bool check_index(const uint8_t *buf, size_t len, size_t p, size_t q, struct tokens *t,
			size_t *tstart)
{
	if (q + 512 > len)
		return false;
	for (int i = 0; i < 256; i++)
		t->idx[i] = get_le16(buf + q + 2 * i);
	if (t->idx[0] != 0 || t->idx['0'] > p)
		return false;
	size_t T = p - t->idx['0'];
	for (int i = 1; i < 256; i++)
		if (t->idx[i] <= t->idx[i - 1])
			return false;
	for (int i = '1'; i <= '9'; i++)
		if (t->idx[i] != t->idx[i - 1] + 2)
			return false;
	for (int i = 0; i < 256; i++) {
		size_t at = T + t->idx[i];
		size_t end = i < 255 ? T + t->idx[i + 1] : q;
		const uint8_t *z = memchr(buf + at, 0, end - at);
		if (!z)
			return false;	/* an empty token is a slot no pair was worth */
		t->len[i] = (size_t)(z - (buf + at));
		if (i < 255 && at + t->len[i] + 1 != end)
			return false;
		if (i == 255 && q - (at + t->len[i] + 1) >= 8)
			return false;
	}
	t->tab = buf + T;
	*tstart = T;
	return true;
}

static int find_tokens(const uint8_t *buf, size_t len, struct tokens *t, size_t *T, size_t *Q)
{
	static const char digits[] = "0\0" "1\0" "2\0" "3\0" "4\0" "5\0" "6\0" "7\0" "8\0" "9";
	const uint8_t *p = buf;

	while ((p = memmem(p, len - (size_t)(p - buf), digits, sizeof(digits)))) {
		size_t at = (size_t)(p - buf);
		/* the index follows the table's last string, 8-aligned; tokens are short */
		for (size_t q = ALIGN8(at + sizeof(digits)); q < at + 65536 && q + 512 <= len; q += 8)
			if (get_le16(buf + q) == 0 && check_index(buf, len, at, q, t, T)) {
				*Q = q;
				return 0;
			}
		p++;
	}
	return -ENOENT;
}

/*
 * Names from n, count of them, ending at or before limit: 0 and their end,
 * with the offset of every 256th in marks.
 */
static bool walk_names(const uint8_t *buf, size_t at, size_t limit, size_t count, uint32_t *marks,
		       size_t *end)
{
	size_t off = 0;

	for (size_t i = 0; i < count; i++) {
		if (at + off >= limit)
			return false;
		size_t n = buf[at + off], hdr = 1;
		if (n & 0x80) {
			if (at + off + 1 >= limit || (buf[at + off + 1] & 0x80))
				return false;
			n = (n & 0x7f) | ((size_t)buf[at + off + 1] << 7);
			hdr = 2;
			if (n <= 0x7f)
				return false;
		}
		if (n == 0)
			return false;
		if ((i & 0xff) == 0)
			marks[i >> 8] = (uint32_t)off;
		off += hdr + n;
	}
	if (at + off > limit)
		return false;
	*end = at + off;
	return true;
}

static int find_names(const uint8_t *buf, size_t T, struct kallsyms *k, const char **why)
{
	uint32_t *marks = NULL;
	size_t cap = 0;
	size_t lo = T > MAX_NAMES_SPAN ? T - MAX_NAMES_SPAN : 0;

	for (size_t x = (T & ~(size_t)7); x >= lo + 8; x -= 8) {
		size_t X = x - 8, end;
		uint32_t n = get_le32(buf + X);

		if (n == 0 || n > MAX_SYMS || get_le32(buf + X + 4) != 0 || buf[X + 8] == 0)
			continue;
		/* the names of n symbols are at least 2n bytes */
		if ((uint64_t)n * 2 > T - X)
			continue;
		size_t nm = (n + 255) / 256;
		if (elfio_grow(&marks, &cap, nm, sizeof(*marks))) {
			elfio_free(marks);
			*why = "out of memory";
			return -ENOMEM;
		}
		if (!walk_names(buf, X + 8, T, n, marks, &end))
			continue;
		size_t M = ALIGN8(end);
		if (M + 4 * nm > T)
			continue;
		bool same = true;
		for (size_t i = 0; i < nm && same; i++)
			same = get_le32(buf + M + 4 * i) == marks[i];
		if (!same)
			continue;
		size_t after = ALIGN8(M + 4 * nm);
		if (after == T) {
			k->seqs_at = 0;		/* 6.10+ (seqs after the offsets), or 6.1 */
		} else if (ALIGN8(after + 3 * (size_t)n) == T) {
			k->seqs_at = after;	/* 6.2 .. 6.9 */
		} else {
			continue;
		}
		k->count = n;
		k->num_syms_at = X;
		k->names_at = X + 8;
		k->markers_at = M;
		elfio_free(marks);
		return 0;
	}
	elfio_free(marks);
	*why = "no kallsyms_num_syms, kallsyms_names and kallsyms_markers that agree before the "
	       "token table";
	return -EINVAL;
}

/* Is seqs (3-byte big-endian numbers, n of them) a permutation of 0..n-1? */
static bool is_permutation(const uint8_t *seqs, size_t n)
{
	uint8_t *seen = elfio_calloc((n + 7) / 8, 1);
	bool ok = seen != NULL;

	for (size_t i = 0; i < n && ok; i++) {
		uint32_t v = (uint32_t)seqs[3 * i] << 16 | (uint32_t)seqs[3 * i + 1] << 8 | seqs[3 * i + 2];
		ok = v < n && !(seen[v / 8] & (1u << (v % 8)));
		if (ok)
			seen[v / 8] |= (uint8_t)(1u << (v % 8));
	}
	elfio_free(seen);
	return ok;
}

int kallsyms_decode(const uint8_t *buf, size_t len, struct kallsyms *k, const char **why)
{
	struct tokens t;
	size_t T, Q;
	int ret;

	memset(k, 0, sizeof(*k));
	*why = "no kallsyms token table";
	if (len < 1024 || find_tokens(buf, len, &t, &T, &Q))
		return -ENOENT;
	k->token_table_at = T;
	k->token_index_at = Q;
	ret = find_names(buf, T, k, why);
	if (ret)
		return ret;

	size_t n = k->count;
	/* 6.10+ writes offsets, base and seqs_of_names after the token index */
	size_t O = ALIGN8(Q + 512), R = ALIGN8(O + 4 * n);
	k->layout = !k->seqs_at && R + 8 + 3 * n <= len && is_permutation(buf + R + 8, n) ? 2 : 1;
	if (k->layout == 2) {
		k->offsets_at = ALIGN8(Q + 512);
		k->relative_base_at = ALIGN8(k->offsets_at + 4 * n);
		k->seqs_at = k->relative_base_at + 8;
	} else {
		if (k->num_syms_at < 8 + ALIGN8(4 * n)) {
			*why = "kallsyms_offsets would start before the image";
			return -EINVAL;
		}
		k->relative_base_at = k->num_syms_at - 8;
		k->offsets_at = k->relative_base_at - ALIGN8(4 * n);
	}
	k->relative_base = get_le64(buf + k->relative_base_at);

	/* names: the expanded length of each first, then the pool */
	size_t total = 0, at = k->names_at;
	for (size_t i = 0; i < n; i++) {
		size_t l = buf[at], hdr = 1;
		if (l & 0x80) {
			l = (l & 0x7f) | ((size_t)buf[at + 1] << 7);
			hdr = 2;
		}
		for (size_t j = 0; j < l; j++)
			total += t.len[buf[at + hdr + j]];
		total += 1;
		at += hdr + l;
	}
	/* elfio_calloc: a kernel's are megabytes, in huge pages (base/mem.c) */
	k->pool = elfio_calloc(total + 16, 1);	/* + 16: a token is stored 16 bytes at a time */
	k->syms = elfio_calloc(n + 1, sizeof(*k->syms));	/* + 1: a spare slot (bootimg.c) */
	if (!k->pool || !k->syms) {
		kallsyms_free(k);
		*why = "out of memory";
		return -ENOMEM;
	}
	/*
	 * A name is printable when each of its tokens is: each token is
	 * checked once here, not each name's every byte (with a memcpy per
	 * token that was a seventh of auditing an arm64 Image, perf).
	 */
	bool printable[256];
	uint8_t tok16[256][16];		/* each token of 16 bytes or less, padded to 16 */
	memset(tok16, 0, sizeof(tok16));
	for (int i = 0; i < 256; i++) {
		printable[i] = true;
		for (size_t j = 0; j < t.len[i]; j++)
			if (t.tab[t.idx[i] + j] < 0x21 || t.tab[t.idx[i] + j] > 0x7e)
				printable[i] = false;
		if (t.len[i] <= 16)
			memcpy(tok16[i], t.tab + t.idx[i], t.len[i]);
	}
	bool is_type[256] = { false };	/* the letters nm gives, a table not a strchr a name */
	for (const char *c = "AaBbCcDdGgNnRrSsTtUuVvWw"; *c; c++)
		is_type[(uint8_t)*c] = true;
	char *o = k->pool;
	size_t neg = 0;
	at = k->names_at;
	for (size_t i = 0; i < n; i++) {
		size_t l = buf[at], hdr = 1;
		if (l & 0x80) {
			l = (l & 0x7f) | ((size_t)buf[at + 1] << 7);
			hdr = 2;
		}
		char *start = o;
		bool ok = true;
		for (size_t j = 0; j < l; j++) {
			uint8_t tok = buf[at + hdr + j];
			ok &= printable[tok];
			/* a fixed-size copy: no branch on the token's length */
			if (t.len[tok] <= 16)
				memcpy(o, tok16[tok], 16);
			else
				memcpy(o, t.tab + t.idx[tok], t.len[tok]);
			o += t.len[tok];
		}
		*o++ = 0;
		at += hdr + l;
		/* the first letter is the type; a name follows it */
		if (o - start < 3 || !is_type[(uint8_t)start[0]]) {
			kallsyms_free(k);
			*why = "kallsyms_names holds a name that is not a symbol (corrupt tables)";
			return -EINVAL;
		}
		if (!ok) {
			kallsyms_free(k);
			*why = "kallsyms_names holds a name with control bytes (corrupt tables)";
			return -EINVAL;
		}
		k->syms[i].type = start[0];
		k->syms[i].name = start + 1;
		k->syms[i].raw = get_le32(buf + k->offsets_at + 4 * i);
		if (k->syms[i].raw & 0x80000000u)
			neg++;
	}
	/* --absolute-percpu: relative symbols are stored negative (most of them) */
	k->abs_percpu = neg > n / 2;
	return 0;
}

void kallsyms_resolve(struct kallsyms *k, uint64_t base)
{
	for (size_t i = 0; i < k->count; i++) {
		uint32_t r = k->syms[i].raw;
		if (!k->abs_percpu)
			k->syms[i].addr = base + r;
		else if (!(r & 0x80000000u))
			k->syms[i].addr = r;
		else
			k->syms[i].addr = base - 1 - (uint64_t)(int64_t)(int32_t)r;
	}
}

long kallsyms_lookup(const struct kallsyms *k, const char *name)
{
	for (size_t i = 0; i < k->count; i++)	/* the first byte first: no call for most */
		if (k->syms[i].name[0] == name[0] && !strcmp(k->syms[i].name, name))
			return (long)i;
	return -1;
}

void kallsyms_free(struct kallsyms *k)
{
	elfio_free(k->syms);
	elfio_free(k->pool);
	k->syms = NULL;
	k->pool = NULL;
	k->count = 0;
}
