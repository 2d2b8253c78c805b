// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_bootimg.c - the kallsyms decoder and the bounded decompressors of
 * elfio/bootimg.c and elfio/kallsyms.c.
 *
 * Strategy: kallsyms tables are written here the way scripts/kallsyms.c
 * lays them out (both orders: 6.10+ and 6.1..6.9, with and without
 * seqs_of_names; one- and two-byte name lengths; a multi-character token;
 * the --absolute-percpu encoding), at an offset inside other bytes, and
 * decoded back: every name, type and address must come back.  Damaged
 * tables are refused.  The decompressors get streams made by the
 * libraries' own compressors (lz4 in the kernel's legacy format), and must give the input back, refuse more
 * than the limit, and refuse a truncated stream.  A riscv64 Image made here
 * with a System.map checks the extents kallsyms-less symbols get and that
 * the ELF made from the file's mapped pages is the one made from a copy.
 */
#include <bzlib.h>
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <lz4.h>
#include <lzma.h>
#include <lzo/lzo1x.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "base/base.h"
#include "tests/check_suites.h"
#include "elfio/bootimg.h"
#include "elfio/elfio.h"

#define NSYM	600	/* more than two markers' worth */

struct gen {
	uint8_t *b;
	size_t len, cap;
};

static void put(struct gen *g, const void *p, size_t n)
{
	if (g->len + n > g->cap) {
		g->cap = (g->len + n) * 2;
		g->b = realloc(g->b, g->cap);
		ck_assert_ptr_nonnull(g->b);
	}
	memcpy(g->b + g->len, p, n);
	g->len += n;
}

static void pad8(struct gen *g)
{
	static const uint8_t z[8];
	put(g, z, (8 - g->len % 8) % 8);
}

static void u32(struct gen *g, uint32_t v)
{
	uint8_t b[4];
	put_le32(b, v);
	put(g, b, 4);
}

static char names[NSYM][200];
static char types[NSYM];
static uint64_t addrs[NSYM];

/* Token 1 is "_s"; every other byte is itself. */
static size_t encode(const char *s, uint8_t *out)
{
	size_t n = 0;
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '_' && s[i + 1] == 's') {
			out[n++] = 1;
			i++;
		} else {
			out[n++] = (uint8_t)s[i];
		}
	}
	return n;
}

/* layout 2: 6.10+; 1: 6.2..6.9 (seqs before the tokens); 0: 6.1 (no seqs) */
static struct gen make_tables(int layout, bool abs_percpu, uint64_t base, size_t lead)
{
	struct gen g = { 0 }, nm = { 0 }, tt = { 0 }, ti = { 0 }, off = { 0 };
	uint32_t marks[(NSYM + 255) / 256];

	for (int i = 0; i < NSYM; i++) {
		types[i] = "TtDdWrb"[i % 7];
		if (i == 5)
			snprintf(names[i], sizeof(names[i]), "%s", "_text");
		else if (i == 7)
			/* a two-byte length */
			snprintf(names[i], sizeof(names[i]), "long_symbol_%0150d", 7);
		else
			snprintf(names[i], sizeof(names[i]), "sym_%d_stuff_%x", i, i * 7919);
		addrs[i] = base + 16 * (uint64_t)i;
	}
	for (int i = 0; i < NSYM; i++) {
		char full[210];
		uint8_t enc[210];
		int fl = snprintf(full, sizeof(full), "%c%.*s", types[i], (int)sizeof(full) - 2, names[i]);
		ck_assert_int_lt(fl, (int)sizeof(full));
		size_t n = encode(full, enc);
		if (i % 256 == 0)
			marks[i / 256] = (uint32_t)nm.len;
		uint8_t h[2] = { (uint8_t)n, 0 };
		if (n > 0x7f) {
			h[0] = (uint8_t)((n & 0x7f) | 0x80);
			h[1] = (uint8_t)(n >> 7);
			put(&nm, h, 2);
		} else {
			put(&nm, h, 1);
		}
		put(&nm, enc, n);
		uint32_t o = (uint32_t)(addrs[i] - base);
		if (abs_percpu)
			o = (uint32_t)(-(int32_t)o - 1);	/* base - 1 - off */
		u32(&off, o);
	}
	for (int i = 0; i < 256; i++) {
		uint8_t le[2];
		put_le16(le, (uint16_t)tt.len);
		put(&ti, le, 2);
		if (i == 1)
			put(&tt, "_s", 3);
		else if (i == 0 || i == 2)
			put(&tt, "", 1);	/* a slot no pair was worth */
		else {
			uint8_t s[2] = { (uint8_t)i, 0 };
			put(&tt, s, 2);
		}
	}
	uint8_t rb[8];
	put_le64(rb, base);

