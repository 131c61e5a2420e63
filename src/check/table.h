/* An open-addressing hash table of fixed-size records whose first `ksize` bytes are the
 * key (linear probing, backward-shift deletion, grown at 1/2 load). Record pointers are
 * valid until the next insertion. */
#ifndef VIGIL_CHECK_TABLE_H
#define VIGIL_CHECK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vgc_table {
	size_t rsize, ksize;
	size_t cap, count; /* cap: a power of two (0 before the first insertion) */
	uint8_t *slots;    /* cap records */
	uint8_t *used;     /* cap flags */
	uint64_t (*hash)(const void *key);
};

void vgc_table_init(struct vgc_table *t, size_t rsize, size_t ksize,
                    uint64_t (*hash)(const void *key));
void vgc_table_free(struct vgc_table *t);
void *vgc_table_find(const struct vgc_table *t, const void *key);
/* The record of `key`; a new one is zeroed with the key copied in and sets *fresh.
 * NULL if memory ran out. */
void *vgc_table_insert(struct vgc_table *t, const void *key, bool *fresh);
/* Removes a record returned by find or insert. */
void vgc_table_remove(struct vgc_table *t, void *rec);

/* A 64-bit mix (murmur3's finalizer). */
static inline uint64_t vgc_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

#endif
