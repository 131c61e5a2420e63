/* What the consistency rules need to know while reporting is off (docs/consistency.md):
 * entity lifetimes in the entity's own `rep` bits, and per thread the locks it holds or
 * waits for. Each op decides here whether it is reported:
 *   rules 1, 3: a reclaim (load, rename) is reported exactly when the creation was;
 *   rule 2:     an activity only on entities that may be referred to (vg_live);
 *   rule 5:     a release / end-wait exactly when its acquire / begin-wait was.
 * Nothing here allocates or locks: a thread's lock table is in its TLS (with several
 * listeners, their part of it is mapped once per thread). */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* A lock the thread holds or waits for. Acquires nest: bit i of `rep` says whether the
 * (i+1)-th nested acquire was reported (deeper ones are never reported). With several
 * listeners, lock_acq[i][l] is listener l's `rep` of locks[i] and `wait_rep` the mask of
 * listeners told of the wait. */
struct lock_state {
	const vg_entity *lock;
	uint32_t depth;
	uint32_t rep;
	uint8_t waiting, wait_rep;
};

#define MAX_LOCKS 32
static __thread struct lock_state locks[MAX_LOCKS] __attribute__((tls_model("initial-exec")));
static __thread unsigned nlocks __attribute__((tls_model("initial-exec")));
/* The listeners' part, mapped on the thread's first lock op while listening: kept out of
 * the static TLS, whose room is small when libvigil is loaded by dlopen (a PostgreSQL
 * module linking it: "cannot allocate memory in static TLS block"). */
typedef uint32_t lock_acq_row[VG_LISTENERS_MAX];
static __thread lock_acq_row *lock_acq __attribute__((tls_model("initial-exec")));

/* locks[i]'s row of the listeners' table, mapping it first if `map`; NULL if none. */
static uint32_t *acq_row(const struct lock_state *s, int map)
{
	if (!lock_acq && map) {
		void *p = mmap(NULL, MAX_LOCKS * sizeof *lock_acq, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			lock_acq = p; /* zeroed: nothing acquired was reported to a listener */
	}
	return lock_acq ? lock_acq[s - locks] : NULL;
}

static struct lock_state *lock_find(const vg_entity *l, int add)
{
	for (unsigned i = 0; i < nlocks; i++)
		if (locks[i].lock == l)
			return &locks[i];
	if (!add || nlocks == MAX_LOCKS)
		return NULL;
	struct lock_state *s = &locks[nlocks++];
	*s = (struct lock_state){.lock = l};
	if (lock_acq)
		memset(lock_acq[s - locks], 0, sizeof *lock_acq);
	return s;
}

static void lock_drop_if_idle(struct lock_state *s)
{
	if (s->depth || s->waiting)
		return;
	--nlocks;
	if (lock_acq)
		memcpy(lock_acq[s - locks], lock_acq[nlocks], sizeof *lock_acq);
	*s = locks[nlocks];
}

void vg__track_created(vg_entity *e, unsigned reported)
{
	if (vg__listening) {
		vg__listen_track_created(e, reported);
		return;
	}
	atomic_store_explicit(&e->rep,
	                      vg__rep_bits(VG_REP_TRACKED | (reported ? VG_REP_REPORTED : 0)),
	                      memory_order_relaxed);
}

static int entity_op(enum vg_op op, vg_entity *e, int wanted)
{
	uint32_t r = vg__rep_now(e);
	switch (op) {
	case VG_OP_LOAD: {
		int report = wanted && (r & VG_REP_REPORTED);
		r |= VG_REP_LOADED | (report ? VG_REP_LOAD_REP : 0);
		atomic_store_explicit(&e->rep, vg__rep_bits(r & 0xffu), memory_order_relaxed);
		return report;
	}
	case VG_OP_RECLAIM:
		/* Rules 1 and 3: whatever the filters say now. */
		atomic_store_explicit(&e->rep, vg__rep_bits(0), memory_order_relaxed);
		return (r & VG_REP_REPORTED) != 0;
	case VG_OP_RENAME:
		return wanted && (r & VG_REP_REPORTED);
	case VG_OP_SUSPEND:
		if (!wanted || !vg_live(e) || (r & VG_REP_SUSPENDED))
			return 0;
		atomic_fetch_or_explicit(&e->rep, VG_REP_SUSPENDED, memory_order_relaxed);
		return 1;
	case VG_OP_RESUME:
		if (!(r & VG_REP_SUSPENDED))
			return 0;
		atomic_fetch_and_explicit(&e->rep, ~VG_REP_SUSPENDED, memory_order_relaxed);
		return 1;
	default:
		return wanted && vg_live(e);
	}
}

/* WAIT_BEGIN / WAIT_END: `told`, to whom a beginning wait is reported (a mask; 0 or 1
 * with one listener); an end is reported to whom its beginning was. */
static unsigned wait_op(enum vg_op op, const vg_entity *l, unsigned told)
{
	struct lock_state *s = lock_find(l, op == VG_OP_WAIT_BEGIN);
	if (op == VG_OP_WAIT_BEGIN) {
		if (!s) {
			vg__count_discarded(1);
			return 0;
		}
		if (s->waiting)
			return 0;
		s->waiting = 1;
		s->wait_rep = (uint8_t)told;
		return told;
	}
	if (!s || !s->waiting)
		return 0;
	unsigned report = s->wait_rep;
	s->waiting = s->wait_rep = 0;
	lock_drop_if_idle(s);
	return report;
}

static int lock_op(enum vg_op op, const vg_entity *l, int wanted)
{
	struct lock_state *s;
	switch (op) {
	case VG_OP_ACQUIRE: {
		s = lock_find(l, 1);
		if (!s) { /* more locks held at once than tracked: never reported */
			vg__count_discarded(1);
			return 0;
		}
		int report = wanted && vg_live(l) && !(s->waiting && s->wait_rep) && s->depth < 32;
		if (report)
			s->rep |= 1u << s->depth;
		s->depth++;
		return report;
	}
	case VG_OP_RELEASE: {
		s = lock_find(l, 0);
		if (!s || !s->depth)
			return 0; /* its acquire was not tracked: it cannot have been reported */
		s->depth--;
		int report = s->depth < 32 && (s->rep >> s->depth & 1u);
		if (s->depth < 32)
			s->rep &= ~(1u << s->depth);
		lock_drop_if_idle(s);
		return report;
	}
	default:
		return wait_op(op, l, wanted && vg_live(l));
	}
}

/* lock_op for several listeners: `wanted`, the listeners whose filters want it and that
 * may refer to the lock; a mask of those it is reported to. */
unsigned vg__track_lock_listen(enum vg_op op, const vg_entity *l, unsigned wanted)
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
		uint32_t *acq = acq_row(s, 1);
		if (s->depth < 32 && acq) { /* no table: reported to none, nor its release */
			report = wanted & ~(s->waiting ? s->wait_rep : 0u);
			for (int i = 0; i < VG_LISTENERS_MAX; i++)
				if (report >> i & 1u)
					acq[i] |= 1u << s->depth;
		}
		s->depth++;
		return report;
	case VG_OP_RELEASE:
		s = lock_find(l, 0);
		if (!s || !s->depth)
			return 0; /* its acquire was not tracked: it cannot have been reported */
		s->depth--;
		uint32_t *told = acq_row(s, 0);
		if (s->depth < 32 && told)
			for (int i = 0; i < VG_LISTENERS_MAX; i++)
				if (told[i] >> s->depth & 1u) {
					report |= 1u << i;
					told[i] &= ~(1u << s->depth);
				}
		lock_drop_if_idle(s);
		return report;
	default:
		return wait_op(op, l, wanted);
	}
}

