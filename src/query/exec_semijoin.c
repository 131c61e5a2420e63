/* Semi-join for an existential right variable: keeps the left bindings for which some
 * right tuple exists with equal keys and, for a `precede`, the one time per key that can
 * still satisfy it (the least end of the right, or its greatest begin). The right input
 * is materialised into its groups (one representative per distinct key, grouped by the
 * workers partition by partition of the hash table); the left
 * streams, each batch filtered in place. A key of one integer attribute per side and
 * times that are columns take the column path instead (exec_semijoin_cols.c), and over a
 * plain scan whose columns are the result, no bindings at all (exec_semijoin_result.c). */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/exec_semijoin_cols.h"

struct semijoin {
	struct xrows right;
	struct xhash table;     /* the groups, each entered as its first right binding */
	int64_t *when;          /* per group (its first binding): the least end or greatest begin */
	struct vx_value *gkeys; /* per group (its first binding): its key values, nkeys each
	                           (evaluated once, not at every probe) */
	struct vx_value *kv;    /* the probing binding's keys */
	struct vgq_semicols cols; /* the column path's groups (exec_semijoin_cols.c) */
	bool by_cols;             /* the shape takes the column path */
	bool built;
	bool borrowed;  /* a worker's: the groups are the original's */
	size_t charged; /* the groups' bytes taken from the memory budget (exec_memory.c) */
};

static void semijoin_open(struct xnode *n)
{
	struct semijoin *st = vgq_xcalloc(1, sizeof *st);
	st->kv = vgq_xcalloc(n->p->nkeys + 1, sizeof *st->kv);
	st->by_cols = vgq_semicols_init(n->cx->b, n->p, &st->cols);
	n->state = st;
}

struct group_job {
	const struct bstmt *b;
	const struct pnode *p;
	const struct xrows *r;
	struct xhash *t;
	uint64_t *hash;
	bool *keyed;   /* false: a key is null, or the time is nothing */
	int64_t *when; /* per binding its time; per group (its first binding) the group's */
	struct vx_value *gkeys; /* per group (its first binding): its keys */
	const struct vgq_hash_parts *parts;
	size_t ngroups; /* atomic */
};

static void key_piece(void *ctx, size_t lo, size_t hi)
{
	struct group_job *j = ctx;
	const struct pnode *p = j->p;
	struct vx_value kv[p->nkeys + 1];
	for (size_t i = lo; i < hi; i++) {
		const uint32_t *y = j->r->rows + i * j->r->width;
		j->keyed[i] = vgq_keys_of(j->b, p->rkeys, p->nkeys, y, kv, &j->hash[i]);
		j->when[i] = 0;
		if (!j->keyed[i] || p->semi == SEMI_EXISTS)
			continue;
		struct binding bd = {y, j->b->vars};
		struct tval v = vgq_teval(p->rt, &bd);
		j->keyed[i] = v.kind != TV_NOTHING;
		j->when[i] = p->semi == SEMI_MIN_END ? v.e : v.b;
	}
}

/* The bindings of partitions [lo, hi) into their groups, in binding order: a group is
 * its first binding, its time the least (greatest) of its bindings'. */
static void group_parts(void *ctx, size_t lo, size_t hi)
{
	struct group_job *j = ctx;
	const struct pnode *p = j->p;
	struct xhash *t = j->t;
	size_t w = j->r->width, groups = 0;
	struct vx_value kv[p->nkeys + 1];
	for (size_t part = lo; part < hi; part++)
		for (size_t k = j->parts->start[part]; k < j->parts->start[part + 1]; k++) {
			uint32_t i = j->parts->entry[k];
			uint64_t h = j->hash[i], hg;
			vgq_keys_of(j->b, p->rkeys, p->nkeys, j->r->rows + (size_t)i * w, kv, &hg);
			uint32_t g = 0;
			for (uint32_t e = t->head[h & t->mask]; e && !g; e = t->next[e - 1]) {
				if (t->hash[e - 1] != h)
					continue;
				if (vgq_keys_equal(kv, &j->gkeys[(size_t)(e - 1) * p->nkeys],
				                   p->nkeys))
					g = e;
			}
			if (!g) {
				vgq_xhash_add(t, i, h);
				memcpy(&j->gkeys[(size_t)i * p->nkeys], kv, p->nkeys * sizeof *kv);
				groups++;
			} else if (p->semi == SEMI_MIN_END ? j->when[i] < j->when[g - 1]
			                                   : j->when[i] > j->when[g - 1]) {
				j->when[g - 1] = j->when[i];
			}
		}
	__atomic_add_fetch(&j->ngroups, groups, __ATOMIC_RELAXED);
}

/* Keys and times evaluated by the workers, then the groups formed partition by
 * partition of the table (exec_hashbuild.c): the same groups at every thread count. */
