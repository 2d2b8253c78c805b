// SPDX-License-Identifier: GPL-2.0-only
/*
 * inflate.c - time elfio_z_inflate on one compressed file: the bench of
 * elfio/decompress.c's stream loops (bench/decompress/run.sh).
 *
 *   inflate FILE RUNS    ->  "FORMAT BYTES_OUT CPU_NS ..." (one CPU time a run)
 *
 * Strategy: the file is read once; each run inflates it into a new buffer
 * (no size hint, so the buffer grows as for a module) and frees it; the
 * time of each run is the process's CPU time around the call, so that the
 * load of a shared machine moves it less than wall time.  The format is
 * sniffed (elfio_z_sniff), as elfio.c and bootimg.c do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/base.h"
#include "elfio/decompress.h"

static long long cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: inflate FILE RUNS\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	uint8_t *in = malloc(n > 0 ? (size_t)n : 1);
	if (!in || fread(in, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "inflate: %s: cannot read it\n", argv[1]);
		return 2;
	}
	fclose(f);
	enum elfio_z z = elfio_z_sniff(in, (size_t)n);
	int runs = atoi(argv[2]);
	size_t outlen = 0;
	printf("%s", elfio_z_name(z));
	for (int i = 0; i < runs; i++) {
		uint8_t *out;
		long long t0 = cpu_ns();
		int r = elfio_z_inflate(z, in, (size_t)n, 4ull << 30, 0, &out, &outlen);
		long long t1 = cpu_ns();
		if (r) {
			fprintf(stderr, "inflate: %s: error %d\n", argv[1], r);
			return 1;
		}
		elfio_free(out);
		if (!i)
			printf(" %zu", outlen);
		printf(" %lld", t1 - t0);
	}
	printf("\n");
	free(in);
	return 0;
}
