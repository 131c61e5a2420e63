/* Planning the α operators of a query: the translation (every α on its entity source)
 * and the transformations that narrow what each α enables (alpha.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "live/alpha.h"
#include "query/bound.h"
#include "relations/columns.h"

struct planner {
	struct vga_plan *p;
	const struct vga_sensors *sensors;
	bool optimize;
};

/* Does the temporal expression read the begin of variable v (anything but `end of v`)? */
static bool tx_reads_begin(const struct tx *x, int v)
{
	if (!x || !(x->vars & (1ull << v)))
		return false;
	switch (x->kind) {
	case TX_VAR:
		return x->var == v;
	case TX_END:
		return x->a->kind == TX_VAR ? false : tx_reads_begin(x->a, v);
	case TX_BEGIN:
		return true;
	default:
		return tx_reads_begin(x->a, v) || tx_reads_begin(x->b, v);
	}
}

static bool tp_reads_begin(const struct tp *p, int v)
{
	if (!p)
		return false;
	if (p->kind == TP_AND || p->kind == TP_OR || p->kind == TP_NOT)
		return tp_reads_begin(p->a, v) || tp_reads_begin(p->b, v);
	return tx_reads_begin(p->x, v) || tx_reads_begin(p->y, v);
}

/* Is the begin of v's tuples never needed by statement b? The default valid clause is
 * the overlap of every variable, which reads it. */
static bool begin_unused(const struct bstmt *b, int v)
{
	if (b->valid == TQ_VALID_NONE || b->naggs || b->nimplicit)
		return false;
	if (tx_reads_begin(b->valid_at, v) || tx_reads_begin(b->valid_from, v) ||
	    tx_reads_begin(b->valid_to, v))
		return false;
	return !tp_reads_begin(b->when, v);
}

/* Is e the attribute `flag field` of variable v (an entity)? */
static bool is_flag_attr(const struct bstmt *b, const struct bx *e, int v, const char *field)
{
	return e->kind == BX_ATTR && e->var == v && e->type == VX_ENTITY && field &&
	       !strcasecmp(b->vars[v].rel->attrs[e->attr].name, field);
}

static struct vga_alpha *add_alpha(struct vga_plan *p)
{
	p->alphas = vgq_xrealloc(p->alphas, p->n + 1, sizeof *p->alphas);
	struct vga_alpha *a = &p->alphas[p->n++];
	memset(a, 0, sizeof *a);
	return a;
}

/* Every sensor of the relation into a; false when it has none. */
static bool relation_sensors(const struct vga_sensors *sensors, const char *relation,
                             struct vga_alpha *a)
{
	for (size_t i = 0; i < sensors->n; i++) {
		const struct vga_sensor *s = &sensors->v[i];
		if (strcasecmp(s->relation, relation) || a->nsensors == VGA_MAX_TYPES)
			continue;
		a->sensors[a->nsensors++] = s;
		if (!a->spec)
			a->spec = s;
	}
	return a->nsensors > 0;
}

/* The α of variable v as translated: every sensor of its relation, on the entity source. */
static struct vga_alpha *translate(struct planner *pl, const struct bstmt *b, int v,
                                   const struct bstmt *owner)
{
	const struct vgq_relation *rel = b->vars[v].rel;
	if (!rel)
		return NULL;
	struct vga_alpha a = {0};
	if (!relation_sensors(pl->sensors, rel->name, &a))
		return NULL; /* entity relation, Clock, an earlier result: no sensor to enable */
	a.stmt = owner->label;
	a.line = owner->src->loc.line;
	a.var = b->vars[v].name;
	a.relation = rel->name;
	a.source = a.spec->flag_field ? VGA_SRC_ALL : VGA_SRC_SENSOR;
	struct vga_alpha *out = add_alpha(pl->p);
	*out = a;
	return out;
}

/* O2 + O4: a conjunct `v.A = "K"` on the flag's attribute. */
static bool narrow_named(const struct bstmt *b, int v, struct vga_alpha *a, struct bx **c,
                         size_t nc)
{
	for (size_t i = 0; i < nc; i++) {
		const struct bx *e = c[i];
		if (e->kind != BX_EQ)
			continue;
		const struct bx *attr = e->a, *k = e->b;
		if (attr->kind == BX_CONST)
			attr = e->b, k = e->a;
		if (!is_flag_attr(b, attr, v, a->spec->flag_field) || k->kind != BX_CONST ||
		    k->c.type != VX_STRING || k->c.null || !k->c.v.s[0] ||
		    strpbrk(k->c.v.s, " \t\n\r"))
			continue;
		a->source = VGA_SRC_NAMED;
		a->name = k->c.v.s;
		a->why = "O2, O4";
		return true;
	}
	return false;
}

