// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_decompress.c - the one decompressor family (elfio/decompress.c),
 * through its own API: format, input, limit, hint.
 *
 * Strategy: the streams are made by the real tools (gzip, xz, lzma, zstd,
 * bzip2, lzop: scripts/install-deps.sh installs them), not by patchsite's
 * code, so a stream the family reads is one the world writes; lz4's legacy
 * framing (lz4 -l, which the kernel's build uses) is put together here
 * from liblz4's block compressor, as the lz4 tool is not among the
 * dependencies.  Each format: the magic is recognised, the bytes come back
 * whole with any hint (none, exact, too small, past the limit), one byte
 * less room is refused with -EFBIG (refused, not cut), a truncated stream
 * is -EINVAL, and a stream of zeros whose ratio is past 64 (bootimg.c's
 * bound) is refused as a bomb.
 */
#include <check.h>
#include <errno.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "elfio/decompress.h"
#include "tests/check_suites.h"

struct fmt {
	enum elfio_z z;
	const char *cmd;	/* compresses stdin to stdout; NULL: lz4's legacy framing */
	bool trailer;		/* the kernel's build appends the size: accepted after the stream */
};

static const struct fmt fmts[] = {
	{ ELFIO_Z_GZIP, "gzip -9 -n -c", true },
	{ ELFIO_Z_XZ, "xz -6 --check=crc32 -c", true },
	{ ELFIO_Z_LZMA, "lzma -6 -c", true },
	{ ELFIO_Z_ZSTD, "zstd -q -19 -c", true },
	{ ELFIO_Z_BZIP2, "bzip2 -9 -c", true },
	{ ELFIO_Z_LZO, "lzop -9 -c", true },
	{ ELFIO_Z_LZ4, NULL, true },
};

static const char *const names[] = {
	[ELFIO_Z_GZIP] = "gzip", [ELFIO_Z_XZ] = "xz", [ELFIO_Z_LZMA] = "lzma",
	[ELFIO_Z_ZSTD] = "zstd", [ELFIO_Z_BZIP2] = "bzip2", [ELFIO_Z_LZO] = "lzo",
	[ELFIO_Z_LZ4] = "lz4",
};

/* Text-like bytes with incompressible stretches, as a kernel's are. */
static uint8_t *sample(size_t n)
{
	uint8_t *p = malloc(n);
	uint32_t x = 7;

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)((i % 96 < 60) ? 'a' + (x >> 16) % 5 : (x >> 16));
	}
	return p;
}

/* lz4 -l: the magic, then per 8 MiB block its compressed size and bytes. */
static uint8_t *lz4_legacy(const uint8_t *in, size_t n, size_t *clen)
{
	size_t cap = 4 + (n / (8u << 20) + 1) * (4 + (size_t)LZ4_compressBound(8 << 20)) + 4;
	uint8_t *out = malloc(cap);
	size_t pos = 4;

	ck_assert_ptr_nonnull(out);
	put_le32(out, 0x184c2102u);
	for (size_t at = 0; at < n; at += 8u << 20) {
		size_t chunk = n - at < (8u << 20) ? n - at : 8u << 20;
		int r = LZ4_compress_default((const char *)in + at, (char *)out + pos + 4, (int)chunk,
					     (int)(cap - pos - 4));
		ck_assert_int_gt(r, 0);
		put_le32(out + pos, (uint32_t)r);
		pos += 4 + (size_t)r;
	}
	*clen = pos;
	return out;
}

