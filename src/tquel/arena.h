/* Bump allocation for the nodes and strings of one parsed query, freed at once. */
#ifndef VIGIL_TQUEL_ARENA_H
#define VIGIL_TQUEL_ARENA_H

#include <stddef.h>

struct tquel_arena;

struct tquel_arena *tquel_arena_new(void);
void tquel_arena_free(struct tquel_arena *a);
/* Zeroed, aligned for any type. Out of memory: one line, exit status 2. */
void *tquel_alloc(struct tquel_arena *a, size_t size);
char *tquel_strndup(struct tquel_arena *a, const char *s, size_t n);

#endif
