/*
 * tracer-fork-control.c - fork() while the preloaded tracer's control
 * thread runs commands (tests/e2e/safety-tracer.sh).
 *
 * Strategy: a commander thread writes `attach t_churn*`, `dump` and
 * `detach t_churn*` into the tracer's FIFO (PATCHSITE_TRACE_CTL) without
 * pause, so the control thread holds its lock most of the time, while the
 * main thread forks children.  Each child calls t_stay CHILD_CALLS times
 * and exits (the tracer's exit-time dump runs in it).  A child that does
 * not exit within 10 s has hung (a lock inherited held): the parent kills
 * it and counts it.  The program prints its own numbers, the oracle for
 * the tracer's tables: `parent PID`, `child PID` for each child, `count
 * t_stay N` (the parent's own calls), `child_calls N`, `hung N`.
 *
 *   tracer-fork-control CHILDREN
 *
 * Exits 0 when no child hung and every child exited 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_CALLS 7

__attribute__((noinline)) int t_stay(int x) { __asm__ volatile("" ::: "memory"); return x + 1; }

/* 32 functions for attach and detach to work on */
#define CHURN(n) __attribute__((noinline)) int t_churn##n(int x) { __asm__ volatile("" ::: "memory"); return x + n; }
CHURN(0) CHURN(1) CHURN(2) CHURN(3) CHURN(4) CHURN(5) CHURN(6) CHURN(7)
CHURN(8) CHURN(9) CHURN(10) CHURN(11) CHURN(12) CHURN(13) CHURN(14) CHURN(15)
CHURN(16) CHURN(17) CHURN(18) CHURN(19) CHURN(20) CHURN(21) CHURN(22) CHURN(23)
CHURN(24) CHURN(25) CHURN(26) CHURN(27) CHURN(28) CHURN(29) CHURN(30) CHURN(31)

static volatile int stop;

static void *commander(void *path)
{
	static const char cmds[] = "attach t_churn*\ndump\ndetach t_churn*\n";
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		perror("open the control FIFO");
		return NULL;
	}
	while (!stop) {
		if (write(fd, cmds, sizeof(cmds) - 1) < 0 && errno != EINTR)
			break;
		usleep(200);
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *fifo = getenv("PATCHSITE_TRACE_CTL");
	int children = argc > 1 ? atoi(argv[1]) : 40, hung = 0, failed = 0, calls = 0;
	pthread_t th;

	if (!fifo || pthread_create(&th, NULL, commander, (void *)fifo))
		return 2;
	printf("parent %ld\n", (long)getpid());
	usleep(100000);
	for (int i = 0; i < children && !hung; i++) {
		int st = 0;
		pid_t pid;

		calls = t_stay(calls);
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			int v = 0;

			for (int k = 0; k < CHILD_CALLS; k++)
				v = t_stay(v);
			exit(v == CHILD_CALLS ? 0 : 1);
		}
		printf("child %ld\n", (long)pid);
		for (int ms = 0;; ms++) {
			pid_t w = waitpid(pid, &st, WNOHANG);

			if (w == pid) {
				failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
				break;
			}
			if (ms == 10000) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				hung++;
				printf("hung %ld\n", (long)pid);
				break;
			}
			usleep(1000);
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("count t_stay %d\nchild_calls %d\nhung %d\nfailed %d\n", calls, CHILD_CALLS, hung, failed);
	return hung || failed;
}
