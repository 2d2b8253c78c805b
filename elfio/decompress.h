/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * decompress.h - the one decompressor family (elfio/decompress.c), for
 * compressed modules and boot-image payloads alike.
 */
#ifndef PATCHSITE_DECOMPRESS_H
#define PATCHSITE_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

enum elfio_z {
	ELFIO_Z_NONE, ELFIO_Z_GZIP, ELFIO_Z_XZ, ELFIO_Z_LZMA, ELFIO_Z_ZSTD, ELFIO_Z_BZIP2,
	ELFIO_Z_LZ4, ELFIO_Z_LZO
};

/* The format the bytes at m begin with (its magic), or ELFIO_Z_NONE. */
enum elfio_z elfio_z_sniff(const uint8_t *m, size_t n);
/* "gzip", "xz", ...: the format's name in messages ("none" for none). */
const char *elfio_z_name(enum elfio_z z);
/*
 * Bounded decompression: the stream at in, of format z, into a new buffer
 * (*out, elfio_free it) of *outlen <= limit bytes.  hint: the size the
 * stream says it inflates to, or 0 (a first allocation, never trusted
 * beyond that).  0; -EFBIG past the limit, -ENOMEM, -EINVAL for a corrupt
 * or truncated stream, -ENOTSUP for a format not built in.
 */
int elfio_z_inflate(enum elfio_z z, const uint8_t *in, size_t inlen, uint64_t limit,
		    uint64_t hint, uint8_t **out, size_t *outlen);

#endif
