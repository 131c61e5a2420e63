/* Bump allocation for the nodes and strings of one parsed query, freed at once. */
#ifndef VIGIL_QUERY_TQUEL_ARENA_H
#define VIGIL_QUERY_TQUEL_ARENA_H

#include <stddef.h>

struct tquel_arena;

struct tquel_arena *tquel_arena_new(void);
void tquel_arena_free(struct tquel_arena *a);
/* Zeroed, aligned for any type. Out of memory aborts with a message. */
void *tquel_alloc(struct tquel_arena *a, size_t size);
char *tquel_strndup(struct tquel_arena *a, const char *s, size_t n);

#endif
