/* A table from time-scoped identities (relation, image, id, generation) to tuple
 * indices: the open lifetime of an entity, the current tuple of a state chain. */
#include <stdlib.h>

#include "relations/columns.h"

struct slot {
	struct vgq_key key;
	size_t value;
	bool used;
};

struct vgq_keymap {
	struct slot *slots;
	size_t cap, n; /* cap: a power of two */
};

static uint64_t hash(const struct vgq_key *k)
{
	uint64_t h = (uint64_t)k->rel * 0x9E3779B97F4A7C15ull;
	h ^= (k->image + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
	h ^= k->id * 0x165667B19E3779F9ull;
	h ^= k->gen * 0x27D4EB2F165667C5ull;
	return h ^ (h >> 29);
}

static bool same(const struct vgq_key *a, const struct vgq_key *b)
{
	return a->rel == b->rel && a->image == b->image && a->id == b->id && a->gen == b->gen;
}

static struct slot *find(const struct vgq_keymap *m, const struct vgq_key *k)
{
	size_t mask = m->cap - 1;
	for (size_t i = hash(k) & mask;; i = (i + 1) & mask)
		if (!m->slots[i].used || same(&m->slots[i].key, k))
			return &m->slots[i];
}

struct vgq_keymap *vgq_keymap_new(void)
{
	struct vgq_keymap *m = vgq_xcalloc(1, sizeof *m);
	m->cap = 256;
	m->slots = vgq_xcalloc(m->cap, sizeof *m->slots);
	return m;
}

void vgq_keymap_free(struct vgq_keymap *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

size_t *vgq_keymap_slot(struct vgq_keymap *m, const struct vgq_key *k)
{
	if ((m->n + 1) * 4 > m->cap * 3) {
		struct vgq_keymap bigger = {.cap = m->cap * 2, .n = m->n};
		bigger.slots = vgq_xcalloc(bigger.cap, sizeof *bigger.slots);
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].used)
				*find(&bigger, &m->slots[i].key) = m->slots[i];
		free(m->slots);
		*m = bigger;
	}
	struct slot *s = find(m, k);
	if (!s->used) {
		s->used = true;
		s->key = *k;
		s->value = SIZE_MAX;
		m->n++;
	}
	return &s->value;
}