/* Does the when clause say `u precede end of v` (v an interval) or `u precede v`? */
static bool stated_precede(struct tp **t, size_t nt, int u, int v, bool v_event)
{
	for (size_t i = 0; i < nt; i++) {
		const struct tp *p = t[i];
		if (p->kind != TP_PRECEDE || p->x->kind != TX_VAR || p->x->var != u)
			continue;
		const struct tx *y = p->y;
		if (v_event ? (y->kind == TX_VAR && y->var == v)
		            : (y->kind == TX_END && y->a->kind == TX_VAR && y->a->var == v))
			return true;
	}
	return false;
}

/* O3: `v.A = u.B` and `u precede end of v`, u an event variable with an α: enable v on
 * what u names, from u's event on. `first` is the index of b's first α in the plan. */
static bool narrow_trigger(struct planner *pl, const struct bstmt *b, int v, size_t self,
                           const int *alpha_of, struct bx **c, size_t nc, struct tp **t, size_t nt)
{
	struct vga_alpha *a = &pl->p->alphas[self];
	bool v_event = a->spec->kind == VGA_EVENT;
	if (a->spec->kind == VGA_STATE || (!v_event && !begin_unused(b, v)))
		return false;
	/* A sensor traced once records one event per raise: raised by each of u's events it
	 * would record other events than the one raise per lifetime the answer is over. */
	if (a->spec->once)
		return false;
	for (size_t i = 0; i < nc; i++) {
		const struct bx *e = c[i];
		if (e->kind != BX_EQ || e->a->kind != BX_ATTR || e->b->kind != BX_ATTR)
			continue;
		for (int side = 0; side < 2; side++) {
			const struct bx *mine = side ? e->b : e->a, *other = side ? e->a : e->b;
			if (!is_flag_attr(b, mine, v, a->spec->flag_field) || other->var == v ||
			    other->type != VX_ENTITY || alpha_of[other->var] < 0)
				continue;
			const struct vga_alpha *u = &pl->p->alphas[alpha_of[other->var]];
			if (u->spec->kind != VGA_EVENT || u->source == VGA_SRC_TRIGGER ||
			    !stated_precede(t, nt, other->var, v, v_event))
				continue;
			a->source = VGA_SRC_TRIGGER;
			a->trigger = (size_t)alpha_of[other->var];
			a->trigger_by = b->vars[other->var].rel->attrs[other->attr].name;
			a->why = "O3";
			if (!v_event) { /* only the end sensor */
				size_t n = 0;
				for (size_t k = 0; k < a->nsensors; k++)
					if (a->sensors[k]->kind == VGA_END)
						a->sensors[n++] = a->sensors[k];
				a->nsensors = n;
				a->end_only = true;
			}
			return true;
		}
	}
	return false;
}

/* O6: a conjunct `C overlap v` (either way round), C over Clock[n] and v a samplable
 * interval: only intervals holding at one of C's ticks can take part in an answer, so
 * the subject samples at those ticks instead of reporting every change. With several
 * clocks, the sparsest: each conjunct must hold. */
static void narrow_clock(const struct bstmt *b, int v, struct vga_alpha *a, struct tp **t,
                         size_t nt)
{
	if (!a->spec->samplable)
		return;
	for (size_t i = 0; i < a->nsensors; i++)
		if (!a->sensors[i]->samplable)
			return;
	uint64_t every = 0;
	for (size_t i = 0; i < nt; i++) {
		const struct tp *p = t[i];
		if (p->kind != TP_OVERLAP || p->x->kind != TX_VAR || p->y->kind != TX_VAR)
			continue;
		int other = p->x->var == v ? p->y->var : p->y->var == v ? p->x->var : -1;
		if (other < 0 || other == v || !b->vars[other].clock)
			continue;
		if (b->vars[other].clock > every)
			every = b->vars[other].clock;
	}
	if (!every)
		return;
	a->sample_every = every;
	a->why = a->why ? (a->source == VGA_SRC_TRIGGER ? "O3, O6" : "O2, O4, O6") : "O6";
}

/* WaitFor is derived from every lock operation (relations/waits.c): the relations of
 * every sensor with a lock op, as translated (whole, on their entity sources), since
 * the wait-for graph needs each acquire, release and wait of every lock. */
