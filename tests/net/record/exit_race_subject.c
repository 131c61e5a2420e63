/* A send whose thread has not recorded it yet when another thread ends the process
 * (tests/net/record/net_record_test.py exit_race; docs/net.md "At the end of a
 * process"), made certain rather than rare. The process runs on one CPU; the sending
 * thread is SCHED_IDLE while it sends, so the main thread, woken by the send from its
 * read, preempts it at the send's return, before the runtime records the send. Main then
 * makes the sender an ordinary thread again and signals it: when it runs again, it first
 * spends 2 ms of its own CPU time in the handler, still before the record. Main exits at
 * once. Unless the process's end waits for the sender, the trace holds 100 bytes
 * received that no send covers. Plain libc, recorded through vigil record's preload.
 * Prints {"sent": 100, "received": 100}. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define N 100

static int sv[2];

static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void spin(int sig)
{
	(void)sig;
	long long until = cpu_ns() + 2000000;
	while (cpu_ns() < until) {
	}
}

static void *sender(void *arg)
{
	(void)arg;
	struct sched_param sp = {0};
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0)
		fprintf(stderr, "exit_race_subject: SCHED_IDLE refused; the race is not forced\n");
	char buf[N];
	memset(buf, 'x', sizeof buf);
	if (write(sv[1], buf, sizeof buf) != N)
		abort();
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	int cpu = sched_getcpu();
	CPU_SET(cpu >= 0 ? cpu : 0, &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0)
		fprintf(stderr,
		        "exit_race_subject: cannot pin to one CPU; the race is not forced\n");
	struct sigaction sa = {.sa_handler = spin, .sa_flags = SA_RESTART};
	sigaction(SIGUSR1, &sa, NULL);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 2;
	pthread_t t;
	if (pthread_create(&t, NULL, sender, NULL) != 0)
		return 2;
	char buf[N];
	size_t got = 0;
	while (got < N) {
		ssize_t r = read(sv[0], buf + got, N - got);
		if (r <= 0)
			return 2;
		got += (size_t)r;
	}
	struct sched_param sp = {0};
	pthread_setschedparam(t, SCHED_OTHER, &sp);
	pthread_kill(t, SIGUSR1);
	printf("{\"sent\": %d, \"received\": %zu}\n", N, got);
	fflush(stdout);
	exit(0);
}
