/* Timer-driven reporting windows (docs/consistency.md "Windows"): reporting on for D
 * every P (VIGIL_REPORT_WINDOW=on:50ms,every:1s, or `report window ...` on the control
 * channel). A thread of the runtime (signals blocked, never records) sleeps to each
 * edge and suspends reporting process-wide at the end of a window and resumes it at
 * the start of the next, through vg_report_suspend / vg_report_resume: every edge is
 * as consistent as any suspend or resume (the sequencing rules hold across it). The
 * window's suspension nests with the program's own. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running;         /* the thread exists (in this process) */
	uint64_t on, every;  /* ns; every == 0: no windows */
	uint64_t origin;     /* CLOCK_MONOTONIC ns of the first window's start */
	unsigned generation; /* bumped by every change: the thread starts over */
	int holding;         /* the window's suspension is in force */
} w = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* How finely the window thread's sleeps end: the clock's resolution, or the thread's
 * timer slack (Linux ends a sleep up to that late; 50 µs by default), the larger. */
uint64_t vg__report_window_resolution(void)
{
	struct timespec res = {0, 1};
	clock_getres(CLOCK_MONOTONIC, &res);
	uint64_t r = (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (slack > 0 && (uint64_t)slack > r)
		r = (uint64_t)slack;
	return r;
}

/* "123", then ns, us, ms or s. 0 on a bad value. */
static uint64_t parse_duration(const char *s, size_t len)
{
	uint64_t v = 0;
	size_t i = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > UINT64_MAX / 10 - 9)
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0)
		return 0;
	const char *u = s + i;
	size_t ul = len - i;
	uint64_t mul = ul == 2 && !strncmp(u, "ns", 2)   ? 1
	               : ul == 2 && !strncmp(u, "us", 2) ? 1000
	               : ul == 2 && !strncmp(u, "ms", 2) ? 1000000
	               : ul == 1 && u[0] == 's'          ? 1000000000
	                                                 : 0;
	if (!mul || v > UINT64_MAX / mul)
		return 0;
	return v * mul;
}

int vg__report_window_parse(const char *text, uint64_t *on, uint64_t *every, char *err,
                            size_t errsize)
{
	*on = *every = 0;
	if (!strcmp(text, "off") || !*text)
		return 0;
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ",");
		const char *colon = memchr(p, ':', len);
		uint64_t v = colon ? parse_duration(colon + 1, len - (size_t)(colon + 1 - p)) : 0;
		size_t klen = colon ? (size_t)(colon - p) : 0;
		if (v && klen == 2 && !strncmp(p, "on", 2))
			*on = v;
		else if (v && klen == 5 && !strncmp(p, "every", 5))
			*every = v;
		else
			goto bad;
		p += len + (p[len] == ',');
	}
	if (!*on || !*every)
		goto bad;
	if (*on >= *every) {
		snprintf(err, errsize, "the window (on) must be shorter than its period (every)");
		return -1;
	}
	uint64_t res = vg__report_window_resolution();
	if (*on < res || *every - *on < res) {
		snprintf(err, errsize,
		         "a window or the gap between two is shorter than the clock's resolution "
		         "here (%" PRIu64 " ns: the timer slack of the thread that times the "
		         "windows)",
		         res);
		return -1;
	}
	return 0;
bad:
	snprintf(err, errsize,
	         "expected on:DURATION,every:DURATION (e.g. on:50ms,every:1s; units ns, us, "
	         "ms, s) or off");
	return -1;
}

static void hold_locked(int on)
{
	if (on == w.holding)
		return;
	w.holding = on;
	if (on)
		vg_report_suspend();
	else
		vg_report_resume();
}

static void *window_main(void *arg)
{
	(void)arg;
	syscall(SYS_prctl, PR_SET_NAME, "vigil-window", 0, 0, 0); /* not through our hook */
	pthread_mutex_lock(&w.mu);
	for (;;) {
		while (!w.every)
			pthread_cond_wait(&w.cv, &w.mu);
		unsigned gen = w.generation;
		uint64_t now = mono_ns();
		uint64_t phase = (now - w.origin) % w.every;
		int inside = phase < w.on;
		hold_locked(!inside);
		uint64_t next = now - phase + (inside ? w.on : w.every);
		struct timespec until = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
		while (w.generation == gen && mono_ns() < next)
			if (pthread_cond_timedwait(&w.cv, &w.mu, &until) == ETIMEDOUT)
				break;
	}
	return NULL;
}

static int start_thread_locked(void)
{
	if (w.running)
		return 0;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cv, &ca);
	pthread_condattr_destroy(&ca);
	if (vg__control_start_thread(window_main) != 0)
		return -1;
	w.running = 1;
	return 0;
}

int vg__report_window_set(uint64_t on, uint64_t every, char *err, size_t errsize)
{
	pthread_mutex_lock(&w.mu);
	w.on = on;
	w.every = every;
	w.origin = mono_ns(); /* the first window starts now, open */
	w.generation++;
	if (!every)
		hold_locked(0);
	int rc = 0;
	if (every && start_thread_locked() < 0) {
		snprintf(err, errsize, "cannot start the window thread");
		w.every = 0;
		rc = -1;
	}
	if (w.running)
		pthread_cond_signal(&w.cv);
	pthread_mutex_unlock(&w.mu);
	return rc;
}

void vg__report_window_init(void)
{
	const char *text = getenv("VIGIL_REPORT_WINDOW");
	if (!text || !*text || !vg__rt.recording)
		return;
	uint64_t on, every;
	char err[256];
	if (vg__report_window_parse(text, &on, &every, err, sizeof err) < 0 ||
	    vg__report_window_set(on, every, err, sizeof err) < 0)
		vg__warn("VIGIL_REPORT_WINDOW=%s: %s; no windows, reporting as configured", text,
		         err);
}

/* The child has no window thread; it keeps the parent's windows (and the suspension
 * the window held, which its reporting state inherited). */
void vg__report_window_after_fork(void)
{
	pthread_mutex_init(&w.mu, NULL);
	w.running = 0;
	if (w.every) {
		pthread_mutex_lock(&w.mu);
		if (start_thread_locked() < 0)
			w.every = 0;
		pthread_mutex_unlock(&w.mu);
	}
}
