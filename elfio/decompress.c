// SPDX-License-Identifier: GPL-2.0-only
/*
 * decompress.c - the one decompressor family: whole compressed modules
 * (.ko.gz, .ko.xz, .ko.zst, elfio.c) and boot-image payloads (gzip, xz,
 * lzma, zstd, bzip2, lz4, lzo, bootimg.c) inflate here.
 *
 * Strategy: one call, elfio_z_inflate(format, input, limit, hint), into a
 * new buffer (elfio_calloc'd, grown by elfio_grow, freed with elfio_free).
 * The limit is the caller's bomb bound (bootimg.c: 64 times the input and
 * at most 1 GiB; elfio.c: 4 GiB for a module): the buffer is never grown
 * past one byte beyond it, and a stream that fills that byte is refused
 * with -EFBIG, not cut.  The hint is the size the stream says it inflates
 * to (a kernel's build appends it), taken as the first allocation when
 * within the limit, so that a 60 MB kernel is not grown by doubling and
 * copying; without one the buffer starts small and doubles.  The reason
 * for a failure is the errno: -EFBIG past the limit, -ENOMEM when memory
 * ran out (ours or the library's), -EINVAL for a corrupt or truncated
 * stream, -ENOTSUP for a format not built in.  The words of the message
 * are the caller's, who knows what was being read.
 */
#include <bzlib.h>
#include <errno.h>
#include <limits.h>
#include <lz4.h>
#include <lzo/lzo1x.h>
#include <lzma.h>
#include <stdbool.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "base/base.h"
#include "elfio/decompress.h"

enum elfio_z elfio_z_sniff(const uint8_t *m, size_t n)
{
	if (n >= 2 && m[0] == 0x1f && (m[1] == 0x8b || m[1] == 0x9e))
		return ELFIO_Z_GZIP;
	if (n >= 6 && !memcmp(m, "\xfd" "7zXZ\0", 6))
		return ELFIO_Z_XZ;
	if (n >= 4 && !memcmp(m, "\x28\xb5\x2f\xfd", 4))
		return ELFIO_Z_ZSTD;
	if (n >= 3 && !memcmp(m, "BZh", 3))
		return ELFIO_Z_BZIP2;
	if (n >= 4 && !memcmp(m, "\x02\x21\x4c\x18", 4))
		return ELFIO_Z_LZ4;
	if (n >= 4 && !memcmp(m, "\x89LZO", 4))
		return ELFIO_Z_LZO;
	/* .lzma ("alone"): properties byte 0x5d, then a 32-bit dictionary size */
	if (n >= 13 && m[0] == 0x5d && m[1] == 0 && m[2] == 0)
		return ELFIO_Z_LZMA;
	return ELFIO_Z_NONE;
}

const char *elfio_z_name(enum elfio_z z)
{
	static const char *const names[] = { "none", "gzip", "xz", "lzma", "zstd", "bzip2",
					     "lz4", "lzo" };
	return (unsigned)z < sizeof(names) / sizeof(names[0]) ? names[z] : "?";
}

/*
 * The first allocation when no size is hinted: most modules inflate to less
 * than 1 MiB and so stay in malloc's heap; a first step of 1 MiB sent every
 * module to mem.c's 2 MiB huge-page mapping, whose zeroing cost a package
 * audit more system time than the decompression saved.  The buffer then
 * doubles.
 */
#define STEP	(64u << 10)

/*
 * Room for more output: *avail bytes after len, never more than one byte
 * past the limit (a stream that fills that byte is refused, not cut).
 */
static int room(uint8_t **buf, size_t *cap, size_t len, uint64_t limit, size_t *avail)
{
	if (len > limit)
		return -EFBIG;
	if (len == *cap) {
		size_t want = *cap ? *cap * 2 : STEP;
		if (want > limit + 1)
			want = (size_t)limit + 1;
		if (elfio_grow(buf, cap, want, 1))
			return -ENOMEM;
	}
	size_t end = *cap < limit + 1 ? *cap : (size_t)limit + 1;
	*avail = end - len;
	return 0;
}

/*
 * One step of a library's stream: inflate into out[0..avail), say how many
 * bytes it made (*made).  1: the stream ended; 0: go on; else -errno
 * (-ENOMEM where the library ran out, -EINVAL for a corrupt or truncated
 * stream).
 */
typedef int (*z_step)(void *stream, uint8_t *out, size_t avail, size_t *made);

