/* The example's sensors: an invocation (enter/leave), an item's life (create/reclaim), a
 * use of an item under an account's lock (activity) and the lock's events. A sensor with
 * an op goes to the runtime whenever vg_tracking() says so, reported or not. */
#define _GNU_SOURCE /* strnlen */
#include "sensors.h"

#include <errno.h>
#include <string.h>

static vg_sensor *s_call, *s_ret, *s_new, *s_free, *s_use, *s_acq, *s_rel, *s_wait, *s_got;

static const vg_field_desc call_f[] = {{"fn", VG_STRING, NULL}, {"arg", VG_ENTITY, "Item"}};
static const vg_field_desc item_f[] = {{"item", VG_ENTITY, "Item"}, {"value", VG_UINT64, NULL}};
static const vg_field_desc use_f[] = {{"item", VG_ENTITY, "Item"},
                                      {"account", VG_ENTITY, "Account"}};
static const vg_field_desc lock_f[] = {{"account", VG_ENTITY, "Account"}};

#define FN_MAX 24
#define N(f) (sizeof f / sizeof f[0])

static vg_sensor *reg(const char *name, const char *rel, enum vg_kind kind, const vg_field_desc *f,
                      unsigned n, int target, enum vg_op op)
{
	vg_type_desc d = {.name = name,
	                  .relation = rel,
	                  .kind = kind,
	                  .placement = VG_FLAG_SENSOR,
	                  .fields = f,
	                  .nfields = n,
	                  .performer = -1,
	                  .initiator = -1,
	                  .target = target,
	                  .op = op};
	return vg_sensor_register(&d);
}

void ex_sensors_register(void)
{
	s_call = reg("ex.call.begin", "ex.call", VG_KIND_BEGIN, call_f, N(call_f), -1, VG_OP_ENTER);
	s_ret = reg("ex.call.end", "ex.call", VG_KIND_END, NULL, 0, -1, VG_OP_LEAVE);
	s_new = reg("ex.item.new", NULL, VG_KIND_EVENT, item_f, N(item_f), 0, VG_OP_CREATE);
	s_free = reg("ex.item.free", NULL, VG_KIND_EVENT, item_f, N(item_f), 0, VG_OP_RECLAIM);
	s_use = reg("ex.item.use", NULL, VG_KIND_EVENT, use_f, N(use_f), -1, VG_OP_ACTIVITY);
	s_acq = reg("ex.lock.acquire", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_ACQUIRE);
	s_rel = reg("ex.lock.release", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_RELEASE);
	s_wait = reg("ex.lock.wait", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_WAIT_BEGIN);
	s_got = reg("ex.lock.got", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_WAIT_END);
}

void ex_call(const char *fn, const struct item *arg)
{
	if (!vg_tracking(s_call))
		return;
	size_t n = strnlen(fn, FN_MAX);
	uint8_t *p = vg_enter_begin(s_call, (uint32_t)n + 1 + 12);
	if (!p)
		return;
	if (vg__tracking && !vg_live(arg ? &arg->ent : NULL)) {
		vg_enter_commit(s_call, NULL); /* rule 2: names an unreported item */
		return;
	}
	p = vg_put_str(p, fn, FN_MAX);
	p = vg_put_ref(p, arg ? &arg->ent : NULL);
	vg_enter_commit(s_call, p);
}

void ex_return(void)
{
	if (!vg_tracking(s_ret))
		return;
	uint8_t *p = vg_leave_begin(s_ret, 0);
	if (p)
		vg_event_commit(p);
}

static void item_op(vg_sensor *s, struct item *it)
{
	if (!vg_tracking(s))
		return;
	uint8_t *p = vg_op_begin(s, &it->ent, 20);
	if (p) {
		p = vg_put_ref(p, &it->ent);
		vg_event_commit(vg_put_u64(p, it->value));
	}
}

void ex_item_new(struct item *it)
{
	item_op(s_new, it);
}

void ex_item_free(struct item *it)
{
	item_op(s_free, it);
}

void ex_item_use(const struct item *it, const struct account *a)
{
	if (!vg_on(s_use))
		return;
	if (vg__tracking && !(vg_live(&it->ent) && vg_live(&a->ent)))
		return; /* rule 2 */
	uint8_t *p = vg_event_begin(s_use, 24);
	if (!p)
		return;
	p = vg_put_ref(p, &it->ent);
	vg_event_commit(vg_put_ref(p, &a->ent));
}

static void lock_op(vg_sensor *s, struct account *a)
{
	if (!vg_tracking(s))
		return;
	uint8_t *p = vg_op_begin(s, &a->ent, 12);
	if (p)
		vg_event_commit(vg_put_ref(p, &a->ent));
}

void ex_lock(struct account *a)
{
	if (pthread_mutex_trylock(&a->mu) == EBUSY) {
		lock_op(s_wait, a);
		pthread_mutex_lock(&a->mu);
		lock_op(s_got, a);
	}
	lock_op(s_acq, a);
}

void ex_unlock(struct account *a)
{
	lock_op(s_rel, a); /* before the unlock: the next owner's acquire comes after it */
	pthread_mutex_unlock(&a->mu);
}
