/* From a bound retrieve to temporal relational algebra (Snodgrass 1988, section 8.1):
 *
 *   logical:  πT[valid](π[targets](σT[when](σ[where](R1 × R2 × ...))))
 *
 * and the optimized plan the executor runs:
 *   - the where and when clauses split into conjuncts; each conjunct over one variable is
 *     pushed down onto that variable's scan (selection pushdown);
 *   - the default valid clause (the overlap of all variables) implies that every two
 *     variables overlap: those conjuncts are added, so they can drive joins;
 *   - variables are joined one at a time: with an `overlap` conjunct to the variables
 *     joined so far, by a sweep-line join over time-ordered inputs (state: the tuples
 *     still open); else with equality conjuncts, by a hash join; else by a product;
 *   - a variable that contributes neither to the targets nor to the valid time, and that
 *     is tied to the others only by equalities and at most one `precede`, is existential:
 *     a semi-join keeps, per key, the one time that can still match (least end or
 *     greatest begin);
 *   - every other conjunct is applied at the first join where its variables are bound. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "tquel/arena.h"

struct conds {
	struct bx **c;
	size_t nc;
	bool *cdone;
	struct tp **t;
	size_t nt;
	bool *tdone;
};

void vgq_split_where(struct bx *e, struct bx **out, size_t *n)
{
	if (!e)
		return;
	if (e->kind == BX_AND) {
		vgq_split_where(e->a, out, n);
		vgq_split_where(e->b, out, n);
		return;
	}
	out[(*n)++] = e;
}

size_t vgq_count_where(const struct bx *e)
{
	return !e ? 0 : e->kind == BX_AND ? vgq_count_where(e->a) + vgq_count_where(e->b) : 1;
}

void vgq_split_when(struct tp *e, struct tp **out, size_t *n)
{
	if (!e)
		return;
	if (e->kind == TP_AND) {
		vgq_split_when(e->a, out, n);
		vgq_split_when(e->b, out, n);
		return;
	}
	out[(*n)++] = e;
}

size_t vgq_count_when(const struct tp *e)
{
	return !e ? 0 : e->kind == TP_AND ? vgq_count_when(e->a) + vgq_count_when(e->b) : 1;
}

static struct pnode *pn(struct vgq_session *s, enum pkind k)
{
	struct pnode *n = tquel_alloc(s->arena, sizeof *n);
	n->kind = k;
	return n;
}

static uint64_t tx_vars(const struct tx *x)
{
	return x ? x->vars : 0;
}

/* ---- the logical plan: the calculus, literally ---- */

static struct pnode *logical(struct vgq_session *s, struct bstmt *b)
{
	struct pnode *p = NULL;
	for (size_t v = 0; v < b->nvars; v++) {
		struct pnode *scan = pn(s, P_SCAN);
		scan->var = (int)v;
		scan->vars = 1ull << v;
		if (!p) {
			p = scan;
			continue;
		}
		struct pnode *x = pn(s, P_PRODUCT);
		x->l = p;
		x->r = scan;
		x->vars = p->vars | scan->vars;
		p = x;
	}
	if (b->where) {
		struct pnode *x = pn(s, P_SELECT);
		x->conds = tquel_alloc(s->arena, sizeof *x->conds);
		x->conds[0] = b->where;
		x->nconds = 1;
		x->l = p;
		x->vars = p->vars;
		p = x;
	}
	if (b->when || b->nimplicit) {
		struct pnode *x = pn(s, P_TSELECT);
		x->tconds = tquel_alloc(s->arena, (1 + b->nimplicit) * sizeof *x->tconds);
		if (b->when)
			x->tconds[x->ntconds++] = b->when;
		for (size_t i = 0; i < b->nimplicit; i++)
			x->tconds[x->ntconds++] = b->implicit[i];
		x->l = p;
		x->vars = p->vars;
		p = x;
	}
	struct pnode *proj = pn(s, P_PROJECT);
	proj->l = p;
	proj->vars = p->vars;
	struct pnode *tproj = pn(s, P_TPROJECT);
	tproj->l = proj;
	tproj->vars = p->vars;
	return tproj;
}

/* ---- the physical plan ---- */