/*
 * The loop of zlib, liblzma, libzstd and libbz2 alike: room for more
 * output (never past the limit), a step into it, until the stream ends or
 * fails.
 */
static int z_stream_loop(z_step step, void *stream, uint64_t limit, uint8_t **buf, size_t *cap,
			 size_t *len)
{
	for (;;) {
		size_t avail, made = 0;
		int r = room(buf, cap, *len, limit, &avail);
		if (r)
			return r;
		r = step(stream, *buf + *len, avail, &made);
		*len += made;
		if (r)
			return r > 0 ? 0 : r;
	}
}

static int gzip_step(void *stream, uint8_t *out, size_t avail, size_t *made)
{
	z_stream *zs = stream;

	zs->next_out = out;
	zs->avail_out = avail > UINT_MAX ? UINT_MAX : (uInt)avail;
	uInt before = zs->avail_out;
	int zr = inflate(zs, Z_NO_FLUSH);
	*made = before - zs->avail_out;
	if (zr == Z_STREAM_END)
		return 1;
	if (zr == Z_MEM_ERROR)
		return -ENOMEM;
	/* a full output buffer with input left is no error: more room */
	return zr == Z_OK || (zr == Z_BUF_ERROR && zs->avail_in) ? 0 : -EINVAL;
}

static int z_gzip(const uint8_t *in, size_t inlen, uint64_t limit, uint8_t **buf, size_t *cap,
		  size_t *len)
{
	z_stream zs = { 0 };

	if (inlen > UINT_MAX)
		return -EFBIG;
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)inlen;
	int ret = z_stream_loop(gzip_step, &zs, limit, buf, cap, len);
	inflateEnd(&zs);
	return ret;
}

static int lzma_step(void *stream, uint8_t *out, size_t avail, size_t *made)
{
	lzma_stream *zs = stream;

	zs->next_out = out;
	zs->avail_out = avail;
	/* LZMA_RUN: the kernel appends its size after the stream */
	lzma_ret lr = lzma_code(zs, LZMA_RUN);
	*made = avail - zs->avail_out;
	if (lr == LZMA_STREAM_END)
		return 1;
	if (lr == LZMA_MEM_ERROR)
		return -ENOMEM;
	if (lr != LZMA_OK)
		return -EINVAL;
	return !zs->avail_in && zs->avail_out ? -EINVAL : 0;	/* truncated */
}

static int z_lzma(bool alone, const uint8_t *in, size_t inlen, uint64_t limit, uint8_t **buf,
		  size_t *cap, size_t *len)
{
	lzma_stream zs = LZMA_STREAM_INIT;

	if ((alone ? lzma_alone_decoder(&zs, UINT64_MAX)
		   : lzma_stream_decoder(&zs, UINT64_MAX, 0)) != LZMA_OK)
		return -ENOMEM;
	zs.next_in = in;
	zs.avail_in = inlen;
	int ret = z_stream_loop(lzma_step, &zs, limit, buf, cap, len);
	lzma_end(&zs);
	return ret;
}

/* libzstd's stream: the decoder and its input. */
struct zstd_stream {
	ZSTD_DStream *zs;
	ZSTD_inBuffer ib;
};

static int zstd_step(void *stream, uint8_t *out, size_t avail, size_t *made)
{
	struct zstd_stream *st = stream;
	ZSTD_outBuffer ob = { out, avail, 0 };
	size_t zr = ZSTD_decompressStream(st->zs, &ob, &st->ib);

	*made = ob.pos;
	if (ZSTD_isError(zr))
		return ZSTD_getErrorCode(zr) == ZSTD_error_memory_allocation ? -ENOMEM : -EINVAL;
	if (zr == 0)
		return 1;
	return st->ib.pos == st->ib.size && ob.pos < ob.size ? -EINVAL : 0;	/* truncated */
}

static int z_zstd(const uint8_t *in, size_t inlen, uint64_t limit, uint8_t **buf, size_t *cap,
		  size_t *len)
{
	struct zstd_stream st = { ZSTD_createDStream(), { in, inlen, 0 } };

	if (!st.zs)
		return -ENOMEM;
	ZSTD_initDStream(st.zs);
	int ret = z_stream_loop(zstd_step, &st, limit, buf, cap, len);
	ZSTD_freeDStream(st.zs);
	return ret;
}

/*
 * lz4's legacy format, as the kernel's build writes it (lz4 -l): the magic,
 * then blocks of a 32-bit size and that many bytes, each at most 8 MiB
 * decompressed; the kernel appends the total size (4 bytes) after them.
 */