	for (size_t i = 0; i < lead; i++)
		put(&g, "\x5a", 1);
	pad8(&g);
	if (layout != 2) {
		put(&g, off.b, off.len);
		pad8(&g);
		put(&g, rb, 8);
	}
	u32(&g, NSYM);
	pad8(&g);
	put(&g, nm.b, nm.len);
	pad8(&g);
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		u32(&g, marks[i]);
	pad8(&g);
	if (layout == 1) {
		for (int i = 0; i < NSYM; i++) {
			uint8_t s[3] = { 0, (uint8_t)(i >> 8), (uint8_t)i };
			put(&g, s, 3);
		}
		pad8(&g);
	}
	put(&g, tt.b, tt.len);
	pad8(&g);
	put(&g, ti.b, ti.len);
	pad8(&g);
	if (layout == 2) {
		put(&g, off.b, off.len);
		pad8(&g);
		put(&g, rb, 8);
		for (int i = 0; i < NSYM; i++) {
			uint8_t s[3] = { 0, (uint8_t)(i >> 8), (uint8_t)i };
			put(&g, s, 3);
		}
		pad8(&g);
	}
	for (int i = 0; i < 4096; i++)
		put(&g, "\0", 1);
	free(nm.b);
	free(tt.b);
	free(ti.b);
	free(off.b);
	return g;
}

static void check_decoded(int layout, bool abs_percpu)
{
	const uint64_t base = 0xffffffff81000000ull;
	struct gen g = make_tables(layout, abs_percpu, base, 1000 + (size_t)layout * 24);
	struct kallsyms k;
	const char *why = NULL;

	ck_assert_int_eq(kallsyms_decode(g.b, g.len, &k, &why), 0);
	ck_assert_uint_eq(k.count, NSYM);
	ck_assert_int_eq(k.layout, layout == 2 ? 2 : 1);
	ck_assert(k.abs_percpu == abs_percpu);
	ck_assert_uint_eq(k.relative_base, base);
	ck_assert(layout == 0 ? k.seqs_at == 0 : k.seqs_at != 0);
	kallsyms_resolve(&k, k.relative_base);
	for (int i = 0; i < NSYM; i++) {
		ck_assert_str_eq(k.syms[i].name, names[i]);
		ck_assert_int_eq(k.syms[i].type, types[i]);
		ck_assert_uint_eq(k.syms[i].addr, addrs[i]);
	}
	ck_assert_int_eq(kallsyms_lookup(&k, "_text"), 5);
	kallsyms_free(&k);
	free(g.b);
}

START_TEST(kallsyms_6_10_layout) { check_decoded(2, false); }
END_TEST

START_TEST(kallsyms_6_2_layout) { check_decoded(1, false); }
END_TEST

START_TEST(kallsyms_6_1_layout) { check_decoded(0, false); }
END_TEST

START_TEST(kallsyms_absolute_percpu) { check_decoded(2, true); }
END_TEST

