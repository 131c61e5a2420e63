/* The arena behind a model: chunks of at least 64 KiB, never freed one by one. */
#include "lang/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vgl_chunk {
	struct vgl_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

#define CHUNK_MIN (64 * 1024)

static void out_of_memory(void)
{
	fprintf(stderr, "vigil: out of memory\n");
	exit(3);
}

void *vgl_alloc(struct vgl_arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	struct vgl_chunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t n = size > CHUNK_MIN ? size : CHUNK_MIN;
		c = malloc(sizeof *c + n);
		if (!c)
			out_of_memory();
		c->size = n;
		c->used = 0;
		/* A large block goes behind the current chunk so that its rest stays in use. */
		if (a->head && size > CHUNK_MIN) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

void *vgl_alloc_array(struct vgl_arena *a, size_t n, size_t elem)
{
	if (elem && n > SIZE_MAX / 2 / elem)
		out_of_memory();
	return vgl_alloc(a, n * elem);
}

char *vgl_strndup(struct vgl_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		out_of_memory();
	char *d = vgl_alloc(a, n + 1);
	memcpy(d, s, n);
	return d;
}

char *vgl_strdup(struct vgl_arena *a, const char *s)
{
	return vgl_strndup(a, s, strlen(s));
}

void *vgl_push(struct vgl_arena *a, void *arrayp, size_t *n, size_t *cap, size_t elem)
{
	void **array = arrayp;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		void *fresh = vgl_alloc_array(a, ncap, elem);
		if (*n)
			memcpy(fresh, *array, *n * elem);
		*array = fresh;
		*cap = ncap;
	}
	void *slot = (unsigned char *)*array + (*n)++ * elem;
	memset(slot, 0, elem); /* it may have been used before: callers pop with (*n)-- */
	return slot;
}

void vgl_arena_free(struct vgl_arena *a)
{
	struct vgl_chunk *c = a->head;
	while (c) {
		struct vgl_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}
