/*
 * tracer-signal-longjmp.c - a signal handler that calls a traced function
 * and leaves by siglongjmp, while the preloaded tracer times calls
 * (tests/e2e/safety-tracer.sh).
 *
 * Strategy: as tracer-signal-timing (SIGUSR1 sent to the main thread as
 * fast as another thread can while it calls t_work), but the handler
 * calls t_inhandler and then siglongjmps back to the top of the main
 * loop, leaving whatever it interrupted: t_work, or the tracer's own entry
 * hook or return in the middle of their work.  The process must not die,
 * and what the tracer left behind must not stop it timing: after the
 * signals, t_after is called 1,000 times from main, and every one must be
 * timed.  The sender waits for each signal's siglongjmp to land before it
 * sends the next: siglongjmp unblocks SIGUSR1 before it jumps, so a signal
 * already pending there would run the handler again one level deeper,
 * and a stream of them would overflow the stack whatever the tracer did.
 * The program's numbers: `count t_inhandler N` (the handler's
 * calls), `count t_after 1000`, `bad N` (values t_work returned wrong).
 *
 *   tracer-signal-longjmp SIGNALS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) unsigned long t_work(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline)) unsigned long t_inhandler(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x ^ 0x55;
}

__attribute__((noinline)) unsigned long t_after(unsigned long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static volatile sig_atomic_t stop, armed;
static volatile unsigned long landed;	/* handler_calls when the last siglongjmp landed */
static sem_t landings;			/* posted at each landing */
static volatile unsigned long handler_calls, handler_bad;
static pthread_t main_thread;
static long nsignals;
static sigjmp_buf top;

static void on_usr1(int sig)
{
	unsigned long n = handler_calls + 1;

	(void)sig;
	handler_calls = n;
	if (t_inhandler(n) != (n ^ 0x55))
		handler_bad++;
	if (armed)
		siglongjmp(top, 1);
}

static void *sender(void *unused)
{
	(void)unused;
	for (long i = 0; i < nsignals; i++) {
		pthread_kill(main_thread, SIGUSR1);
		do {
			while (sem_wait(&landings))
				;	/* EINTR */
		} while (landed != (unsigned long)i + 1);
	}
	stop = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	static volatile unsigned long i, bad;
	static unsigned long a;
	pthread_t th;

	if (argc < 2)
		return 2;
	nsignals = atol(argv[1]);
	main_thread = pthread_self();
	if (sem_init(&landings, 0, 0))
		return 2;
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 2;
	if (sigsetjmp(top, 1)) {
		landed = handler_calls;
		sem_post(&landings);
	} else {
		armed = 1;
		if (pthread_create(&th, NULL, sender, NULL))
			return 2;
	}
	while (!stop) {
		unsigned long x = i;

		if (t_work(x) != x * 3 + 1)
			bad++;
		i = x + 1;
	}
	armed = 0;
	pthread_join(th, NULL);
	for (int k = 0; k < 1000; k++)
		a = t_after(a);
	bad += handler_bad + (a != 1000);
	printf("count t_inhandler %lu\ncount t_after %lu\nbad %lu\n", handler_calls, a, bad);
	return bad ? 1 : 0;
}
