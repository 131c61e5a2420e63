/* Values of one binding (a tuple per variable): attribute loads, arithmetic,
 * comparisons in three-valued logic, and the temporal expressions and predicates of
 * docs/tquel.md, *What a query means*. */
#include <math.h>
#include <string.h>

#include "query/engine_internal.h"

enum vx_type vx_type_of(enum vgq_type t)
{
	static const enum vx_type map[] = {VX_INT,    VX_UINT,  VX_DOUBLE,
	                                   VX_STRING, VX_BYTES, VX_ENTITY};
	return map[t];
}

enum vgq_type vgq_type_of_vx(enum vx_type t)
{
	static const enum vgq_type map[] = {VGQ_INT,   VGQ_UINT,   VGQ_DOUBLE, VGQ_STRING,
	                                    VGQ_BYTES, VGQ_ENTITY, VGQ_INT};
	return map[t];
}

struct vx_value vgq_column_value(const struct vgq_relation *r, int attr, uint32_t row)
{
	struct vx_value v = {0};
	const union vgq_column *c = &r->cols[attr];
	if (r->nulls && r->nulls[attr] && r->nulls[attr][row]) {
		v.type = vx_type_of(r->attrs[attr].type);
		v.null = true;
		return v;
	}
	switch (r->attrs[attr].type) {
	case VGQ_INT:
		v.type = VX_INT;
		v.v.i = c->i[row];
		break;
	case VGQ_UINT:
		v.type = VX_UINT;
		v.v.u = c->u[row];
		break;
	case VGQ_DOUBLE:
		v.type = VX_DOUBLE;
		v.v.d = c->d[row];
		break;
	case VGQ_STRING:
		v.type = VX_STRING;
		v.v.s = c->s[row];
		v.null = !v.v.s;
		break;
	case VGQ_BYTES:
		v.type = VX_BYTES;
		v.v.b = c->b[row];
		break;
	case VGQ_ENTITY:
		v.type = VX_ENTITY;
		v.v.r = c->r[row];
		break;
	}
	return v;
}

static bool numeric(enum vx_type t)
{
	return t == VX_INT || t == VX_UINT || t == VX_DOUBLE;
}

static double as_double(const struct vx_value *v)
{
	return v->type == VX_DOUBLE ? v->v.d : v->type == VX_UINT ? (double)v->v.u : (double)v->v.i;
}

/* -1, 0, 1 for two numbers, exactly (an int against a uint beyond INT64_MAX too). */
static int compare_numbers(const struct vx_value *a, const struct vx_value *b)
{
	if (a->type == VX_DOUBLE || b->type == VX_DOUBLE) {
		double x = as_double(a), y = as_double(b);
		return x < y ? -1 : x > y ? 1 : 0;
	}
	if (a->type == VX_UINT && b->type == VX_UINT)
		return a->v.u < b->v.u ? -1 : a->v.u > b->v.u ? 1 : 0;
	if (a->type == VX_UINT) {
		if (b->v.i < 0 || a->v.u > (uint64_t)INT64_MAX)
			return 1;
		int64_t x = (int64_t)a->v.u;
		return x < b->v.i ? -1 : x > b->v.i ? 1 : 0;
	}
	if (b->type == VX_UINT)
		return -compare_numbers(b, a);
	return a->v.i < b->v.i ? -1 : a->v.i > b->v.i ? 1 : 0;
}

static int compare_strings(const char *a, const char *b)
{
	if (a == b)
		return 0;
	int c = strcmp(a, b); /* bytewise: strcmp compares as unsigned char */
	return c < 0 ? -1 : c > 0;
}

static bool same_entity(const struct vgq_ref *a, const struct vgq_ref *b)
{
	return a->id == b->id && a->gen == b->gen && a->image == b->image;
}

/* The comparison of two non-null values of types the binder accepted: -1, 0, 1, or 2 for
 * "unknown" (an unnamed entity against a string). */
static int compare(const struct vx_value *a, const struct vx_value *b)
{
	if (numeric(a->type))
		return compare_numbers(a, b);
	if (a->type == VX_STRING && b->type == VX_STRING)
		return compare_strings(a->v.s, b->v.s);
	if (a->type == VX_ENTITY && b->type == VX_STRING)
		return a->v.r.name ? compare_strings(a->v.r.name, b->v.s) : 2;
	if (a->type == VX_STRING && b->type == VX_ENTITY)
		return b->v.r.name ? compare_strings(a->v.s, b->v.r.name) : 2;
	if (a->type == VX_ENTITY)
		return same_entity(&a->v.r, &b->v.r) ? 0 : 1;
	if (a->type == VX_BYTES)
		return a->v.b.len == b->v.b.len &&
		               (a->v.b.len == 0 || !memcmp(a->v.b.ptr, b->v.b.ptr, a->v.b.len))
		           ? 0
		           : 1;
	return 2;
}

