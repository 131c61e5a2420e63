/* Interned strings: each distinct string stored once, alive until the pool is freed. */
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

struct vgn_pool {
	struct chunk *chunks;
	const char **slots; /* open addressing by string hash */
	size_t nslots, used;
};

struct vgn_pool *vgn_pool_new(void)
{
	struct vgn_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->nslots = 256;
	p->slots = calloc(p->nslots, sizeof *p->slots);
	if (!p->slots) {
		free(p);
		return NULL;
	}
	return p;
}

void vgn_pool_free(struct vgn_pool *p)
{
	if (!p)
		return;
	for (struct chunk *c = p->chunks, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	free(p->slots);
	free(p);
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static char *store(struct vgn_pool *p, const char *s)
{
	size_t n = strlen(s) + 1;
	if (!p->chunks || p->chunks->size - p->chunks->used < n) {
		size_t size = n > 65536 ? n : 65536;
		struct chunk *c = malloc(sizeof *c + size);
		if (!c)
			return NULL;
		c->next = p->chunks;
		c->used = 0;
		c->size = size;
		p->chunks = c;
	}
	char *d = p->chunks->data + p->chunks->used;
	memcpy(d, s, n);
	p->chunks->used += n;
	return d;
}

static int grow(struct vgn_pool *p)
{
	size_t n = p->nslots * 2;
	const char **slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < p->nslots; i++)
		if (p->slots[i]) {
			size_t k = hash(p->slots[i]) & (n - 1);
			while (slots[k])
				k = (k + 1) & (n - 1);
			slots[k] = p->slots[i];
		}
	free(p->slots);
	p->slots = slots;
	p->nslots = n;
	return 0;
}

const char *vgn_pool_str(struct vgn_pool *p, const char *s)
{
	if (!s)
		s = "";
	if ((p->used + 1) * 2 > p->nslots && grow(p) < 0)
		return NULL;
	size_t k = hash(s) & (p->nslots - 1);
	for (; p->slots[k]; k = (k + 1) & (p->nslots - 1))
		if (!strcmp(p->slots[k], s))
			return p->slots[k];
	char *d = store(p, s);
	if (!d)
		return NULL;
	p->slots[k] = d;
	p->used++;
	return d;
}
