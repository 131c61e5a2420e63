/* An unmodified program whose log call sites do not identify their statements, for
 * tests/logcap/logcap_test.py (templates; run under `vigil record`, not linked with
 * libvigil):
 *
 *   tmpl_subject wrap N    N rounds of three messages through a syslog("%s") wrapper,
 *                          of three lines written to fd 2 by write(2) with a time and
 *                          pid prefix (LOG, DEBUG, WARNING), and of one writev(2) line
 *   tmpl_subject file LOG OTHER N   N rounds of three lines (LOG, DEBUG, WARNING)
 *                          written by write(2) to the file LOG and to the file OTHER;
 *                          half-way LOG is rotated: renamed to LOG.1 and opened anew on
 *                          the same descriptor number
 *   tmpl_subject fifo LOG N  N rounds of the three lines written by write(2) to LOG, a
 *                          FIFO the test reads
 *   tmpl_subject rotate LOG N  N rounds of the three lines written by write(2) to LOG
 *                          (O_APPEND) while the file is rotated and truncated under the
 *                          program as logrotate would, through other descriptors: after
 *                          N/4 rounds LOG is renamed to LOG.1 and an empty LOG created
 *                          (the program keeps writing to LOG.1); after N/2 the program
 *                          reopens LOG on the same descriptor number (as on SIGHUP);
 *                          after 3N/4 LOG is truncated to 0 (copytruncate)
 *   tmpl_subject flood N   N distinct messages through one wrapper site, then one
 *                          1 MB line, binary bytes and bytes that are not UTF-8 on fd
 *                          2; prints its peak resident size (kB) on stdout
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

__attribute__((noinline, format(printf, 2, 3))) static void logmsg(int pri, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	syslog(pri, "%s", buf); /* one site for every message */
}

/* A line to fd 2 in one write(2), as PostgreSQL's write_console does. */
__attribute__((noinline, format(printf, 1, 2))) static void errline(const char *fmt, ...)
{
	char buf[1 << 12];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0 && write(2, buf, (size_t)n) < 0)
		exit(3);
}

__attribute__((noinline, format(printf, 2, 3))) static void fdline(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n) != n)
		exit(3);
}

static void three_lines(int fd, unsigned long i)
{
	fdline(fd, "2026-11-26 10:00:%02lu.%03lu UTC [%lu] LOG:  request %lu done\n", i % 60,
	       i % 1000, 100 + i, i);
	fdline(fd, "2026-11-26 10:00:%02lu.%03lu UTC [%lu] DEBUG:  lookup %lu\n", i % 60, i % 1000,
	       100 + i, i);
	fdline(fd, "2026-11-26 10:00:%02lu.%03lu UTC [%lu] WARNING:  slow %lu ms\n", i % 60,
	       i % 1000, 100 + i, i);
}

static int fifo_mode(const char *log, unsigned long n)
{
	int fd = open(log, O_WRONLY); /* blocks until the test's reader has it open */
	if (fd < 0)
		return 3;
	for (unsigned long i = 0; i < n; i++)
		three_lines(fd, i);
	return close(fd) < 0 ? 3 : 0;
}

/* What logrotate does to a program's log file, done through other descriptors. */
static int rotate_mode(const char *log, unsigned long n)
{
	char old[4096];
	snprintf(old, sizeof old, "%s.1", log);
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return 3;
	for (unsigned long i = 0; i < n; i++) {
		if (i == n / 4) { /* renamed away, an empty file created in its place */
			int nf = -1;
			if (rename(log, old) < 0 ||
			    (nf = open(log, O_WRONLY | O_CREAT, 0644)) < 0 || close(nf) < 0)
				return 3;
		} else if (i == n / 2) { /* the program reopens its log (SIGHUP) */
			int nf = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
			if (nf < 0 || dup2(nf, fd) < 0 || close(nf) < 0)
				return 3;
		} else if (i == 3 * n / 4) { /* copytruncate */
			if (truncate(log, 0) < 0)
				return 3;
		}
		three_lines(fd, i);
	}
	return close(fd) < 0 ? 3 : 0;
}

