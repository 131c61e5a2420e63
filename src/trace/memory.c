/* Memory: arenas that free a whole metadata at once (checked allocation: src/base). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK 16384

void *vgt_arena_alloc(struct arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	struct arena_chunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
		c = vgt__xmalloc(sizeof *c + cap);
		c->size = cap;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

char *vgt_arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = vgt_arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *vgt_arena_strdup(struct arena *a, const char *s)
{
	return vgt_arena_strndup(a, s, strlen(s));
}

void *vgt_arena_grow(struct arena *a, void *array, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return array;
	size_t ncap = *cap ? *cap * 2 : 8;
	if (ncap > SIZE_MAX / size)
		vgt__oom();
	void *p = vgt_arena_alloc(a, ncap * size);
	if (n)
		memcpy(p, array, n * size);
	*cap = ncap;
	return p;
}

void *vgt_arena_push(struct arena *a, void *array, size_t n, size_t size)
{
	size_t cap = 8;
	while (cap < n)
		cap *= 2;
	if (n == 0)
		cap = 0; /* nothing allocated yet */
	else if (n < cap)
		return array;
	return vgt_arena_grow(a, array, n, &cap, size);
}

void vgt_arena_free(struct arena *a)
{
	while (a->head) {
		struct arena_chunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
}
