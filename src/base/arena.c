/* Arenas: see arena.h. Chunks grow from 16 KiB to 256 KiB, so that a small metadata costs
 * little and a large model few mallocs; a block larger than a chunk gets a chunk of its
 * own, placed behind the current one so that the current one's rest stays in use. */
#include "base/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

struct vgb_arena_chunk {
	struct vgb_arena_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

#define FIRST_CHUNK (16u << 10)
#define LAST_CHUNK (256u << 10)

/* size bytes aligned to align (1 or 16), not zeroed. */
static void *carve(struct vgb_arena *a, size_t size, size_t align)
{
	if (size > SIZE_MAX / 2 - sizeof(struct vgb_arena_chunk))
		vgb_oom();
	struct vgb_arena_chunk *c = a->head;
	size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || at > c->size || c->size - at < size) {
		if (!a->next_size)
			a->next_size = FIRST_CHUNK;
		size_t cap = size > a->next_size ? size : a->next_size;
		c = vgb_xmalloc(sizeof *c + cap);
		c->size = cap;
		c->used = 0;
		if (a->head && size > a->next_size) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
			if (a->next_size < LAST_CHUNK)
				a->next_size *= 2;
		}
		at = 0;
	}
	c->used = at + size;
	return c->data + at;
}

void *vgb_arena_alloc(struct vgb_arena *a, size_t size)
{
	void *p = carve(a, size ? size : 1, 16);
	memset(p, 0, size ? size : 1);
	return p;
}

void *vgb_arena_array(struct vgb_arena *a, size_t n, size_t elem)
{
	if (elem && n > SIZE_MAX / 2 / elem)
		vgb_oom();
	return vgb_arena_alloc(a, n * elem);
}

char *vgb_arena_strndup(struct vgb_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		vgb_oom();
	char *p = carve(a, n + 1, 1); /* text needs no alignment */
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *vgb_arena_strdup(struct vgb_arena *a, const char *s)
{
	return vgb_arena_strndup(a, s, strlen(s));
}

void vgb_arena_free(struct vgb_arena *a)
{
	while (a->head) {
		struct vgb_arena_chunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	a->next_size = 0;
}
