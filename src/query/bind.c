/* Binding a retrieve: every tuple variable to the relation of its latest `range`, every
 * `V.attr` to an attribute, every expression to a type (docs/tquel.md, *Values*), every
 * aggregate to an auxiliary relation and variable. Errors name what was unknown and the
 * closest known names, or both types. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/engine_internal.h"
#include "query/suggest.h"
#include "relations/columns.h"
#include "relations/derived.h"
#include "tquel/arena.h"
#include "tquel/tquel.h"

struct binder {
	struct vgq_session *s;
	const struct tquel_query *q;
	struct vgq_diag *d;
	struct bstmt *outer;
	bool failed;
	/* names of the variables the statement mentions outside aggregates */
	const char *outer_names[VGQ_MAX_VARS];
	size_t nouter;
};

static void error(struct binder *bd, const struct tquel_loc *loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void error(struct binder *bd, const struct tquel_loc *loc, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!bd->failed)
		tquel_report(bd->q, loc, bd->d->out, "%s", msg);
	bd->failed = true; /* one error per statement: later ones tend to follow from it */
	bd->d->errors++;
}

static void *alloc(struct binder *bd, size_t size)
{
	return tquel_alloc(bd->s->arena, size);
}

static const char *vx_type_name(enum vx_type t)
{
	static const char *const names[] = {"int",   "uint",   "double",   "string",
	                                    "bytes", "entity", "condition"};
	return names[t];
}

/* ---- relations and variables ---- */

static const struct srange *find_range(struct vgq_session *s, const char *var)
{
	for (size_t i = s->nranges; i-- > 0;)
		if (!strcmp(s->ranges[i].var, var))
			return &s->ranges[i];
	return NULL;
}

/* Without a trace (explain only), relations are placeholders whose attributes appear as
 * they are named. */
static const struct vgq_relation *placeholder(struct vgq_session *s, const char *name,
                                              enum vgq_rkind kind)
{
	for (size_t i = 0; i < s->nowned; i++)
		if (!strcmp(s->owned[i]->name, name))
			return s->owned[i];
	struct vgq_relation *r =
	    vgq_relation_new(tquel_strndup(s->arena, name, strlen(name)), kind);
	vgq_session_own(s, r);
	return r;
}

/* The relation `name` as a statement over database db sees it (the session's, or the
 * trace as of an instant). */
static const struct vgq_relation *relation_in(struct vgq_session *s, struct vgq_database *db,
                                              const char *name, uint64_t clock, char *err,
                                              size_t errsize)
{
	err[0] = '\0';
	if (clock) {
		if (!db)
			return placeholder(s, clock == 1 ? "Clock" : "Clock[n]", VGQ_REL_EVENT);
		return vgq_database_clock(db, s->opts.tick_ns, clock, err, errsize);
	}
	for (size_t i = 0; i < s->nresults; i++)
		if (!strcasecmp(s->results[i]->name, name)) {
			if (db == s->db)
				return s->results[i];
			snprintf(
			    err, errsize,
			    "as of: '%s' is the result of an earlier retrieve, not recorded, so "
			    "it has no transaction time (give that retrieve the as of clause)",
			    s->results[i]->name);
			return NULL;
		}
	if (!db)
		return placeholder(s, name, VGQ_REL_INTERVAL);
	const struct vgq_relation *r = vgq_database_find(db, name);
	if (!r && db != s->db && vgq_derived_source(name)) {
		snprintf(
		    err, errsize,
		    "as of: %s is derived by an analysis of the whole trace (%s), not recorded "
		    "tuple by tuple, so it has no transaction time; query it without as of",
		    name, vgq_derived_source(name));
		return NULL;
	}
	return r ? r : vgq_database_derived(db, name, err, errsize);
}

const struct vgq_relation *vgq_session_relation(struct vgq_session *s, const char *name,
                                                uint64_t clock, char *err, size_t errsize)
{
	return relation_in(s, s->db, name, clock, err, errsize);
}

/* The names a relation could have been: the trace's, the results', Clock; and with
 * `derived`, the derived relations' (docs/tquel.md). */
static void relation_names(struct vgq_session *s, bool with_derived, const char ***names, size_t *n)
{
	const char **derived = NULL;
	size_t nderived = s->db && with_derived ? vgq_derived_names(s->db, &derived) : 0;
	size_t cap = (s->db ? s->db->nrelations : 0) + nderived + s->nresults + 1;
	*names = calloc(cap, sizeof **names);
	*n = 0;
	if (!*names) {
		free(derived);
		return;
	}
	for (size_t i = 0; s->db && i < s->db->nrelations; i++)
		(*names)[(*n)++] = s->db->relations[i]->name;
	for (size_t i = 0; i < nderived; i++)
		(*names)[(*n)++] = derived[i];
	free(derived);
	for (size_t i = 0; i < s->nresults; i++)
		(*names)[(*n)++] = s->results[i]->name;
	(*names)[(*n)++] = "Clock";
}

