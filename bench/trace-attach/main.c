/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * main.c - bench/trace-attach's program: calls every one of the N
 * generated functions (bench/attach/gen.py) in rounds, 1 ms apart, until
 * DIR/stop exists; prints one round's checksum (the same traced or not).
 * DIR/ready appears after the first round.
 */
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

extern const size_t bench_nfuncs;
extern void *const bench_funcs[];

int main(int argc, char **argv)
{
	char path[4096];
	struct timespec ms = { 0, 1000 * 1000 };
	long sum = 0;
	int rounds = 0;

	if (argc != 2)
		return 2;
	for (;;) {
		long s = 0;

		for (size_t i = 0; i < bench_nfuncs; i++)
			s += ((long (*)(long))bench_funcs[i])((long)i);
		sum = s;
		if (!rounds++) {
			snprintf(path, sizeof(path), "%s/ready", argv[1]);
			fclose(fopen(path, "w"));
		}
		snprintf(path, sizeof(path), "%s/stop", argv[1]);
		if (access(path, F_OK) == 0)
			break;
		nanosleep(&ms, NULL);
	}
	printf("checksum %ld\n", sum);
	return 0;
}
