/* The open tuples of an interval relation being built, in the order they opened, indexed
 * by a hash of their key (image and the attributes an end matches), so that an end finds
 * the oldest (or newest) open tuple it may close without scanning every open one. */
#ifndef VIGIL_RELATIONS_OPEN_H
#define VIGIL_RELATIONS_OPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VGQ_OPEN_NONE SIZE_MAX

struct vgq_open_node {
	size_t tuple;
	uint64_t hash;
	uint32_t image;
	size_t prev, next;   /* all open tuples, oldest first */
	size_t bprev, bnext; /* those of one bucket, oldest first */
};

struct vgq_openset {
	struct vgq_open_node *nodes;
	size_t nnodes, capnodes, free_node; /* freed nodes chained through `next` */
	size_t head, tail;                  /* oldest, newest */
	size_t *bhead, *btail, nbuckets;    /* nbuckets: 0 or a power of two */
	size_t n;
};

void vgq_open_free(struct vgq_openset *o);
void vgq_open_add(struct vgq_openset *o, size_t tuple, uint32_t image, uint64_t hash);
void vgq_open_remove(struct vgq_openset *o, size_t node);
/* Iteration over the open tuples whose hash equals `hash` (by_hash) or over all of them,
 * oldest first, or newest first when `newest`: first, then next until VGQ_OPEN_NONE. */
size_t vgq_open_first(const struct vgq_openset *o, bool by_hash, uint64_t hash, bool newest);
size_t vgq_open_next(const struct vgq_openset *o, size_t node, bool by_hash, bool newest);
/* Gives every open tuple a new hash (the key's attributes changed), keeping the order. */
void vgq_open_rehash(struct vgq_openset *o,
                     uint64_t (*hash)(void *arg, size_t tuple, uint32_t image), void *arg);

#endif