/* Checks a `range` statement's relation; reports it when unknown. */
bool vgq_check_range(struct vgq_session *s, const struct tquel_query *q,
                     const struct tquel_range *r, struct vgq_diag *d)
{
	char err[1024]; /* room for a derived relation's refusal and its reason */
	if (vgq_session_relation(s, r->relation, r->clock_period, err, sizeof err))
		return true;
	if (err[0]) {
		tquel_report(q, &r->relation_loc, d->out, "%s", err);
	} else {
		const char **names;
		size_t n;
		relation_names(s, false, &names, &n);
		char list[512];
		int k = vgq_suggest(r->relation, names, n, list, sizeof list);
		free(names);
		if (k != 1) { /* no recorded relation is close: maybe a derived one */
			relation_names(s, true, &names, &n);
			k = vgq_suggest(r->relation, names, n, list, sizeof list);
			free(names);
		}
		tquel_report(q, &r->relation_loc, d->out, "no relation '%s' in %s%s%s%s",
		             r->relation,
		             s->db && s->db->from_model ? "the sensor description" : "the trace",
		             k == 1   ? " (did you mean "
		             : k == 0 ? " (relations: "
		                      : "",
		             list,
		             k == 1   ? "?)"
		             : k == 0 ? ")"
		                      : "");
	}
	d->errors++;
	return false;
}

/* The index of variable `name` in statement b, adding it from its range. -1 after an
 * error. */
static int variable(struct binder *bd, struct bstmt *b, const char *name,
                    const struct tquel_loc *loc)
{
	for (size_t i = 0; i < b->nvars; i++)
		if (!strcmp(b->vars[i].name, name))
			return (int)i;
	const struct srange *r = find_range(bd->s, name);
	if (r && r->bad) { /* its range was reported already */
		bd->failed = true;
		return -1;
	}
	if (!r) {
		const char *names[VGQ_MAX_VARS * 2];
		size_t n = 0;
		for (size_t i = 0; i < bd->s->nranges && n < VGQ_MAX_VARS * 2; i++)
			names[n++] = bd->s->ranges[i].var;
		char list[512];
		int k = vgq_suggest(name, names, n, list, sizeof list);
		error(bd, loc,
		      "no tuple variable '%s' (declare it with 'range of %s is RELATION')%s%s%s",
		      name, name,
		      k == 1   ? "; did you mean "
		      : k == 0 ? "; variables: "
		               : "",
		      list, k == 1 ? "?" : "");
		return -1;
	}
	if (b->nvars == VGQ_MAX_VARS) {
		error(bd, loc, "more than %d tuple variables in one statement", VGQ_MAX_VARS);
		return -1;
	}
	char err[1024]; /* room for a derived relation's refusal and its reason */
	const struct vgq_relation *rel =
	    relation_in(bd->s, b->db, r->relation, r->clock, err, sizeof err);
	if (!rel) { /* checked at the range; a clock may fail only by its size, as of by
		       its relation */
		error(bd, loc, "%s", err[0] ? err : "the relation of this variable is gone");
		return -1;
	}
	struct bvar *v = &b->vars[b->nvars];
	v->name = r->var;
	v->rel = rel;
	v->event = rel->kind == VGQ_REL_EVENT;
	v->clock = r->clock;
	return (int)b->nvars++;
}

static int attribute(struct binder *bd, const struct vgq_relation *rel, const char *name,
                     const char *var, const struct tquel_loc *loc)
{
	int a = vgq_relation_attr(rel, name);
	if (a >= 0)
		return a;
	if (!bd->s->db) { /* explain without a trace: attributes appear as named */
		return vgq_relation_add_attr((struct vgq_relation *)rel,
		                             tquel_strndup(bd->s->arena, name, strlen(name)),
		                             VGQ_INT, NULL);
	}
	const char *names[256];
	size_t n = 0;
	for (size_t i = 0; i < rel->nattrs && n < 256; i++)
		names[n++] = rel->attrs[i].name;
	char list[512];
	int k = vgq_suggest(name, names, n, list, sizeof list);
	bool time = !strcasecmp(name, "from") || !strcasecmp(name, "to") || !strcasecmp(name, "at");
	error(bd, loc, "%s (%s) has no attribute '%s'%s%s%s%s", var, rel->name, name,
	      k == 1   ? "; did you mean "
	      : k == 0 ? "; its attributes: "
	      : n == 0 ? "; it has no explicit attributes"
	               : "",
	      list, k == 1 ? "?" : "",
	      time ? " (valid times are used in when and valid clauses: begin of V, end of V)"
	           : "");
	return -1;
}