/* The stream f's tool makes of in[0..n), with 4 bytes of size appended when asked. */
static uint8_t *compress_with(const struct fmt *f, const uint8_t *in, size_t n, bool trailer,
			      size_t *clen)
{
	uint8_t *out;

	if (!f->cmd) {
		out = lz4_legacy(in, n, clen);
	} else {
		char src[] = "/tmp/check_decompress.XXXXXX", cmd[256];
		int fd = mkstemp(src);
		FILE *p;
		size_t cap = n + (1 << 20), got;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, in, n), (ssize_t)n);
		close(fd);
		snprintf(cmd, sizeof(cmd), "%s <%s", f->cmd, src);
		p = popen(cmd, "r");
		ck_assert_ptr_nonnull(p);
		out = malloc(cap + 4);
		ck_assert_ptr_nonnull(out);
		got = fread(out, 1, cap, p);
		ck_assert_int_eq(pclose(p), 0);
		unlink(src);
		ck_assert_uint_gt(got, 0);
		ck_assert_uint_lt(got, cap);
		*clen = got;
		out = realloc(out, got + 4);
		ck_assert_ptr_nonnull(out);
	}
	if (trailer) {
		out = realloc(out, *clen + 4);
		ck_assert_ptr_nonnull(out);
		put_le32(out + *clen, (uint32_t)n);
		*clen += 4;
	}
	return out;
}

static void expect_whole(const struct fmt *f, const uint8_t *c, size_t clen, const uint8_t *in,
			 size_t n, uint64_t limit, uint64_t hint)
{
	uint8_t *out = NULL;
	size_t outlen = 0;
	int r = elfio_z_inflate(f->z, c, clen, limit, hint, &out, &outlen);

	ck_assert_msg(r == 0, "%s, limit %llu, hint %llu: %d", names[f->z],
		      (unsigned long long)limit, (unsigned long long)hint, r);
	ck_assert_uint_eq(outlen, n);
	ck_assert(!memcmp(out, in, n));
	elfio_free(out);
}

START_TEST(round_trip)
{
	const struct fmt *f = &fmts[_i];
	size_t n = (2 << 20) + 12345, clen;
	uint8_t *in = sample(n), *c = compress_with(f, in, n, false, &clen);

	ck_assert_int_eq(elfio_z_sniff(c, clen), f->z);
	ck_assert_str_eq(elfio_z_name(f->z), names[f->z]);
	expect_whole(f, c, clen, in, n, n, 0);
	expect_whole(f, c, clen, in, n, n, n);			/* the right size */
	expect_whole(f, c, clen, in, n, 4 * n, n / 3);		/* a hint too small: grown */
	expect_whole(f, c, clen, in, n, n, n + 1);		/* a hint past the limit: ignored */
	expect_whole(f, c, clen, in, n, n, 1ull << 62);	/* nor allocated */
	if (f->trailer) {
		/* the size a kernel's build appends after the stream: appended
		 * here to the tool's stream above, as compress_with(.., true)
		 * appends it (running the tool a second time made a stream of
		 * the same input with the same options) */
		c = realloc(c, clen + 4);
		ck_assert_ptr_nonnull(c);
		put_le32(c + clen, (uint32_t)n);
		clen += 4;
		expect_whole(f, c, clen, in, n, n, get_le32(c + clen - 4));
	}
	free(c);
	free(in);
}
END_TEST

START_TEST(limit_is_exact)
{
	const struct fmt *f = &fmts[_i];
	size_t n = (1 << 20) + 777, clen, outlen = 0;
	uint8_t *in = sample(n), *c = compress_with(f, in, n, false, &clen), *out = NULL;

	/* one byte less room than the stream needs: refused, not cut, whatever the hint */
	ck_assert_int_eq(elfio_z_inflate(f->z, c, clen, n - 1, 0, &out, &outlen), -EFBIG);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(elfio_z_inflate(f->z, c, clen, n - 1, n - 1, &out, &outlen), -EFBIG);
	ck_assert_int_eq(elfio_z_inflate(f->z, c, clen, 4096, 0, &out, &outlen), -EFBIG);
	ck_assert_ptr_null(out);
	free(c);
	free(in);
}
END_TEST

