/* An unmodified program that logs through syslog, vsyslog and stdio on stderr, for
 * tests/logcap/logcap_test.py (run under `vigil record`; not linked with libvigil). Built
 * twice: plain, and with _FORTIFY_SOURCE=2 (then it calls __syslog_chk, __fprintf_chk...).
 *
 *   syslog_subject N [fork]
 *
 * openlog(LOG_PERROR) makes the real syslog copy each message it is handed to stderr,
 * which is how the test sees what passed through; setlogmask(LOG_UPTO(LOG_INFO)) is the
 * program's own threshold: its debug messages are dropped by syslog, but still counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline, format(printf, 2, 3))) static void wrap(int pri, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsyslog(pri, fmt, ap); /* the site of every wrapped message */
	va_end(ap);
}

int main(int argc, char **argv)
{
	int n = argc >= 2 ? atoi(argv[1]) : 0;
	if (n < 1) {
		fprintf(stderr, "usage: syslog_subject N [fork]\n");
		return 2;
	}
	openlog("logcap-subject", LOG_PERROR, LOG_USER);
	setlogmask(LOG_UPTO(LOG_INFO));
	for (int i = 0; i < n; i++) {
		syslog(LOG_DEBUG, "masked debug %d", i);
		syslog(LOG_INFO, "info %d", i);
		wrap(LOG_WARNING, "warn via vsyslog %d", i);
		fprintf(stderr, "stderr line %d\n", i);
	}
	fputs("fputs line\n", stderr);
	fwrite("fwrite line\n", 1, 12, stderr);
	fputc('\n', stderr);
	dprintf(2, "dprintf %d\n", 5);
	errno = ENOENT;
	perror("perror here");
	fprintf(stdout, "stdout line %d\n", 1); /* not stderr: not captured */
	fflush(stdout);
	for (int i = 0; i < 5; i++) {
		syslog(LOG_NOTICE, "before sleep %d", i);
		sleep_ms(3);
		syslog(LOG_NOTICE, "after sleep %d", i);
	}
	if (argc >= 3 && !strcmp(argv[2], "fork")) {
		fflush(stderr);
		pid_t pid = fork();
		if (pid == 0) {
			for (int i = 0; i < n; i++)
				syslog(LOG_ERR, "child %d", i);
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	closelog();
	return 0;
}
