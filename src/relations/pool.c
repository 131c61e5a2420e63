/* The database's memory: interned strings (an open-addressing set, so equal strings
 * share one pointer) and byte values, both carved from large blocks freed together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relations/columns.h"

#define BLOCK_SIZE (1u << 16)

struct block {
	struct block *next;
	size_t used, size;
	uint8_t data[];
};

struct vgq_pool {
	struct block *blocks;
	const char **set; /* interned strings; NULL: empty */
	size_t *lens;
	size_t cap, n; /* cap: a power of two */
};

static void *carve(struct vgq_pool *p, size_t len)
{
	struct block *b = p->blocks;
	if (!b || b->size - b->used < len) {
		size_t size = len > BLOCK_SIZE ? len : BLOCK_SIZE;
		b = vgq_xcalloc(1, sizeof *b + size);
		b->size = size;
		b->next = p->blocks;
		p->blocks = b;
	}
	void *r = b->data + b->used;
	b->used += len;
	return r;
}

struct vgq_pool *vgq_pool_new(void)
{
	struct vgq_pool *p = vgq_xcalloc(1, sizeof *p);
	p->cap = 1024;
	p->set = vgq_xcalloc(p->cap, sizeof *p->set);
	p->lens = vgq_xcalloc(p->cap, sizeof *p->lens);
	return p;
}

void vgq_pool_free(struct vgq_pool *p)
{
	if (!p)
		return;
	for (struct block *b = p->blocks, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(p->set);
	free(p->lens);
	free(p);
}

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h ^ (h >> 31);
}

static size_t find(const struct vgq_pool *p, const char *s, size_t len)
{
	size_t mask = p->cap - 1;
	for (size_t i = hash(s, len) & mask;; i = (i + 1) & mask)
		if (!p->set[i] || (p->lens[i] == len && !memcmp(p->set[i], s, len)))
			return i;
}

static void grow(struct vgq_pool *p)
{
	struct vgq_pool bigger = {.cap = p->cap * 2};
	bigger.set = vgq_xcalloc(bigger.cap, sizeof *bigger.set);
	bigger.lens = vgq_xcalloc(bigger.cap, sizeof *bigger.lens);
	for (size_t i = 0; i < p->cap; i++)
		if (p->set[i]) {
			size_t j = find(&bigger, p->set[i], p->lens[i]);
			bigger.set[j] = p->set[i];
			bigger.lens[j] = p->lens[i];
		}
	free(p->set);
	free(p->lens);
	p->set = bigger.set;
	p->lens = bigger.lens;
	p->cap = bigger.cap;
}

const char *vgq_pool_intern(struct vgq_pool *p, const char *s, size_t len)
{
	if ((p->n + 1) * 4 > p->cap * 3)
		grow(p);
	size_t i = find(p, s, len);
	if (!p->set[i]) {
		char *copy = carve(p, len + 1);
		memcpy(copy, s, len);
		copy[len] = 0;
		p->set[i] = copy;
		p->lens[i] = len;
		p->n++;
	}
	return p->set[i];
}

const char *vgq_pool_find(const struct vgq_pool *p, const char *s, size_t len)
{
	return p->set[find(p, s, len)];
}

void vgq_pool_adopt(struct vgq_pool *p, const char *s, size_t len)
{
	if ((p->n + 1) * 4 > p->cap * 3)
		grow(p);
	size_t i = find(p, s, len);
	if (!p->set[i]) {
		p->set[i] = s;
		p->lens[i] = len;
		p->n++;
	}
}

size_t vgq_pool_absorb(struct vgq_pool *p, struct vgq_pool *from)
{
	size_t moved = 0;
	for (size_t i = 0; i < from->cap; i++)
		if (from->set[i]) {
			size_t before = p->n;
			vgq_pool_adopt(p, from->set[i], from->lens[i]);
			moved += p->n - before;
		}
	struct block *last = from->blocks;
	while (last && last->next)
		last = last->next;
	if (last) { /* behind this pool's current block, which carving goes on filling */
		last->next = p->blocks ? p->blocks->next : NULL;
		if (p->blocks)
			p->blocks->next = from->blocks;
		else
			p->blocks = from->blocks;
	}
	size_t kept_elsewhere = from->n - moved;
	free(from->set);
	free(from->lens);
	free(from);
	return kept_elsewhere;
}

void vgq_pool_each(const struct vgq_pool *p, void (*fn)(void *arg, const char *s, size_t len),
                   void *arg)
{
	for (size_t i = 0; i < p->cap; i++)
		if (p->set[i])
			fn(arg, p->set[i], p->lens[i]);
}

size_t vgq_pool_count(const struct vgq_pool *p)
{
	return p->n;
}

const uint8_t *vgq_pool_bytes(struct vgq_pool *p, const uint8_t *b, size_t len)
{
	if (!len)
		return NULL;
	uint8_t *copy = carve(p, len);
	memcpy(copy, b, len);
	return copy;
}
