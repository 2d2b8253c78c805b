// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_zmodule.c - compressed modules (.ko.gz, .ko.xz, .ko.zst).
 *
 * The input is an uncompressed image.  The harness compresses it with the
 * method the input's size selects (gzip, xz, zstd), optionally cuts the
 * stream short, and opens the result: so the fuzzer explores ELF content
 * behind every decompressor, not just garbage streams (fuzz_elf sees those).
 *
 * Checks: the compressed file is read exactly as the plain one is: both
 * open or neither does, and record finds the same sites with the same
 * flavours; a cut stream is refused or, if what is left still decodes to
 * the whole image (a cut in the trailer), read the same; in-place writing
 * of a compressed input is refused.
 */
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "elfio/elfio.h"
#include "recordsites/recordsites.h"
#include "fuzz/fuzz_common.h"

static size_t gz(const uint8_t *in, size_t n, uint8_t **out)
{
	z_stream zs = { 0 };
	size_t cap = deflateBound(&zs, n) + 64;

	FUZZ_CHECK(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "zlib");
	cap = deflateBound(&zs, n) + 64;
	*out = malloc(cap);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)n;
	zs.next_out = *out;
	zs.avail_out = (uInt)cap;
	FUZZ_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate");
	size_t len = zs.total_out;
	deflateEnd(&zs);
	return len;
}

static size_t xz(const uint8_t *in, size_t n, uint8_t **out)
{
	size_t cap = lzma_stream_buffer_bound(n), pos = 0;

	*out = malloc(cap);
	FUZZ_CHECK(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC32, NULL, in, n, *out, &pos, cap) ==
			   LZMA_OK,
		   "xz");
	return pos;
}

static size_t zst(const uint8_t *in, size_t n, uint8_t **out)
{
	size_t cap = ZSTD_compressBound(n);

	*out = malloc(cap);
	size_t len = ZSTD_compress(*out, cap, in, n, 1);
	FUZZ_CHECK(!ZSTD_isError(len), "zstd");
	return len;
}

struct result {
	bool opened, scanned;
	size_t n;
	uint64_t *addr;
	int *flavour;
};

static void run(const uint8_t *data, size_t size, struct result *res, bool compressed)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path, sizeof(path));
	struct elfio *e = elfio_open(path, ELFIO_QUIET);
	struct record_options o;
	struct record *r = NULL;

	memset(res, 0, sizeof(*res));
	if (e) {
		res->opened = true;
		FUZZ_CHECK(elfio_was_compressed(e) == compressed, "compressed flag");
		record_options_init(&o);
		if (record_scan(e, &o, &r) == 0) {
			res->scanned = true;
			res->n = r->nsites;
			res->addr = calloc(r->nsites + 1, sizeof(*res->addr));
			res->flavour = calloc(r->nsites + 1, sizeof(*res->flavour));
			for (size_t i = 0; i < r->nsites; i++) {
				res->addr[i] = r->sites[i].addr;
				res->flavour[i] = r->sites[i].flavour;
			}
			if (compressed) {
				struct inplace_options io = { 0 };
				struct inplace_report rep;
				char out[512];
				snprintf(out, sizeof(out), "%s/z.out", fuzz_scratch());
				FUZZ_CHECK(record_write_in_place(r, &io, out, &rep) != 0,
					   "in-place on a compressed module succeeded");
				FUZZ_CHECK(access(out, F_OK) != 0, "in-place wrote a compressed module");
			}
			record_free(r);
		}
		elfio_close(e);
	}
	close(fd);
}

static void same(const struct result *a, const struct result *b, const char *what)
{
	FUZZ_CHECK(a->opened == b->opened, "%s: opened %d vs %d", what, a->opened, b->opened);
	FUZZ_CHECK(a->scanned == b->scanned, "%s: scanned %d vs %d", what, a->scanned, b->scanned);
	FUZZ_CHECK(a->n == b->n, "%s: %zu vs %zu sites", what, a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		FUZZ_CHECK(a->addr[i] == b->addr[i] && a->flavour[i] == b->flavour[i],
			   "%s: site %zu differs", what, i);
}

static void release(struct result *r)
{
	free(r->addr);
	free(r->flavour);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "gzip", "xz", "zstd" };
	uint8_t *z = NULL;
	size_t zlen;
	unsigned int method = size % 3;
	struct result plain, packed;

	/* inputs that already are a compressed stream would be compressed twice */
	if (size >= 1 && (data[0] == 0x1f || data[0] == 0xfd || data[0] == 0x28))
		return 0;
	switch (method) {
	case 0: zlen = gz(data, size, &z); break;
	case 1: zlen = xz(data, size, &z); break;
	default: zlen = zst(data, size, &z); break;
	}
	run(data, size, &plain, false);
	run(z, zlen, &packed, true);
	same(&plain, &packed, names[method]);
	release(&packed);

	/* cut the stream: refused, unless only the trailer went and the image is whole */
	if (zlen > 2) {
		size_t cut = size > 1 ? (data[size / 2] * 257u + data[size - 1]) % (zlen - 1) + 1 : zlen / 2;
		run(z, cut, &packed, true);
		if (packed.opened)
			same(&plain, &packed, "cut stream");
		release(&packed);
	}
	release(&plain);
	free(z);
	return 0;
}