bool vgq_value_equal(const struct vx_value *a, const struct vx_value *b)
{
	if (a->null || b->null)
		return false;
	return compare(a, b) == 0;
}

/* Equal values (as `=` sees them) hash equally: numbers by their double value when they
 * are whole and exact, entities by identity, strings and entity names by text. */
uint64_t vgq_value_hash(const struct vx_value *a)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p = NULL;
	size_t n = 0;
	uint64_t word = 0;
	switch (a->type) {
	case VX_INT:
	case VX_UINT:
	case VX_DOUBLE: {
		double d = as_double(a);
		if (a->type != VX_DOUBLE &&
		    (a->type == VX_UINT ? a->v.u > (1ull << 53)
		                        : (a->v.i > (1ll << 53) || a->v.i < -(1ll << 53))))
			word = a->type == VX_UINT ? a->v.u : (uint64_t)a->v.i;
		else {
			if (d == 0)
				d = 0; /* -0 */
			memcpy(&word, &d, sizeof word);
		}
		p = (const unsigned char *)&word;
		n = sizeof word;
		break;
	}
	case VX_STRING:
		p = (const unsigned char *)a->v.s;
		n = a->v.s ? strlen(a->v.s) : 0;
		break;
	case VX_ENTITY:
		word =
		    a->v.r.id * 0x9E3779B97F4A7C15ull ^ ((uint64_t)a->v.r.gen << 32 | a->v.r.image);
		p = (const unsigned char *)&word;
		n = sizeof word;
		break;
	case VX_BYTES:
		p = a->v.b.ptr;
		n = a->v.b.len;
		break;
	case VX_BOOL:
		word = a->v.t;
		p = (const unsigned char *)&word;
		n = sizeof word;
		break;
	}
	if (p == (const unsigned char *)&word) /* one word: mixing is enough */
		return vgq_mix(word ^ ((uint64_t)(a->type == VX_ENTITY) << 63));
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return vgq_mix(h);
}

/* A total order for sorting results: nulls first, then by value. */
int vgq_value_order(const struct vx_value *a, const struct vx_value *b)
{
	if (a->null || b->null)
		return a->null == b->null ? 0 : a->null ? -1 : 1;
	if (a->type == VX_ENTITY && b->type == VX_ENTITY) {
		const char *x = a->v.r.name ? a->v.r.name : "", *y = b->v.r.name ? b->v.r.name : "";
		int c = compare_strings(x, y);
		if (c)
			return c;
		if (a->v.r.id != b->v.r.id)
			return a->v.r.id < b->v.r.id ? -1 : 1;
		if (a->v.r.gen != b->v.r.gen)
			return a->v.r.gen < b->v.r.gen ? -1 : 1;
		return a->v.r.image < b->v.r.image ? -1 : a->v.r.image > b->v.r.image;
	}
	if (a->type == VX_BYTES && b->type == VX_BYTES) {
		size_t n = a->v.b.len < b->v.b.len ? a->v.b.len : b->v.b.len;
		int c = n ? memcmp(a->v.b.ptr, b->v.b.ptr, n) : 0;
		if (c)
			return c < 0 ? -1 : 1;
		return a->v.b.len < b->v.b.len ? -1 : a->v.b.len > b->v.b.len;
	}
	if (a->type == VX_BOOL)
		return (int)a->v.t - (int)b->v.t;
	int c = compare(a, b);
	return c == 2 ? 0 : c;
}

static struct vx_value null_of(enum vx_type t)
{
	struct vx_value v = {.type = t, .null = true};
	return v;
}

/* ---- integer overflow ---- */

void vgq_fault_note(struct vgq_fault *f, enum vgq_fault_kind kind, const struct tquel_expr *src,
                    const char *op, const struct vx_value *x, const struct vx_value *y, size_t n)
{
	int unclaimed = 0;
	if (!f || !__atomic_compare_exchange_n(&f->claimed, &unclaimed, 1, false, __ATOMIC_ACQ_REL,
	                                       __ATOMIC_RELAXED))
		return; /* the first one met is the one reported */
	f->kind = kind;
	f->src = src;
	f->op = op;
	f->x = x ? *x : (struct vx_value){0};
	f->y = y ? *y : (struct vx_value){0};
	f->n = n;
}

bool vgq_fault_met(const struct vgq_fault *f)
{
	return f && __atomic_load_n(&f->claimed, __ATOMIC_RELAXED);
}