START_TEST(kallsyms_refused)
{
	struct gen g = make_tables(2, false, 0x1000, 64);
	struct kallsyms k;
	const char *why = NULL;
	uint8_t *b = malloc(g.len);

	/* a marker that does not match the names */
	memcpy(b, g.b, g.len);
	ck_assert_int_eq(kallsyms_decode(b, g.len, &k, &why), 0);
	size_t m = k.markers_at;
	kallsyms_free(&k);
	put_le32(b + m + 4, get_le32(b + m + 4) + 1);
	ck_assert_int_eq(kallsyms_decode(b, g.len, &k, &why), -EINVAL);
	ck_assert_ptr_nonnull(why);

	/* a name made of a control byte */
	memcpy(b, g.b, g.len);
	ck_assert_int_eq(kallsyms_decode(b, g.len, &k, &why), 0);
	size_t n = k.names_at;
	kallsyms_free(&k);
	b[n + 2] = 0x07;
	ck_assert_int_eq(kallsyms_decode(b, g.len, &k, &why), -EINVAL);

	/* no token table at all */
	memset(b, 0x41, g.len);
	ck_assert_int_eq(kallsyms_decode(b, g.len, &k, &why), -ENOENT);

	/* every truncation: refused or decoded, never a read past the end (ASan) */
	for (size_t cut = 0; cut < g.len; cut += 97) {
		uint8_t *t = malloc(cut ? cut : 1);
		memcpy(t, g.b, cut);
		if (kallsyms_decode(t, cut, &k, &why) == 0)
			kallsyms_free(&k);
		free(t);
	}
	free(b);
	free(g.b);
}
END_TEST

/* --- Decompressors ----------------------------------------------------- */

static uint8_t *sample(size_t n)
{
	uint8_t *p = malloc(n);
	uint32_t x = 1;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)((i % 64 < 40) ? 'a' + (x >> 16) % 4 : (x >> 16));
	}
	return p;
}

