/* Growable arrays in a model's arena (the arena itself: src/base/arena.c). */
#include "lang/arena.h"

#include <string.h>

void *vgl_push(struct vgb_arena *a, void *arrayp, size_t *n, size_t *cap, size_t elem)
{
	void **array = arrayp;
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		void *fresh = vgb_arena_array(a, ncap, elem);
		if (*n)
			memcpy(fresh, *array, *n * elem);
		*array = fresh;
		*cap = ncap;
	}
	void *slot = (unsigned char *)*array + (*n)++ * elem;
	memset(slot, 0, elem); /* it may have been used before: callers pop with (*n)-- */
	return slot;
}
