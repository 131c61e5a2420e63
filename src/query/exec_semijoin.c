/* Semi-join for an existential right variable: keeps the left bindings for which some
 * right tuple exists with equal keys and, for a `precede`, the one time per key that can
 * still satisfy it (the least end of the right, or its greatest begin). The right input
 * is materialised into its groups (one representative per distinct key); the left
 * streams, each batch filtered in place. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"

struct semijoin {
	struct xrows right;
	struct xhash table; /* group -> its representative right binding */
	uint32_t *rep;
	int64_t *when;
	struct vx_value *kv, *kg;
	bool built;
	bool borrowed; /* a worker's: the groups are the original's */
};

static void semijoin_open(struct xnode *n)
{
	struct semijoin *st = vgq_xcalloc(1, sizeof *st);
	st->kv = vgq_xcalloc(n->p->nkeys + 1, sizeof *st->kv);
	st->kg = vgq_xcalloc(n->p->nkeys + 1, sizeof *st->kg);
	n->state = st;
}

static void build(struct xnode *n, struct semijoin *st)
{
	const struct pnode *p = n->p;
	const struct bstmt *b = n->cx->b;
	size_t w = n->cx->width;
	vgq_rows_collect(n->r, &st->right);
	const struct xrows *r = &st->right;
	vgq_xhash_init(&st->table, r->n);
	struct xhash *t = &st->table;
	st->rep = vgq_xcalloc(r->n ? r->n : 1, sizeof *st->rep);
	st->when = vgq_xcalloc(r->n ? r->n : 1, sizeof *st->when);
	size_t ngroups = 0;
	for (size_t j = 0; j < r->n; j++) {
		const uint32_t *y = r->rows + j * w;
		uint64_t h;
		if (!vgq_keys_of(b, p->rkeys, p->nkeys, y, st->kv, &h))
			continue;
		int64_t tm = 0;
		if (p->semi != SEMI_EXISTS) {
			struct binding bd = {y, b->vars};
			struct tval v = vgq_teval(p->rt, &bd);
			if (v.kind == TV_NOTHING)
				continue;
			tm = p->semi == SEMI_MIN_END ? v.e : v.b;
		}
		uint32_t g = 0;
		for (uint32_t e = t->head[h & t->mask]; e && !g; e = t->next[e - 1]) {
			uint64_t hg;
			if (t->hash[e - 1] != h)
				continue;
			vgq_keys_of(b, p->rkeys, p->nkeys, r->rows + (size_t)st->rep[e - 1] * w,
			            st->kg, &hg);
			if (vgq_keys_equal(st->kv, st->kg, p->nkeys))
				g = e;
		}
		if (!g) {
			st->rep[ngroups] = (uint32_t)j;
			st->when[ngroups] = tm;
			vgq_xhash_add(t, (uint32_t)ngroups, h);
			ngroups++;
		} else if (p->semi == SEMI_MIN_END ? tm < st->when[g - 1] : tm > st->when[g - 1]) {
			st->when[g - 1] = tm;
		}
	}
	vgq_note_state(n->cx->s, ngroups);
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
		uint64_t hg;
		if (t->hash[e - 1] != h)
			continue;
		vgq_keys_of(b, p->rkeys, p->nkeys,
		            st->right.rows + (size_t)st->rep[e - 1] * n->cx->width, st->kg, &hg);
		if (!vgq_keys_equal(st->kv, st->kg, p->nkeys))
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
		free(st->rep);
		free(st->when);
	}
	free(st->kv);
	free(st->kg);
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

/* A worker filters with the original's groups and its own key values. */
static void *semijoin_fork(struct xnode *clone, const struct xnode *orig)
{
	const struct semijoin *o = orig->state;
	struct semijoin *st = vgq_xcalloc(1, sizeof *st);
	*st = *o;
	st->borrowed = true;
	st->kv = vgq_xcalloc(clone->p->nkeys + 1, sizeof *st->kv);
	st->kg = vgq_xcalloc(clone->p->nkeys + 1, sizeof *st->kg);
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