static size_t z_gzip(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream zs = { 0 };
	ck_assert_int_eq(deflateInit2(&zs, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	size_t r = zs.total_out;
	deflateEnd(&zs);
	return r;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/*
 * lzop's container as lzop 1.04 writes it (the header of its lzop.c: magic,
 * version 0x1040, library version, version needed 0x0940, method M_LZO1X_1,
 * level, flags, mode, mtime low and high, a name, the header's checksum),
 * then 256 KiB blocks: sizes, the checksums FLAGS names, the bytes; the
 * checksums are left 0 (the reader does not check them, as the kernel's
 * does not).  A block lzo does not shrink is stored.
 */
static size_t lzop_pack(const uint8_t *in, size_t n, uint8_t *out, size_t cap, uint32_t flags,
			const char *name)
{
	static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
	size_t pos = 0, nl = strlen(name);

	ck_assert_int_eq(lzo_init(), LZO_E_OK);
	memcpy(out, "\x89LZO\0\r\n\x1a\n", 9);
	pos = 9;
	out[pos++] = 0x10, out[pos++] = 0x40;	/* version */
	out[pos++] = 0x20, out[pos++] = 0xa0;	/* library version */
	out[pos++] = 0x09, out[pos++] = 0x40;	/* needed */
	out[pos++] = 1, out[pos++] = 5;		/* method, level */
	put_be32(out + pos, flags), pos += 4;
	if (flags & 0x800)
		put_be32(out + pos, 0), pos += 4;	/* filter */
	put_be32(out + pos, 0100644), pos += 4;
	put_be32(out + pos, 0), pos += 4;
	put_be32(out + pos, 0), pos += 4;
	out[pos++] = (uint8_t)nl;
	memcpy(out + pos, name, nl), pos += nl;
	put_be32(out + pos, 0), pos += 4;	/* header checksum */
	for (size_t at = 0; at < n; at += 256u << 10) {
		size_t chunk = n - at < (256u << 10) ? n - at : 256u << 10, sums;
		lzo_uint clen = cap - pos - 24;
		uint8_t *hdr = out + pos;

		ck_assert_int_eq(lzo1x_1_compress(in + at, chunk, hdr + 24, &clen, wrk), LZO_E_OK);
		if (clen >= chunk) {
			clen = chunk;
			memcpy(hdr + 24, in + at, chunk);
		}
		sums = (flags & 1 ? 4 : 0) + (flags & 0x100 ? 4 : 0);
		if (clen < chunk)
			sums += (flags & 2 ? 4 : 0) + (flags & 0x200 ? 4 : 0);
		put_be32(hdr, (uint32_t)chunk);
		put_be32(hdr + 4, (uint32_t)clen);
		memset(hdr + 8, 0, sums);
		memmove(hdr + 8 + sums, hdr + 24, clen);
		pos += 8 + sums + clen;
	}
	put_be32(out + pos, 0);
	return pos + 4;
}

static size_t compress_as(enum bootimg_z z, const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	size_t pos = 0;

	switch (z) {
	case BZ_GZIP:
		return z_gzip(in, n, out, cap);
	case BZ_XZ:
		ck_assert_int_eq(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, NULL, in, n, out, &pos,
							 cap), LZMA_OK);
		return pos;
	case BZ_LZMA: {
		lzma_stream s = LZMA_STREAM_INIT;
		lzma_options_lzma opt;
		lzma_lzma_preset(&opt, 6);
		ck_assert_int_eq(lzma_alone_encoder(&s, &opt), LZMA_OK);
		s.next_in = in;
		s.avail_in = n;
		s.next_out = out;
		s.avail_out = cap;
		ck_assert_int_eq(lzma_code(&s, LZMA_FINISH), LZMA_STREAM_END);
		pos = cap - s.avail_out;
		lzma_end(&s);
		return pos;
	}
	case BZ_LZ4: {
		/* the kernel's legacy format: magic, then (size, block) per 8 MiB, then the total */
		put_le32(out, 0x184c2102u);
		pos = 4;
		for (size_t at = 0; at < n; at += 8u << 20) {
			size_t chunk = n - at < (8u << 20) ? n - at : 8u << 20;
			int r = LZ4_compress_default((const char *)in + at, (char *)out + pos + 4,
						     (int)chunk, (int)(cap - pos - 4));
			ck_assert_int_gt(r, 0);
			put_le32(out + pos, (uint32_t)r);
			pos += 4 + (size_t)r;
		}
		put_le32(out + pos, (uint32_t)n);
		return pos + 4;
	}
	case BZ_BZIP2: {
		unsigned int olen = (unsigned int)cap;
		ck_assert_int_eq(BZ2_bzBuffToBuffCompress((char *)out, &olen, (char *)(uintptr_t)in,
							 (unsigned int)n, 9, 0, 0), BZ_OK);
		return olen;
	}
	case BZ_LZO:
		return lzop_pack(in, n, out, cap, 0x1 | 0x2, "vmlinux.bin");
	case BZ_ZSTD: {
		size_t r = ZSTD_compress(out, cap, in, n, 19);
		ck_assert(!ZSTD_isError(r));
		return r;
	}
	default:
		ck_abort();
	}
	return 0;
}

static void round_trip(enum bootimg_z z)
{
	size_t n = 3 << 20, cap = n + 65536;
	uint8_t *in = sample(n), *c = malloc(cap), *out = NULL;
	size_t clen = compress_as(z, in, n, c, cap), outlen = 0;

	ck_assert_int_eq(bootimg_sniff(c, clen), z);
	ck_assert_int_eq(bootimg_inflate(z, c, clen, n, &out, &outlen), 0);
	ck_assert_uint_eq(outlen, n);
	ck_assert(!memcmp(out, in, n));
	elfio_free(out);
	/* one byte less room than it needs: refused, not cut */
	ck_assert_int_eq(bootimg_inflate(z, c, clen, n - 1, &out, &outlen), -EFBIG);
	/* truncated */
	ck_assert_int_eq(bootimg_inflate(z, c, clen / 2, n, &out, &outlen), -EINVAL);
	free(in);
	free(c);
}

START_TEST(inflate_gzip) { round_trip(BZ_GZIP); }
END_TEST
START_TEST(inflate_xz) { round_trip(BZ_XZ); }
END_TEST
START_TEST(inflate_lzma) { round_trip(BZ_LZMA); }
END_TEST
START_TEST(inflate_zstd) { round_trip(BZ_ZSTD); }
END_TEST
START_TEST(inflate_lz4) { round_trip(BZ_LZ4); }
END_TEST
START_TEST(inflate_bzip2) { round_trip(BZ_BZIP2); }
END_TEST
START_TEST(inflate_lzo) { round_trip(BZ_LZO); }
END_TEST

/* lzop's other flags: CRC32 checksums, a filter word, no name; a stored
   block among compressed ones (random bytes lzo cannot shrink) */
START_TEST(inflate_lzo_flags)
{
	size_t n = 600u << 10, cap = n + 65536, outlen = 0;
	uint8_t *in = sample(n), *c = malloc(cap), *out = NULL;
	uint32_t x = 7;

	for (size_t i = 256u << 10; i < 512u << 10; i++)
		in[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
	size_t clen = lzop_pack(in, n, c, cap, 0x100 | 0x200 | 0x800, "");
	ck_assert_int_eq(bootimg_sniff(c, clen), BZ_LZO);
	ck_assert_int_eq(bootimg_inflate(BZ_LZO, c, clen, n, &out, &outlen), 0);
	ck_assert_uint_eq(outlen, n);
	ck_assert(!memcmp(out, in, n));
	elfio_free(out);
	/* the first block says it inflates past 256 KiB (the header is 9 + 6 +
	   2 + 4 + 4 + 12 + 1 + 4 bytes here): refused */
	put_be32(c + 42, (256u << 10) + 1);
	ck_assert_int_eq(bootimg_inflate(BZ_LZO, c, clen, n, &out, &outlen), -EINVAL);
	free(in);
	free(c);
}
END_TEST

START_TEST(inflate_bomb_and_unknown)
{
	size_t n = 64 << 20, cap = 1 << 20;
	uint8_t *zero = calloc(n, 1), *c = malloc(cap), *out = NULL;
	size_t clen = compress_as(BZ_ZSTD, zero, n, c, cap), outlen = 0;

	/* a ratio far past BOOTIMG_MAX_RATIO: the bound the callers give stops it */
	ck_assert_uint_lt(clen * BOOTIMG_MAX_RATIO, n);
	ck_assert_int_eq(bootimg_inflate(BZ_ZSTD, c, clen, clen * BOOTIMG_MAX_RATIO, &out, &outlen),
			 -EFBIG);
	ck_assert_int_eq(bootimg_sniff((const uint8_t *)"BZh91AY&SY", 10), BZ_BZIP2);
	ck_assert_int_eq(bootimg_inflate(BZ_NONE, c, clen, n, &out, &outlen), -ENOTSUP);
	ck_assert_int_eq(bootimg_sniff((const uint8_t *)"\x7f" "ELF", 4), BZ_NONE);
	free(zero);
	free(c);
}
END_TEST

/* Boot image headers: what is and is not one, and the refusals, each with -errno. */
START_TEST(boot_headers)
{
	uint8_t img[4096], *out = NULL, *c = malloc(1 << 16);
	size_t outlen = 0;

	/* not a boot image: 1, nothing said */
	memset(img, 0x41, sizeof(img));
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), 1);

	/* bzImage: protocol too old; payload past the end; payload not compressed */
	memset(img, 0, sizeof(img));
	memcpy(img + 0x202, "HdrS", 4);
	img[0x1f1] = 4;
	put_le16(img + 0x206, 0x0207);
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), -EINVAL);
	put_le16(img + 0x206, 0x020f);
	put_le32(img + 0x248, 0x10);
	put_le32(img + 0x24c, 4096);
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), -EINVAL);
	put_le32(img + 0x24c, 64);
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), -EINVAL);

	/* EFI zboot: payload past the end; a gzip payload that is no Image */
	memset(img, 0, sizeof(img));
	img[0] = 'M';
	img[1] = 'Z';
	memcpy(img + 4, "zimg", 4);
	put_le32(img + 8, 0x100);
	put_le32(img + 12, 8192);
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), -EINVAL);
	uint8_t *junk = sample(2048);
	size_t clen = compress_as(BZ_GZIP, junk, 2048, c, 1 << 16);
	ck_assert_uint_lt(0x100 + clen, sizeof(img));
	memcpy(img + 0x100, c, clen);
	put_le32(img + 12, (uint32_t)clen);
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), -EINVAL);
	free(junk);
	free(c);
}
END_TEST

