/* The relations the update network's operators hold: small copies of final tuples (a
 * delta, or the state kept for joins), with the schema of the relation they come from. */
#include <stdlib.h>
#include <string.h>

#include "live/delta_internal.h"
#include "relations/columns.h"

struct vgq_relation *vgq_delta_rel_like(const struct vgq_relation *src, const char *name)
{
	struct vgq_relation *r = vgq_relation_new(name, src->kind);
	for (size_t a = 0; a < src->nattrs; a++)
		vgq_relation_add_attr(r, src->attrs[a].name, src->attrs[a].type,
		                      src->attrs[a].ref_kind);
	return r;
}

/* Every column member of the union is a pointer to its values: copied as bytes. */
static char *column_bytes(const union vgq_column *c)
{
	return (char *)c->i;
}

static void copy_value(struct vgq_relation *dst, size_t j, const struct vgq_relation *src, size_t i,
                       size_t a)
{
	size_t w = vgq_value_size(src->attrs[a].type);
	memcpy(column_bytes(&dst->cols[a]) + j * w, column_bytes(&src->cols[a]) + i * w, w);
}

void vgq_delta_column_view(union vgq_column *view, const struct vgq_relation *r, size_t a,
                           size_t lo)
{
	view->i =
	    (int64_t *)(void *)(column_bytes(&r->cols[a]) + lo * vgq_value_size(r->attrs[a].type));
}

/* Values point into the builder's pool, which lives as long as the network: a copy
 * shares them. Base relations carry no null flags (only computed results do). */
void vgq_delta_rel_push(struct vgq_relation *dst, const struct vgq_relation *src, size_t i)
{
	size_t j = vgq_relation_append(dst, src->from[i]);
	if (src->to) {
		dst->to[j] = src->to[i];
		dst->open[j] = src->open[i];
	}
	if (src->begin_unknown && src->begin_unknown[i])
		vgq_relation_set_begin_unknown(dst, j);
	for (size_t a = 0; a < src->nattrs; a++)
		copy_value(dst, j, src, i, a);
}

static void move_tuple(struct vgq_relation *r, size_t to, size_t from)
{
	r->from[to] = r->from[from];
	if (r->to) {
		r->to[to] = r->to[from];
		r->open[to] = r->open[from];
	}
	if (r->begin_unknown)
		r->begin_unknown[to] = r->begin_unknown[from];
	for (size_t a = 0; a < r->nattrs; a++)
		copy_value(r, to, r, from, a);
}

void vgq_delta_rel_filter(struct vgq_relation *r, const bool *keep)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ntuples; i++)
		if (keep[i]) {
			if (n != i)
				move_tuple(r, n, i);
			n++;
		}
	/* Columns stay at their capacity; vgq_relation_append grows them again only at a
	 * power of two, which a smaller count reaches with room to spare. */
	r->ntuples = n;
}

void vgq_delta_rel_span(struct vgq_relation *r)
{
	r->first = r->last = 0;
	for (size_t i = 0; i < r->ntuples; i++) {
		int64_t last = r->to ? r->to[i] : r->from[i];
		if (i == 0 || r->from[i] < r->first)
			r->first = r->from[i];
		if (i == 0 || last > r->last)
			r->last = last;
	}
}