/* ---- value expressions ---- */

static struct bx *bind_value(struct binder *bd, struct bstmt *b, const struct tquel_expr *e,
                             bool in_agg);

static struct bx *node(struct binder *bd, enum bx_kind k, enum vx_type t,
                       const struct tquel_expr *src)
{
	struct bx *x = alloc(bd, sizeof *x);
	x->kind = k;
	x->type = t;
	x->src = src;
	x->fault = &bd->s->fault;
	return x;
}

static bool is_numeric(enum vx_type t)
{
	return t == VX_INT || t == VX_UINT || t == VX_DOUBLE;
}

static bool comparable(enum vx_type a, enum vx_type b, enum bx_kind op)
{
	bool eq = op == BX_EQ || op == BX_NE;
	if (is_numeric(a) && is_numeric(b))
		return true;
	if (a == VX_STRING && b == VX_STRING)
		return true;
	if ((a == VX_ENTITY && b == VX_STRING) || (a == VX_STRING && b == VX_ENTITY))
		return true;
	if (a == VX_ENTITY && b == VX_ENTITY)
		return eq;
	if (a == VX_BYTES && b == VX_BYTES)
		return eq;
	return false;
}

static struct bx *bind_agg(struct binder *bd, struct bstmt *b, const struct tquel_expr *e);

/* The entity kind of an attribute that refers to entities, when its relation says it. */
static const char *entity_kind(const struct bstmt *b, const struct bx *x)
{
	return x->type == VX_ENTITY && x->kind == BX_ATTR
	           ? b->vars[x->var].rel->attrs[x->attr].ref_kind
	           : NULL;
}