#define LZ4_LEGACY_BLOCK	(8u << 20)

static int z_lz4(const uint8_t *in, size_t inlen, uint64_t limit, uint8_t **buf, size_t *cap,
		 size_t *len)
{
	size_t at = 4;

	while (inlen - at >= 4) {
		uint32_t n = get_le32(in + at);
		if (n == 0x184c2102u) {		/* another stream's magic */
			at += 4;
			continue;
		}
		if (inlen - at == 4 && *len)
			return 0;		/* the size the kernel's build appends */
		at += 4;
		if (!n || n > inlen - at || n > (uint32_t)LZ4_compressBound(LZ4_LEGACY_BLOCK))
			return -EINVAL;
		if (*len + LZ4_LEGACY_BLOCK > *cap) {
			uint64_t want = *len + LZ4_LEGACY_BLOCK;
			if (want > limit + 1)
				want = limit + 1;
			if (want > *cap && elfio_grow(buf, cap, (size_t)want, 1))
				return -ENOMEM;
		}
		size_t room = *cap - *len;
		if (room > limit + 1 - *len)
			room = (size_t)(limit + 1 - *len);
		int r = LZ4_decompress_safe((const char *)in + at, (char *)*buf + *len, (int)n,
					    room > INT32_MAX ? INT32_MAX : (int)room);
		if (r < 0)
			return (size_t)room < LZ4_LEGACY_BLOCK && *len + room > limit ? -EFBIG : -EINVAL;
		*len += (size_t)r;
		if (*len > limit)
			return -EFBIG;
		at += n;
	}
	return *len && at == inlen ? 0 : -EINVAL;
}

static int bzip2_step(void *stream, uint8_t *out, size_t avail, size_t *made)
{
	bz_stream *bs = stream;

	if (avail > UINT_MAX)
		avail = UINT_MAX;
	bs->next_out = (char *)out;
	bs->avail_out = (unsigned int)avail;
	int r = BZ2_bzDecompress(bs);
	*made = avail - bs->avail_out;
	if (r == BZ_STREAM_END)
		return 1;
	if (r == BZ_MEM_ERROR)
		return -ENOMEM;
	if (r != BZ_OK)
		return -EINVAL;
	return !bs->avail_in && bs->avail_out ? -EINVAL : 0;	/* truncated */
}

static int z_bzip2(const uint8_t *in, size_t inlen, uint64_t limit, uint8_t **buf, size_t *cap,
		   size_t *len)
{
	bz_stream bs;

	memset(&bs, 0, sizeof(bs));
	if (BZ2_bzDecompressInit(&bs, 0, 0) != BZ_OK)
		return -ENOMEM;
	bs.next_in = (char *)(uintptr_t)in;
	bs.avail_in = inlen > UINT_MAX ? UINT_MAX : (unsigned int)inlen;
	int ret = z_stream_loop(bzip2_step, &bs, limit, buf, cap, len);
	BZ2_bzDecompressEnd(&bs);
	return ret;
}

/*
 * lzop's format, as the kernel's build writes it (lzop -9, then the size
 * appended): a header (magic, versions, method, flags, mode, times, a name,
 * a checksum), then blocks of a 32-bit big-endian decompressed size (0 ends
 * them), a compressed size, the checksums the flags name, and the bytes
 * (stored as they are when both sizes are equal).  A block inflates to at
 * most 256 KiB (the kernel's own unlzo refuses more); checksums are not
 * checked (the kernel's are not either).
 */
#define LZO_BLOCK		(256u << 10)
#define LZOP_ADLER32_D		0x00000001u
#define LZOP_ADLER32_C		0x00000002u
#define LZOP_EXTRA_FIELD	0x00000040u
#define LZOP_CRC32_D		0x00000100u
#define LZOP_CRC32_C		0x00000200u
#define LZOP_FILTER		0x00000800u

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int lzop_header(const uint8_t *in, size_t inlen, size_t *at, uint32_t *flags)
{
	size_t p = 9;
	unsigned int version;

	if (inlen < p + 7 || memcmp(in, "\x89LZO\0\r\n\x1a\n", 9))
		return -EINVAL;
	version = (unsigned int)in[p] << 8 | in[p + 1];
	p += 4;				/* version, library version */
	if (version >= 0x0940)
		p += 2;			/* version needed to extract */
	if (inlen < p + 2)
		return -EINVAL;
	if (in[p] < 1 || in[p] > 3)	/* M_LZO1X_1, _1_15, _999 */
		return -EINVAL;
	p += 1 + (version >= 0x0940);	/* method, level */
	if (inlen < p + 4)
		return -EINVAL;
	*flags = be32(in + p);
	p += 4 + (*flags & LZOP_FILTER ? 4 : 0) + 8 + (version >= 0x0940 ? 4 : 0);
	if (inlen < p + 1 || inlen - p - 1 < (size_t)in[p] + 4)
		return -EINVAL;
	p += 1 + in[p] + 4;		/* name, header checksum */
	if (*flags & LZOP_EXTRA_FIELD) {
		if (inlen - p < 4 || inlen - p - 4 < (size_t)be32(in + p) + 4)
			return -EINVAL;
		p += 4 + be32(in + p) + 4;
	}
	*at = p;
	return 0;
}

