/* Lock states per (thread, lock): reported acquires (nested) and the open reported wait.
 * A record goes away when the thread neither holds nor waits, so the table stays as
 * small as the locks held at one time. */
#include <string.h>

#include "internal.h"

static uint64_t lock_hash(const void *key)
{
	const struct vgc_lock_key *k = key;
	return vgc_mix(k->id ^ vgc_mix(k->gen ^ ((uint64_t)k->scope << 32 | k->kind) ^
	                               (uint64_t)k->stream << 17));
}

void vgc_locks_init(struct vgc_table *t)
{
	_Static_assert(sizeof(struct vgc_lock_key) == 32, "vgc_lock_key has no padding");
	vgc_table_init(t, sizeof(struct vgc_lock), sizeof(struct vgc_lock_key), lock_hash);
}

int vgc_lock_op(struct vgc_table *t, enum vgc_op op, uint32_t stream, const struct vgc_key *k,
                uint64_t gen, uint64_t pos, uint64_t *pos_wait)
{
	struct vgc_lock_key key;
	memset(&key, 0, sizeof key);
	key.id = k->id;
	key.gen = gen;
	key.scope = k->scope;
	key.kind = k->kind;
	key.stream = stream;
	struct vgc_lock *l;
	int problem = VGC_LOCK_OK;
	if (op == VGC_OP_RELEASE || op == VGC_OP_WAIT_END) {
		l = vgc_table_find(t, &key);
		if (op == VGC_OP_RELEASE) {
			if (!l || !l->held)
				return VGC_LOCK_NOT_HELD;
			l->held--;
		} else {
			if (!l || !l->waiting)
				return VGC_LOCK_NOT_WAITING;
			l->waiting = 0;
		}
		if (!l->held && !l->waiting)
			vgc_table_remove(t, l);
		return VGC_LOCK_OK;
	}
	bool fresh;
	if (!(l = vgc_table_insert(t, &key, &fresh)))
		return -1;
	*pos_wait = l->pos_wait;
	if (op == VGC_OP_ACQUIRE) {
		/* The wait stays open: its wait_end, if reported later, then closes it. */
		if (l->waiting)
			problem = VGC_LOCK_ACQ_WAITING;
		l->held++;
	} else {
		if (l->waiting)
			problem = VGC_LOCK_WAITING_AGAIN;
		l->waiting = 1;
		l->pos_wait = pos;
	}
	return problem;
}