static struct bx *bind_value(struct binder *bd, struct bstmt *b, const struct tquel_expr *e,
                             bool in_agg)
{
	if (bd->failed)
		return NULL;
	switch (e->kind) {
	case TQ_NUMBER: {
		struct bx *x = node(bd, BX_CONST, e->u.number.is_int ? VX_INT : VX_DOUBLE, e);
		x->c.type = x->type;
		if (e->u.number.is_int)
			x->c.v.i = e->u.number.i;
		else
			x->c.v.d = e->u.number.d;
		return x;
	}
	case TQ_STRING: {
		struct bx *x = node(bd, BX_CONST, VX_STRING, e);
		x->c.type = VX_STRING;
		x->c.v.s = e->u.string.s;
		return x;
	}
	case TQ_ATTR: {
		int v = variable(bd, b, e->u.attr.var, &e->loc);
		if (v < 0)
			return NULL;
		int a = attribute(bd, b->vars[v].rel, e->u.attr.name, e->u.attr.var, &e->loc);
		if (a < 0)
			return NULL;
		struct bx *x = node(bd, BX_ATTR, vx_type_of(b->vars[v].rel->attrs[a].type), e);
		x->var = v;
		x->attr = a;
		x->vars = 1ull << v;
		return x;
	}
	case TQ_NEG: {
		struct bx *a = bind_value(bd, b, e->u.op.a, in_agg);
		if (!a)
			return NULL;
		if (!is_numeric(a->type) && bd->s->db) {
			error(bd, &e->loc, "'-' needs a number, not %s", vx_type_name(a->type));
			return NULL;
		}
		struct bx *x = node(bd, BX_NEG, a->type == VX_DOUBLE ? VX_DOUBLE : VX_INT, e);
		x->a = a;
		x->vars = a->vars;
		return x;
	}
	case TQ_AGG:
		if (in_agg) {
			error(bd, &e->loc, "an aggregate cannot be inside another aggregate");
			return NULL;
		}
		return bind_agg(bd, b, e);
	default:
		break;
	}
	if (tquel_is_temporal_expr(e->kind) || e->kind == TQ_PRECEDE || e->kind == TQ_OVERLAPS ||
	    e->kind == TQ_EQUAL) {
		error(bd, &e->loc, "a temporal expression is not a value here");
		return NULL;
	}
	struct bx *a = bind_value(bd, b, e->u.op.a, in_agg);
	struct bx *c = e->kind == TQ_NOT || !a ? NULL : bind_value(bd, b, e->u.op.b, in_agg);
	if (!a || (e->kind != TQ_NOT && !c))
		return NULL;
	bool typed = bd->s->db != NULL;
	struct bx *x;
	switch (e->kind) {
	case TQ_ADD:
	case TQ_SUB:
	case TQ_MUL:
	case TQ_DIV:
		if (typed && (!is_numeric(a->type) || !is_numeric(c->type))) {
			error(bd, &e->loc, "'%s' needs numbers, not %s and %s",
			      tquel_op_text(e->kind), vx_type_name(a->type), vx_type_name(c->type));
			return NULL;
		}
		x = node(bd, (enum bx_kind)(BX_ADD + (e->kind - TQ_ADD)),
		         a->type == VX_DOUBLE || c->type == VX_DOUBLE ? VX_DOUBLE : VX_INT, e);
		break;
	case TQ_EQ:
	case TQ_NE:
	case TQ_LT:
	case TQ_LE:
	case TQ_GT:
	case TQ_GE: {
		enum bx_kind k = (enum bx_kind)(BX_EQ + (e->kind - TQ_EQ));
		if (typed && (a->type == VX_BOOL || c->type == VX_BOOL ||
		              !comparable(a->type, c->type, k))) {
			bool order = comparable(a->type, c->type, BX_EQ) && a->type != VX_BOOL;
			error(bd, &e->loc, "cannot compare %s with %s%s", vx_type_name(a->type),
			      vx_type_name(c->type), order ? " by order (only '=' and '!=')" : "");
			return NULL;
		}
		/* An entity equals only itself (docs/tquel.md "Values"): entities of two kinds
		 * are never the same, though their ids may be. */
		const char *ka = entity_kind(b, a), *kc = entity_kind(b, c);
		if (typed && ka && kc && strcmp(ka, kc)) {
			error(bd, &e->loc,
			      "cannot compare a %s entity with a %s entity: an entity equals only "
			      "itself, so entities of two kinds are never equal",
			      ka, kc);
			return NULL;
		}
		x = node(bd, k, VX_BOOL, e);
		break;
	}
	case TQ_AND:
	case TQ_OR:
	case TQ_NOT: {
		const struct bx *bad = a->type != VX_BOOL ? a : c && c->type != VX_BOOL ? c : NULL;
		if (bad) {
			error(bd, &bad->src->loc, "'%s' needs conditions (comparisons), not %s",
			      tquel_op_text(e->kind), vx_type_name(bad->type));
			return NULL;
		}
		x = node(bd,
		         e->kind == TQ_AND  ? BX_AND
		         : e->kind == TQ_OR ? BX_OR
		                            : BX_NOT,
		         VX_BOOL, e);
		break;
	}
	default:
		error(bd, &e->loc, "unexpected expression");
		return NULL;
	}
	x->a = a;
	x->b = c;
	x->vars = a->vars | (c ? c->vars : 0);
	return x;
}

/* ---- temporal expressions and predicates ---- */

static struct tx *bind_time(struct binder *bd, struct bstmt *b, const struct tquel_expr *e)
{
	if (bd->failed)
		return NULL;
	struct tx *x = alloc(bd, sizeof *x);
	x->src = e;
	switch (e->kind) {
	case TQ_TVAR: {
		int v = variable(bd, b, e->u.tvar.name, &e->loc);
		if (v < 0)
			return NULL;
		x->kind = TX_VAR;
		x->var = v;
		x->event = b->vars[v].event;
		x->vars = 1ull << v;
		return x;
	}
	case TQ_BEGIN_OF:
	case TQ_END_OF:
		x->kind = e->kind == TQ_BEGIN_OF ? TX_BEGIN : TX_END;
		x->a = bind_time(bd, b, e->u.op.a);
		if (!x->a)
			return NULL;
		x->event = true;
		x->vars = x->a->vars;
		return x;
	case TQ_AGG: {
		/* the valid time of the aggregate's value: its piece, a maximal interval over
		 * which the value is constant (per group) */
		if (b != bd->outer) {
			error(bd, &e->loc, "an aggregate cannot be inside another aggregate");
			return NULL;
		}
		struct bx *v = bind_agg(bd, b, e);
		if (!v)
			return NULL;
		x->kind = TX_VAR;
		x->var = v->var;
		x->event = false;
		x->vars = 1ull << v->var;
		return x;
	}
	case TQ_TCONST:
		/* "now" is the end of what was recorded: the trace's last event (under vigil
		 * watch, the last one read so far: each answer binds anew, so it moves);
		 * "beginning" and "forever" are the extremes of the time line */
		x->kind = TX_CONST;
		x->event = true;
		x->at = e->u.tconst.which == TQ_NOW         ? (b->db ? b->db->last : 0)
		        : e->u.tconst.which == TQ_BEGINNING ? INT64_MIN
		        : e->u.tconst.which == TQ_FOREVER   ? INT64_MAX
		                                            : e->u.tconst.ns;
		return x;
	case TQ_INTERSECT:
	case TQ_EXTEND:
		x->kind = e->kind == TQ_INTERSECT ? TX_INTERSECT : TX_EXTEND;
		x->a = bind_time(bd, b, e->u.op.a);
		x->b = x->a ? bind_time(bd, b, e->u.op.b) : NULL;
		if (!x->b)
			return NULL;
		x->event = x->kind == TX_INTERSECT && (x->a->event || x->b->event);
		x->vars = x->a->vars | x->b->vars;
		return x;
	default:
		error(bd, &e->loc,
		      "expected a temporal expression (a tuple variable, begin of, end "
		      "of, overlap, extend)");
		return NULL;
	}
}

