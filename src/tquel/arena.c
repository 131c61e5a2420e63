/* Chunks of at least 64 KiB; a request larger than that gets a chunk of its own. */
#include "tquel/arena.h"

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	alignas(max_align_t) unsigned char data[];
};

struct tquel_arena {
	struct chunk *head;
};

static void *xcalloc(size_t n)
{
	void *p = calloc(1, n);
	if (!p) {
		fputs("vigil: out of memory\n", stderr);
		abort();
	}
	return p;
}

struct tquel_arena *tquel_arena_new(void)
{
	return xcalloc(sizeof(struct tquel_arena));
}

void tquel_arena_free(struct tquel_arena *a)
{
	if (!a)
		return;
	for (struct chunk *c = a->head, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(a);
}

void *tquel_alloc(struct tquel_arena *a, size_t size)
{
	size_t align = alignof(max_align_t);
	size = (size + align - 1) / align * align;
	struct chunk *c = a->head;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > CHUNK ? size : CHUNK;
		c = xcalloc(sizeof *c + cap);
		c->cap = cap;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += size;
	return p;
}

char *tquel_strndup(struct tquel_arena *a, const char *s, size_t n)
{
	char *p = tquel_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}
