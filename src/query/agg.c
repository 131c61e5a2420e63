/* Aggregates (TQuel, Snodgrass et al. 1993): the value of an aggregate changes over
 * time, so it is computed as an interval relation (g0, ..., gn-1, value) holding, per
 * group of the by-list, the maximal intervals over which the value is constant.
 *
 * The aggregate's own variables are evaluated like a retrieve whose valid time is their
 * overlap; each qualifying binding contributes its argument (nulls are skipped) over
 * that time, an event at t over [t, t + 1).
 *   for each instant: the value at t is over the contributions valid at t;
 *   for each SPAN:    over those valid at some instant of (t - SPAN, t];
 *   for ever:         over the contributions that began at or before t.
 * any, stdev, first, last, rate, avgti and varts: agg_time.c.
 * count and countU are 0 where no contribution is valid, from the trace's first event to
 * its last; the other functions have no value there (no tuple). The outer statement joins
 * this relation like any other (by-items equal, valid times overlapping). The
 * contributions are collected by the aggregate's executor node (exec_aggregate.c). */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "relations/columns.h"

static size_t g_nby;

static int by_key(const void *x, const void *y)
{
	const struct vgq_contrib *a = x, *c = y;
	for (size_t k = 0; k < g_nby; k++) {
		int o = vgq_value_order(&a->key[k], &c->key[k]);
		if (o)
			return o;
	}
	return a->b < c->b ? -1 : a->b > c->b;
}

/* 0 when two contributions are in the same group */
static int by_key_eq(const struct vgq_contrib *a, const struct vgq_contrib *c, size_t nby)
{
	for (size_t k = 0; k < nby; k++)
		if (vgq_value_order(&a->key[k], &c->key[k]))
			return 1;
	return 0;
}

struct point {
	int64_t t;
	size_t c; /* contribution */
	bool add;
};

static int by_time(const void *x, const void *y)
{
	const struct point *a = x, *c = y;
	if (a->t != c->t)
		return a->t < c->t ? -1 : 1;
	return a->add - c->add; /* removals first */
}

static int by_value(const void *x, const void *y)
{
	return vgq_value_order(x, y);
}

/* The aggregate of `n` values, begun at times `b`; false when it has none. */
static bool aggregate(const struct bagg *a, struct vx_value *vals, int64_t *b, size_t n,
                      enum vx_type type, struct vx_value *out)
{
	memset(out, 0, sizeof *out);
	out->type = type;
	if (a->fn >= TQ_ANY)
		return vgq_agg_temporal(a->fn, vals, b, n, out);
	if (a->unique && n > 1) { /* distinct values only */
		qsort(vals, n, sizeof *vals, by_value);
		size_t k = 1;
		for (size_t i = 1; i < n; i++)
			if (vgq_value_order(&vals[i], &vals[k - 1]))
				vals[k++] = vals[i];
		n = k;
	}
	if (a->fn == TQ_COUNT) {
		out->v.i = (int64_t)n;
		return true;
	}
	if (!n)
		return false;
	switch (a->fn) {
	case TQ_SUM:
	case TQ_AVG: {
		if (type == VX_INT) {
			uint64_t sum = 0;
			for (size_t i = 0; i < n; i++)
				sum +=
				    vals[i].type == VX_UINT ? vals[i].v.u : (uint64_t)vals[i].v.i;
			out->v.i = (int64_t)sum;
		} else {
			double sum = 0;
			for (size_t i = 0; i < n; i++)
				sum += vgq_agg_num(&vals[i]);
			out->v.d = a->fn == TQ_AVG ? sum / (double)n : sum;
		}
		return true;
	}
	default: {
		size_t best = 0;
		for (size_t i = 1; i < n; i++) {
			int o = vgq_value_order(&vals[i], &vals[best]);
			if (a->fn == TQ_MIN ? o < 0 : o > 0)
				best = i;
		}
		*out = vals[best];
		return true;
	}
	}
}

struct emitter {
	struct vgq_relation *rel;
	const struct vx_value *key;
	size_t nby;
	bool have;
	int64_t b, e;
	struct vx_value v;
};

static void flush(struct emitter *m)
{
	if (!m->have || m->b >= m->e)
		return;
	size_t t = vgq_relation_append(m->rel, m->b);
	m->rel->to[t] = m->e;
	m->rel->open[t] = false;
	for (size_t k = 0; k <= m->nby; k++) {
		const struct vx_value *v = k < m->nby ? &m->key[k] : &m->v;
		union vgq_column *c = &m->rel->cols[k];
		switch (m->rel->attrs[k].type) {
		case VGQ_INT:
			c->i[t] = v->type == VX_UINT ? (int64_t)v->v.u : v->v.i;
			break;
		case VGQ_UINT:
			c->u[t] = v->v.u;
			break;
		case VGQ_DOUBLE:
			c->d[t] = vgq_agg_num(v);
			break;
		case VGQ_STRING:
			c->s[t] = v->null ? NULL : v->v.s;
			break;
		case VGQ_BYTES:
			c->b[t] = v->v.b;
			break;
		case VGQ_ENTITY:
			c->r[t] = v->v.r;
			break;
		}
	}
	m->have = false;
}