static bool key_types(enum vx_type a, enum vx_type c)
{
	bool na = a == VX_INT || a == VX_UINT || a == VX_DOUBLE;
	bool nc = c == VX_INT || c == VX_UINT || c == VX_DOUBLE;
	return (na && nc) || (a == c && (a == VX_STRING || a == VX_ENTITY || a == VX_BYTES));
}

/* An equality between an expression over `side` (non-empty subset) and one over `v`. */
static bool is_key(const struct bx *c, uint64_t side, uint64_t v, struct bx **ls, struct bx **rs)
{
	if (c->kind != BX_EQ || !key_types(c->a->type, c->b->type))
		return false;
	if (c->a->vars && (c->a->vars & ~side) == 0 && c->b->vars == v) {
		*ls = c->a;
		*rs = c->b;
		return true;
	}
	if (c->b->vars && (c->b->vars & ~side) == 0 && c->a->vars == v) {
		*ls = c->b;
		*rs = c->a;
		return true;
	}
	return false;
}

bool vgq_join_key(const struct bx *c, uint64_t side, uint64_t v, struct bx **ls, struct bx **rs)
{
	return is_key(c, side, v, ls, rs);
}

/* Attaches every unapplied conjunct whose variables are all in `bound` to node n. */
static void attach(struct vgq_session *s, struct conds *k, struct pnode *n, uint64_t bound)
{
	for (size_t i = 0; i < k->nc; i++)
		if (!k->cdone[i] && (k->c[i]->vars & ~bound) == 0) {
			if (!n->conds)
				n->conds = tquel_alloc(s->arena, k->nc * sizeof *n->conds);
			n->conds[n->nconds++] = k->c[i];
			k->cdone[i] = true;
		}
	for (size_t i = 0; i < k->nt; i++)
		if (!k->tdone[i] && (k->t[i]->vars & ~bound) == 0) {
			if (!n->tconds)
				n->tconds = tquel_alloc(s->arena, k->nt * sizeof *n->tconds);
			n->tconds[n->ntconds++] = k->t[i];
			k->tdone[i] = true;
		}
}

static struct pnode *scan_of(struct vgq_session *s, struct conds *k, int v)
{
	struct pnode *scan = pn(s, P_SCAN);
	scan->var = v;
	scan->vars = 1ull << v;
	struct pnode *sel = pn(s, P_SELECT);
	sel->l = scan;
	sel->vars = scan->vars;
	attach(s, k, sel, scan->vars);
	if (!sel->nconds && !sel->ntconds)
		return scan;
	return sel;
}

/* Is variable v existential and tied to `others` only by keys and one precede? Fills the
 * semi-join node when it is. */
static bool semijoin_of(struct vgq_session *s, struct bstmt *b, struct conds *k, int v,
                        uint64_t others, struct pnode *n)
{
	uint64_t bit = 1ull << v;
	if (b->valid == TQ_VALID_NONE ||
	    (tx_vars(b->valid_at) | tx_vars(b->valid_from) | tx_vars(b->valid_to)) & bit)
		return false;
	for (size_t i = 0; i < b->ntargets; i++)
		if (b->targets[i].value->vars & bit)
			return false;
	for (size_t i = 0; i < b->naggs; i++)
		if (b->aggs[i].var == v)
			return false;
	size_t nkeys = 0, nprecede = 0;
	for (size_t i = 0; i < k->nc; i++) {
		if (!(k->c[i]->vars & bit) || k->c[i]->vars == bit)
			continue;
		struct bx *ls, *rs;
		if (!is_key(k->c[i], others, bit, &ls, &rs))
			return false;
		nkeys++;
	}
	for (size_t i = 0; i < k->nt; i++) {
		const struct tp *t = k->t[i];
		if (!(t->vars & bit) || t->vars == bit)
			continue;
		if (t->kind != TP_PRECEDE || nprecede++)
			return false;
		bool left_v = t->x->vars == bit && t->y->vars && !(t->y->vars & ~others);
		bool right_v = t->y->vars == bit && t->x->vars && !(t->x->vars & ~others);
		if (!left_v && !right_v)
			return false;
	}
	n->kind = P_SEMIJOIN;
	n->lkeys = tquel_alloc(s->arena, (nkeys + 1) * sizeof *n->lkeys);
	n->rkeys = tquel_alloc(s->arena, (nkeys + 1) * sizeof *n->rkeys);
	n->semi = SEMI_EXISTS;
	for (size_t i = 0; i < k->nc; i++) {
		if (!(k->c[i]->vars & bit) || k->c[i]->vars == bit)
			continue;
		is_key(k->c[i], others, bit, &n->lkeys[n->nkeys], &n->rkeys[n->nkeys]);
		n->nkeys++;
		k->cdone[i] = true;
	}
	for (size_t i = 0; i < k->nt; i++) {
		const struct tp *t = k->t[i];
		if (!(t->vars & bit) || t->vars == bit)
			continue;
		if (t->x->vars == bit) { /* v precede other: least end of v */
			n->semi = SEMI_MIN_END;
			n->rt = t->x;
			n->lt = t->y;
		} else { /* other precede v: greatest begin of v */
			n->semi = SEMI_MAX_BEGIN;
			n->rt = t->y;
			n->lt = t->x;
		}
		k->tdone[i] = true;
	}
	return true;
}

