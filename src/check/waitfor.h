/* The wait-for graph of a trace's reported lock operations (docs/consistency.md, "Wait-for
 * graph"): a thread waiting for a lock points at the threads holding it. Fed with the
 * checker's lock events (check.h), it finds each cycle when it forms (a thread begins
 * waiting, or acquires a lock others wait for) and says whether it still stands now (at
 * the end of the trace once every event was fed): a deadlock. It can also keep every
 * edge with the interval during which it held (the WaitFor relation of src/relations), and
 * shows its current state (the graph at an instant: feed the events up to it).
 * Memory: the threads and locks of the trace, the cycles found, and the edges if kept. */
#ifndef VIGIL_CHECK_WAITFOR_H
#define VIGIL_CHECK_WAITFOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "check/check.h"

struct vgc_wf;

/* A thread or a lock of the graph, as the lock events named it. */
struct vgc_wf_node {
	uint64_t id, gen;
	uint32_t image;   /* the image of its first lock event (vgt_image_at index) */
	const char *kind; /* "thread", or the lock's entity kind */
	const char *name; /* or NULL */
	const char *text; /* "thread 42 gen 0", "Lock 0x1000 'm0' gen 0" */
};

/* One edge of a cycle: `thread` waits (since `since`) for `lock`, held by the next
 * step's thread. Threads and locks are indexes of vgc_wf_thread / vgc_wf_lock. */
struct vgc_wf_step {
	const char *thread, *lock;
	double since;
	int64_t since_ts;
	size_t thread_index, lock_index;
};

struct vgc_wf_cycle {
	double t;      /* when it formed */
	int64_t ts;    /* the same, absolute ns */
	bool standing; /* every wait and hold of it is still open now */
	size_t nsteps;
	const struct vgc_wf_step *steps;
};

/* A wait-for edge: `waiter` waits for `lock`, held by `holder`, over [from, to); `open`:
 * it still holds now (`to` is then the time of the last event fed). */
struct vgc_wf_edge {
	size_t waiter, holder, lock;
	int64_t from, to;
	bool open;
};

/* What holds now: `thread` holds `lock` (count nested acquires) since `since`. */
struct vgc_wf_hold {
	size_t thread, lock;
	unsigned count;
	int64_t since;
};

struct vgc_wf *vgc_wf_new(void);
void vgc_wf_free(struct vgc_wf *w);
/* Keep every edge (vgc_wf_edges); call before the first event. */
void vgc_wf_keep_edges(struct vgc_wf *w);
/* Feeds one lock event; false if memory ran out (the graph is then incomplete). */
bool vgc_wf_event(struct vgc_wf *w, const struct vgc_lock_event *e);
/* The cycles found, in the order they formed (valid until the next call or vgc_wf_free). */
size_t vgc_wf_cycles(struct vgc_wf *w, const struct vgc_wf_cycle **out);
/* The edges kept, in the order they appeared (valid until the next event); an edge that
 * closed at the instant it opened (from == to, not open) held for no time. */
size_t vgc_wf_edges(const struct vgc_wf *w, const struct vgc_wf_edge **out);

/* The graph now: its threads and locks (every one ever fed), each thread's open wait
 * (the lock's index, or -1; since: when it began) and the holds. */
size_t vgc_wf_nthreads(const struct vgc_wf *w);
size_t vgc_wf_nlocks(const struct vgc_wf *w);
const struct vgc_wf_node *vgc_wf_thread(const struct vgc_wf *w, size_t i);
const struct vgc_wf_node *vgc_wf_lock(const struct vgc_wf *w, size_t i);
long vgc_wf_waits_for(const struct vgc_wf *w, size_t thread, int64_t *since);
size_t vgc_wf_holds(const struct vgc_wf *w, const struct vgc_wf_hold **out);

/* The graph now, as SVG (waitfor_svg.c): feed the events up to the instant `at_ts`
 * (absolute ns; at_t: the same in seconds since the first event, for the labels) first.
 * 0, or -1 if memory ran out or writing failed. */
int vgc_wf_svg(struct vgc_wf *w, int64_t at_ts, double at_t, FILE *f);

#endif
