/* The open tuples of an interval relation: a list in opening order, plus chained buckets
 * (each also in opening order) on the key's hash. An end walks only its bucket, skipping
 * nodes of another hash, so the first match is still the oldest (newest) of its key. */
#include <stdlib.h>

#include "relations/columns.h"
#include "relations/open.h"

static void link_bucket(struct vgq_openset *o, size_t i)
{
	struct vgq_open_node *nd = &o->nodes[i];
	size_t b = nd->hash & (o->nbuckets - 1);
	nd->bnext = VGQ_OPEN_NONE;
	nd->bprev = o->btail[b];
	if (o->btail[b] == VGQ_OPEN_NONE)
		o->bhead[b] = i;
	else
		o->nodes[o->btail[b]].bnext = i;
	o->btail[b] = i;
}

/* Rebuilds the buckets from the opening-order list, so each bucket keeps that order. */
static void rebucket(struct vgq_openset *o, size_t nbuckets)
{
	free(o->bhead);
	free(o->btail);
	o->nbuckets = nbuckets;
	o->bhead = vgq_xcalloc(nbuckets, sizeof *o->bhead);
	o->btail = vgq_xcalloc(nbuckets, sizeof *o->btail);
	for (size_t b = 0; b < nbuckets; b++)
		o->bhead[b] = o->btail[b] = VGQ_OPEN_NONE;
	for (size_t i = o->head; i != VGQ_OPEN_NONE; i = o->nodes[i].next)
		link_bucket(o, i);
}

void vgq_open_free(struct vgq_openset *o)
{
	free(o->nodes);
	free(o->bhead);
	free(o->btail);
	*o = (struct vgq_openset){0};
}

void vgq_open_add(struct vgq_openset *o, size_t tuple, uint32_t image, uint64_t hash)
{
	if (!o->nbuckets) {
		o->head = o->tail = o->free_node = VGQ_OPEN_NONE;
		rebucket(o, 64);
	}
	size_t i = o->free_node;
	if (i != VGQ_OPEN_NONE) {
		o->free_node = o->nodes[i].next;
	} else {
		if (o->nnodes == o->capnodes) {
			o->capnodes = o->capnodes ? 2 * o->capnodes : 16;
			o->nodes = vgq_xrealloc(o->nodes, o->capnodes, sizeof *o->nodes);
		}
		i = o->nnodes++;
	}
	o->nodes[i] = (struct vgq_open_node){
	    .tuple = tuple, .hash = hash, .image = image, .prev = o->tail, .next = VGQ_OPEN_NONE};
	if (o->tail == VGQ_OPEN_NONE)
		o->head = i;
	else
		o->nodes[o->tail].next = i;
	o->tail = i;
	o->n++;
	if (o->n > 2 * o->nbuckets)
		rebucket(o, 4 * o->nbuckets);
	else
		link_bucket(o, i);
}

void vgq_open_remove(struct vgq_openset *o, size_t i)
{
	struct vgq_open_node *nd = &o->nodes[i];
	if (nd->prev == VGQ_OPEN_NONE)
		o->head = nd->next;
	else
		o->nodes[nd->prev].next = nd->next;
	if (nd->next == VGQ_OPEN_NONE)
		o->tail = nd->prev;
	else
		o->nodes[nd->next].prev = nd->prev;
	size_t b = nd->hash & (o->nbuckets - 1);
	if (nd->bprev == VGQ_OPEN_NONE)
		o->bhead[b] = nd->bnext;
	else
		o->nodes[nd->bprev].bnext = nd->bnext;
	if (nd->bnext == VGQ_OPEN_NONE)
		o->btail[b] = nd->bprev;
	else
		o->nodes[nd->bnext].bprev = nd->bprev;
	nd->next = o->free_node;
	o->free_node = i;
	o->n--;
}

static size_t skip_other_hashes(const struct vgq_openset *o, size_t i, uint64_t hash, bool newest)
{
	while (i != VGQ_OPEN_NONE && o->nodes[i].hash != hash)
		i = newest ? o->nodes[i].bprev : o->nodes[i].bnext;
	return i;
}

size_t vgq_open_first(const struct vgq_openset *o, bool by_hash, uint64_t hash, bool newest)
{
	if (!o->n)
		return VGQ_OPEN_NONE;
	if (!by_hash)
		return newest ? o->tail : o->head;
	size_t b = hash & (o->nbuckets - 1);
	return skip_other_hashes(o, newest ? o->btail[b] : o->bhead[b], hash, newest);
}

size_t vgq_open_next(const struct vgq_openset *o, size_t i, bool by_hash, bool newest)
{
	const struct vgq_open_node *nd = &o->nodes[i];
	if (!by_hash)
		return newest ? nd->prev : nd->next;
	return skip_other_hashes(o, newest ? nd->bprev : nd->bnext, nd->hash, newest);
}

void vgq_open_rehash(struct vgq_openset *o,
                     uint64_t (*hash)(void *arg, size_t tuple, uint32_t image), void *arg)
{
	if (!o->nbuckets)
		return;
	for (size_t i = o->head; i != VGQ_OPEN_NONE; i = o->nodes[i].next)
		o->nodes[i].hash = hash(arg, o->nodes[i].tuple, o->nodes[i].image);
	rebucket(o, o->nbuckets);
}
