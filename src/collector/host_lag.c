/* Per-host lag for vigild --metrics (metrics.h, docs/export.md): for each host that sent
 * data, the time of the newest event vigild received from it (on the host's clock, made
 * wall-clock time by the trace clock's offset) and how late its latest data frame
 * arrived: vigild's wall clock on receipt minus the newest event of that frame. The poll
 * loop writes, the HTTP thread reads: one mutex. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "vigild.h"

struct host_lag {
	char host[VGD_NAME_MAX + 1];
	int64_t newest_ns; /* the newest event received, ns since the epoch */
	int64_t lag_ns;    /* of the latest frame; negative: the host's clock is ahead */
};

static struct host_lag hosts[VGD_MAX_LAG_HOSTS];
static size_t nhosts;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void vgd_metrics_host_data(const char *host, int64_t newest_event_ns)
{
	int64_t now = wall_ns();
	pthread_mutex_lock(&lock);
	size_t i = 0;
	while (i < nhosts && strcmp(hosts[i].host, host))
		i++;
	if (i == nhosts && nhosts < VGD_MAX_LAG_HOSTS) {
		snprintf(hosts[i].host, sizeof hosts[i].host, "%s", host);
		hosts[i].newest_ns = newest_event_ns;
		nhosts++;
	}
	if (i < nhosts) {
		if (newest_event_ns > hosts[i].newest_ns)
			hosts[i].newest_ns = newest_event_ns;
		hosts[i].lag_ns = now - newest_event_ns;
	}
	pthread_mutex_unlock(&lock);
}

/* A label value in the text format: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
}

/* ns as seconds, exactly (no double rounding of epoch nanoseconds). */
static void seconds(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	fprintf(f, "%s%" PRIu64 ".%09" PRIu64 "\n", ns < 0 ? "-" : "", a / 1000000000u,
	        a % 1000000000u);
}

void vgd_metrics_host_lines(FILE *f)
{
	static const struct {
		const char *name, *help;
	} ms[] = {
	    {"vigild_host_lag_seconds",
	     "How late the host's latest data arrived: vigild's wall clock on receipt minus the "
	     "newest event in it (the host's clock; negative if that clock is ahead)."},
	    {"vigild_host_newest_event_timestamp_seconds",
	     "The newest event received from the host, seconds since the epoch on the host's "
	     "clock (time() minus it: how long since the host last sent an event)."},
	};
	pthread_mutex_lock(&lock);
	for (size_t m = 0; m < 2; m++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", ms[m].name, ms[m].help, ms[m].name);
		for (size_t i = 0; i < nhosts; i++) {
			fprintf(f, "%s{host=\"", ms[m].name);
			label(f, hosts[i].host);
			fputs("\"} ", f);
			seconds(f, m == 0 ? hosts[i].lag_ns : hosts[i].newest_ns);
		}
	}
	pthread_mutex_unlock(&lock);
}
