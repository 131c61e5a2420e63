/* Interned strings: open addressing (linear probing, at most 3/4 full) over copies kept
 * in an arena. */
#include "base/intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"

struct slot {
	const char *s; /* NULL: empty */
	size_t len;
};

struct vgb_intern {
	struct vgb_arena arena;
	struct slot *slots;
	size_t cap, n; /* cap: a power of two */
};

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a, its high bits folded in */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h ^ (h >> 31);
}

static size_t find(const struct slot *slots, size_t cap, const char *s, size_t len)
{
	size_t mask = cap - 1;
	for (size_t i = hash(s, len) & mask;; i = (i + 1) & mask)
		if (!slots[i].s || (slots[i].len == len && !memcmp(slots[i].s, s, len)))
			return i;
}

struct vgb_intern *vgb_intern_new(void)
{
	struct vgb_intern *t = vgb_xcalloc(1, sizeof *t);
	t->cap = 256;
	t->slots = vgb_xcalloc(t->cap, sizeof *t->slots);
	return t;
}

void vgb_intern_free(struct vgb_intern *t)
{
	if (!t)
		return;
	vgb_arena_free(&t->arena);
	free(t->slots);
	free(t);
}

static void grow(struct vgb_intern *t)
{
	size_t cap = t->cap * 2;
	struct slot *slots = vgb_xcalloc(cap, sizeof *slots);
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].s)
			slots[find(slots, cap, t->slots[i].s, t->slots[i].len)] = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
}

const char *vgb_intern(struct vgb_intern *t, const char *s, size_t len)
{
	if ((t->n + 1) * 4 > t->cap * 3)
		grow(t);
	size_t i = find(t->slots, t->cap, s, len);
	if (!t->slots[i].s) {
		t->slots[i].s = vgb_arena_strndup(&t->arena, s, len);
		t->slots[i].len = len;
		t->n++;
	}
	return t->slots[i].s;
}

const char *vgb_intern_str(struct vgb_intern *t, const char *s)
{
	return s ? vgb_intern(t, s, strlen(s)) : vgb_intern(t, "", 0);
}

const char *vgb_intern_find(const struct vgb_intern *t, const char *s, size_t len)
{
	return t->slots[find(t->slots, t->cap, s, len)].s;
}

size_t vgb_intern_count(const struct vgb_intern *t)
{
	return t->n;
}
