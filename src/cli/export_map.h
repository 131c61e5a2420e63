/* A string -> size_t map for the export's pairing tables (keys copied, never removed). */
#ifndef VIGIL_CLI_EXPORT_MAP_H
#define VIGIL_CLI_EXPORT_MAP_H

#include <stdbool.h>
#include <stddef.h>

struct vgx_map {
	char **keys;
	size_t *vals;
	size_t cap, n;
};

/* The value of key, or NULL. */
size_t *vgx_map_get(struct vgx_map *m, const char *key);
/* The value slot of key, made (set to `init`) when new; NULL on no memory. */
size_t *vgx_map_put(struct vgx_map *m, const char *key, size_t init);
void vgx_map_free(struct vgx_map *m);

/* p (an array of *cap elements of `size` bytes) with room for `need`, doubling; NULL on
 * no memory (p is still valid then). */
void *vgx_grow(void *p, size_t *cap, size_t need, size_t size);

#endif