static int log_file_mode(const char *log, const char *other, unsigned long n)
{
	int fl = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	int fo = open(other, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fl < 0 || fo < 0)
		return 3;
	for (unsigned long i = 0; i < n; i++) {
		if (i == n / 2) { /* rotation: the same descriptor number, another file */
			char old[4096];
			snprintf(old, sizeof old, "%s.1", log);
			int nf = -1;
			if (rename(log, old) < 0 ||
			    (nf = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0 ||
			    dup2(nf, fl) < 0 || close(nf) < 0)
				return 3;
		}
		three_lines(fl, i);
		three_lines(fo, i);
	}
	return 0;
}

static void word(char *out, unsigned long i) /* a distinct word of letters per i */
{
	int k = 0;
	do {
		out[k++] = (char)('a' + i % 26);
		i /= 26;
	} while (i);
	out[k] = 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "file"))
		return log_file_mode(argv[2], argv[3], strtoul(argv[4], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "fifo"))
		return fifo_mode(argv[2], strtoul(argv[3], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "rotate"))
		return rotate_mode(argv[2], strtoul(argv[3], NULL, 10));
	unsigned long n = argc >= 3 ? strtoul(argv[2], NULL, 10) : 0;
	if (argc < 3 || n < 1) {
		fprintf(stderr, "usage: tmpl_subject wrap|flood N | file LOG OTHER N | fifo|rotate "
		                "LOG N\n");
		return 2;
	}
	openlog("tmpl-subject", LOG_PERROR, LOG_USER);
	if (!strcmp(argv[1], "wrap")) {
		for (unsigned long i = 0; i < n; i++) {
			logmsg(
			    LOG_INFO,
			    "checkpoint complete: wrote %lu buffers (%lu.%lu%%); sync=%lu.%03lu s",
			    i * 7, i % 100, i % 10, i % 3, i * 13 % 1000);
			logmsg(LOG_DEBUG, "connection from 10.0.%lu.%lu port %lu user \"u%lu\"",
			       i % 256, i * 3 % 256, 40000 + i, i);
			logmsg(LOG_WARNING, "WARNING: file /var/lib/x/%lu.dat is 0x%lx bytes", i,
			       i * 4096);
			errline("2026-11-26 10:%02lu:%02lu.%03lu UTC [%lu] LOG:  statement took "
			        "%lu ms\n",
			        i % 60, i * 7 % 60, i % 1000, 1000 + i, i);
			errline(
			    "2026-11-26 10:%02lu:%02lu.%03lu UTC [%lu] DEBUG:  cache miss %lu\n",
			    i % 60, i * 7 % 60, i % 1000, 1000 + i, i);
			errline(
			    "2026-11-26 10:%02lu:%02lu.%03lu UTC [%lu] WARNING:  disk %lu%% full\n",
			    i % 60, i * 7 % 60, i % 1000, 1000 + i, 50 + i % 50);
			char num[32];
			int k = snprintf(num, sizeof num, "%lu", i);
			struct iovec iov[3] = {
			    {"vector part ", 12}, {num, (size_t)k}, {" done\n", 6}};
			if (writev(2, iov, 3) < 0)
				return 3;
		}
	} else if (!strcmp(argv[1], "flood")) {
		char w[32];
		for (unsigned long i = 0; i < n; i++) {
			word(w, i);
			logmsg(LOG_DEBUG, "distinct %s", w);
		}
		size_t big = 1 << 20;
		char *line = malloc(big + 1);
		if (!line)
			return 3;
		for (size_t i = 0; i < big; i++)
			line[i] = "long line "[i % 10];
		line[big] = '\n';
		if (write(2, line, big + 1) < 0)
			return 3;
		srand(7);
		for (size_t i = 0; i < big; i++)
			line[i] = (char)rand();
		if (write(2, line, 65536) < 0) /* binary, newlines and NULs included */
			return 3;
		static const char bad[] = "bad \xff\xfe utf8 \xc3\x28 here\n";
		if (write(2, bad, sizeof bad - 1) < 0)
			return 3;
		free(line);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("maxrss %ld\n", ru.ru_maxrss);
	} else {
		return 2;
	}
	closelog();
	return 0;
}
