/* Entity names as the trace tells them over time: an open-addressing hash table keyed by
 * (kind, id, generation), fed by the built-in naming events in time order. Kinds and
 * names are copied: a followed trace (follow.c) frees or reuses an event's bytes once
 * its stream is read again into a larger buffer. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

struct name_slot {
	const char *kind; /* NULL: empty */
	uint64_t id;
	uint32_t gen;
	const char *name;
};

struct vgt_names {
	struct name_slot *slots;
	size_t cap, n; /* cap: a power of two */
};

static uint64_t hash(const char *kind, uint64_t id, uint32_t gen)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = kind; *p; p++)
		h = (h ^ (uint64_t)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p)) * 1099511628211ull;
	h ^= id * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)gen * 0xC2B2AE3D27D4EB4Full;
	return h ^ (h >> 29);
}

static struct name_slot *find(const struct vgt_names *n, const char *kind, uint64_t id,
                              uint32_t gen)
{
	size_t mask = n->cap - 1;
	for (size_t i = hash(kind, id, gen) & mask;; i = (i + 1) & mask) {
		struct name_slot *s = &n->slots[i];
		if (!s->kind || (s->id == id && s->gen == gen && !strcasecmp(s->kind, kind)))
			return s;
	}
}

static void grow(struct vgt_names *n)
{
	struct vgt_names bigger = {.cap = n->cap * 2, .n = n->n};
	bigger.slots = vgt__xcalloc(bigger.cap, sizeof *bigger.slots);
	for (size_t i = 0; i < n->cap; i++)
		if (n->slots[i].kind)
			*find(&bigger, n->slots[i].kind, n->slots[i].id, n->slots[i].gen) =
			    n->slots[i];
	free(n->slots);
	*n = bigger;
}

struct vgt_names *vgt_names_new(void)
{
	struct vgt_names *n = vgt__xcalloc(1, sizeof *n);
	n->cap = 256;
	n->slots = vgt__xcalloc(n->cap, sizeof *n->slots);
	return n;
}

void vgt_names_free(struct vgt_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->cap; i++)
		if (n->slots[i].kind) {
			free((void *)n->slots[i].kind);
			free((void *)n->slots[i].name);
		}
	free(n->slots);
	free(n);
}

static void set(struct vgt_names *n, const char *kind, uint64_t id, uint32_t gen, const char *name)
{
	if ((n->n + 1) * 4 > n->cap * 3)
		grow(n);
	struct name_slot *s = find(n, kind, id, gen);
	if (!s->kind) {
		n->n++;
		*s = (struct name_slot){vgt__xstrdup(kind), id, gen, NULL};
	}
	free((void *)s->name);
	s->name = vgt__xstrdup(name);
}

/* The value of field `name` if it has type `type`. */
static const struct vgt_value *field(const struct vgt_event *ev, const char *name,
                                     enum vgt_vtype type)
{
	int i = vgt_type_field(ev->type, name);
	return i >= 0 && ev->values[i].type == type ? &ev->values[i] : NULL;
}

void vgt_names_observe(struct vgt_names *n, const struct vgt_event *ev)
{
	const char *type = ev->type->name;
	if (strncmp(type, "vg.", 3))
		return;
	const struct vgt_value *kind = NULL, *id, *gen, *name = field(ev, "name", VGT_STRING);
	const char *fixed_kind;
	if (!strcmp(type, "vg.entity.create") || !strcmp(type, "vg.entity.name")) {
		kind = field(ev, "kind", VGT_STRING);
		id = field(ev, "id", VGT_UINT);
		fixed_kind = kind ? kind->str.ptr : NULL;
	} else if (!strcmp(type, "vg.thread.begin") || !strcmp(type, "vg.thread.name")) {
		id = field(ev, "tid", VGT_UINT);
		fixed_kind = "thread";
	} else if (!strcmp(type, "vg.process.begin") || !strcmp(type, "vg.process.name")) {
		id = field(ev, "pid", VGT_UINT);
		fixed_kind = "process";
	} else {
		return;
	}
	gen = field(ev, "gen", VGT_UINT);
	if (fixed_kind && id && gen && name)
		set(n, fixed_kind, id->u, (uint32_t)gen->u, name->str.ptr);
}

const char *vgt_names_lookup(const struct vgt_names *n, const char *kind, uint64_t id, uint32_t gen)
{
	if (!kind)
		return NULL;
	const struct name_slot *s = find(n, kind, id, gen);
	return s->kind ? s->name : NULL;
}