/* An integer operand of e as int64; false (an overflow, noted) for a uint past 2^63 - 1. */
static bool int_operand(const struct bx *e, const struct vx_value *v, int64_t *out)
{
	if (v->type != VX_UINT) {
		*out = v->v.i;
		return true;
	}
	if (v->v.u > (uint64_t)INT64_MAX) {
		vgq_fault_note(e->fault, VF_UNSIGNED, e->src, NULL, v, NULL, 0);
		return false;
	}
	*out = (int64_t)v->v.u;
	return true;
}

/* x op y. Integers are exact or the statement fails (an overflow: noted, the value null
 * meanwhile); a division by zero has no value. */
static struct vx_value arith(const struct bx *e, const struct vx_value *x, const struct vx_value *y)
{
	static const char *const ops[] = {
	    [BX_ADD] = "+", [BX_SUB] = "-", [BX_MUL] = "*", [BX_DIV] = "/"};
	enum vx_type type = e->type;
	struct vx_value r = {.type = type};
	if (x->null || y->null)
		return null_of(type);
	if (type == VX_DOUBLE) {
		double a = as_double(x), b = as_double(y);
		switch (e->kind) {
		case BX_ADD:
			r.v.d = a + b;
			break;
		case BX_SUB:
			r.v.d = a - b;
			break;
		case BX_MUL:
			r.v.d = a * b;
			break;
		default:
			if (b == 0)
				return null_of(type);
			r.v.d = a / b;
		}
		return r;
	}
	int64_t a, b;
	if (!int_operand(e, x, &a) || !int_operand(e, y, &b))
		return null_of(type);
	bool over;
	switch (e->kind) {
	case BX_ADD:
		over = __builtin_add_overflow(a, b, &r.v.i);
		break;
	case BX_SUB:
		over = __builtin_sub_overflow(a, b, &r.v.i);
		break;
	case BX_MUL:
		over = __builtin_mul_overflow(a, b, &r.v.i);
		break;
	default:
		if (b == 0)
			return null_of(type);
		over = a == INT64_MIN && b == -1; /* the one quotient past int64 */
		if (!over)
			r.v.i = a / b; /* truncates toward zero */
	}
	if (over) {
		vgq_fault_note(e->fault, VF_BINARY, e->src, ops[e->kind], x, y, 0);
		return null_of(type);
	}
	return r;
}

static enum tv3 cmp_truth(enum bx_kind k, const struct vx_value *x, const struct vx_value *y)
{
	if (x->null || y->null)
		return T3_UNKNOWN;
	int c = compare(x, y);
	if (c == 2)
		return T3_UNKNOWN;
	switch (k) {
	case BX_EQ:
		return c == 0;
	case BX_NE:
		return c != 0;
	case BX_LT:
		return c < 0;
	case BX_LE:
		return c <= 0;
	case BX_GT:
		return c > 0;
	default:
		return c >= 0;
	}
}

enum tv3 vgq_truth(const struct bx *e, const struct binding *b)
{
	switch (e->kind) {
	case BX_AND: {
		enum tv3 x = vgq_truth(e->a, b);
		if (x == T3_FALSE)
			return T3_FALSE;
		enum tv3 y = vgq_truth(e->b, b);
		if (y == T3_FALSE)
			return T3_FALSE;
		return x == T3_TRUE && y == T3_TRUE ? T3_TRUE : T3_UNKNOWN;
	}
	case BX_OR: {
		enum tv3 x = vgq_truth(e->a, b);
		if (x == T3_TRUE)
			return T3_TRUE;
		enum tv3 y = vgq_truth(e->b, b);
		if (y == T3_TRUE)
			return T3_TRUE;
		return x == T3_FALSE && y == T3_FALSE ? T3_FALSE : T3_UNKNOWN;
	}
	case BX_NOT: {
		enum tv3 x = vgq_truth(e->a, b);
		return x == T3_UNKNOWN ? T3_UNKNOWN : x == T3_TRUE ? T3_FALSE : T3_TRUE;
	}
	case BX_EQ:
	case BX_NE:
	case BX_LT:
	case BX_LE:
	case BX_GT:
	case BX_GE: {
		struct vx_value x = vgq_eval(e->a, b), y = vgq_eval(e->b, b);
		return cmp_truth(e->kind, &x, &y);
	}
	default:
		return T3_UNKNOWN;
	}
}

