/* bench/sentinel_tracer.c: Sentinel's in-memory tracing module as its paper describes it
 * (sentinel_tracer.h), as a peer to measure log capture against. Sized for a benchmark:
 * fixed tables, a process that logs from a few sites; a full table drops the event. */
#define _POSIX_C_SOURCE 200809L
#include "sentinel_tracer.h"

#include <stdlib.h>
#include <time.h>

#define EVENTS 256     /* event table slots (power of two) */
#define NEXT 8         /* transitions kept per event */
#define RESERVOIR 1000 /* samples per transition (the paper's reservoir) */

struct transition {
	int32_t to; /* event index, -1: free */
	uint64_t count;
	uint32_t kept;     /* samples in the reservoir */
	uint64_t *samples; /* RESERVOIR of them, allocated on first use */
};

struct event {
	const char *file; /* NULL: free slot */
	int line;
	uint64_t hits;
	struct transition next[NEXT];
};

struct table {
	struct event ev[EVENTS];
	int32_t last; /* the thread's previous event, -1 before the first */
	int timed;    /* the transition out of `last` is timed: last_ns is its time */
	uint64_t last_ns;
	uint64_t rng;
	uint64_t events, transitions;
};

static _Thread_local struct table *tab;

static struct table *table(void)
{
	if (!tab) {
		tab = calloc(1, sizeof *tab);
		if (!tab)
			abort();
		tab->last = -1;
		tab->rng = 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)tab;
		for (int i = 0; i < EVENTS; i++)
			for (int j = 0; j < NEXT; j++)
				tab->ev[i].next[j].to = -1;
	}
	return tab;
}

static uint64_t next_rand(struct table *t)
{
	t->rng ^= t->rng << 13, t->rng ^= t->rng >> 7, t->rng ^= t->rng << 17;
	return t->rng;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The slot of (file, line): hashed on the file name's address and the line, as __FILE__
 * is one string per source file (cheaper than hashing its characters). */
static int32_t lookup(struct table *t, const char *file, int line)
{
	uint64_t h = ((uint64_t)(uintptr_t)file * 0x9e3779b97f4a7c15u) ^
	             (uint64_t)line * 0xff51afd7ed558ccdu;
	for (uint32_t i = 0; i < EVENTS; i++) {
		uint32_t k = ((uint32_t)(h >> 40) + i) & (EVENTS - 1);
		struct event *e = &t->ev[k];
		if (e->file == file && e->line == line)
			return (int32_t)k;
		if (!e->file) {
			e->file = file;
			e->line = line;
			return (int32_t)k;
		}
	}
	return -1;
}

/* Into the reservoir; when it is full, in place of a random sample. */
static void keep(struct table *t, struct transition *tr, uint64_t ns)
{
	if (!tr->samples && !(tr->samples = malloc(RESERVOIR * sizeof *tr->samples)))
		return;
	if (tr->kept < RESERVOIR)
		tr->samples[tr->kept++] = ns;
	else
		tr->samples[next_rand(t) % RESERVOIR] = ns;
}

void sentinel_record_event(const char *file, int line)
{
	struct table *t = table();
	uint64_t now = 0;
	int32_t cur = lookup(t, file, line);
	if (cur < 0)
		return;
	t->ev[cur].hits++;
	t->events++;
	if (t->last >= 0) {
		struct event *prev = &t->ev[t->last];
		for (int j = 0; j < NEXT; j++) {
			struct transition *tr = &prev->next[j];
			if (tr->to == cur || tr->to < 0) {
				tr->to = cur;
				tr->count++;
				t->transitions++;
				if (t->timed) {
					now = now_ns();
					keep(t, tr, now - t->last_ns);
				}
				break;
			}
		}
	}
	/* "Rather than obtaining a timestamp for every event transition, Sentinel samples a
	 * subset": the transition out of this event is timed with probability min(N / k, 1),
	 * k the times this event was seen; only then is its start time taken. */
	uint64_t k = t->ev[cur].hits;
	t->timed = k <= RESERVOIR || next_rand(t) % k < RESERVOIR;
	t->last = cur;
	if (t->timed)
		t->last_ns = now ? now : now_ns();
}

uint64_t sentinel_events(void)
{
	return table()->events;
}

uint64_t sentinel_transitions(void)
{
	return table()->transitions;
}
