/* Arenas: many small allocations freed at once (a metadata, a model, a query's syntax
 * tree). Memory is zeroed and 16-byte aligned (copies of strings: packed); allocation
 * failure is vgb_oom. */
#ifndef VIGIL_BASE_ARENA_H
#define VIGIL_BASE_ARENA_H

#include <stddef.h>

struct vgb_arena_chunk;
struct vgb_arena {
	struct vgb_arena_chunk *head;
	size_t next_size; /* of the next ordinary chunk: 16 KiB doubling up to 256 KiB */
};
/* An arena is ready when zeroed: struct vgb_arena a = {0}. */

void *vgb_arena_alloc(struct vgb_arena *a, size_t size);           /* zeroed */
void *vgb_arena_array(struct vgb_arena *a, size_t n, size_t elem); /* n * elem, checked */
char *vgb_arena_strndup(struct vgb_arena *a, const char *s, size_t n);
char *vgb_arena_strdup(struct vgb_arena *a, const char *s);
void vgb_arena_free(struct vgb_arena *a); /* everything; the arena is empty and usable */

#endif