static int z_lzo(const uint8_t *in, size_t inlen, uint64_t limit, uint8_t **buf, size_t *cap,
		 size_t *len)
{
	uint32_t flags;
	size_t at;
	int r = lzop_header(in, inlen, &at, &flags);

	if (r)
		return r;
	if (lzo_init() != LZO_E_OK)
		return -ENOMEM;
	for (;;) {
		uint32_t dst, src;
		size_t sums;

		if (inlen - at < 4)
			return -EINVAL;
		dst = be32(in + at);
		at += 4;
		if (!dst)
			return *len ? 0 : -EINVAL;
		if (dst > LZO_BLOCK || inlen - at < 4)
			return -EINVAL;
		src = be32(in + at);
		at += 4;
		if (!src || src > dst)
			return -EINVAL;
		sums = (flags & LZOP_ADLER32_D ? 4 : 0) + (flags & LZOP_CRC32_D ? 4 : 0);
		if (src < dst)
			sums += (flags & LZOP_ADLER32_C ? 4 : 0) + (flags & LZOP_CRC32_C ? 4 : 0);
		if (inlen - at < sums || inlen - at - sums < src)
			return -EINVAL;
		at += sums;
		if (*len + dst > limit)
			return -EFBIG;
		if (*len + dst > *cap) {
			size_t want = *cap * 2 > *len + dst ? *cap * 2 : *len + dst;
			if (want > limit + 1)
				want = (size_t)limit + 1;
			if (elfio_grow(buf, cap, want, 1))
				return -ENOMEM;
		}
		if (src == dst) {
			memcpy(*buf + *len, in + at, dst);
		} else {
			lzo_uint out = dst;

			if (lzo1x_decompress_safe(in + at, src, *buf + *len, &out, NULL) != LZO_E_OK ||
			    out != dst)
				return -EINVAL;
		}
		*len += dst;
		at += src;
	}
}

/*
 * hint: the size the stream says it inflates to (the kernel's build appends
 * it), taken as the first allocation when it is within the bound, so that
 * a 60 MB kernel is not grown by doubling and copying.
 */
int elfio_z_inflate(enum elfio_z z, const uint8_t *in, size_t inlen, uint64_t limit,
		    uint64_t hint, uint8_t **out, size_t *outlen)
{
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0;
	int ret;

	if (hint && hint <= limit && elfio_grow(&buf, &cap, (size_t)hint + 1, 1))
		return -ENOMEM;

	switch (z) {
	case ELFIO_Z_GZIP:
		ret = z_gzip(in, inlen, limit, &buf, &cap, &len);
		break;
	case ELFIO_Z_XZ:
	case ELFIO_Z_LZMA:
		ret = z_lzma(z == ELFIO_Z_LZMA, in, inlen, limit, &buf, &cap, &len);
		break;
	case ELFIO_Z_ZSTD:
		ret = z_zstd(in, inlen, limit, &buf, &cap, &len);
		break;
	case ELFIO_Z_LZ4:
		ret = z_lz4(in, inlen, limit, &buf, &cap, &len);
		break;
	case ELFIO_Z_BZIP2:
		ret = z_bzip2(in, inlen, limit, &buf, &cap, &len);
		break;
	case ELFIO_Z_LZO:
		ret = z_lzo(in, inlen, limit, &buf, &cap, &len);
		break;
	default:
		return -ENOTSUP;
	}
	if (!ret && len > limit)
		ret = -EFBIG;
	if (ret) {
		elfio_free(buf);
		return ret;
	}
	*out = buf;
	*outlen = len;
	return 0;
}
