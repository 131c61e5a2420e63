/* Records: `extends` (cycles, inherited properties), properties with their defaults and
 * selections, and the flattened encoding (fields, worst-case size). See
 * docs/encoding.md. */
#include "lang/check.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lang/arena.h"
#include "lang/names.h"

#define MAX_EXTENDS 64 /* longest chain of `extends` */
#define UNBOUNDED UINT64_MAX

uint64_t vgl_field_size(enum vgl_type type, uint32_t max)
{
	switch (type) {
	case VGL_INT8:
	case VGL_UINT8:
	case VGL_BOOL:
		return 1;
	case VGL_INT16:
	case VGL_UINT16:
		return 2;
	case VGL_INT32:
	case VGL_UINT32:
		return 4;
	case VGL_INT64:
	case VGL_UINT64:
	case VGL_FLOAT64:
	case VGL_STRUCT:
		return 8;
	case VGL_STRING:
		return max ? (uint64_t)max + 1 : UNBOUNDED;
	case VGL_BYTES:
		return max ? (uint64_t)max + 4 : UNBOUNDED;
	case VGL_ENTITY:
		return 12;
	}
	return 0;
}

/* The fields of one record under construction. */
struct flat {
	struct vgl_field *fields;
	size_t n, cap;
	const struct vgl_member **path; /* the members from the property down */
	size_t depth;
};

static const char *dotted(struct checker *c, const char *prop, const struct vgl_member *const *path,
                          size_t npath)
{
	size_t len = strlen(prop);
	for (size_t i = 0; i < npath; i++)
		len += 1 + strlen(path[i]->name);
	char *s = vgb_arena_alloc(c->arena, len + 1), *p = s;
	p = stpcpy(p, prop);
	for (size_t i = 0; i < npath; i++) {
		*p++ = '.';
		p = stpcpy(p, path[i]->name);
	}
	return s;
}

static void add_field(struct checker *c, struct flat *f, const struct vgl_property *prop,
                      enum vgl_type type, const struct vgl_entity *entity, uint32_t max)
{
	struct vgl_field *fd = vgl_push(c->arena, &f->fields, &f->n, &f->cap, sizeof *fd);
	fd->name = f->depth ? dotted(c, prop->name, f->path, f->depth) : prop->name;
	fd->is_struct_id = type == VGL_STRUCT;
	fd->type = type == VGL_STRUCT ? VGL_UINT64 : type;
	fd->entity = entity;
	fd->max = max;
	fd->prop = prop;
	if (f->depth) {
		const struct vgl_member **path = vgb_arena_array(c->arena, f->depth, sizeof *path);
		memcpy(path, f->path, f->depth * sizeof *path);
		fd->path = path;
		fd->npath = f->depth;
	}
}

static void flatten_selection(struct checker *c, struct flat *f, const struct vgl_property *prop,
                              const struct vgl_selection *sel, size_t nsel)
{
	for (size_t i = 0; i < nsel; i++) {
		const struct vgl_member *mb = sel[i].member;
		if (!mb)
			continue; /* reported */
		f->path[f->depth++] = mb;
		if (sel[i].nsub)
			flatten_selection(c, f, prop, sel[i].sub, sel[i].nsub);
		else
			add_field(c, f, prop, mb->type, mb->entity, mb->max);
		f->depth--;
	}
}

/* The members of `st` by name (built once: selections are many). */
static struct vgl_symtab *members_of(struct checker *c, const struct vgl_struct *st)
{
	struct ast_decl *d = vgl_sym_get(&c->types, st->name);
	if (!d->index) {
		d->index = vgb_arena_alloc(c->arena, sizeof *d->index);
		d->index->arena = c->arena;
		for (size_t k = 0; k < st->nmembers; k++) /* the first of duplicates wins */
			vgl_sym_put(d->index, st->members[k].name, (void *)&st->members[k]);
	}
	return d->index;
}

