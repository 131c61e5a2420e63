/* A program that logs through vigil's C API (include/vigil/log.h) in a known sequence, for
 * tests/logcap/logcap_test.py. Linked with libvigil; records when VIGIL_OUT is set.
 *
 *   api_subject seq N     main: N x (A, B) with a model write half-way, then 3 adapter calls
 *                         and one warning; a second thread: N x (C, D), C tagged, the
 *                         first 5 C -> D separated by a 2 ms sleep
 *   api_subject kill N    N x (A, B), a model write, N more x (A, B), "ready" on stdout,
 *                         then waits to be killed
 *   api_subject fork N    N x A, fork: the child logs N x E and exits; the parent one more A
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vigil/log.h>

static int n;

static void sleep_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void log_ab(int i)
{
	VG_LOG(VG_LOG_DEBUG, "main a %d", i);
	VG_LOG(VG_LOG_INFO, "main b %d", i);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < n; i++) {
		VG_LOG_NAMED(VG_LOG_DEBUG, "worker.step", "worker c %d", i);
		if (i < 5)
			sleep_ms(2);
		VG_LOG(VG_LOG_DEBUG, "worker d %d", i);
	}
	return NULL;
}

static int check_write(void)
{
	if (vg_log_model_write() != 0) {
		perror("api_subject: vg_log_model_write");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (n = atoi(argv[2])) < 2) {
		fprintf(stderr, "usage: api_subject seq|kill|fork N (N >= 2)\n");
		return 2;
	}
	const char *mode = argv[1];
	if (!strcmp(mode, "seq")) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, NULL) != 0)
			return 1;
		for (int i = 0; i < n; i++) {
			log_ab(i);
			if (i == n / 2 && vg_log_capturing() && check_write() < 0)
				return 1;
		}
		for (int i = 0; i < 3; i++)
			vg_log(VG_LOG_DEBUG, __FILE__, 999, "adapter %d", i);
		VG_LOG(VG_LOG_WARNING, "visible warning %d", 7);
		pthread_join(th, NULL);
		return 0;
	}
	if (!strcmp(mode, "kill")) {
		for (int i = 0; i < n; i++)
			log_ab(i);
		if (check_write() < 0)
			return 1;
		for (int i = 0; i < n; i++)
			log_ab(i);
		printf("ready\n");
		fflush(stdout);
		sleep(60);
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		for (int i = 0; i < n; i++)
			VG_LOG(VG_LOG_DEBUG, "main a %d", i);
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			for (int i = 0; i < n; i++)
				VG_LOG(VG_LOG_DEBUG, "child e %d", i);
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		VG_LOG(VG_LOG_DEBUG, "main a %d", n);
		return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
	}
	fprintf(stderr, "api_subject: unknown mode %s\n", mode);
	return 2;
}
