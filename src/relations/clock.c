/* The Clock relations (Snodgrass 1988, section 4): event relations without explicit
 * attributes whose ticks are used for sampling and periodic reports. They are not
 * recorded: they are made from the trace's time span on request. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "relations/columns.h"

const struct vgq_relation *vgq_database_clock(struct vgq_database *db, int64_t tick_ns,
                                              uint64_t every, char *err, size_t errsize)
{
	if (tick_ns < 1 || every < 1) {
		snprintf(err, errsize, "Clock: the base tick and the tick count must be positive");
		return NULL;
	}
	char name[48];
	if (every == 1)
		snprintf(name, sizeof name, "Clock");
	else
		snprintf(name, sizeof name, "Clock[%" PRIu64 "]", every);
	struct vgq_db_internal *in = db->internal;
	for (size_t i = 0; i < in->nclocks; i++)
		if (in->clock_ticks[i] == tick_ns && !strcmp(in->clocks[i]->name, name))
			return in->clocks[i];

	int64_t origin = in->has_clock_origin ? in->clock_origin : db->first;
	uint64_t span = db->events && db->last > origin ? (uint64_t)(db->last - origin) : 0;
	uint64_t n = 0;
	if (db->events && db->last >= origin) {
		if ((uint64_t)tick_ns > UINT64_MAX / every ||
		    span / ((uint64_t)tick_ns * every) >= VGQ_CLOCK_MAX) {
			snprintf(
			    err, errsize,
			    "%s: more than %llu ticks over the trace's %.3f s (use a larger base "
			    "tick)",
			    name, (unsigned long long)VGQ_CLOCK_MAX, (double)span / 1e9);
			return NULL;
		}
		n = span / ((uint64_t)tick_ns * every) + 1;
	}
	struct vgq_relation *r =
	    vgq_relation_new(vgq_pool_intern(in->pool, name, strlen(name)), VGQ_REL_EVENT);
	/* in unsigned arithmetic: the period may be past int64 (then n is 1), k * period is
	 * at most the span */
	uint64_t period = (uint64_t)tick_ns * every;
	for (uint64_t k = 0; k < n; k++)
		vgq_relation_append(r, (int64_t)((uint64_t)origin + k * period));
	vgq_relation_finish(r, db->last);
	in->clocks = vgq_xrealloc(in->clocks, in->nclocks + 1, sizeof *in->clocks);
	in->clock_ticks = vgq_xrealloc(in->clock_ticks, in->nclocks + 1, sizeof *in->clock_ticks);
	in->clocks[in->nclocks] = r;
	in->clock_ticks[in->nclocks++] = tick_ns;
	return r;
}

void vgq_database_set_clock_origin(struct vgq_database *db, int64_t origin)
{
	struct vgq_db_internal *in = db->internal;
	in->has_clock_origin = true;
	in->clock_origin = origin;
}
