/* Open-addressing hash table (see table.h). */
#include "table.h"

#include <stdlib.h>
#include <string.h>

void vgc_table_init(struct vgc_table *t, size_t rsize, size_t ksize,
                    uint64_t (*hash)(const void *key))
{
	memset(t, 0, sizeof *t);
	t->rsize = rsize;
	t->ksize = ksize;
	t->hash = hash;
}

void vgc_table_free(struct vgc_table *t)
{
	free(t->slots);
	free(t->used);
	t->slots = t->used = NULL;
	t->cap = t->count = 0;
}

static inline uint8_t *slot(const struct vgc_table *t, size_t i)
{
	return t->slots + i * t->rsize;
}

/* The slot holding `key`, or the empty slot where it would go. */
static size_t probe(const struct vgc_table *t, const void *key)
{
	size_t mask = t->cap - 1;
	size_t i = (size_t)t->hash(key) & mask;
	while (t->used[i] && memcmp(slot(t, i), key, t->ksize))
		i = (i + 1) & mask;
	return i;
}

void *vgc_table_find(const struct vgc_table *t, const void *key)
{
	if (!t->cap)
		return NULL;
	size_t i = probe(t, key);
	return t->used[i] ? slot(t, i) : NULL;
}

static int grow(struct vgc_table *t)
{
	struct vgc_table big = *t;
	big.cap = t->cap ? t->cap * 2 : 64;
	big.count = 0;
	big.slots = malloc(big.cap * t->rsize);
	big.used = calloc(big.cap, 1);
	if (!big.slots || !big.used) {
		free(big.slots);
		free(big.used);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->used[i])
			continue;
		size_t j = probe(&big, slot(t, i));
		memcpy(slot(&big, j), slot(t, i), t->rsize);
		big.used[j] = 1;
		big.count++;
	}
	free(t->slots);
	free(t->used);
	*t = big;
	return 0;
}

void *vgc_table_insert(struct vgc_table *t, const void *key, bool *fresh)
{
	if ((t->count + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	size_t i = probe(t, key);
	uint8_t *r = slot(t, i);
	*fresh = !t->used[i];
	if (*fresh) {
		memset(r, 0, t->rsize);
		memcpy(r, key, t->ksize);
		t->used[i] = 1;
		t->count++;
	}
	return r;
}

void vgc_table_remove(struct vgc_table *t, void *rec)
{
	size_t mask = t->cap - 1;
	size_t i = (size_t)((uint8_t *)rec - t->slots) / t->rsize;
	t->used[i] = 0;
	t->count--;
	/* Backward shift: move up every later record of the run that may sit in the hole. */
	for (size_t j = (i + 1) & mask; t->used[j]; j = (j + 1) & mask) {
		size_t home = (size_t)t->hash(slot(t, j)) & mask;
		/* Keep j where it is if its home lies cyclically in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		memcpy(slot(t, i), slot(t, j), t->rsize);
		t->used[i] = 1;
		t->used[j] = 0;
		i = j;
	}
}