/* Does the when clause already say `Vi overlap Vj` (either way round)? */
static bool stated_overlap(const struct conds *k, int i, int j)
{
	for (size_t c = 0; c < k->nt; c++) {
		const struct tp *t = k->t[c];
		if (t->kind != TP_OVERLAP || t->x->kind != TX_VAR || t->y->kind != TX_VAR)
			continue;
		if ((t->x->var == i && t->y->var == j) || (t->x->var == j && t->y->var == i))
			return true;
	}
	return false;
}

static struct pnode *physical(struct vgq_session *s, struct bstmt *b)
{
	struct conds k = {0};
	size_t nc = vgq_count_where(b->where);
	size_t nt = vgq_count_when(b->when) + b->nimplicit;
	if (b->valid == TQ_VALID_NONE)
		nt += b->nvars * b->nvars / 2;
	k.c = tquel_alloc(s->arena, (nc + 1) * sizeof *k.c);
	k.cdone = tquel_alloc(s->arena, nc + 1);
	k.t = tquel_alloc(s->arena, (nt + 1) * sizeof *k.t);
	k.tdone = tquel_alloc(s->arena, nt + 1);
	vgq_split_where(b->where, k.c, &k.nc);
	vgq_split_when(b->when, k.t, &k.nt);
	for (size_t i = 0; i < b->nimplicit; i++)
		k.t[k.nt++] = b->implicit[i];
	if (b->valid == TQ_VALID_NONE) /* the default valid time is the overlap of all */
		for (size_t i = 0; i < b->nvars; i++)
			for (size_t j = i + 1; j < b->nvars; j++) {
				if (stated_overlap(&k, (int)i, (int)j))
					continue;
				struct tp *p = tquel_alloc(s->arena, sizeof *p);
				p->kind = TP_OVERLAP;
				for (int side = 0; side < 2; side++) {
					struct tx *x = tquel_alloc(s->arena, sizeof *x);
					x->kind = TX_VAR;
					x->var = (int)(side ? j : i);
					x->event = b->vars[x->var].event;
					x->vars = 1ull << x->var;
					if (side)
						p->y = x;
					else
						p->x = x;
				}
				p->vars = p->x->vars | p->y->vars;
				k.t[k.nt++] = p;
			}

	/* existential variables become semi-joins, applied last */
	uint64_t all = b->nvars == 64 ? ~0ull : (1ull << b->nvars) - 1;
	uint64_t semi = 0;
	struct pnode *semis[VGQ_MAX_VARS];
	size_t nsemis = 0;
	for (size_t v = 0; v < b->nvars && b->nvars > 1; v++) {
		uint64_t others = all & ~semi & ~(1ull << v);
		if (!others)
			break;
		struct pnode *x = pn(s, P_SEMIJOIN);
		if (semijoin_of(s, b, &k, (int)v, others, x)) { /* marks its conjuncts only then */
			x->r = scan_of(s, &k, (int)v);
			semis[nsemis++] = x;
			semi |= 1ull << v;
		}
	}