/*
 * The ftrace layout a config names, as the kernel's Makefiles choose the
 * compiler's flags (arch/arm64/Makefile, arch/riscv/Makefile,
 * arch/powerpc/Makefile, the top Makefile's -mfentry and -mnop-mcount).
 */
struct cfg_case {
	uint16_t machine;
	const char *text;
	int ret;
	enum bootimg_ftrace_kind kind;
	int n, m;
};

static const struct cfg_case cfg_cases[] = {
	{ EM_AARCH64, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n"
		      "CONFIG_DYNAMIC_FTRACE_WITH_ARGS=y\nCONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS=y\n",
	  1, BFT_AREA, 4, 2 },
	{ EM_AARCH64, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n"
		      "CONFIG_DYNAMIC_FTRACE_WITH_ARGS=y\n# CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS is not set\n",
	  1, BFT_AREA, 2, 0 },
	{ EM_AARCH64, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n"
		      "CONFIG_DYNAMIC_FTRACE_WITH_REGS=y\n", 1, BFT_AREA, 2, 0 },	/* 6.1 */
	{ EM_AARCH64, "CONFIG_FUNCTION_TRACER=y\n# CONFIG_DYNAMIC_FTRACE is not set\n", 0,
	  BFT_UNKNOWN, 0, 0 },
	{ EM_RISCV, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_RISCV_ISA_C=y\n", 1,
	  BFT_AREA, 4, 0 },
	{ EM_RISCV, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n", 1, BFT_AREA, 2, 0 },
	{ EM_PPC64, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n"
		    "CONFIG_ARCH_USING_PATCHABLE_FUNCTION_ENTRY=y\n", 1, BFT_AREA, 2, 0 },
	{ EM_PPC64, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_MPROFILE_KERNEL=y\n",
	  1, BFT_CALLS, 0, 0 },
	{ EM_X86_64, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_HAVE_FENTRY=y\n"
		     "CONFIG_FTRACE_MCOUNT_USE_CC=y\nCONFIG_HAVE_OBJTOOL_NOP_MCOUNT=y\n",
	  1, BFT_CALLS, 0, 0 },		/* Debian's 6.12 amd64: -mrecord-mcount, calls */
	{ EM_X86_64, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_HAVE_FENTRY=y\n"
		     "CONFIG_FTRACE_MCOUNT_USE_OBJTOOL=y\nCONFIG_HAVE_OBJTOOL_NOP_MCOUNT=y\n",
	  1, BFT_NOP5, 0, 0 },		/* objtool --mnop */
	/* "=y" only at a line's start: a comment or another option's tail is not it */
	{ EM_AARCH64, "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n"
		      "CONFIG_DYNAMIC_FTRACE_WITH_ARGS=y\nX_CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS=y\n",
	  1, BFT_AREA, 2, 0 },
};

START_TEST(config_ftrace_layout)
{
	char path[] = "/tmp/check_bootimg.config.XXXXXX";
	int fd = mkstemp(path);
	const struct cfg_case *c = &cfg_cases[_i];
	struct bootimg_ftrace ft;
	const char *from = NULL;

	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(c->text, f);
	fclose(f);
	bootimg_set_config(path);
	int ret = bootimg_config_ftrace("vmlinux", NULL, 0, c->machine, &ft, &from);
	bootimg_set_config(NULL);
	unlink(path);
	ck_assert_int_eq(ret, c->ret);
	ck_assert_int_eq(ft.kind, c->kind);
	if (c->kind == BFT_AREA) {
		ck_assert_int_eq(ft.n, c->n);
		ck_assert_int_eq(ft.m, c->m);
	}
	if (ret == 1)
		ck_assert_str_eq(from, path);
	/* no config at all: -1 */
	ck_assert_int_eq(bootimg_config_ftrace("vmlinux", NULL, 0, c->machine, &ft, &from), -1);
}
END_TEST

/* A riscv64 Image header is read (not refused as unknown): no kallsyms in it, so -ENOENT. */
START_TEST(riscv_image_header)
{
	uint8_t img[8192] = { 0 }, *out = NULL;
	size_t outlen = 0;

	memcpy(img + 0x30, "RISCV\0\0\0", 8);
	memcpy(img + 0x38, "RSC\x05", 4);
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), -ENOENT);
	/* an ELF that is no stripped kernel (no .init.text, no banner): left alone */
	memset(img, 0, sizeof(img));
	memcpy(img, ELFMAG, SELFMAG);
	img[EI_CLASS] = ELFCLASS64;
	img[EI_DATA] = ELFDATA2LSB;
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), 1);
}
END_TEST

