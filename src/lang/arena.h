/* Memory of a loaded model: one arena, freed at once by vgl_free. Private to src/lang. */
#ifndef VIGIL_LANG_ARENA_H
#define VIGIL_LANG_ARENA_H

#include <stddef.h>

struct vgl_arena {
	struct vgl_chunk *head;
};

/* Zeroed memory; exits with "out of memory" (status 3) if none is left. */
void *vgl_alloc(struct vgl_arena *a, size_t size);
void *vgl_alloc_array(struct vgl_arena *a, size_t n, size_t elem);
char *vgl_strndup(struct vgl_arena *a, const char *s, size_t n);
char *vgl_strdup(struct vgl_arena *a, const char *s);
/* Appends one zeroed element to a growable array: returns its address. */
void *vgl_push(struct vgl_arena *a, void *arrayp, size_t *n, size_t *cap, size_t elem);
void vgl_arena_free(struct vgl_arena *a);

#endif