static void build(struct xnode *n, struct semijoin *st)
{
	struct vgq_session *s = n->cx->s;
	if (st->by_cols) {
		vgq_semicols_build(&st->cols, s, n->r);
		vgq_note_state(s, st->cols.ngroups);
		/* its tables charged to the budget as they grew (exec_semijoin_cols.c) */
		st->built = true;
		return;
	}
	vgq_rows_collect(n->r, &st->right);
	const struct xrows *r = &st->right;
	size_t nr = r->n;
	if (!vgq_xhash_init(&st->table, nr, s, "the semi-join's table"))
		nr = 0; /* past the memory budget: the statement stops */
	st->when = vgq_xcalloc(nr ? nr : 1, sizeof *st->when);
	/* sized per binding, written only at each group's first: untouched pages stay free */
	st->gkeys = vgq_xcalloc(nr * n->p->nkeys + 1, sizeof *st->gkeys);
	struct group_job j = {.b = n->cx->b,
	                      .p = n->p,
	                      .r = r,
	                      .t = &st->table,
	                      .hash = vgq_xcalloc(nr + 1, sizeof *j.hash),
	                      .keyed = vgq_xcalloc(nr + 1, sizeof *j.keyed),
	                      .when = st->when,
	                      .gkeys = st->gkeys};
	vgq_parallel_for(s, nr, vgq_grain(s, nr, 16, 16384), key_piece, &j);
	struct vgq_hash_parts parts;
	vgq_hash_partition(s, &st->table, j.hash, j.keyed, nr, &parts);
	j.parts = &parts;
	vgq_parallel_for(s, parts.nparts, 1, group_parts, &j);
	vgq_note_state(s, j.ngroups);
	/* sized per binding, but only the groups' pages are touched */
	size_t bytes = j.ngroups * (sizeof *st->when + n->p->nkeys * sizeof *st->gkeys);
	st->charged = vgq_mem_take(s, "the semi-join's groups", bytes) ? bytes : 0;
	vgq_hash_parts_free(&parts);
	free(j.hash);
	free(j.keyed);
	st->built = true;
}

static bool keep(const struct xnode *n, struct semijoin *st, const uint32_t *x)
{
	const struct pnode *p = n->p;
	const struct bstmt *b = n->cx->b;
	const struct xhash *t = &st->table;
	uint64_t h;
	if (!vgq_keys_of(b, p->lkeys, p->nkeys, x, st->kv, &h))
		return false;
	for (uint32_t e = t->head[h & t->mask]; e; e = t->next[e - 1]) {
		if (t->hash[e - 1] != h)
			continue;
		if (!vgq_keys_equal(st->kv, &st->gkeys[(size_t)(e - 1) * p->nkeys], p->nkeys))
			continue;
		if (p->semi == SEMI_EXISTS)
			return true;
		struct binding bd = {x, b->vars};
		struct tval v = vgq_teval(p->lt, &bd);
		if (v.kind == TV_NOTHING)
			return false;
		return p->semi == SEMI_MIN_END ? st->when[e - 1] <= v.b : v.e <= st->when[e - 1];
	}
	return false;
}

static size_t semijoin_next(struct xnode *n, uint32_t *out)
{
	struct semijoin *st = n->state;
	size_t w = n->cx->width;
	if (!st->built)
		build(n, st);
	for (;;) {
		size_t got = vgq_node_next(n->l, out);
		if (!got)
			return 0;
		if (st->by_cols) {
			size_t k = vgq_semicols_filter(&st->cols, out, got, w);
			if (k)
				return k;
			continue;
		}
		size_t k = 0;
		for (size_t i = 0; i < got; i++) {
			const uint32_t *x = out + i * w;
			if (keep(n, st, x)) {
				if (k != i)
					memcpy(out + k * w, x, w * sizeof *x);
				k++;
			}
		}
		if (k)
			return k;
	}
}

static void semijoin_close(struct xnode *n)
{
	struct semijoin *st = n->state;
	if (!st)
		return;
	if (vgq_build_free(&st->right, st->built ? &st->table : NULL, st->borrowed)) {
		free(st->when);
		free(st->gkeys);
		vgq_semicols_free(&st->cols);
		vgq_mem_give(n->cx->s, st->charged);
	}
	free(st->kv);
	free(st);
}

static void semijoin_explain(const struct xnode *n, const struct xexplain *e)
{
	const struct pnode *p = n->p;
	FILE *out = e->out;
	fputs("semi-join[", out);
	vgq_explain_keys(e, p);
	if (p->semi != SEMI_EXISTS) {
		fputs(p->nkeys ? "; " : "", out);
		if (p->semi == SEMI_MIN_END) {
			vgq_explain_tx(e, p->rt, true);
			fputs(" precede ", out);
			vgq_explain_tx(e, p->lt, true);
			fputs(": least end of ", out);
		} else {
			vgq_explain_tx(e, p->lt, true);
			fputs(" precede ", out);
			vgq_explain_tx(e, p->rt, true);
			fputs(": greatest begin of ", out);
		}
		vgq_explain_tx(e, p->rt, true);
		fputs(p->nkeys ? " per key" : "", out);
	}
	fputs("]", out);
}

static void semijoin_build(struct xnode *n)
{
	struct semijoin *st = n->state;
	if (!st->built)
		build(n, st);
}

const struct vgq_semicols *vgq_semijoin_cols(struct xnode *n)
{
	struct semijoin *st = n->state;
	if (!st || !st->by_cols)
		return NULL;
	if (!st->built)
		build(n, st);
	return &st->cols;
}

/* A worker filters with the original's groups and its own key values. */
static void *semijoin_fork(struct xnode *clone, const struct xnode *orig)
{
	const struct semijoin *o = orig->state;
	struct semijoin *st = vgq_xcalloc(1, sizeof *st);
	*st = *o;
	st->borrowed = true;
	st->kv = vgq_xcalloc(clone->p->nkeys + 1, sizeof *st->kv);
	return st;
}

const struct xops vgq_semijoin_ops = {.name = "semi-join",
                                      .open = semijoin_open,
                                      .next = semijoin_next,
                                      .close = semijoin_close,
                                      .explain = semijoin_explain,
                                      .streams = true,
                                      .build = semijoin_build,
                                      .fork = semijoin_fork,
                                      .unfork = semijoin_close};
