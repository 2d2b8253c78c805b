/*
 * tracer-long-line.c - the program for the control FIFO's line limit
 * (tests/e2e/safety-tracer.sh writes the lines).
 *
 * Strategy: the program only calls two functions after the test has
 * written its commands: t_victim, which the tail of an over-long line
 * names (`attach t_victim` after 4,096 bytes of padding: discarded whole,
 * it must never be attached), and t_ok, which a line of exactly the
 * longest length accepted attaches.  Its own counts are the oracle for the
 * tracer's table.
 *
 *   tracer-long-line DIR    creates DIR/ready, waits for DIR/go (2 minutes
 *                           at most), calls t_victim 50 and t_ok 70 times,
 *                           prints `count NAME N` for both
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) int t_victim(int x) { __asm__ volatile("" ::: "memory"); return x + 1; }
__attribute__((noinline)) int t_ok(int x) { __asm__ volatile("" ::: "memory"); return x + 1; }

int main(int argc, char **argv)
{
	char path[4096];
	struct timespec ts = { 0, 20000000 };
	int v = 0, o = 0;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/ready", argv[1]);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	snprintf(path, sizeof(path), "%s/go", argv[1]);
	for (int i = 0; i < 6000 && access(path, F_OK); i++)
		nanosleep(&ts, NULL);
	for (int i = 0; i < 50; i++)
		v = t_victim(v);
	for (int i = 0; i < 70; i++)
		o = t_ok(o);
	printf("count t_victim %d\ncount t_ok %d\n", v, o);
	return 0;
}
