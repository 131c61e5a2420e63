/* The build's and the cache write's steps timed (build_phases.h). */
#include <time.h>

#include "relations/build_phases.h"

static uint64_t spent[VGQ_NPHASES]; /* atomic adds: a build may run on any thread */

static const char *const names[VGQ_NPHASES] = {"open", "read", "merge", "pair", "aside", "finish"};

uint64_t vgq_phase_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void vgq_phase_lap(enum vgq_phase p, uint64_t *since)
{
	uint64_t now = vgq_phase_clock();
	__atomic_fetch_add(&spent[p], now - *since, __ATOMIC_RELAXED);
	*since = now;
}

static uint64_t units, ranges;

void vgq_phase_units(size_t n, size_t nranges)
{
	__atomic_store_n(&units, (uint64_t)n, __ATOMIC_RELAXED);
	__atomic_store_n(&ranges, (uint64_t)nranges, __ATOMIC_RELAXED);
}

uint64_t vgq_phase_ranges_read(void)
{
	return __atomic_load_n(&ranges, __ATOMIC_RELAXED);
}

uint64_t vgq_phase_units_read(void)
{
	return __atomic_load_n(&units, __ATOMIC_RELAXED);
}

void vgq_phases_json(FILE *f)
{
	fputs("\"phases\":{", f);
	for (int p = 0; p < VGQ_NPHASES; p++)
		fprintf(f, "%s\"%s_ns\":%llu", p ? "," : "", names[p],
		        (unsigned long long)__atomic_load_n(&spent[p], __ATOMIC_RELAXED));
	fprintf(f, ",\"units\":%llu,\"ranges\":%llu}", (unsigned long long)vgq_phase_units_read(),
	        (unsigned long long)vgq_phase_ranges_read());
}
