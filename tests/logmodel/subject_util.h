/* What the synthetic subjects of tests/logmodel share: a deterministic random generator
 * (the same seed gives the same decisions in a baseline and a changed run) and waits of a
 * given length. A wait sleeps until an absolute deadline (timer slack 1 ns) rather than
 * spinning: on a loaded machine a spinning process is descheduled for whole time slices
 * (milliseconds) in the middle of its intervals, while a process that mostly sleeps is
 * woken promptly, so its intervals stay what the subject asked for. */
#ifndef LOGMODEL_SUBJECT_UTIL_H
#define LOGMODEL_SUBJECT_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "../test_rand.h"

static uint64_t lm_rng = 88172645463325252ull;

static inline void lm_seed(uint64_t s)
{
	lm_rng = s * 0x9E3779B97F4A7C15ull | 1;
}

/* xorshift64: uniform in [0, 1) */
static inline double lm_uniform(void)
{
	return (double)(test_xorshift64(&lm_rng) >> 11) / 9007199254740992.0;
}

static inline uint64_t lm_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void lm_work_us(double us)
{
	static int slack_set;
	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		slack_set = 1;
	}
	uint64_t end = lm_now_ns() + (uint64_t)(us * 1000);
	struct timespec ts = {(time_t)(end / 1000000000u), (long)(end % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

/* "--name value" pairs after the mode; unknown names are an error. */
static inline double lm_arg(int argc, char **argv, const char *name, double dflt)
{
	for (int i = 2; i + 1 < argc; i += 2)
		if (!__builtin_strcmp(argv[i], name))
			return atof(argv[i + 1]);
	return dflt;
}

#endif
