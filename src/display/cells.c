/* Values of relation cells for the display: numbers, text, and the sorted distinct values
 * of an attribute (positions and palettes by order). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "display/internal.h"

bool vgd_cell_null(const struct vgq_relation *r, int col, uint32_t row)
{
	if (r->nulls && r->nulls[col] && r->nulls[col][row])
		return true;
	return r->attrs[col].type == VGQ_STRING && !r->cols[col].s[row];
}

bool vgd_cell_number(const struct vgq_relation *r, int col, uint32_t row, double *v)
{
	if (vgd_cell_null(r, col, row))
		return false;
	switch (r->attrs[col].type) {
	case VGQ_INT:
		*v = (double)r->cols[col].i[row];
		return true;
	case VGQ_UINT:
		*v = (double)r->cols[col].u[row];
		return true;
	case VGQ_DOUBLE:
		*v = r->cols[col].d[row];
		return *v == *v;
	default:
		return false;
	}
}

void vgd_cell_text(const struct vgq_relation *r, int col, uint32_t row, char *buf, size_t size)
{
	buf[0] = 0;
	if (vgd_cell_null(r, col, row))
		return;
	const union vgq_column *c = &r->cols[col];
	switch (r->attrs[col].type) {
	case VGQ_INT:
		snprintf(buf, size, "%" PRId64, c->i[row]);
		break;
	case VGQ_UINT:
		snprintf(buf, size, "%" PRIu64, c->u[row]);
		break;
	case VGQ_DOUBLE:
		snprintf(buf, size, "%g", c->d[row]);
		break;
	case VGQ_STRING:
		snprintf(buf, size, "%s", c->s[row]);
		break;
	case VGQ_ENTITY:
		if (c->r[row].name)
			snprintf(buf, size, "%s", c->r[row].name);
		else
			snprintf(buf, size, "%s#%" PRIu64,
			         r->attrs[col].ref_kind ? r->attrs[col].ref_kind : "entity",
			         c->r[row].id);
		break;
	case VGQ_BYTES:
		snprintf(buf, size, "(%zu bytes)", c->b[row].len);
		break;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = ((const union vgd_key *)a)->d, y = ((const union vgd_key *)b)->d;
	return x < y ? -1 : x > y;
}

static int cmp_string(const void *a, const void *b)
{
	return strcmp(((const union vgd_key *)a)->s, ((const union vgd_key *)b)->s);
}

/* Entities by name (unnamed last), then identity. */
static int cmp_ref(const void *a, const void *b)
{
	const struct vgq_ref *x = &((const union vgd_key *)a)->r,
	                     *y = &((const union vgd_key *)b)->r;
	if (x->name && y->name) {
		int c = strcmp(x->name, y->name);
		if (c)
			return c;
	} else if (x->name || y->name) {
		return x->name ? -1 : 1;
	}
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	return x->image < y->image ? -1 : x->image > y->image;
}

static int (*comparator(enum vgq_type t))(const void *, const void *)
{
	return t == VGQ_STRING ? cmp_string : t == VGQ_ENTITY ? cmp_ref : cmp_double;
}

static bool key_of(const struct vgq_relation *r, int col, uint32_t row, union vgd_key *k)
{
	if (vgd_cell_null(r, col, row))
		return false;
	switch (r->attrs[col].type) {
	case VGQ_STRING:
		k->s = r->cols[col].s[row];
		return true;
	case VGQ_ENTITY:
		k->r = r->cols[col].r[row];
		k->r.image = 0; /* entity relations have no image: rank them alike */
		return true;
	default:
		return vgd_cell_number(r, col, row, &k->d);
	}
}

struct vgd_order *vgd_order_build(const struct vgq_relation *r, int col)
{
	struct vgd_order *o = calloc(1, sizeof *o + (r->ntuples + 1) * sizeof o->v[0]);
	if (!o)
		abort();
	o->type = r->attrs[col].type;
	for (uint32_t i = 0; i < r->ntuples; i++)
		if (key_of(r, col, i, &o->v[o->n]))
			o->n++;
	int (*cmp)(const void *, const void *) = comparator(o->type);
	qsort(o->v, o->n, sizeof o->v[0], cmp);
	size_t n = 0;
	for (size_t i = 0; i < o->n; i++)
		if (!n || cmp(&o->v[n - 1], &o->v[i]))
			o->v[n++] = o->v[i];
	o->n = n;
	return o;
}

long vgd_order_rank(const struct vgd_order *o, const struct vgq_relation *r, int col, uint32_t row)
{
	union vgd_key k;
	if (!key_of(r, col, row, &k))
		return -1;
	const union vgd_key *hit = bsearch(&k, o->v, o->n, sizeof o->v[0], comparator(o->type));
	return hit ? (long)(hit - o->v) : -1;
}
