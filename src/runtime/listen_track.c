/* The consistency rules of track.c kept once per listener (docs/consistency.md "Several
 * listeners"): where track.c keeps one bit, a mask (bit i: listener i). An entity's masks
 * are in the high half of its `rep` (creation reported, load reported, suspension
 * reported); a thread's lock table has, per lock, the masks of its reported acquires (per
 * nesting depth) and of its reported wait. Each decision also goes with the event to its
 * commit (vg__listen_decide). Nothing here allocates or locks. */
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
static unsigned live_mask(const vg_entity *e)
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
	live_excluded |= ~live_mask(e) & ALL_LISTENERS;
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
		report = wanted & live_mask(e) & ~SUSPENDED(r);
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
		return wanted & live_mask(e);
	}
}

/* A lock the thread holds or waits for: acq[i] bit d, the (d+1)-th nested acquire was
 * reported to listener i. */
struct lock_state {
	const vg_entity *lock;
	uint32_t depth;
	uint32_t acq[VG_LISTENERS_MAX];
	uint8_t waiting, wait_rep;
};

#define MAX_LOCKS 32
static __thread struct lock_state locks[MAX_LOCKS] __attribute__((tls_model("initial-exec")));
static __thread unsigned nlocks __attribute__((tls_model("initial-exec")));

static struct lock_state *lock_find(const vg_entity *l, int add)
{
	for (unsigned i = 0; i < nlocks; i++)
		if (locks[i].lock == l)
			return &locks[i];
	if (!add || nlocks == MAX_LOCKS)
		return NULL;
	struct lock_state *s = &locks[nlocks++];
	*s = (struct lock_state){.lock = l};
	return s;
}

static void lock_drop_if_idle(struct lock_state *s)
{
	if (s->depth || s->waiting)
		return;
	*s = locks[--nlocks];
}

static unsigned lock_op(enum vg_op op, const vg_entity *l, unsigned wanted)
{
	struct lock_state *s;
	unsigned report = 0;
	switch (op) {
	case VG_OP_ACQUIRE:
		s = lock_find(l, 1);
		if (!s) { /* more locks held at once than tracked: never reported */
			vg__count_discarded(1);
			return 0;
		}
		if (s->depth < 32) {
			report = wanted & live_mask(l) & ~(s->waiting ? s->wait_rep : 0u);
			for (int i = 0; i < VG_LISTENERS_MAX; i++)
				if (report >> i & 1u)
					s->acq[i] |= 1u << s->depth;
		}
		s->depth++;
		return report;
	case VG_OP_RELEASE:
		s = lock_find(l, 0);
		if (!s || !s->depth)
			return 0; /* its acquire was not tracked: it cannot have been reported */
		s->depth--;
		if (s->depth < 32)
			for (int i = 0; i < VG_LISTENERS_MAX; i++)
				if (s->acq[i] >> s->depth & 1u) {
					report |= 1u << i;
					s->acq[i] &= ~(1u << s->depth);
				}
		lock_drop_if_idle(s);
		return report;
	case VG_OP_WAIT_BEGIN:
		s = lock_find(l, 1);
		if (!s) {
			vg__count_discarded(1);
			return 0;
		}
		if (s->waiting)
			return 0;
		s->waiting = 1;
		s->wait_rep = (uint8_t)(wanted & live_mask(l));
		return s->wait_rep;
	default: /* VG_OP_WAIT_END */
		s = lock_find(l, 0);
		if (!s || !s->waiting)
			return 0;
		report = s->wait_rep;
		s->waiting = s->wait_rep = 0;
		lock_drop_if_idle(s);
		return report;
	}
}

unsigned vg__listen_track_op(enum vg_op op, vg_entity *e, unsigned wanted)
{
	unsigned report = 0;
	if (e)
		report = op >= VG_OP_ACQUIRE && op <= VG_OP_WAIT_END ? lock_op(op, e, wanted)
		                                                     : entity_op(op, e, wanted);
	vg__listen_decide(report);
	return report;
}

void vg__listen_track_thread_exit(void)
{
	nlocks = 0;
	live_excluded = 0;
}

/* The fork child's listeners have been told nothing of the locks it inherited. */
void vg__listen_track_after_fork(void)
{
	for (unsigned i = 0; i < nlocks; i++) {
		for (int j = 0; j < VG_LISTENERS_MAX; j++)
			locks[i].acq[j] = 0;
		locks[i].wait_rep = 0;
	}
}
