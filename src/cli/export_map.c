/* Open addressing over FNV-1a; the table doubles at half full (export_map.h). */
#define _GNU_SOURCE
#include "export_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t slot(const struct vgx_map *m, const char *key)
{
	size_t i = (size_t)hash(key) & (m->cap - 1);
	while (m->keys[i] && strcmp(m->keys[i], key))
		i = (i + 1) & (m->cap - 1);
	return i;
}

size_t *vgx_map_get(struct vgx_map *m, const char *key)
{
	if (!m->cap)
		return NULL;
	size_t i = slot(m, key);
	return m->keys[i] ? &m->vals[i] : NULL;
}

static bool grow(struct vgx_map *m)
{
	struct vgx_map g = {calloc(m->cap ? m->cap * 2 : 64, sizeof(char *)), NULL,
	                    m->cap ? m->cap * 2 : 64, m->n};
	g.vals = calloc(g.cap, sizeof(size_t));
	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return false;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i]) {
			size_t j = slot(&g, m->keys[i]);
			g.keys[j] = m->keys[i];
			g.vals[j] = m->vals[i];
		}
	free(m->keys);
	free(m->vals);
	*m = g;
	return true;
}

size_t *vgx_map_put(struct vgx_map *m, const char *key, size_t init)
{
	if ((m->n + 1) * 2 > m->cap && !grow(m))
		return NULL;
	size_t i = slot(m, key);
	if (!m->keys[i]) {
		if (!(m->keys[i] = strdup(key)))
			return NULL;
		m->vals[i] = init;
		m->n++;
	}
	return &m->vals[i];
}

void vgx_map_free(struct vgx_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

void *vgx_grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}