START_TEST(truncated)
{
	const struct fmt *f = &fmts[_i];
	size_t n = (1 << 20) + 5, clen, outlen = 0;
	uint8_t *in = sample(n), *c = compress_with(f, in, n, false, &clen), *out = NULL;

	/* cut in the middle and one byte short of the end: corrupt or truncated */
	ck_assert_int_eq(elfio_z_inflate(f->z, c, clen / 2, n, 0, &out, &outlen), -EINVAL);
	ck_assert_int_eq(elfio_z_inflate(f->z, c, clen - 1, n, n, &out, &outlen), -EINVAL);
	ck_assert_ptr_null(out);
	/* a flipped byte in the middle of the data */
	c[clen / 2] ^= 0x55;
	int r = elfio_z_inflate(f->z, c, clen, n, 0, &out, &outlen);
	if (r == 0) {
		/* lz4 and lzo carry no checksum the family checks: then the bytes differ */
		ck_assert(f->z == ELFIO_Z_LZ4 || f->z == ELFIO_Z_LZO);
		ck_assert(outlen != n || memcmp(out, in, n));
		elfio_free(out);
	} else if (f->z == ELFIO_Z_LZ4 && r == -EFBIG) {
		/* liblz4 says only "failed": with the room capped at the limit, lz4 reads as past it */
	} else {
		ck_assert_int_eq(r, -EINVAL);
	}
	free(c);
	free(in);
}
END_TEST

START_TEST(bomb)
{
	const struct fmt *f = &fmts[_i];
	size_t n = 16 << 20, clen, outlen = 0;
	uint8_t *zero = calloc(n, 1), *c, *out = NULL;

	ck_assert_ptr_nonnull(zero);
	c = compress_with(f, zero, n, false, &clen);
	/* bootimg.c's bound: 64 times the input; zeros go far past it */
	ck_assert_uint_lt(clen * 64, n);
	ck_assert_int_eq(elfio_z_inflate(f->z, c, clen, clen * 64, 0, &out, &outlen), -EFBIG);
	/* the stream's own claim of its size does not lift the bound */
	ck_assert_int_eq(elfio_z_inflate(f->z, c, clen, clen * 64, n, &out, &outlen), -EFBIG);
	ck_assert_ptr_null(out);
	free(c);
	free(zero);
}
END_TEST

START_TEST(not_a_stream)
{
	static const uint8_t elf[] = "\x7f" "ELF\x02\x01\x01";
	uint8_t *out = NULL;
	size_t outlen = 0;

	ck_assert_int_eq(elfio_z_sniff(elf, sizeof(elf)), ELFIO_Z_NONE);
	ck_assert_int_eq(elfio_z_sniff(elf, 0), ELFIO_Z_NONE);
	ck_assert_int_eq(elfio_z_inflate(ELFIO_Z_NONE, elf, sizeof(elf), 1 << 20, 0, &out, &outlen),
			 -ENOTSUP);
	ck_assert_int_eq(elfio_z_inflate((enum elfio_z)99, elf, sizeof(elf), 1 << 20, 0, &out,
					 &outlen), -ENOTSUP);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(elfio_z_name(ELFIO_Z_NONE), "none");
	ck_assert_str_eq(elfio_z_name((enum elfio_z)99), "?");
	/* a gzip magic on garbage: corrupt, not a crash */
	static const uint8_t junk[] = "\x1f\x8b\x08\x00garbage, not deflate";
	ck_assert_int_eq(elfio_z_inflate(elfio_z_sniff(junk, sizeof(junk)), junk, sizeof(junk),
					 1 << 20, 0, &out, &outlen), -EINVAL);
}
END_TEST

Suite *decompress_suite(void)
{
	Suite *s = suite_create("decompress");
	int n = (int)(sizeof(fmts) / sizeof(fmts[0]));
	TCase *t = tcase_create("formats");

	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, round_trip, 0, n);
	tcase_add_loop_test(t, limit_is_exact, 0, n);
	tcase_add_loop_test(t, truncated, 0, n);
	tcase_add_loop_test(t, bomb, 0, n);
	tcase_add_test(t, not_a_stream);
	suite_add_tcase(s, t);
	return s;
}
