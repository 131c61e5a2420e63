/* One relation: its schema and its tuples, stored column-wise (time columns plus one
 * array per attribute) and grown together, on the heap or, past the build's memory
 * budget, in the spill file (spill.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "relations/columns.h"
#include "relations/spill.h"
#include "relations/unmerged.h"

struct vgq_relation *vgq_relation_new(const char *name, enum vgq_rkind kind)
{
	struct vgq_relation *r = vgq_xcalloc(1, sizeof *r);
	r->name = name;
	r->kind = kind;
	return r;
}

static size_t value_size(enum vgq_type t)
{
	switch (t) {
	case VGQ_INT:
		return sizeof(int64_t);
	case VGQ_UINT:
		return sizeof(uint64_t);
	case VGQ_DOUBLE:
		return sizeof(double);
	case VGQ_STRING:
		return sizeof(const char *);
	case VGQ_BYTES:
		return sizeof(struct vgq_bytes);
	case VGQ_ENTITY:
		return sizeof(struct vgq_ref);
	}
	return 8;
}

size_t vgq_value_size(enum vgq_type t)
{
	return value_size(t);
}

/* Every column member of the union is a pointer: it is stored and freed as one. */
static void **column_ptr(union vgq_column *c)
{
	return (void **)&c->i;
}

void vgq_relation_free(struct vgq_relation *r)
{
	if (!r)
		return;
	vgq_unmerged_free(r->unmerged);
	for (size_t i = 0; i < r->nattrs; i++)
		vgq_colmem_release(r->mem, *column_ptr(&r->cols[i]));
	free(r->cols);
	if (r->nulls)
		for (size_t i = 0; i < r->nattrs; i++)
			free(r->nulls[i]);
	free(r->nulls);
	free((void *)r->attrs);
	vgq_colmem_release(r->mem, r->from);
	vgq_colmem_release(r->mem, r->to);
	vgq_colmem_release(r->mem, r->open);
	vgq_colmem_release(r->mem, r->begin_unknown);
	vgq_colmem_free(r->mem);
	free(r);
}

int vgq_relation_add_attr(struct vgq_relation *r, const char *name, enum vgq_type type,
                          const char *ref_kind)
{
	struct vgq_attr *attrs = vgq_xrealloc((void *)r->attrs, r->nattrs + 1, sizeof *attrs);
	attrs[r->nattrs] = (struct vgq_attr){name, type, ref_kind};
	r->attrs = attrs;
	r->cols = vgq_xrealloc(r->cols, r->nattrs + 1, sizeof *r->cols);
	*column_ptr(&r->cols[r->nattrs]) = NULL;
	return (int)r->nattrs++;
}

/* Columns hold a power of two of tuples (at least 16): they grow when ntuples reaches
 * one, so the capacity needs no field of its own. */
static size_t capacity(size_t n)
{
	size_t c = 16;
	while (c < n)
		c *= 2;
	return c;
}

/* Makes column *col of r hold `cap` values of `size` bytes instead of `old`. */
static void resize(struct vgq_relation *r, void *col, size_t size, size_t old, size_t cap)
{
	vgq_colmem_resize(&r->mem, (void **)col, old * size, cap * size);
}

/* Every column of r from `old` values to `cap`. */
static void resize_all(struct vgq_relation *r, size_t old, size_t cap)
{
	resize(r, &r->from, sizeof *r->from, old, cap);
	if (r->kind != VGQ_REL_EVENT) {
		resize(r, &r->to, sizeof *r->to, old, cap);
		resize(r, &r->open, sizeof *r->open, old, cap);
	}
	if (r->begin_unknown)
		resize(r, &r->begin_unknown, sizeof *r->begin_unknown, old, cap);
	for (size_t a = 0; a < r->nattrs; a++)
		resize(r, column_ptr(&r->cols[a]), value_size(r->attrs[a].type), old, cap);
}

/* The capacity column col of r holds (0: none yet). */
static size_t held_by(const struct vgq_relation *r, const void *col)
{
	return col ? capacity(r->ntuples ? r->ntuples : 1) : 0;
}

/* The capacity of r's columns (0: none yet). */
static size_t held(const struct vgq_relation *r)
{
	return held_by(r, r->from);
}

size_t vgq_relation_append(struct vgq_relation *r, int64_t from)
{
	size_t i = r->ntuples;
	if (i == 0 || (i >= 16 && (i & (i - 1)) == 0)) /* 0, then at 16, 32, 64 ... */
		resize_all(r, held(r), capacity(i + 1));
	r->from[i] = from;
	if (r->to) {
		r->to[i] = from;
		r->open[i] = true;
	}
	if (r->begin_unknown)
		r->begin_unknown[i] = false;
	for (size_t a = 0; a < r->nattrs; a++)
		memset((char *)*column_ptr(&r->cols[a]) + i * value_size(r->attrs[a].type), 0,
		       value_size(r->attrs[a].type));
	r->ntuples++;
	return i;
}

