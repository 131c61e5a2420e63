/* A parsed query's arena: the base room's (src/base/arena.h). */
#include "tquel/arena.h"

#include <stdlib.h>

#include "base/alloc.h"
#include "base/arena.h"

struct tquel_arena {
	struct vgb_arena a;
};

struct tquel_arena *tquel_arena_new(void)
{
	return vgb_xcalloc(1, sizeof(struct tquel_arena));
}

void tquel_arena_free(struct tquel_arena *a)
{
	if (!a)
		return;
	vgb_arena_free(&a->a);
	free(a);
}

void *tquel_alloc(struct tquel_arena *a, size_t size)
{
	return vgb_arena_alloc(&a->a, size);
}

char *tquel_strndup(struct tquel_arena *a, const char *s, size_t n)
{
	return vgb_arena_strndup(&a->a, s, n);
}
