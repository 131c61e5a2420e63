/* Hash join on equality conjuncts: the right input is materialised and hashed on its key
 * expressions (its build side); each left binding probes it. Null keys match nothing.
 * Output: per left binding in order, its matches (most recently built first), through the
 * node's residual conditions. The hash table and key helpers serve the semi-join too. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_hash_spill.h"
#include "query/exec_node.h"
#include "relations/columns.h" /* vgq_mix */

bool vgq_keys_of(const struct bstmt *b, struct bx *const *keys, size_t nkeys, const uint32_t *row,
                 struct vx_value *out, uint64_t *hash)
{
	struct binding bd = {row, b->vars};
	uint64_t h = 0x12345;
	for (size_t k = 0; k < nkeys; k++) {
		out[k] = vgq_eval(keys[k], &bd);
		if (out[k].null)
			return false;
		h = (h ^ vgq_value_hash(&out[k])) * 0x100000001b3ull;
	}
	*hash = vgq_mix(h);
	return true;
}

bool vgq_keys_equal(const struct vx_value *a, const struct vx_value *c, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (!vgq_value_equal(&a[k], &c[k]))
			return false;
	return true;
}

static size_t buckets_for(size_t n)
{
	size_t size = 16;
	while (size < 2 * n)
		size *= 2;
	return size;
}

size_t vgq_xhash_bytes(size_t n)
{
	/* head, next, hash; while building: hashes, keyed flags, partitioned entries */
	return buckets_for(n) * sizeof(uint32_t) + n * (sizeof(uint32_t) + sizeof(uint64_t)) +
	       n * (sizeof(uint64_t) + sizeof(bool) + sizeof(uint32_t));
}

bool vgq_xhash_init(struct xhash *t, size_t n, struct vgq_session *s, const char *what)
{
	size_t size = buckets_for(n), bytes = vgq_xhash_bytes(n);
	bool ok = vgq_mem_take(s, what, bytes);
	if (!ok)
		size = 16, n = 0, bytes = 0;
	t->mem = s;
	t->charged = bytes;
	t->head = vgq_xcalloc(size, sizeof *t->head);
	t->next = vgq_xcalloc(n ? n : 1, sizeof *t->next);
	t->hash = vgq_xcalloc(n ? n : 1, sizeof *t->hash);
	t->mask = size - 1;
	return ok;
}

void vgq_xhash_add(struct xhash *t, uint32_t entry, uint64_t h)
{
	size_t bkt = h & t->mask;
	t->hash[entry] = h;
	t->next[entry] = t->head[bkt];
	t->head[bkt] = entry + 1;
}

void vgq_xhash_free(struct xhash *t)
{
	free(t->head);
	free(t->next);
	free(t->hash);
	if (t->mem)
		vgq_mem_give(t->mem, t->charged);
	t->charged = 0;
}

struct hashjoin {
	struct xrows right;
	struct xhash table;
	bool built;
	struct vx_value *kl, *kr; /* key values of the probing binding, of a candidate */
	uint64_t h;               /* the probing binding's hash */
	uint32_t chain;           /* the next candidate entry + 1; 0: chain done */
	bool probing;
	uint32_t *lbuf;
	size_t ln, li;
	bool borrowed;                /* a worker's: right and table are the original's */
	struct vgq_hash_spill *spill; /* the table did not fit: joined by partitions */
};

static void hashjoin_open(struct xnode *n)
{
	struct hashjoin *st = vgq_xcalloc(1, sizeof *st);
	st->lbuf = vgq_batch_alloc(n->cx);
	st->kl = vgq_xcalloc(n->p->nkeys + 1, sizeof *st->kl);
	st->kr = vgq_xcalloc(n->p->nkeys + 1, sizeof *st->kr);
	n->state = st;
}

struct hash_job {
	const struct bstmt *b;
	const struct pnode *p;
	const struct xrows *rows;
	uint64_t *hash;
	bool *keyed; /* false: a key is null */
};

static void hash_piece(void *ctx, size_t lo, size_t hi)
{
	struct hash_job *j = ctx;
	struct vx_value kv[j->p->nkeys + 1];
	for (size_t i = lo; i < hi; i++)
		j->keyed[i] = vgq_keys_of(j->b, j->p->rkeys, j->p->nkeys,
		                          j->rows->rows + i * j->rows->width, kv, &j->hash[i]);
}

struct fill_job {
	struct xhash *t;
	const struct vgq_hash_parts *parts;
	const uint64_t *hash;
};

static void fill_parts(void *ctx, size_t lo, size_t hi)
{
	struct fill_job *j = ctx;
	for (size_t p = lo; p < hi; p++)
		for (size_t k = j->parts->start[p]; k < j->parts->start[p + 1]; k++) {
			uint32_t e = j->parts->entry[k];
			vgq_xhash_add(j->t, e, j->hash[e]);
		}
}

/* The build side's keys hashed by the session's workers, then put in the table in entry
 * order, partition by partition (so chains, and the order of matches, are the serial
 * build's). */
