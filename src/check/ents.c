/* The identity table: one record per (scope, kind, raw id), holding its latest
 * generation and whether it is live (see internal.h). */
#include "internal.h"

static uint64_t ent_hash(const void *key)
{
	const struct vgc_key *k = key;
	return vgc_mix(k->id ^ vgc_mix((uint64_t)k->scope << 32 | k->kind));
}

void vgc_ents_init(struct vgc_ents *e)
{
	_Static_assert(sizeof(struct vgc_key) == 16, "vgc_key has no padding");
	vgc_table_init(&e->t, sizeof(struct vgc_ent), sizeof(struct vgc_key), ent_hash);
}