/* Resolves `{ a, b { c } }` against struct `st`. */
static const struct vgl_selection *check_selection(struct checker *c, const struct vgl_struct *st,
                                                   const struct ast_sel *items, size_t n)
{
	struct vgl_selection *sel = vgb_arena_array(c->arena, n, sizeof *sel);
	struct vgl_symtab seen = {.arena = c->arena};
	for (size_t i = 0; i < n; i++) {
		const struct ast_sel *it = &items[i];
		sel[i].loc = it->loc;
		const struct vgl_member *mb = vgl_sym_get(members_of(c, st), it->name);
		if (!mb) {
			vgl_error(c->diag, it->loc, "struct '%s' has no member '%s'", st->name,
			          it->name);
			continue;
		}
		if (vgl_sym_put(&seen, it->name, (void *)it)) {
			vgl_error(c->diag, it->loc, "'%s' is selected twice", it->name);
			continue;
		}
		sel[i].member = mb;
		if (!it->has_sub)
			continue;
		if (mb->type != VGL_STRUCT || !mb->st) {
			vgl_error(c->diag, it->loc,
			          "cannot select inside '%s': it is %s, not a struct", it->name,
			          vgl_type_name(mb->type));
			continue;
		}
		sel[i].sub = check_selection(c, mb->st, it->sub, it->nsub);
		sel[i].nsub = it->nsub;
	}
	return sel;
}

/* A default given by a const: the const's type must be the property's. */
static void check_default(struct checker *c, const struct ast_member *a, struct vgl_property *p)
{
	char why[160];
	if (p->type == VGL_ENTITY || p->type == VGL_STRUCT) {
		vgl_error(c->diag, a->def.loc, "%s property cannot have a default",
		          p->type == VGL_ENTITY ? "an entity" : "a struct");
		return;
	}
	if (!a->def.name) {
		if (vgl_literal_fits(p->type, p->max, &a->def, &p->def, why, sizeof why))
			p->has_default = true;
		else
			vgl_error(c->diag, a->def.loc, "default of '%s': %s", a->name, why);
		return;
	}
	const struct ast_decl *d = vgl_sym_get(&c->types, a->def.name);
	if (d && d->broken)
		return;
	if (!d) {
		vgl_error(c->diag, a->def.loc, "unknown const '%s'", a->def.name);
		return;
	}
	if (d->kind != AST_CONST) {
		vgl_error(c->diag, a->def.loc, "'%s' is not a const", a->def.name);
		return;
	}
	const struct vgl_const *k = d->model;
	enum vgl_type kt;
	if (!vgl_primitive_type(d->type, &kt))
		return; /* reported with the const */
	if (kt != p->type) {
		vgl_error(c->diag, a->def.loc, "const '%s' is %s, but property '%s' is %s", k->name,
		          d->type, a->name, vgl_type_name(p->type));
		return;
	}
	struct ast_value v = d->value;
	if (!vgl_literal_fits(p->type, p->max, &v, &p->def, why, sizeof why)) {
		if (p->max && (p->type == VGL_STRING || p->type == VGL_BYTES) &&
		    d->value.lit.kind == VGL_LIT_STRING)
			vgl_error(c->diag, a->def.loc, "default of '%s': const '%s': %s", a->name,
			          k->name, why);
		return; /* otherwise reported with the const */
	}
	p->has_default = true;
	p->def_const = k;
}

static void check_property(struct checker *c, const struct ast_member *a, struct vgl_property *p,
                           const struct vgl_record *r)
{
	p->name = a->name;
	p->loc = a->loc;
	p->owner = r;
	p->max = a->max;
	if (!vgl_resolve_type(c, a->type, a->type_loc, &p->type, &p->entity, &p->st)) {
		p->type = VGL_UINT8; /* reported: something harmless for the rest */
		return;
	}
	bool sized = p->type == VGL_STRING || p->type == VGL_BYTES;
	if (a->has_max && !sized)
		vgl_error(c->diag, a->max_loc, "max applies only to string and bytes");
	if (sized && !a->has_max && r->max_size)
		vgl_error(c->diag, a->loc,
		          "%s property '%s' needs a max length: record '%s' has a max size",
		          vgl_type_name(p->type), a->name, r->name);
	if (a->has_sel) {
		if (p->type != VGL_STRUCT)
			vgl_error(c->diag, a->sel_loc,
			          "only a struct property can have a selection; '%s' is %s",
			          a->name, vgl_type_name(p->type));
		else {
			p->sel = check_selection(c, p->st, a->sel, a->nsel);
			p->nsel = a->nsel;
		}
	}
	if (a->has_def)
		check_default(c, a, p);
}