static void build(struct xnode *n, struct hashjoin *st)
{
	struct vgq_session *s = n->cx->s;
	vgq_rows_collect(n->r, &st->right);
	size_t nr = st->right.n;
	if (nr && !vgq_overflowed(n->cx) && vgq_xhash_bytes(nr) > vgq_mem_room(s)) {
		/* past the budget: partitioned to spill files, the partitions joined by the
		 * workers (exec_hash_spill.c), the joined rows read on one thread */
		st->spill = vgq_hash_spill_run(n, &st->right);
		n->serial = true;
		st->built = true;
		return;
	}
	if (!vgq_xhash_init(&st->table, nr, s, "the hash join's table"))
		nr = 0; /* past the memory budget: the statement stops */
	struct hash_job j = {n->cx->b, n->p, &st->right, vgq_xcalloc(nr + 1, sizeof *j.hash),
	                     vgq_xcalloc(nr + 1, sizeof *j.keyed)};
	vgq_parallel_for(s, nr, vgq_grain(s, nr, 16, 16384), hash_piece, &j);
	struct vgq_hash_parts parts;
	vgq_hash_partition(s, &st->table, j.hash, j.keyed, nr, &parts);
	struct fill_job f = {&st->table, &parts, j.hash};
	vgq_parallel_for(s, parts.nparts, 1, fill_parts, &f);
	vgq_note_state(s, parts.start[parts.nparts]);
	vgq_hash_parts_free(&parts);
	free(j.hash);
	free(j.keyed);
	st->built = true;
}

static size_t hashjoin_next(struct xnode *n, uint32_t *out)
{
	struct hashjoin *st = n->state;
	const struct pnode *p = n->p;
	const struct bstmt *b = n->cx->b;
	size_t w = n->cx->width;
	if (!st->built)
		build(n, st);
	if (st->spill)
		return vgq_hash_spill_next(st->spill, w, out);
	const struct xhash *t = &st->table;
	uint64_t lvars = n->l->p->vars;
	size_t k = 0;
	while (k < VGQ_BATCH) {
		if (!st->probing) {
			if (st->li == st->ln) {
				st->ln = vgq_node_next(n->l, st->lbuf);
				st->li = 0;
				if (!st->ln)
					break;
			}
			if (!vgq_keys_of(b, p->lkeys, p->nkeys, st->lbuf + st->li * w, st->kl,
			                 &st->h)) {
				st->li++;
				continue;
			}
			st->chain = t->head[st->h & t->mask];
			st->probing = true;
		}
		const uint32_t *x = st->lbuf + st->li * w;
		while (st->chain && k < VGQ_BATCH) {
			uint32_t e = st->chain - 1;
			st->chain = t->next[e];
			if (t->hash[e] != st->h)
				continue;
			const uint32_t *y = st->right.rows + (size_t)e * w;
			uint64_t hy;
			vgq_keys_of(b, p->rkeys, p->nkeys, y, st->kr, &hy);
			if (!vgq_keys_equal(st->kl, st->kr, p->nkeys))
				continue;
			uint32_t *row = out + k * w;
			vgq_merge_row(w, lvars, x, y, row);
			if (!vgq_node_passes(n, row))
				continue;
			if (!vgq_node_emit_ok(n))
				return 0;
			k++;
		}
		if (!st->chain) {
			st->probing = false;
			st->li++;
		}
	}
	return k;
}

static void hashjoin_close(struct xnode *n)
{
	struct hashjoin *st = n->state;
	if (!st)
		return;
	vgq_build_free(&st->right, st->built && !st->spill ? &st->table : NULL, st->borrowed);
	if (!st->borrowed)
		vgq_hash_spill_free(st->spill);
	free(st->kl);
	free(st->kr);
	free(st->lbuf);
	free(st);
}

static void hashjoin_explain(const struct xnode *n, const struct xexplain *e)
{
	fputs("hash join[", e->out);
	vgq_explain_keys(e, n->p);
	fputs("]", e->out);
	vgq_explain_residual(e, n->p);
}

static void hashjoin_build(struct xnode *n)
{
	struct hashjoin *st = n->state;
	if (!st->built)
		build(n, st);
}

/* A worker probes the original's table with its own left batches and key values. */
static void *hashjoin_fork(struct xnode *clone, const struct xnode *orig)
{
	const struct hashjoin *o = orig->state;
	struct hashjoin *st = vgq_xcalloc(1, sizeof *st);
	st->right = o->right;
	st->table = o->table;
	st->built = true;
	st->borrowed = true;
	st->lbuf = vgq_batch_alloc(clone->cx);
	st->kl = vgq_xcalloc(clone->p->nkeys + 1, sizeof *st->kl);
	st->kr = vgq_xcalloc(clone->p->nkeys + 1, sizeof *st->kr);
	return st;
}

const struct xops vgq_hashjoin_ops = {.name = "hash join",
                                      .open = hashjoin_open,
                                      .next = hashjoin_next,
                                      .close = hashjoin_close,
                                      .explain = hashjoin_explain,
                                      .streams = true,
                                      .build = hashjoin_build,
                                      .fork = hashjoin_fork,
                                      .unfork = hashjoin_close};
