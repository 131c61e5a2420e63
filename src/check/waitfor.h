/* The wait-for graph of a trace's reported lock operations (docs/consistency.md, "Wait-for
 * graph"): a thread waiting for a lock points at the threads holding it. Fed with the
 * checker's lock events (check.h), it finds each cycle when it forms (a thread begins
 * waiting, or acquires a lock others wait for) and says whether it still stands at the
 * end of the trace: a deadlock. Memory: the threads and locks of the trace, and the
 * cycles found. */
#ifndef VIGIL_CHECK_WAITFOR_H
#define VIGIL_CHECK_WAITFOR_H

#include <stdbool.h>
#include <stddef.h>

#include "check/check.h"

struct vgc_wf;

/* One edge of a cycle: `thread` waits (since `since`) for `lock`, held by the next
 * step's thread. */
struct vgc_wf_step {
	const char *thread, *lock;
	double since;
};

struct vgc_wf_cycle {
	double t;      /* when it formed */
	bool standing; /* every wait and hold of it is still open at the end of the trace */
	size_t nsteps;
	const struct vgc_wf_step *steps;
};

struct vgc_wf *vgc_wf_new(void);
void vgc_wf_free(struct vgc_wf *w);
/* Feeds one lock event; false if memory ran out (the graph is then incomplete). */
bool vgc_wf_event(struct vgc_wf *w, const struct vgc_lock_event *e);
/* The cycles found, in the order they formed (valid until vgc_wf_free). */
size_t vgc_wf_cycles(struct vgc_wf *w, const struct vgc_wf_cycle **out);

#endif