static void resize_tuples(struct vgq_relation *r, size_t n, bool zero_values)
{
	size_t cap = capacity(n ? n : 1);
	vgq_colmem_release(r->mem, r->begin_unknown); /* no tuple has it any more */
	r->begin_unknown = NULL;
	resize_all(r, held(r), cap);
	/* only the n tuples are cleared: past n nothing is read, an append sets its tuple whole */
	if (r->kind != VGQ_REL_EVENT)
		memset(r->open, 0, n * sizeof *r->open);
	for (size_t a = 0; a < r->nattrs && zero_values; a++)
		memset(*column_ptr(&r->cols[a]), 0, n * value_size(r->attrs[a].type));
	r->ntuples = n;
}

void vgq_relation_resize(struct vgq_relation *r, size_t n)
{
	resize_tuples(r, n, true);
}

void vgq_relation_resize_unset(struct vgq_relation *r, size_t n)
{
	resize_tuples(r, n, false);
}

void vgq_relation_reserve(struct vgq_relation *r, size_t n)
{
	resize_all(r, held(r), capacity(n ? n : 1));
	r->ntuples = n;
}

void vgq_relation_reserve_column(struct vgq_relation *r, long c, size_t n)
{
	void **col = c < 0 ? (void **)&r->from : column_ptr(&r->cols[c]);
	size_t size = c < 0 ? sizeof *r->from : value_size(r->attrs[c].type);
	resize(r, col, size, held_by(r, *col), capacity(n ? n : 1));
}

void vgq_relation_reserve_rest(struct vgq_relation *r, size_t n)
{
	size_t cap = capacity(n ? n : 1);
	if (r->kind != VGQ_REL_EVENT) {
		resize(r, &r->to, sizeof *r->to, held_by(r, r->to), cap);
		resize(r, &r->open, sizeof *r->open, held_by(r, r->open), cap);
	}
	if (r->begin_unknown)
		resize(r, &r->begin_unknown, sizeof *r->begin_unknown, held_by(r, r->begin_unknown),
		       cap);
	r->ntuples = n;
}

void vgq_relation_take_columns(struct vgq_relation *to, struct vgq_relation *from)
{
	vgq_colmem_release(to->mem, to->from);
	vgq_colmem_release(to->mem, to->to);
	vgq_colmem_release(to->mem, to->open);
	for (size_t a = 0; a < to->nattrs; a++)
		vgq_colmem_release(to->mem, *column_ptr(&to->cols[a]));
	vgq_colmem_free(to->mem);
	to->from = from->from;
	from->from = NULL;
	to->to = from->to; /* interval relations: their ends' columns too */
	from->to = NULL;
	to->open = from->open;
	from->open = NULL;
	for (size_t a = 0; a < to->nattrs; a++) {
		*column_ptr(&to->cols[a]) = *column_ptr(&from->cols[a]);
		*column_ptr(&from->cols[a]) = NULL;
	}
	to->mem = from->mem;
	from->mem = NULL;
	to->ntuples = from->ntuples;
	from->ntuples = 0;
}

void vgq_relation_drop_column(struct vgq_relation *r, long c)
{
	void **col = c < 0 ? (void **)&r->from : column_ptr(&r->cols[c]);
	vgq_colmem_release(r->mem, *col);
	*col = NULL;
}

void vgq_relation_set_begin_unknown(struct vgq_relation *r, size_t t)
{
	if (!r->begin_unknown) { /* sized like the other columns: capacity(ntuples) */
		size_t cap = capacity(r->ntuples);
		resize(r, &r->begin_unknown, sizeof *r->begin_unknown, 0, cap);
		memset(r->begin_unknown, 0, cap * sizeof *r->begin_unknown);
	}
	r->begin_unknown[t] = true;
}

void vgq_relation_finish(struct vgq_relation *r, int64_t end)
{
	r->first = r->last = 0;
	if (r->unmerged) { /* an event relation: its pieces' span */
		vgq_unmerged_span(r->unmerged, &r->first, &r->last);
		return;
	}
	for (size_t i = 0; i < r->ntuples; i++) {
		if (r->open && r->open[i]) {
			r->to[i] = end;
			r->open_at_end++;
		}
		int64_t last = r->to ? r->to[i] : r->from[i];
		if (i == 0 || r->from[i] < r->first)
			r->first = r->from[i];
		if (i == 0 || last > r->last)
			r->last = last;
	}
}

int vgq_relation_attr(const struct vgq_relation *r, const char *name)
{
	for (size_t i = 0; i < r->nattrs; i++)
		if (!strcasecmp(r->attrs[i].name, name))
			return (int)i;
	return -1;
}

const char *vgq_rkind_name(enum vgq_rkind k)
{
	static const char *const names[] = {"event", "interval", "state", "entity"};
	return (unsigned)k < 4 ? names[k] : "?";
}

const char *vgq_type_name(enum vgq_type t)
{
	static const char *const names[] = {"int", "uint", "double", "string", "bytes", "entity"};
	return (unsigned)t < 6 ? names[t] : "?";
}
