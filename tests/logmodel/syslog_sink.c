/* A stand-in for the system logger, for tests/logmodel/postgres.py: preloaded after
 * libvigil (LD_PRELOAD=syslog_sink.so under `vigil record`, which puts libvigil first),
 * it is the "real" syslog that vigil's interception hands messages on to. It appends each
 * message it receives to the file named by LOGMODEL_SYSLOG_FILE as "PRI<TAB>text\n", so
 * the test sees exactly what the program would have written to syslog, and nothing
 * reaches the machine's logger. One write(2) per message: processes do not interleave. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>
#include <unistd.h>

static void sink(int pri, const char *fmt, va_list ap)
{
	const char *path = getenv("LOGMODEL_SYSLOG_FILE");
	if (!path)
		return;
	char buf[8192];
	int n = snprintf(buf, sizeof buf, "%d\t", LOG_PRI(pri));
	int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	size_t len =
	    (size_t)n +
	    ((size_t)m < sizeof buf - (size_t)n - 1 ? (size_t)m : sizeof buf - (size_t)n - 2);
	buf[len++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ssize_t unused = write(fd, buf, len);
	(void)unused;
	close(fd);
}

void vsyslog(int pri, const char *fmt, va_list ap)
{
	sink(pri, fmt, ap);
}

void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	sink(pri, fmt, ap);
}

void syslog(int pri, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sink(pri, fmt, ap);
	va_end(ap);
}

void __syslog_chk(int pri, int flag, const char *fmt, ...)
{
	(void)flag;
	va_list ap;
	va_start(ap, fmt);
	sink(pri, fmt, ap);
	va_end(ap);
}