static struct tp *bind_pred(struct binder *bd, struct bstmt *b, const struct tquel_expr *e)
{
	if (bd->failed)
		return NULL;
	struct tp *p = alloc(bd, sizeof *p);
	p->src = e;
	switch (e->kind) {
	case TQ_AND:
	case TQ_OR:
		p->kind = e->kind == TQ_AND ? TP_AND : TP_OR;
		p->a = bind_pred(bd, b, e->u.op.a);
		p->b = p->a ? bind_pred(bd, b, e->u.op.b) : NULL;
		if (!p->b)
			return NULL;
		p->vars = p->a->vars | p->b->vars;
		return p;
	case TQ_NOT:
		p->kind = TP_NOT;
		p->a = bind_pred(bd, b, e->u.op.a);
		if (!p->a)
			return NULL;
		p->vars = p->a->vars;
		return p;
	case TQ_PRECEDE:
	case TQ_OVERLAPS:
	case TQ_EQUAL:
		p->kind = e->kind == TQ_PRECEDE    ? TP_PRECEDE
		          : e->kind == TQ_OVERLAPS ? TP_OVERLAP
		                                   : TP_EQUAL;
		p->x = bind_time(bd, b, e->u.op.a);
		p->y = p->x ? bind_time(bd, b, e->u.op.b) : NULL;
		if (!p->y)
			return NULL;
		p->vars = p->x->vars | p->y->vars;
		return p;
	default:
		error(bd, &e->loc, "expected a temporal predicate (precede, overlap, equal)");
		return NULL;
	}
}

/* ---- aggregates ---- */

static struct bx *bind_agg(struct binder *bd, struct bstmt *b, const struct tquel_expr *e)
{
	const struct tquel_agg *g = &e->u.agg;
	struct bstmt *in = alloc(bd, sizeof *in);
	in->db = b->db; /* as of: the aggregate's variables too */
	in->label = "aggregate";
	/* the by-list, then the argument, as the inner statement's targets */
	in->ntargets = g->nby + 1;
	in->targets = alloc(bd, in->ntargets * sizeof *in->targets);
	for (size_t i = 0; i < g->nby; i++) {
		in->targets[i].value = bind_value(bd, in, g->by[i], true);
		if (!in->targets[i].value)
			return NULL;
	}
	struct bx *arg = bind_value(bd, in, g->arg, true);
	if (!arg)
		return NULL;
	in->targets[g->nby].value = arg;
	if (g->where) {
		in->where = bind_value(bd, in, g->where, true);
		if (!in->where)
			return NULL;
		if (in->where->type != VX_BOOL) {
			error(bd, &g->where->loc, "where needs a condition, not %s",
			      vx_type_name(in->where->type));
			return NULL;
		}
	}
	if (g->when && !(in->when = bind_pred(bd, in, g->when)))
		return NULL;
	for (size_t i = 0; i < in->ntargets; i++)
		if (in->targets[i].value->type == VX_BOOL) {
			error(bd, &in->targets[i].value->src->loc,
			      "an aggregate's argument and by-list are values, not conditions");
			return NULL;
		}
	bool typed = bd->s->db != NULL;
	/* count, any, avgti, varts take any value (only its time counts); min, max, first and
	 * last numbers or strings; the others numbers */
	bool any_type =
	    g->fn == TQ_COUNT || g->fn == TQ_ANY || g->fn == TQ_AVGTI || g->fn == TQ_VARTS;
	bool ordered = g->fn == TQ_MIN || g->fn == TQ_MAX || g->fn == TQ_FIRST || g->fn == TQ_LAST;
	if (typed && !any_type && !ordered && !is_numeric(arg->type)) {
		error(bd, &g->arg->loc, "%s%s needs numbers, not %s", tquel_aggfn_names[g->fn],
		      g->unique ? "U" : "", vx_type_name(arg->type));
		return NULL;
	}
	if (typed && ordered && !is_numeric(arg->type) && arg->type != VX_STRING) {
		error(bd, &g->arg->loc, "%s needs numbers or strings, not %s",
		      tquel_aggfn_names[g->fn], vx_type_name(arg->type));
		return NULL;
	}
	if (in->nvars == 0) {
		error(bd, &e->loc,
		      "an aggregate needs a tuple variable (count(W.Process), not count(1))");
		return NULL;
	}
	in->result_event = false;
	for (size_t i = 0; i < in->nvars; i++)
		in->result_event |= in->vars[i].event;