/*
 * A riscv64 Image (symbols from a System.map) whose table holds an entry
 * with no symbol: an overridden weak function's leftover between f and g.
 * With -fpatchable-function-entry=N,0 (entries at the symbols) that entry
 * ends f's sizeless extent, as vmlinux's sizes end f before it; an -pg
 * build's entries (calls inside the functions) end none.  The ELF made
 * from the file itself (its pages mapped, bootimg_to_elf_fd) is the one
 * made from a copy, byte for byte.
 */
#define RV_S	0xffffffff80000000ull

static uint64_t rv_func_size(const uint8_t *e, size_t len, const char *name)
{
	Elf64_Ehdr eh;
	memcpy(&eh, e, sizeof(eh));
	ck_assert_uint_le(eh.e_shoff + eh.e_shnum * sizeof(Elf64_Shdr), len);
	for (size_t i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, str;
		memcpy(&sh, e + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		memcpy(&str, e + eh.e_shoff + sh.sh_link * sizeof(str), sizeof(str));
		for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
			Elf64_Sym y;
			memcpy(&y, e + sh.sh_offset + k * sizeof(y), sizeof(y));
			if (!strcmp((const char *)e + str.sh_offset + y.st_name, name)) {
				ck_assert_int_eq(ELF64_ST_TYPE(y.st_info), STT_FUNC);
				return y.st_size;
			}
		}
	}
	ck_abort_msg("no symbol %s", name);
	return 0;
}

