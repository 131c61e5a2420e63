/* The consistency rules of track.c kept once per listener (docs/consistency.md "Several
 * listeners"): where track.c keeps one bit, a mask (bit i: listener i). An entity's masks
 * are in the high half of its `rep` (creation reported, load reported, suspension
 * reported); the locks are track.c's table, with masks (vg__track_lock_listen). Each
 * decision also goes with the event to its commit (vg__listen_decide). Nothing here
 * allocates or locks. */
#define _GNU_SOURCE
#include <stdint.h>

#include "internal.h"

#define ALL_LISTENERS ((1u << VG_LISTENERS_MAX) - 1u)
#define CREATED(r) ((unsigned)((r) >> 32) & 0xffu)
#define LOAD_REP(r) ((unsigned)((r) >> 40) & 0xffu)
#define SUSPENDED(r) ((unsigned)((r) >> 48) & 0xffu)

static uint64_t rep_word(uint32_t low, unsigned created, unsigned load_rep, unsigned susp)
{
	return (uint64_t)vg__rep_bits(low | VG_REP_TRACKED | VG_REP_LISTENED) |
	       (uint64_t)created << 32 | (uint64_t)load_rep << 40 | (uint64_t)susp << 48;
}

/* This image's view of e's rep (0: another image's, or never tracked per listener). */
static uint64_t rep_of(const vg_entity *e)
{
	uint64_t r = atomic_load_explicit(&e->rep, memory_order_relaxed);
	if (!((uint32_t)r & VG_REP_LISTENED) ||
	    ((uint32_t)r >> VG_REP_EPOCH_SHIFT) != vg__rep_epoch)
		return 0;
	return r;
}

/* The listeners that may refer to e (rule 2). */
unsigned vg__listen_live_mask(const vg_entity *e)
{
	if (!e)
		return ALL_LISTENERS;
	uint64_t r = rep_of(e);
	unsigned m = CREATED(r);
	if ((uint32_t)r & VG_REP_LOADED)
		m &= LOAD_REP(r);
	return m;
}

/* Listeners ruled out by the entities named so far for the coming event. */
static __thread unsigned live_excluded __attribute__((tls_model("initial-exec")));

int vg__live_listen(const vg_entity *e)
{
	live_excluded |= ~vg__listen_live_mask(e) & ALL_LISTENERS;
	if (live_excluded == ALL_LISTENERS) {
		live_excluded = 0; /* the event is given up: the next one starts afresh */
		return 0;
	}
	return 1;
}

unsigned vg__listen_take_live(void)
{
	unsigned m = ~live_excluded & ALL_LISTENERS;
	live_excluded = 0;
	return m;
}

void vg__listen_track_created(vg_entity *e, unsigned reported)
{
	atomic_store_explicit(&e->rep, rep_word(0, reported, 0, 0), memory_order_relaxed);
	vg__listen_decide(reported);
}

static unsigned entity_op(enum vg_op op, vg_entity *e, unsigned wanted)
{
	uint64_t r = rep_of(e);
	unsigned created = CREATED(r), report;
	switch (op) {
	case VG_OP_LOAD:
		report = wanted & created;
		atomic_store_explicit(
		    &e->rep, rep_word(VG_REP_LOADED, created, LOAD_REP(r) | report, SUSPENDED(r)),
		    memory_order_relaxed);
		return report;
	case VG_OP_RECLAIM: /* rules 1 and 3: whatever the filters say now */
		atomic_store_explicit(&e->rep, rep_word(0, 0, 0, 0), memory_order_relaxed);
		return created;
	case VG_OP_RENAME:
		return wanted & created;
	case VG_OP_SUSPEND:
		report = wanted & vg__listen_live_mask(e) & ~SUSPENDED(r);
		if (report)
			atomic_fetch_or_explicit(&e->rep, (uint64_t)report << 48,
			                         memory_order_relaxed);
		return report;
	case VG_OP_RESUME:
		report = SUSPENDED(r);
		if (report)
			atomic_fetch_and_explicit(&e->rep, ~((uint64_t)0xff << 48),
			                          memory_order_relaxed);
		return report;
	default:
		return wanted & vg__listen_live_mask(e);
	}
}

unsigned vg__listen_track_op(enum vg_op op, vg_entity *e, unsigned wanted)
{
	unsigned report = 0;
	if (e)
		report = op >= VG_OP_ACQUIRE && op <= VG_OP_WAIT_END
		             ? vg__track_lock_listen(op, e, wanted & vg__listen_live_mask(e))
		             : entity_op(op, e, wanted);
	vg__listen_decide(report);
	return report;
}

void vg__listen_track_thread_exit(void)
{
	live_excluded = 0;
}
