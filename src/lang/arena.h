/* Memory of a loaded model: one arena (src/base/arena.h), freed at once by vgl_free, and
 * growable arrays in it. Private to src/lang. */
#ifndef VIGIL_LANG_ARENA_H
#define VIGIL_LANG_ARENA_H

#include <stddef.h>

#include "base/arena.h"

/* Appends one zeroed element to a growable array: returns its address. */
void *vgl_push(struct vgb_arena *a, void *arrayp, size_t *n, size_t *cap, size_t elem);

#endif