unsigned vg__track_op(enum vg_op op, vg_entity *e, unsigned wanted)
{
	if (!vg__tracking)
		return wanted;
	if (vg__listening)
		return vg__listen_track_op(op, e, wanted);
	if (!e)
		return 0;
	if (op >= VG_OP_ACQUIRE && op <= VG_OP_WAIT_END)
		return lock_op(op, e, wanted);
	return entity_op(op, e, wanted);
}

/* The filters' decision for an op sensor. The flag's holder is known here when it is the
 * target or the recording thread as performer; an initiator or an explicit performer is
 * not, and then the sensor's own counter decides (generated code checks that entity's
 * flag itself, docs/language.md). */
unsigned vg__op_wanted(const vg_sensor *s, const vg_entity *target)
{
	const vg_type_desc *d;
	switch (s->placement) {
	case VG_FLAG_PERFORMER:
		d = vg__sensor_desc(s);
		if (d && d->performer < 0)
			return vg__wanted(s, vg_self());
		/* fall through */
	case VG_FLAG_TARGET:
		if (s->placement == VG_FLAG_TARGET && target)
			return vg__wanted(s, target);
		/* fall through */
	case VG_FLAG_INITIATOR:
		return vg_on(s) ? vg__filter_mask(s) : 0;
	default:
		return vg__wanted(s, NULL);
	}
}

uint8_t *vg__op_begin(vg_sensor *s, vg_entity *target, int allowed, uint32_t payload)
{
	if (!target)
		return NULL;
	unsigned report;
	if (vg__listening) /* the listeners that may refer to the other entities it names */
		allowed = allowed ? (int)vg__listen_take_live() : (vg__listen_take_live(), 0);
	if (s->op == VG_OP_CREATE) {
		const vg_type_desc *d = vg__sensor_desc(s);
		if (!d || d->target < 0)
			return NULL;
		/* The object's identity is its address, scoped by generation. */
		vg__entity_identify(target, d->fields[d->target].entity_kind, (uintptr_t)target,
		                    NULL);
		report = allowed ? (unsigned)allowed & vg__op_wanted(s, target) : 0;
		vg__track_created(target, report);
	} else {
		unsigned wanted = allowed ? (unsigned)allowed & vg__op_wanted(s, target) : 0;
		report = vg__track_op((enum vg_op)s->op, target, wanted);
	}
	vg__listen_decide(report);
	return report ? vg__decided_start(s, payload) : NULL;
}

uint8_t *vg_op_begin(vg_sensor *s, vg_entity *target, uint32_t payload)
{
	return vg__op_begin(s, target, 1, payload);
}

void vg__track_thread_exit(void)
{
	vg__listen_track_thread_exit();
	vg__listen_thread_exit(); /* its listeners' buffers written, after its end event */
	nlocks = 0;
	if (lock_acq) {
		munmap(lock_acq, MAX_LOCKS * sizeof *lock_acq);
		lock_acq = NULL;
	}
}

/* The fork child is a new image: nothing it inherited was reported in its trace. The
 * forking thread's held locks stay tracked, as not reported. */
void vg__track_after_fork(void)
{
	vg__rep_epoch++;
	for (unsigned i = 0; i < nlocks; i++)
		locks[i].rep = locks[i].wait_rep = 0;
	if (lock_acq)
		memset(lock_acq, 0, MAX_LOCKS * sizeof *lock_acq);
}