/* A piece [b, e) with value v: merged with the previous one when equal and adjacent. */
static void piece(struct emitter *m, int64_t b, int64_t e, const struct vx_value *v)
{
	if (b >= e)
		return;
	if (m->have && m->e == b && !vgq_value_order(&m->v, v) && m->v.null == v->null) {
		m->e = e;
		return;
	}
	flush(m);
	m->have = true;
	m->b = b;
	m->e = e;
	m->v = *v;
}

static void group(const struct bagg *a, struct vgq_contrib *c, size_t n, struct emitter *m,
                  enum vx_type type)
{
	const struct vgq_database *db = a->inner->db; /* the session's, or as of an instant */
	int64_t first = db ? db->first : 0, horizon = db ? db->last + 1 : 1;
	/* count and any have a value (0) where nothing is valid */
	bool zero = a->fn == TQ_COUNT || a->fn == TQ_ANY;
	struct vx_value zv = {.type = VX_INT};
	struct point *p = vgq_xcalloc(2 * n, sizeof *p);
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		p[np++] = (struct point){c[i].b, i, true};
		if (a->window == TQ_INSTANT)
			p[np++] = (struct point){c[i].e, i, false};
		else if (a->window == TQ_SPAN) /* valid at some instant of (t - span, t] */
			p[np++] = (struct point){c[i].e > INT64_MAX - a->span_ns + 1
			                             ? INT64_MAX
			                             : c[i].e + a->span_ns - 1,
			                         i, false};
	}
	qsort(p, np, sizeof *p, by_time);
	struct vx_value *active = vgq_xcalloc(n + 1, sizeof *active);
	size_t *where = vgq_xcalloc(n + 1, sizeof *where); /* contribution -> slot */
	size_t *who = vgq_xcalloc(n + 1, sizeof *who);     /* slot -> contribution */
	size_t nactive = 0;
	struct vx_value *scratch = vgq_xcalloc(n + 1, sizeof *scratch);
	int64_t *begins = vgq_xcalloc(n + 1, sizeof *begins);
	int64_t at = first;
	if (zero && p[0].t > first)
		piece(m, first, p[0].t, &zv);
	for (size_t i = 0; i < np;) {
		int64_t t = p[i].t;
		for (; i < np && p[i].t == t; i++) {
			size_t ci = p[i].c;
			if (p[i].add) {
				where[ci] = nactive;
				who[nactive] = ci;
				active[nactive++] = c[ci].arg;
			} else { /* swap-remove */
				size_t slot = where[ci], last = --nactive;
				active[slot] = active[last];
				who[slot] = who[last];
				where[who[slot]] = slot;
			}
		}
		at = t;
		if (at >= horizon)
			break;
		int64_t next = i < np && p[i].t < horizon ? p[i].t : horizon;
		if (next <= at)
			next = at + 1;
		memcpy(scratch, active, nactive * sizeof *active);
		for (size_t k = 0; k < nactive; k++)
			begins[k] = c[who[k]].b;
		struct vx_value v;
		if (nactive || zero) {
			if (aggregate(a, scratch, begins, nactive, type, &v))
				piece(m, at, next, &v);
		}
	}
	flush(m);
	free(p);
	free(active);
	free(where);
	free(who);
	free(scratch);
	free(begins);
}

void vgq_agg_finish(struct vgq_session *s, struct bagg *a, struct vgq_contrib *c, size_t n)
{
	(void)s; /* the time line is the statement's database's (as of: its own) */
	size_t nby = a->nby;
	g_nby = nby;
	if (n > 1) /* no contributions: c may be NULL, which qsort must not get */
		qsort(c, n, sizeof *c, by_key);
	enum vx_type type;
	switch (a->rel->attrs[nby].type) {
	case VGQ_UINT:
		type = VX_UINT;
		break;
	case VGQ_DOUBLE:
		type = VX_DOUBLE;
		break;
	case VGQ_STRING:
		type = VX_STRING;
		break;
	default:
		type = VX_INT;
	}
	struct emitter m = {.rel = a->rel, .nby = nby};
	const struct vgq_database *db = a->inner->db;
	if (n == 0 && nby == 0 && (a->fn == TQ_COUNT || a->fn == TQ_ANY) && db) {
		/* nothing qualifies: count (any) is 0 over the whole trace */
		struct vx_value zv = {.type = VX_INT};
		piece(&m, db->first, db->last + 1, &zv);
		flush(&m);
	}
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !by_key_eq(&c[i], &c[j], nby))
			j++;
		m.key = c[i].key;
		group(a, c + i, j - i, &m, type);
		i = j;
	}
	vgq_relation_finish(a->rel, db ? db->last : 0);
}