static void rv_leftover(uint64_t entry_off, uint64_t want_f)
{
	static uint8_t img[0x2000];
	char map[] = "/tmp/check_bootimg_map.XXXXXX", file[] = "/tmp/check_bootimg_img.XXXXXX";
	int mfd = mkstemp(map), ifd = mkstemp(file);
	uint8_t *out = NULL, *out2 = NULL;
	size_t outlen = 0, outlen2 = 0;

	ck_assert(mfd >= 0 && ifd >= 0);
	memset(img, 0, sizeof(img));
	memcpy(img + 0x30, "RISCV\0\0\0", 8);
	memcpy(img + 0x38, "RSC\x05", 4);
	memcpy(img + 0x1100, "Linux version 6.12.0-check (check_bootimg)", 42);
	/* f0 at 0x1000, f at 0x1040, the leftover at 0x1060, g at 0x1080 */
	static const uint64_t at[] = { 0x1000, 0x1040, 0x1060, 0x1080 };
	for (int i = 0; i < 4; i++)
		put_le64(img + 0x1200 + 8 * i, RV_S + at[i] + entry_off);
	FILE *f = fdopen(mfd, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%016llx T _start\n%016llx T _text\n%016llx T f0\n%016llx T f\n"
		   "%016llx T g\n%016llx T _etext\n%016llx D linux_banner\n"
		   "%016llx T _sinittext\n%016llx T _einittext\n%016llx D __start_mcount_loc\n"
		   "%016llx D __stop_mcount_loc\n%016llx B _end\n",
		RV_S, RV_S + 0x1000, RV_S + 0x1000, RV_S + 0x1040, RV_S + 0x1080, RV_S + 0x1100,
		RV_S + 0x1100, RV_S + 0x1200, RV_S + 0x1200, RV_S + 0x1200, RV_S + 0x1220,
		RV_S + 0x3000);
	fclose(f);
	ck_assert_int_eq(write(ifd, img, sizeof(img)), (int)sizeof(img));
	bootimg_set_system_map(map);
	ck_assert_int_eq(bootimg_to_elf("x", img, sizeof(img), true, &out, &outlen), 0);
	ck_assert_uint_eq(rv_func_size(out, outlen, "f"), want_f);
	ck_assert_uint_eq(rv_func_size(out, outlen, "f0"), 0x40);
	ck_assert_int_eq(bootimg_to_elf_fd(file, ifd, img, sizeof(img), true, &out2, &outlen2), 0);
	ck_assert_uint_eq(outlen2, outlen);
	ck_assert(!memcmp(out, out2, outlen));
	bootimg_set_system_map(NULL);
	elfio_free(out);
	elfio_free(out2);
	close(ifd);
	unlink(map);
	unlink(file);
}