	/* the start: the first variable with a pushed-down selection, else the first */
	int start = -1;
	for (size_t v = 0; v < b->nvars && start < 0; v++) {
		if (semi & (1ull << v))
			continue;
		for (size_t i = 0; i < k.nc; i++)
			if (!k.cdone[i] && k.c[i]->vars == 1ull << v)
				start = (int)v;
	}
	for (size_t v = 0; v < b->nvars && start < 0; v++)
		if (!(semi & (1ull << v)))
			start = (int)v;
	struct pnode *p = scan_of(s, &k, start);
	uint64_t joined = 1ull << start;
	uint64_t todo = all & ~semi & ~joined;
	while (todo) {
		/* prefer an overlap to the joined set (sweep), then equalities (hash) */
		int pick = -1, how = 0; /* 2 sweep, 1 hash */
		size_t which = 0;
		for (size_t v = 0; v < b->nvars; v++) {
			uint64_t bit = 1ull << v;
			if (!(todo & bit))
				continue;
			for (size_t i = 0; i < k.nt && how < 2; i++) {
				const struct tp *t = k.t[i];
				if (k.tdone[i] || t->kind != TP_OVERLAP)
					continue;
				if ((t->x->vars && !(t->x->vars & ~joined) && t->y->vars == bit) ||
				    (t->y->vars && !(t->y->vars & ~joined) && t->x->vars == bit)) {
					pick = (int)v;
					how = 2;
					which = i;
				}
			}
			for (size_t i = 0; i < k.nc && how < 1; i++) {
				struct bx *ls, *rs;
				if (!k.cdone[i] && is_key(k.c[i], joined, bit, &ls, &rs)) {
					pick = (int)v;
					how = 1;
				}
			}
			if (how == 2)
				break;
		}
		if (pick < 0) { /* a product with the next one */
			for (size_t v = 0; v < b->nvars && pick < 0; v++)
				if (todo & (1ull << v))
					pick = (int)v;
		}
		uint64_t bit = 1ull << pick;
		struct pnode *r = scan_of(s, &k, pick);
		struct pnode *j = pn(s, how == 2 ? P_SWEEPJOIN : how == 1 ? P_HASHJOIN : P_PRODUCT);
		j->l = p;
		j->r = r;
		if (how == 2) {
			const struct tp *t = k.t[which];
			bool x_left = t->x->vars && !(t->x->vars & ~joined);
			j->lt = x_left ? t->x : t->y;
			j->rt = x_left ? t->y : t->x;
			k.tdone[which] = true;
		} else if (how == 1) {
			j->lkeys = tquel_alloc(s->arena, k.nc * sizeof *j->lkeys);
			j->rkeys = tquel_alloc(s->arena, k.nc * sizeof *j->rkeys);
			for (size_t i = 0; i < k.nc; i++)
				if (!k.cdone[i] && is_key(k.c[i], joined, bit, &j->lkeys[j->nkeys],
				                          &j->rkeys[j->nkeys])) {
					j->nkeys++;
					k.cdone[i] = true;
				}
		}
		joined |= bit;
		todo &= ~bit;
		j->vars = joined;
		attach(s, &k, j, joined);
		p = j;
	}
	for (size_t i = 0; i < nsemis; i++) {
		semis[i]->l = p;
		semis[i]->vars = p->vars;
		p = semis[i];
	}
	/* anything left (conjuncts over no variable) filters the top */
	struct pnode *top = pn(s, P_SELECT);
	attach(s, &k, top, all);
	if (top->nconds || top->ntconds) {
		top->l = p;
		top->vars = p->vars;
		p = top;
	}
	struct pnode *proj = pn(s, P_PROJECT);
	proj->l = p;
	proj->vars = p->vars;
	struct pnode *tproj = pn(s, P_TPROJECT);
	tproj->l = proj;
	tproj->vars = p->vars;
	return tproj;
}

struct plan *vgq_plan(struct vgq_session *s, struct bstmt *b)
{
	struct plan *p = tquel_alloc(s->arena, sizeof *p);
	p->stmt = b;
	p->logical = logical(s, b);
	p->physical = physical(s, b);
	return p;
}