static void flatten(struct checker *c, struct vgl_record *r)
{
	struct flat f = {0};
	const struct vgl_member *path[VGL_MAX_DEPTH + 1];
	f.path = path;
	for (size_t i = 0; i < r->nall; i++) {
		const struct vgl_property *p = r->all[i];
		if (p->type == VGL_STRUCT && p->nsel)
			flatten_selection(c, &f, p, p->sel, p->nsel);
		else
			add_field(c, &f, p, p->type, p->entity, p->max);
	}
	r->fields = f.fields;
	r->nfields = f.n;
	/* Generators spell "conn.fd" conn_fd: no two fields may meet there. */
	struct vgl_symtab spelled = {.arena = c->arena};
	for (size_t i = 0; i < f.n; i++) {
		char *s = vgb_arena_strdup(c->arena, f.fields[i].name);
		for (char *p = s; *p; p++)
			if (*p == '.')
				*p = '_';
		const struct vgl_field *other = vgl_sym_put(&spelled, s, &f.fields[i]);
		if (other && f.fields[i].prop->owner == r)
			vgl_error(c->diag, f.fields[i].prop->loc,
			          "fields '%s' and '%s' would both be named '%s' in generated code",
			          other->name, f.fields[i].name, s);
	}
	uint64_t worst = 0;
	bool unbounded = false;
	for (size_t i = 0; i < f.n; i++) {
		uint64_t s = vgl_field_size(f.fields[i].type, f.fields[i].max);
		if (s == UNBOUNDED)
			unbounded = true;
		else
			worst += s;
	}
	r->worst_size = unbounded || worst > UINT32_MAX ? UINT32_MAX : (uint32_t)worst;
}

/* The record's fields against its max size. `d` declared it. */
static void check_size(struct checker *c, const struct ast_decl *d, const struct vgl_record *r)
{
	if (!r->max_size)
		return;
	struct vgl_loc at = d->has_max ? d->max_loc : d->loc;
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *f = &r->fields[i];
		if ((f->type == VGL_STRING || f->type == VGL_BYTES) && !f->max) {
			if (f->prop->owner != r && d->has_max)
				vgl_error(c->diag, at,
				          "record '%s' has a max size, but inherited property '%s' "
				          "has no "
				          "max length",
				          r->name, f->prop->name);
			return; /* own properties: reported with the property */
		}
	}
	if (!d->has_max && r->parent->worst_size > r->max_size)
		return; /* reported with the parent */
	const struct vgl_record *from = r;
	while (from->parent && from->parent->max_size == r->max_size)
		from = from->parent;
	if (r->worst_size > r->max_size && from == r)
		vgl_error(c->diag, at,
		          "record '%s' encodes to up to %" PRIu32
		          " bytes, more than its max %" PRIu32,
		          r->name, r->worst_size, r->max_size);
	else if (r->worst_size > r->max_size)
		vgl_error(c->diag, at,
		          "record '%s' encodes to up to %" PRIu32
		          " bytes, more than the max %" PRIu32 " it inherits from '%s'",
		          r->name, r->worst_size, r->max_size, from->name);
}

static void check_record(struct checker *c, struct ast_decl *d, struct vgl_record *r,
                         const struct vgl_record *parent)
{
	if (parent && parent->nall + parent->nfields > c->copies_left) {
		vgl_error(c->diag, d->parent_loc,
		          "too many inherited properties in all (over %zu copies): the model is "
		          "too large",
		          (size_t)1 << 20);
		parent = NULL;
	}
	if (parent)
		c->copies_left -= parent->nall + parent->nfields;
	r->name = d->name;
	r->loc = d->loc;
	r->parent = parent;
	r->max_size = d->has_max ? d->max : parent ? parent->max_size : 0;
	struct vgl_property *props = vgb_arena_array(c->arena, d->nmembers, sizeof *props);
	const struct vgl_property **all =
	    vgb_arena_array(c->arena, (parent ? parent->nall : 0) + d->nmembers, sizeof *all);
	size_t nall = 0;
	struct vgl_symtab names = {.arena = c->arena};
	for (size_t i = 0; parent && i < parent->nall; i++) {
		all[nall++] = parent->all[i];
		vgl_sym_put(&names, parent->all[i]->name, (void *)parent->all[i]);
	}
	size_t nprops = 0;
	for (size_t i = 0; i < d->nmembers; i++) {
		const struct ast_member *a = &d->members[i];
		const struct vgl_property *first = vgl_sym_get(&names, a->name);
		if (first && first->owner != r)
			vgl_error(c->diag, a->loc,
			          "property '%s' is inherited from '%s' and cannot be redefined",
			          a->name, first->owner->name);
		else if (first)
			vgl_error(c->diag, a->loc, "duplicate property '%s', first at %d:%d",
			          a->name, first->loc.line, first->loc.col);
		if (first)
			continue;
		struct vgl_property *p = &props[nprops++];
		check_property(c, a, p, r);
		vgl_sym_put(&names, p->name, p);
		all[nall++] = p;
	}
	r->props = props;
	r->nprops = nprops;
	r->all = all;
	r->nall = nall;
	flatten(c, r);
	check_size(c, d, r);
}