	if (b->naggs == 0)
		b->aggs = alloc(bd, VGQ_MAX_VARS * sizeof *b->aggs);
	if (b->nvars == VGQ_MAX_VARS || b->naggs == VGQ_MAX_VARS) {
		error(bd, &e->loc, "too many aggregates and variables in one statement");
		return NULL;
	}
	struct bagg *a = &b->aggs[b->naggs];
	a->src = e;
	a->inner = in;
	a->nby = g->nby;
	a->fn = g->fn;
	a->unique = g->unique;
	a->window = g->window;
	a->span_ns = g->span_ns;
	a->outer_by = alloc(bd, (g->nby + 1) * sizeof *a->outer_by);
	/* the auxiliary relation: g0..gn-1, value */
	char *name = alloc(bd, 32);
	snprintf(name, 32, "agg#%zu", b->naggs + 1);
	a->rel = vgq_relation_new(name, VGQ_REL_INTERVAL);
	vgq_session_own(bd->s, a->rel);
	for (size_t i = 0; i < g->nby; i++) {
		char *gname = alloc(bd, 24);
		snprintf(gname, 24, "g%zu", i);
		const struct bx *t = in->targets[i].value;
		const char *kind =
		    t->kind == BX_ATTR ? in->vars[t->var].rel->attrs[t->attr].ref_kind : NULL;
		vgq_relation_add_attr(a->rel, gname, vgq_type_of_vx(t->type), kind);
	}
	enum vx_type vt = g->fn == TQ_COUNT || g->fn == TQ_ANY        ? VX_INT
	                  : g->fn == TQ_SUM && arg->type != VX_DOUBLE ? VX_INT
	                  : g->fn == TQ_SUM || ordered                ? arg->type
	                                                              : VX_DOUBLE;
	vgq_relation_add_attr(a->rel, "value", vgq_type_of_vx(vt), NULL);
	int v = (int)b->nvars++;
	b->vars[v].name = name;
	b->vars[v].rel = a->rel;
	b->vars[v].event = false;
	a->var = v;
	b->naggs++;
	/* by-items over outer variables only are correlated: bound again in the outer scope */
	for (size_t i = 0; i < g->nby; i++)
		if (tquel_only_names(g->by[i], bd->outer_names, bd->nouter)) {
			a->outer_by[i] = bind_value(bd, b, g->by[i], true);
			if (!a->outer_by[i])
				return NULL;
		}
	struct bx *x = node(bd, BX_ATTR, vt, e);
	x->var = v;
	x->attr = (int)g->nby;
	x->vars = 1ull << v;
	return x;
}

/* ---- statements ---- */

static struct bx *and_also(struct binder *bd, struct bx *a, struct bx *c)
{
	if (!a)
		return c;
	struct bx *x = node(bd, BX_AND, VX_BOOL, c->src);
	x->a = a;
	x->b = c;
	x->vars = a->vars | c->vars;
	return x;
}

/* The target list, `V.all` expanded to every attribute of V's relation (in its order; a
 * clock has none). Without a trace the attributes are unknown: `V.all` stays one target. */