static void lock_relations(struct planner *pl, const struct bstmt *owner)
{
	for (size_t i = 0; i < pl->sensors->n; i++) {
		const struct vga_sensor *s = &pl->sensors->v[i];
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = pl->sensors->v[j].lock_op &&
			       !strcasecmp(pl->sensors->v[j].relation, s->relation);
		if (s->lock_op && !seen)
			vga_plan_add_relation(pl->p, pl->sensors, s->relation, owner->label,
			                      owner->src->loc.line);
	}
}

/* `owner`: the retrieve b belongs to (b itself, or the statement of b's aggregate). */
static void plan_stmt(struct planner *pl, const struct bstmt *b, const struct bstmt *owner)
{
	int alpha_of[VGQ_MAX_VARS];
	size_t first = pl->p->n;
	for (size_t v = 0; v < b->nvars; v++) {
		struct vga_alpha *a = translate(pl, b, (int)v, owner);
		alpha_of[v] = a ? (int)(pl->p->n - 1) : -1;
		if (!a && b->vars[v].rel && !strcasecmp(b->vars[v].rel->name, "WaitFor"))
			lock_relations(pl, owner);
	}
	for (size_t k = 0; k < b->naggs; k++)
		if (b->aggs[k].inner)
			plan_stmt(pl, b->aggs[k].inner, owner);
	/* Aggregates are not monotone: a narrowed α could change their values. */
	if (!pl->optimize || b->naggs || b != owner || first == pl->p->n)
		return;
	struct bx **c = vgq_xcalloc(vgq_count_where(b->where) + 1, sizeof *c);
	struct tp **t = vgq_xcalloc(vgq_count_when(b->when) + 1, sizeof *t);
	size_t nc = 0, nt = 0;
	vgq_split_where(b->where, c, &nc);
	vgq_split_when(b->when, t, &nt);
	for (size_t v = 0; v < b->nvars; v++) {
		if (alpha_of[v] < 0)
			continue;
		struct vga_alpha *a = &pl->p->alphas[alpha_of[v]];
		if (a->source == VGA_SRC_ALL)
			narrow_named(b, (int)v, a, c, nc);
	}
	for (size_t v = 0; v < b->nvars; v++)
		if (alpha_of[v] >= 0 && pl->p->alphas[alpha_of[v]].source == VGA_SRC_ALL)
			narrow_trigger(pl, b, (int)v, (size_t)alpha_of[v], alpha_of, c, nc, t, nt);
	for (size_t v = 0; v < b->nvars; v++)
		if (alpha_of[v] >= 0 && !pl->p->alphas[alpha_of[v]].end_only)
			narrow_clock(b, (int)v, &pl->p->alphas[alpha_of[v]], t, nt);
	free(c);
	free(t);
}

struct vga_plan *vga_plan_new(struct vgq_session *s, const struct tquel_query *q,
                              const struct vga_sensors *sensors, bool optimize, FILE *errors,
                              size_t *nerrors)
{
	size_t nplans;
	struct plan **plans = vgq_bind_all(s, q, errors, &nplans, nerrors);
	if (!plans)
		return NULL;
	struct vga_plan *p = vgq_xcalloc(1, sizeof *p);
	p->optimized = optimize;
	struct planner pl = {p, sensors, optimize};
	for (size_t i = 0; i < nplans; i++)
		plan_stmt(&pl, plans[i]->stmt, plans[i]->stmt);
	free(plans);
	return p;
}

void vga_plan_free(struct vga_plan *p)
{
	if (!p)
		return;
	free(p->alphas);
	free(p);
}

bool vga_plan_samples(const struct vga_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->alphas[i].sample_every)
			return true;
	return false;
}

bool vga_plan_end_only(const struct vga_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->alphas[i].end_only)
			return true;
	return false;
}

bool vga_plan_add_relation(struct vga_plan *p, const struct vga_sensors *sensors,
                           const char *relation, const char *label, unsigned line)
{
	struct vga_alpha a = {0};
	if (!relation_sensors(sensors, relation, &a))
		return false;
	a.stmt = label;
	a.line = line;
	a.var = relation;
	a.relation = relation;
	a.source = a.spec->flag_field ? VGA_SRC_ALL : VGA_SRC_SENSOR;
	*add_alpha(p) = a;
	return true;
}

void vga_plan_append(struct vga_plan *dst, const struct vga_plan *src)
{
	size_t base = dst->n;
	for (size_t i = 0; i < src->n; i++) {
		struct vga_alpha *a = add_alpha(dst);
		*a = src->alphas[i];
		if (a->source == VGA_SRC_TRIGGER)
			a->trigger += base; /* u's α moved with it */
	}
}
