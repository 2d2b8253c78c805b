// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_bootimg.c - boot images (vmlinuz), the kallsyms reader and the
 * bounded decompressors (elfio/bootimg.c, elfio/kallsyms.c).
 *
 * Strategy: the first byte picks the reader, the rest is its input.
 *   0: kallsyms_decode on the bytes: refused, or every symbol has a
 *      printable name with a type letter, and the tables lie in the input;
 *   1: bootimg_to_elf, quiet: not a boot image, refused, or an ELF image
 *      that elfio opens from memory (what elfio_open reads next);
 *   2: bootimg_inflate of the stream the bytes' magic names, with the bound
 *      the boot image readers use: never more output than the bound.
 * ASan and UBSan catch every read past the input.
 */
#include "elfio/bootimg.h"
#include "elfio/elfio.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *in = data + 1;
	size_t n = size - 1;

	switch (data[0] % 3) {
	case 0: {
		struct kallsyms k;
		const char *why = NULL;
		if (kallsyms_decode(in, n, &k, &why))
			break;
		FUZZ_CHECK(k.count > 0 && k.token_index_at + 512 <= n, "tables in the input");
		for (size_t i = 0; i < k.count; i++) {
			FUZZ_CHECK(k.syms[i].type && k.syms[i].name[0], "symbol %zu has a name", i);
			for (const char *c = k.syms[i].name; *c; c++)
				FUZZ_CHECK(*c > 0x20 && *c < 0x7f, "symbol %zu is printable", i);
		}
		kallsyms_free(&k);
		break;
	}
	case 1: {
		uint8_t *out = NULL;
		size_t outlen = 0;
		int r = bootimg_to_elf("fuzz", in, n, true, &out, &outlen);
		if (r)
			break;
		struct elfio *e = elfio_open_memory("fuzz", out, outlen, ELFIO_QUIET);
		FUZZ_CHECK(e != NULL, "the ELF image made from a boot image opens");
		elfio_close(e);
		elfio_free(out);
		break;
	}
	default: {
		enum bootimg_z z = bootimg_sniff(in, n);
		uint64_t limit = (uint64_t)n * BOOTIMG_MAX_RATIO;
		uint8_t *out = NULL;
		size_t outlen = 0;
		if (limit > (4u << 20))
			limit = 4u << 20;
		if (z == BZ_NONE || bootimg_inflate(z, in, n, limit, &out, &outlen))
			break;
		FUZZ_CHECK(outlen <= limit, "%zu bytes out, bound %llu", outlen,
			   (unsigned long long)limit);
		elfio_free(out);
		break;
	}
	}
	return 0;
}
