/* Entities and their time-scoped identities. The generation of (kind, raw id) counts
 * the earlier lifetimes of that id in this process, so a reused address or tid is never
 * confused with its predecessor. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct gen_slot {
	const char *kind; /* interned; NULL = empty slot */
	uint64_t raw;
	uint32_t next_gen;
};

static struct gen_slot *slots;
static size_t nslots, used;
static const char **kinds; /* interned kind names */
static size_t nkinds;

static const char *intern(const char *kind)
{
	for (size_t i = 0; i < nkinds; i++)
		if (!strcmp(kinds[i], kind))
			return kinds[i];
	const char **k = realloc(kinds, (nkinds + 1) * sizeof *k);
	if (!k)
		return NULL;
	kinds = k;
	char *copy = strdup(kind);
	if (!copy)
		return NULL;
	kinds[nkinds++] = copy;
	return copy;
}

static size_t slot_hash(const char *kind, uint64_t raw)
{
	uint64_t h = raw ^ ((uint64_t)(uintptr_t)kind * 0x9E3779B97F4A7C15ull);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h;
}

static int grow(void)
{
	size_t n = nslots ? nslots * 2 : 1024;
	struct gen_slot *s = calloc(n, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < nslots; i++) {
		if (!slots[i].kind)
			continue;
		size_t j = slot_hash(slots[i].kind, slots[i].raw) & (n - 1);
		while (s[j].kind)
			j = (j + 1) & (n - 1);
		s[j] = slots[i];
	}
	free(slots);
	slots = s;
	nslots = n;
	return 0;
}

/* Returns the generation for a new lifetime of (kind, raw). Caller holds vg__rt.lock. */
static uint32_t next_locked(const char *kind, uint64_t raw)
{
	const char *k = intern(kind);
	if (!k)
		return 0;
	if ((used + 1) * 2 > nslots && grow() < 0)
		return 0;
	size_t j = slot_hash(k, raw) & (nslots - 1);
	while (slots[j].kind && !(slots[j].kind == k && slots[j].raw == raw))
		j = (j + 1) & (nslots - 1);
	if (!slots[j].kind) {
		slots[j].kind = k;
		slots[j].raw = raw;
		used++;
	}
	return slots[j].next_gen++;
}

uint32_t vg__generation_next(const char *kind, uint64_t raw)
{
	pthread_mutex_lock(&vg__rt.lock);
	uint32_t g = next_locked(kind, raw);
	pthread_mutex_unlock(&vg__rt.lock);
	return g;
}

static void emit_entity(int which, const vg_entity *e, const char *name)
{
	vg_value v[4];
	v[0].s = e->kind;
	v[1].u = e->id;
	v[2].u = e->gen;
	v[3].s = name ? name : "";
	vg__emit_decided(vg__builtin(which), v);
}

void vg__entity_identify(vg_entity *e, const char *kind, uint64_t raw_id, const char *name)
{
	e->kind = kind ? kind : "entity";
	e->id = raw_id;
	pthread_mutex_lock(&vg__rt.lock);
	e->gen = next_locked(e->kind, raw_id);
	atomic_store(&e->flag, vg__rt.cfg.entity_default);
	/* Under a monitor, the entity is live for it (and gets its rules) from here on. */
	if (vg__control_on)
		vg__control_entity_live_locked(e, name);
	pthread_mutex_unlock(&vg__rt.lock);
}

void vg_entity_create(vg_entity *e, const char *kind, uint64_t raw_id, const char *name)
{
	if (!e)
		return;
	vg__ensure_init();
	e->kind = kind ? kind : "entity";
	e->id = raw_id;
	e->gen = 0;
	atomic_store(&e->flag, 0);
	atomic_store(&e->rep, 0);
	if (!vg__rt.recording)
		return;
	vg__entity_identify(e, kind, raw_id, name);
	int report = vg__wanted(vg__builtin(VG_B_ENTITY_CREATE), NULL);
	vg__track_created(e, report);
	if (report)
		emit_entity(VG_B_ENTITY_CREATE, e, name);
}

void vg_entity_rename(vg_entity *e, const char *name)
{
	if (!e || !vg__rt.recording)
		return;
	if (vg__control_on) {
		pthread_mutex_lock(&vg__rt.lock);
		vg__control_entity_renamed_locked(e, name);
		pthread_mutex_unlock(&vg__rt.lock);
	}
	if (vg__track_op(VG_OP_RENAME, e, vg__wanted(vg__builtin(VG_B_ENTITY_NAME), NULL)))
		emit_entity(VG_B_ENTITY_NAME, e, name);
}

void vg_entity_load(vg_entity *e)
{
	if (!e || !vg__rt.recording)
		return;
	if (vg__track_op(VG_OP_LOAD, e, vg__wanted(vg__builtin(VG_B_ENTITY_LOAD), NULL)))
		emit_entity(VG_B_ENTITY_LOAD, e, NULL);
}

void vg_entity_reclaim(vg_entity *e)
{
	if (!e || !vg__rt.recording)
		return;
	if (vg__track_op(VG_OP_RECLAIM, e, vg__wanted(vg__builtin(VG_B_ENTITY_RECLAIM), NULL)))
		emit_entity(VG_B_ENTITY_RECLAIM, e, NULL);
	if (vg__control_on) {
		pthread_mutex_lock(&vg__rt.lock);
		vg__control_entity_dead_locked(e);
		atomic_store(&e->flag, 0);
		pthread_mutex_unlock(&vg__rt.lock);
		return;
	}
	atomic_store(&e->flag, 0);
}

void vg_entity_enable(vg_entity *e)
{
	if (e)
		atomic_fetch_add(&e->flag, 1);
}

void vg_entity_disable(vg_entity *e)
{
	if (e)
		atomic_fetch_sub(&e->flag, 1);
}