/* patchable entries: the leftover's entry ends f (0x20, not 0x40) */
START_TEST(riscv_leftover_ends_extent) { rv_leftover(0, 0x20); }
END_TEST

/* -pg: entries are calls 8 bytes in, at no symbol: f runs to g */
START_TEST(riscv_mcount_calls_end_nothing) { rv_leftover(8, 0x40); }
END_TEST

Suite *bootimg_suite(void)
{
	Suite *s = suite_create("bootimg");
	TCase *t = tcase_create("kallsyms");

	tcase_add_test(t, kallsyms_6_10_layout);
	tcase_add_test(t, kallsyms_6_2_layout);
	tcase_add_test(t, kallsyms_6_1_layout);
	tcase_add_test(t, kallsyms_absolute_percpu);
	tcase_add_test(t, kallsyms_refused);
	suite_add_tcase(s, t);
	t = tcase_create("inflate");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, inflate_gzip);
	tcase_add_test(t, inflate_xz);
	tcase_add_test(t, inflate_lzma);
	tcase_add_test(t, inflate_zstd);
	tcase_add_test(t, inflate_lz4);
	tcase_add_test(t, inflate_bzip2);
	tcase_add_test(t, inflate_lzo);
	tcase_add_test(t, inflate_lzo_flags);
	tcase_add_test(t, inflate_bomb_and_unknown);
	tcase_add_test(t, boot_headers);
	tcase_add_test(t, riscv_image_header);
	tcase_add_test(t, riscv_leftover_ends_extent);
	tcase_add_test(t, riscv_mcount_calls_end_nothing);
	suite_add_tcase(s, t);
	t = tcase_create("config");
	tcase_add_loop_test(t, config_ftrace_layout, 0, (int)(sizeof(cfg_cases) / sizeof(cfg_cases[0])));
	suite_add_tcase(s, t);
	return s;
}