static bool bind_targets(struct binder *bd, struct bstmt *b, const struct tquel_retrieve *r)
{
	size_t cap = r->ntargets;
	b->targets = alloc(bd, cap * sizeof *b->targets);
	for (size_t i = 0; i < r->ntargets; i++) {
		const struct tquel_target *t = &r->targets[i];
		const struct tquel_expr *one[1] = {t->value};
		const struct tquel_expr **items = one;
		size_t nitems = 1;
		if (t->all && bd->s->db) {
			int v = variable(bd, b, t->value->u.attr.var, &t->value->loc);
			if (v < 0)
				return false;
			const struct vgq_relation *rel = b->vars[v].rel;
			nitems = rel->nattrs;
			items = alloc(bd, (nitems ? nitems : 1) * sizeof *items);
			for (size_t k = 0; k < nitems; k++) {
				struct tquel_expr *x = alloc(bd, sizeof *x);
				*x = *t->value;
				x->u.attr.name = rel->attrs[k].name;
				items[k] = x;
			}
		}
		if (b->ntargets + nitems > cap) {
			struct btarget *old = b->targets;
			cap = b->ntargets + nitems + cap;
			b->targets = alloc(bd, cap * sizeof *b->targets);
			memcpy(b->targets, old, b->ntargets * sizeof *old);
		}
		for (size_t k = 0; k < nitems; k++) {
			const char *name = t->all && bd->s->db ? items[k]->u.attr.name : t->name;
			for (size_t j = 0; j < b->ntargets; j++)
				if (!strcasecmp(b->targets[j].name, name)) {
					error(bd, &t->loc, "two result attributes named '%s'%s",
					      name,
					      t->all ? " (V.all names every attribute of V)" : "");
					return false;
				}
			struct btarget *bt = &b->targets[b->ntargets++];
			bt->name = name;
			bt->value = bind_value(bd, b, items[k], false);
			if (!bt->value)
				return false;
			if (bt->value->type == VX_BOOL) {
				error(bd, &t->value->loc,
				      "'%s' is a condition; a result attribute needs a value",
				      name);
				return false;
			}
		}
	}
	return true;
}

/* The first tuple variable or aggregate in e, or NULL. */
static const struct tquel_expr *first_tuple_ref(const struct tquel_expr *e)
{
	if (!e || e->kind == TQ_TVAR || e->kind == TQ_AGG)
		return e;
	if (e->kind == TQ_BEGIN_OF || e->kind == TQ_END_OF || e->kind == TQ_INTERSECT ||
	    e->kind == TQ_EXTEND) {
		const struct tquel_expr *a = first_tuple_ref(e->u.op.a);
		return a ? a : first_tuple_ref(e->u.op.b);
	}
	return NULL;
}

/* as of E [through E2]: instants over temporal constants (TQuel's rollback names times,
 * not tuples). The statement then ranges over the trace as recorded up to E, or up to
 * E2 with through: nothing recorded is ever retracted from a trace, so what was known
 * at some instant from E to E2 is what was known at E2, each tuple in its latest form
 * (asof.c; docs/tquel.md "as of"). */
static bool bind_asof(struct binder *bd, struct bstmt *b, const struct tquel_asof *a)
{
	const struct tquel_expr *e[2] = {a->at, a->through};
	int64_t at[2] = {0, 0};
	for (int i = 0; i < 2 && e[i]; i++) {
		const struct tquel_expr *v = first_tuple_ref(e[i]);
		if (v) {
			error(bd, &v->loc,
			      "as of names an instant: temporal constants (\"now\", a date), not "
			      "%s",
			      v->kind == TQ_AGG ? "an aggregate" : "a tuple variable");
			return false;
		}
		struct tx *x = bind_time(bd, b, e[i]);
		if (!x)
			return false;
		struct binding none = {0};
		struct tval t = vgq_teval(x, &none);
		if (t.kind != TV_EVENT) {
			error(bd, &e[i]->loc, "as of needs an event (an instant), and this is %s",
			      t.kind == TV_NOTHING ? "nothing"
			                           : "an interval (use begin of or end of)");
			return false;
		}
		at[i] = t.b;
	}
	if (a->through && at[1] < at[0]) {
		error(bd, &a->through->loc,
		      "as of E through E2 needs E2 at or after E (%" PRId64 " < %" PRId64 " ns)",
		      at[1], at[0]);
		return false;
	}
	if (!bd->s->db) /* explain without a trace */
		return true;
	char err[1024]; /* room for a derived relation's refusal and its reason */
	b->db = vgq_asof_database(bd->s, a->through ? at[1] : at[0], err, sizeof err);
	if (!b->db)
		error(bd, &a->loc, "%s", err);
	return b->db != NULL;
}