struct vx_value vgq_eval(const struct bx *e, const struct binding *b)
{
	switch (e->kind) {
	case BX_CONST:
		return e->c;
	case BX_ATTR:
		return vgq_column_value(b->vars[e->var].rel, e->attr, b->rows[e->var]);
	case BX_NEG: {
		struct vx_value x = vgq_eval(e->a, b);
		if (x.null)
			return null_of(e->type);
		struct vx_value r = {.type = e->type};
		if (e->type == VX_DOUBLE) {
			r.v.d = -as_double(&x);
			return r;
		}
		int64_t a;
		if (!int_operand(e, &x, &a))
			return null_of(e->type);
		if (a == INT64_MIN) { /* -(-2^63) is past int64 */
			vgq_fault_note(e->fault, VF_NEGATE, e->src, "-", &x, NULL, 0);
			return null_of(e->type);
		}
		r.v.i = -a;
		return r;
	}
	case BX_ADD:
	case BX_SUB:
	case BX_MUL:
	case BX_DIV: {
		struct vx_value x = vgq_eval(e->a, b), y = vgq_eval(e->b, b);
		return arith(e, &x, &y);
	}
	default: {
		struct vx_value r = {.type = VX_BOOL};
		r.v.t = vgq_truth(e, b);
		return r;
	}
	}
}

/* ---- time ---- */

struct tval vgq_var_time(const struct bvar *v, uint32_t row)
{
	struct tval t;
	t.b = v->rel->from[row];
	if (v->event) {
		t.kind = TV_EVENT;
		t.e = t.b;
	} else {
		t.kind = TV_INTERVAL;
		t.e = v->rel->to[row];
	}
	return t;
}

static struct tval nothing(void)
{
	struct tval t = {TV_NOTHING, 0, 0};
	return t;
}

static struct tval event_at(int64_t t)
{
	struct tval v = {TV_EVENT, t, t};
	return v;
}

bool vgq_tv_overlap(struct tval x, struct tval y)
{
	if (x.kind == TV_NOTHING || y.kind == TV_NOTHING)
		return false;
	if (x.kind == TV_EVENT && y.kind == TV_EVENT)
		return x.b == y.b;
	if (x.kind == TV_EVENT)
		return y.b <= x.b && x.b < y.e;
	if (y.kind == TV_EVENT)
		return x.b <= y.b && y.b < x.e;
	return (x.b > y.b ? x.b : y.b) < (x.e < y.e ? x.e : y.e);
}

struct tval vgq_tv_intersect(struct tval x, struct tval y)
{
	if (!vgq_tv_overlap(x, y))
		return nothing();
	if (x.kind == TV_EVENT)
		return x;
	if (y.kind == TV_EVENT)
		return y;
	struct tval r = {TV_INTERVAL, x.b > y.b ? x.b : y.b, x.e < y.e ? x.e : y.e};
	return r;
}

struct tval vgq_teval(const struct tx *e, const struct binding *b)
{
	switch (e->kind) {
	case TX_VAR:
		return vgq_var_time(&b->vars[e->var], b->rows[e->var]);
	case TX_BEGIN: {
		struct tval x = vgq_teval(e->a, b);
		return x.kind == TV_NOTHING ? x : event_at(x.b);
	}
	case TX_END: {
		struct tval x = vgq_teval(e->a, b);
		return x.kind == TV_NOTHING ? x : event_at(x.e);
	}
	case TX_CONST:
		return event_at(e->at);
	case TX_INTERSECT:
		return vgq_tv_intersect(vgq_teval(e->a, b), vgq_teval(e->b, b));
	case TX_EXTEND: {
		struct tval x = vgq_teval(e->a, b), y = vgq_teval(e->b, b);
		if (x.kind == TV_NOTHING || y.kind == TV_NOTHING || x.b > y.e)
			return nothing();
		if (x.b == y.e)
			return event_at(x.b);
		struct tval r = {TV_INTERVAL, x.b, y.e};
		return r;
	}
	}
	return nothing();
}

bool vgq_tpred(const struct tp *p, const struct binding *b)
{
	switch (p->kind) {
	case TP_AND:
		return vgq_tpred(p->a, b) && vgq_tpred(p->b, b);
	case TP_OR:
		return vgq_tpred(p->a, b) || vgq_tpred(p->b, b);
	case TP_NOT:
		return !vgq_tpred(p->a, b);
	case TP_OVERLAP:
		return vgq_tv_overlap(vgq_teval(p->x, b), vgq_teval(p->y, b));
	case TP_PRECEDE: {
		struct tval x = vgq_teval(p->x, b), y = vgq_teval(p->y, b);
		return x.kind != TV_NOTHING && y.kind != TV_NOTHING && x.e <= y.b;
	}
	case TP_EQUAL: {
		struct tval x = vgq_teval(p->x, b), y = vgq_teval(p->y, b);
		return x.kind != TV_NOTHING && x.kind == y.kind && x.b == y.b && x.e == y.e;
	}
	}
	return false;
}
