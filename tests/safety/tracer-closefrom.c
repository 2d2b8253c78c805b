/*
 * tracer-closefrom.c - the program closes every descriptor above stderr
 * (closefrom(3), as daemons and servers do after start-up) under the
 * preloaded tracer (tests/e2e/safety-tracer.sh).
 *
 * Strategy: the tracer opened its output file, its control FIFO and its
 * signal pipe before main; closefrom(3) closes them all.  The program then
 * opens four files of its own (DIR/data0..3: the lowest numbers, the ones
 * the tracer had) and writes known lines to them.  The tracer must not
 * write its table or a signal byte into them, must not read from them, and
 * must not spin on a descriptor that is gone; its table must still reach
 * its own file, and the FIFO must still take commands.  With one file
 * instead of four, the tracer's FIFO and pipe numbers stay closed: a
 * control thread that polls them spins.  The program's own
 * numbers are the oracle: the data it wrote, `count t_late N`, and
 * `cpu_idle_ms N`, the CPU time the whole process used while the main
 * thread slept 1 s (a control thread that spins uses all of it).
 *
 *   tracer-closefrom DIR [N [loop]]
 *                           closefrom(3) (with `loop`: close(fd) for fd 3 to
 *                           255, the other common way, which leaves higher
 *                           numbers open); DIR/data0..N-1 written (N 4 by
 *                           default, 1 to 4); prints `pid N`; creates
 *                           DIR/ready; waits for DIR/go (2 minutes at
 *                           most); sleeps 1 s measuring CPU; calls t_late
 *                           100 times; a second line in each file; exits
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) int t_late(int x) { __asm__ volatile("" ::: "memory"); return x + 1; }

static void wait_for(const char *dir, const char *name)
{
	char path[4096];
	struct timespec ts = { 0, 20000000 };

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 6000 && access(path, F_OK); i++)
		nanosleep(&ts, NULL);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int put(int fd, int k, int line)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "data%d line %d\n", k, line);

	return write(fd, buf, (size_t)n) == n ? 0 : -1;
}

int main(int argc, char **argv)
{
	char path[4096];
	int fd[4], v = 0, nf = argc > 2 ? atoi(argv[2]) : 4;
	double c0;
	struct timespec one = { 1, 0 };

	if (argc < 2 || nf < 1 || nf > 4)
		return 2;
	if (argc > 3 && !strcmp(argv[3], "loop"))
		for (int k = 3; k < 256; k++)
			close(k);
	else
		closefrom(3);
	for (int k = 0; k < nf; k++) {
		snprintf(path, sizeof(path), "%s/data%d", argv[1], k);
		fd[k] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd[k] < 0 || put(fd[k], k, 1))
			return 2;
		printf("data%d fd %d\n", k, fd[k]);
	}
	printf("pid %ld\n", (long)getpid());
	fflush(stdout);
	snprintf(path, sizeof(path), "%s/ready", argv[1]);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	wait_for(argv[1], "go");
	c0 = cpu_ms();
	nanosleep(&one, NULL);
	printf("cpu_idle_ms %.0f\n", cpu_ms() - c0);
	for (int i = 0; i < 100; i++)
		v = t_late(v);
	for (int k = 0; k < nf; k++)
		if (put(fd[k], k, 2))
			return 2;
	printf("count t_late %d\n", v);
	return 0;
}
