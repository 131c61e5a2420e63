/* A string-keyed hash table (FNV-1a, linear probing, never shrinks). */
#include "lang/symtab.h"

#include <stdint.h>
#include <string.h>

#include "lang/arena.h"

struct vgl_sym {
	const char *name;
	void *value;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void *vgl_sym_get(const struct vgl_symtab *t, const char *name)
{
	if (!t->cap)
		return NULL;
	for (size_t i = hash(name) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->slots[i].name)
			return NULL;
		if (!strcmp(t->slots[i].name, name))
			return t->slots[i].value;
	}
}

static void insert(struct vgl_sym *slots, size_t cap, const char *name, void *value)
{
	size_t i = hash(name) & (cap - 1);
	while (slots[i].name)
		i = (i + 1) & (cap - 1);
	slots[i].name = name;
	slots[i].value = value;
}

void *vgl_sym_put(struct vgl_symtab *t, const char *name, void *value)
{
	void *old = vgl_sym_get(t, name);
	if (old)
		return old;
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct vgl_sym *slots = vgb_arena_array(t->arena, cap, sizeof *slots);
		for (size_t i = 0; i < t->cap; i++)
			if (t->slots[i].name)
				insert(slots, cap, t->slots[i].name, t->slots[i].value);
		t->slots = slots;
		t->cap = cap;
	}
	insert(t->slots, t->cap, name, value);
	t->n++;
	return NULL;
}