/* The record `d` extends, or NULL (none, unknown, or not a record: reported). */
static struct ast_decl *parent_of(struct checker *c, struct ast_decl *d)
{
	if (!d->parent)
		return NULL;
	struct ast_decl *p = vgl_sym_get(&c->types, d->parent);
	if (p && p->broken)
		;
	else if (!p)
		vgl_error(c->diag, d->parent_loc, "unknown record '%s'", d->parent);
	else if (p->kind != AST_RECORD)
		vgl_error(c->diag, d->parent_loc, "record '%s' extends '%s', which is not a record",
		          d->name, d->parent);
	else if (!p->broken)
		return p;
	d->parent = NULL;
	return NULL;
}

static bool before(struct vgl_loc a, struct vgl_loc b)
{
	return a.file == b.file && (a.line < b.line || (a.line == b.line && a.col < b.col));
}

/* Reports the cycle chain[from..n) (chain[n-1] extends chain[from]) once, at the
 * `extends` of its first record in the file. */
static void report_cycle(struct checker *c, struct ast_decl **chain, size_t from, size_t n)
{
	size_t first = from, len = 0;
	for (size_t i = from; i < n; i++) {
		len += strlen(chain[i]->name) + 4;
		if (before(chain[i]->loc, chain[first]->loc))
			first = i;
	}
	len += strlen(chain[first]->name) + 1;
	char *s = vgb_arena_alloc(c->arena, len), *p = s;
	for (size_t k = 0; k < n - from; k++) {
		p = stpcpy(p, chain[from + (first - from + k) % (n - from)]->name);
		p = stpcpy(p, " -> ");
	}
	stpcpy(p, chain[first]->name);
	vgl_error(c->diag, chain[first]->parent_loc, "cycle in extends: %s", s);
	for (size_t i = from; i < n; i++)
		chain[i]->parent = NULL; /* each record of the cycle is checked without a parent */
}

void vgl_check_records(struct checker *c, struct ast_decl **decls, size_t n, struct vgl_record *out)
{
	size_t next = 0;
	struct ast_decl **chain = malloc((n + 1) * sizeof *chain);
	if (!chain) {
		fprintf(stderr, "vigil: out of memory\n");
		exit(3);
	}
	for (size_t i = 0; i < n; i++) {
		/* Walk up to the first record already done, then build down: parents first. */
		size_t len = 0;
		struct ast_decl *d = decls[i];
		while (d && d->mark == 0) {
			d->mark = 1;
			chain[len++] = d;
			d = parent_of(c, d);
		}
		if (d && d->mark == 1) {
			size_t from = 0;
			while (chain[from] != d)
				from++;
			report_cycle(c, chain, from, len);
		}
		while (len > 0) {
			struct ast_decl *r = chain[--len];
			struct ast_decl *p = r->parent ? vgl_sym_get(&c->types, r->parent) : NULL;
			const struct vgl_record *parent = p ? p->model : NULL;
			size_t depth = 0;
			for (const struct vgl_record *q = parent; q; q = q->parent)
				depth++;
			if (depth >= MAX_EXTENDS) {
				vgl_error(c->diag, r->parent_loc,
				          "extends chain longer than %d records", MAX_EXTENDS);
				parent = NULL;
			}
			r->model = &out[next];
			r->mark = 2;
			check_record(c, r, &out[next++], parent);
		}
	}
	free(chain);
}