struct bstmt *vgq_bind(struct vgq_session *s, const struct tquel_query *q,
                       const struct tquel_stmt *st, struct vgq_diag *d)
{
	struct binder bd = {.s = s, .q = q, .d = d};
	const struct tquel_retrieve *r = &st->u.retrieve;
	struct bstmt *b = alloc(&bd, sizeof *b);
	bd.outer = b;
	b->src = st;
	b->into = r->into;
	if (r->into) {
		b->label = r->into;
		bool taken =
		    (s->db && vgq_database_find(s->db, r->into)) || !strcasecmp(r->into, "Clock");
		for (size_t i = 0; i < s->nresults && !taken; i++)
			taken = !strcasecmp(s->results[i]->name, r->into);
		if (taken) {
			error(&bd, &r->into_loc,
			      "'%s' is already a relation; name the result otherwise", r->into);
			return NULL;
		}
	} else {
		char *label = alloc(&bd, 32);
		snprintf(label, 32, "retrieve@%u", st->loc.line);
		b->label = label;
	}
	bd.nouter = tquel_outer_names(r, bd.outer_names, VGQ_MAX_VARS);

	b->unique = r->unique;
	b->db = s->db;
	if (r->asof.at && !bind_asof(&bd, b, &r->asof))
		return NULL;
	if (!bind_targets(&bd, b, r))
		return NULL;
	if (r->where) {
		b->where = bind_value(&bd, b, r->where, false);
		if (!b->where)
			return NULL;
		if (b->where->type != VX_BOOL) {
			error(&bd, &r->where->loc, "where needs a condition (a comparison), not %s",
			      vx_type_name(b->where->type));
			return NULL;
		}
	}
	if (r->when && !(b->when = bind_pred(&bd, b, r->when)))
		return NULL;
	b->valid = r->valid.kind;
	if (b->valid == TQ_VALID_AT) {
		b->valid_at = bind_time(&bd, b, r->valid.at);
		if (!b->valid_at)
			return NULL;
		if (!b->valid_at->event && s->db) {
			error(&bd, &r->valid.at->loc,
			      "valid at needs an event, and this is an interval (use begin of or "
			      "end of)");
			return NULL;
		}
	} else if (b->valid == TQ_VALID_FROM_TO) {
		b->valid_from = bind_time(&bd, b, r->valid.from);
		b->valid_to = b->valid_from ? bind_time(&bd, b, r->valid.to) : NULL;
		if (!b->valid_to)
			return NULL;
	}
	/* aggregates: correlated by-items become equalities; with an explicit valid clause,
	 * the aggregate's value must hold at the result's valid time */
	for (size_t i = 0; i < b->naggs; i++) {
		struct bagg *a = &b->aggs[i];
		for (size_t k = 0; k < a->nby; k++) {
			if (!a->outer_by[k])
				continue;
			struct bx *g =
			    node(&bd, BX_ATTR, a->outer_by[k]->type, a->outer_by[k]->src);
			g->var = a->var;
			g->attr = (int)k;
			g->vars = 1ull << a->var;
			struct bx *eq = node(&bd, BX_EQ, VX_BOOL, a->outer_by[k]->src);
			eq->a = a->outer_by[k];
			eq->b = g;
			eq->vars = eq->a->vars | g->vars;
			b->where = and_also(&bd, b->where, eq);
		}
		if (b->valid != TQ_VALID_NONE) {
			if (!b->implicit)
				b->implicit = alloc(&bd, b->naggs * sizeof *b->implicit);
			struct tp *p = alloc(&bd, sizeof *p);
			p->kind = TP_OVERLAP;
			p->x = alloc(&bd, sizeof *p->x);
			p->x->kind = TX_VAR;
			p->x->var = a->var;
			p->x->vars = 1ull << a->var;
			p->x->src = a->src;
			if (b->valid == TQ_VALID_AT)
				p->y = b->valid_at;
			else {
				p->y = alloc(&bd, sizeof *p->y);
				p->y->kind = TX_EXTEND;
				p->y->a = b->valid_from;
				p->y->b = b->valid_to;
				p->y->vars = b->valid_from->vars | b->valid_to->vars;
				p->y->src = r->valid.from;
			}
			p->vars = p->x->vars | p->y->vars;
			p->src = a->src;
			b->implicit[b->nimplicit++] = p;
		}
	}
	if (b->nvars == 0) {
		error(&bd, &st->loc, "a retrieve needs at least one tuple variable");
		return NULL;
	}
	if (b->valid == TQ_VALID_AT)
		b->result_event = true;
	else if (b->valid == TQ_VALID_NONE)
		for (size_t i = 0; i < b->nvars; i++)
			b->result_event |= b->vars[i].event;
	if (bd.failed)
		return NULL;
	b->out = vgq_result_skeleton(s, b);
	if (b->into) {
		s->results = vgq_xrealloc(s->results, s->nresults + 1, sizeof *s->results);
		s->results[s->nresults++] = b->out;
	}
	return b;
}
