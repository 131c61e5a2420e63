/* The checker: declarations into the model. Names are global to a file and its imports
 * (types and consts share one name space, sensors have their own) and may be used before
 * they are declared. Records are in check_record.c, sensors in check_sensor.c. */
#include "lang/check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lang/arena.h"
#include "lang/names.h"

const char *vgl_kind_word(enum ast_kind k)
{
	switch (k) {
	case AST_CONST:
		return "a const";
	case AST_ENTITY:
		return "an entity";
	case AST_STRUCT:
		return "a struct";
	case AST_RECORD:
		return "a record";
	case AST_SENSOR:
		return "a sensor";
	}
	return "?";
}

/* "a uint8", "an entity reference": a type's name with its article, for messages. */
const char *vgl_a_type(enum vgl_type t)
{
	static const char *const names[] = {
	    [VGL_INT8] = "an int8",
	    [VGL_INT16] = "an int16",
	    [VGL_INT32] = "an int32",
	    [VGL_INT64] = "an int64",
	    [VGL_UINT8] = "a uint8",
	    [VGL_UINT16] = "a uint16",
	    [VGL_UINT32] = "a uint32",
	    [VGL_UINT64] = "a uint64",
	    [VGL_FLOAT64] = "a float64",
	    [VGL_BOOL] = "a bool",
	    [VGL_STRING] = "a string",
	    [VGL_BYTES] = "bytes",
	    [VGL_ENTITY] = "an entity reference",
	    [VGL_STRUCT] = "a struct",
	};
	return t <= VGL_STRUCT ? names[t] : "?";
}

static const char *a_literal(const struct vgl_literal *l)
{
	switch (l->kind) {
	case VGL_LIT_INT:
		return "an integer";
	case VGL_LIT_FLOAT:
		return "a float";
	case VGL_LIT_STRING:
		return "a string";
	case VGL_LIT_BOOL:
		return "a bool";
	}
	return "?";
}

bool vgl_literal_fits(enum vgl_type type, uint32_t max, const struct ast_value *v,
                      struct vgl_literal *out, char *why, size_t whysize)
{
	const struct vgl_literal *l = &v->lit;
	*out = *l;
	if (type <= VGL_UINT64) {
		static const int bits[] = {8, 16, 32, 64, 8, 16, 32, 64};
		int b = bits[type];
		bool is_unsigned = type >= VGL_UINT8;
		if (l->kind != VGL_LIT_INT) {
			snprintf(why, whysize, "%s is not %s", a_literal(l), vgl_a_type(type));
			return false;
		}
		if (is_unsigned && v->neg) {
			snprintf(why, whysize, "%" PRId64 " is negative, %s is unsigned", l->i,
			         vgl_type_name(type));
			return false;
		}
		bool fits;
		if (is_unsigned)
			fits = b == 64 || l->u <= (UINT64_MAX >> (64 - b));
		else if (v->neg)
			fits = l->i >= -(int64_t)(UINT64_MAX >> (65 - b)) - 1;
		else
			fits = l->u <= (UINT64_MAX >> (65 - b));
		if (!fits) {
			if (v->neg)
				snprintf(why, whysize, "%" PRId64 " is out of range for %s", l->i,
				         vgl_type_name(type));
			else
				snprintf(why, whysize, "%" PRIu64 " is out of range for %s", l->u,
				         vgl_type_name(type));
			return false;
		}
		return true;
	}
	switch (type) {
	case VGL_FLOAT64:
		if (l->kind == VGL_LIT_INT) {
			out->kind = VGL_LIT_FLOAT;
			out->d = v->neg ? (double)l->i : (double)l->u;
			out->i = 0;
			out->u = 0;
			return true;
		}
		if (l->kind == VGL_LIT_FLOAT)
			return true;
		break;
	case VGL_BOOL:
		if (l->kind == VGL_LIT_BOOL)
			return true;
		break;
	case VGL_STRING:
	case VGL_BYTES:
		if (l->kind != VGL_LIT_STRING)
			break;
		if (type == VGL_STRING && memchr(l->s, 0, l->slen)) {
			snprintf(why, whysize, "a string cannot contain a zero byte");
			return false;
		}
		if (max && l->slen > max) {
			snprintf(why, whysize, "it is %zu bytes long, more than max %" PRIu32,
			         l->slen, max);
			return false;
		}
		return true;
	default:
		snprintf(why, whysize, "%s cannot have a default", vgl_a_type(type));
		return false;
	}
	snprintf(why, whysize, "%s is not %s", a_literal(l), vgl_a_type(type));
	return false;
}

bool vgl_resolve_type(struct checker *c, const char *name, struct vgl_loc loc, enum vgl_type *type,
                      const struct vgl_entity **entity, const struct vgl_struct **st)
{
	*entity = NULL;
	*st = NULL;
	if (vgl_primitive_type(name, type))
		return true;
	struct ast_decl *d = vgl_sym_get(&c->types, name);
	if (d && d->broken)
		return false;
	if (!d) {
		vgl_error(c->diag, loc, "unknown type '%s'", name);
		return false;
	}
	if (d->kind == AST_ENTITY) {
		*type = VGL_ENTITY;
		*entity = d->model;
		return true;
	}
	if (d->kind == AST_STRUCT) {
		*type = VGL_STRUCT;
		*st = d->model;
		return true;
	}
	if (d->kind == AST_RECORD)
		vgl_error(c->diag, loc,
		          "record '%s' cannot be used as a type (a record may extend it)", name);
	else
		vgl_error(c->diag, loc, "'%s' is %s, not a type", name, vgl_kind_word(d->kind));
	return false;
}

/* An attribute of an entity or a member of a struct. */
static void check_member(struct checker *c, const struct ast_member *a, struct vgl_member *m,
                         bool in_struct)
{
	const char *what = in_struct ? "member" : "attribute";
	m->name = a->name;
	m->loc = a->loc;
	m->max = a->max;
	if (!vgl_resolve_type(c, a->type, a->type_loc, &m->type, &m->entity, &m->st))
		m->type = VGL_UINT8; /* reported: go on with something harmless */
	if (m->type == VGL_STRUCT && !in_struct)
		vgl_error(c->diag, a->type_loc, "an entity attribute cannot be a struct");
	if (a->has_max && m->type != VGL_STRING && m->type != VGL_BYTES)
		vgl_error(c->diag, a->max_loc, "max applies only to string and bytes");
	if (in_struct && !a->has_max && (m->type == VGL_STRING || m->type == VGL_BYTES))
		vgl_error(c->diag, a->loc, "%s member '%s' needs a max length (max N)",
		          vgl_type_name(m->type), a->name);
	if (a->has_sel)
		vgl_error(c->diag, a->sel_loc,
		          "a selection belongs to a record's property, not to a %s", what);
	if (a->has_def)
		vgl_error(c->diag, a->def.loc, "%s cannot have a default",
		          in_struct ? "a struct member" : "an entity attribute");
}

static struct vgl_member *check_members(struct checker *c, const struct ast_decl *d, bool in_struct,
                                        size_t *n)
{
	struct vgl_member *ms = vgb_arena_array(c->arena, d->nmembers, sizeof *ms);
	struct vgl_symtab seen = {.arena = c->arena};
	for (size_t i = 0; i < d->nmembers; i++) {
		const struct ast_member *first =
		    vgl_sym_put(&seen, d->members[i].name, &d->members[i]);
		if (first)
			vgl_error(c->diag, d->members[i].loc, "duplicate %s '%s', first at %d:%d",
			          in_struct ? "member" : "attribute", d->members[i].name,
			          first->loc.line, first->loc.col);
		check_member(c, &d->members[i], &ms[i], in_struct);
	}
	*n = d->nmembers;
	return ms;
}

static void check_const(struct checker *c, const struct ast_decl *d, struct vgl_const *k)
{
	k->name = d->name;
	k->loc = d->loc;
	char why[160];
	if (!vgl_primitive_type(d->type, &k->type)) {
		const struct ast_decl *t = vgl_sym_get(&c->types, d->type);
		if (t && t->broken)
			return;
		if (t)
			vgl_error(c->diag, d->type_loc,
			          "a const must have a primitive type, not '%s'", d->type);
		else
			vgl_error(c->diag, d->type_loc, "unknown type '%s'", d->type);
		return;
	}
	if (!vgl_literal_fits(k->type, 0, &d->value, &k->value, why, sizeof why))
		vgl_error(c->diag, d->value.loc, "value of const '%s': %s", d->name, why);
}

/* Sorts the declarations by kind; reports names declared twice (the first one wins). */
static void collect(struct checker *c, struct ast_file *const *files, size_t nfiles,
                    struct ast_decl ***by_kind, size_t *counts)
{
	struct vgl_symtab sensors = {.arena = c->arena};
	size_t caps[5] = {0};
	for (size_t f = 0; f < nfiles; f++) {
		for (size_t i = 0; i < files[f]->ndecls; i++) {
			struct ast_decl *d = &files[f]->decls[i];
			struct vgl_symtab *space = d->kind == AST_SENSOR ? &sensors : &c->types;
			const struct ast_decl *first = vgl_sym_put(space, d->name, d);
			if (first) {
				vgl_error(c->diag, d->loc, "'%s' is already declared, at %s:%d:%d",
				          d->name, first->loc.file, first->loc.line,
				          first->loc.col);
				continue;
			}
			if (d->broken)
				continue;
			struct ast_decl **slot =
			    vgl_push(c->arena, &by_kind[d->kind], &counts[d->kind], &caps[d->kind],
			             sizeof *slot);
			*slot = d;
		}
	}
}

static int by_relation_name(const void *a, const void *b)
{
	const struct ast_decl *x = *(const struct ast_decl *const *)a;
	const struct ast_decl *y = *(const struct ast_decl *const *)b;
	int c = strcasecmp(x->name, y->name);
	if (!c)
		c = strcmp(x->loc.file, y->loc.file);
	if (!c)
		c = x->loc.line != y->loc.line
		        ? (x->loc.line < y->loc.line ? -1 : 1)
		        : (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
	return c;
}

/* Each sensor feeds the relation of its name and each entity kind is one too, and a
 * query finds relations whatever the case: two of these named alike would be one
 * relation in every trace (docs/tquel.md), so the later one is an error here. The
 * runtime's own relations (processes, threads) and the ones a query derives (the clock,
 * the wait-for graph: src/relations/clock.c, waits.c) are reserved. */
static void check_relation_names(struct checker *c, struct ast_decl **sensors, size_t nsensors,
                                 struct ast_decl **entities, size_t nentities)
{
	static const char *const reserved[] = {"OSProcess", "OSThread", "Clock", "WaitFor"};
	size_t n = nsensors + nentities;
	if (!n)
		return;
	struct ast_decl **all = calloc(n, sizeof *all);
	if (!all)
		return;
	if (nsensors) /* either array is NULL when empty */
		memcpy(all, sensors, nsensors * sizeof *all);
	if (nentities)
		memcpy(all + nsensors, entities, nentities * sizeof *all);
	qsort(all, n, sizeof *all, by_relation_name);
	for (size_t i = 0; i < n; i++) {
		const char *what = all[i]->kind == AST_SENSOR ? "sensor" : "entity";
		for (size_t r = 0; r < sizeof reserved / sizeof *reserved; r++)
			if (!strcasecmp(all[i]->name, reserved[r]))
				vgl_error(
				    c->diag, all[i]->loc,
				    "%s '%s': relation '%s' is vigil's own (OSProcess, OSThread, "
				    "Clock, WaitFor); choose another name",
				    what, all[i]->name, reserved[r]);
		if (i && !strcasecmp(all[i]->name, all[i - 1]->name)) {
			const struct ast_decl *first = all[i - 1];
			vgl_error(
			    c->diag, all[i]->loc,
			    "%s '%s' and %s '%s' (at %s:%d:%d) would be one relation: relation "
			    "names do not count case; rename one",
			    what, all[i]->name, first->kind == AST_SENSOR ? "sensor" : "entity",
			    first->name, first->loc.file, first->loc.line, first->loc.col);
		}
	}
	free(all);
}

void vgl_check(struct vgl_model *m, struct ast_file *const *files, size_t nfiles,
               struct vgl_diag *diag, struct vgb_arena *arena)
{
	struct checker c = {.diag = diag,
	                    .arena = arena,
	                    .types = {.arena = arena},
	                    .m = m,
	                    .copies_left = 1 << 20};
	struct ast_decl **by_kind[5] = {0};
	size_t n[5] = {0};
	collect(&c, files, nfiles, by_kind, n);
	check_relation_names(&c, by_kind[AST_SENSOR], n[AST_SENSOR], by_kind[AST_ENTITY],
	                     n[AST_ENTITY]);

	struct vgl_const *consts = vgb_arena_array(arena, n[AST_CONST], sizeof *consts);
	struct vgl_entity *entities = vgb_arena_array(arena, n[AST_ENTITY], sizeof *entities);
	struct vgl_struct *structs = vgb_arena_array(arena, n[AST_STRUCT], sizeof *structs);
	struct vgl_record *records = vgb_arena_array(arena, n[AST_RECORD], sizeof *records);
	struct vgl_sensor *sensors = vgb_arena_array(arena, n[AST_SENSOR], sizeof *sensors);
	/* Every object has its address before any is filled: references resolve to it. */
	for (size_t i = 0; i < n[AST_CONST]; i++)
		by_kind[AST_CONST][i]->model = &consts[i];
	for (size_t i = 0; i < n[AST_ENTITY]; i++)
		by_kind[AST_ENTITY][i]->model = &entities[i];
	for (size_t i = 0; i < n[AST_STRUCT]; i++)
		by_kind[AST_STRUCT][i]->model = &structs[i];

	for (size_t i = 0; i < n[AST_CONST]; i++)
		check_const(&c, by_kind[AST_CONST][i], &consts[i]);
	for (size_t i = 0; i < n[AST_ENTITY]; i++) {
		const struct ast_decl *d = by_kind[AST_ENTITY][i];
		entities[i].name = d->name;
		entities[i].loc = d->loc;
		entities[i].attrs = check_members(&c, d, false, &entities[i].nattrs);
	}
	for (size_t i = 0; i < n[AST_STRUCT]; i++) {
		const struct ast_decl *d = by_kind[AST_STRUCT][i];
		structs[i].name = d->name;
		structs[i].header = d->header;
		structs[i].loc = d->loc;
		structs[i].members = check_members(&c, d, true, &structs[i].nmembers);
	}
	vgl_check_records(&c, by_kind[AST_RECORD], n[AST_RECORD], records);
	for (size_t i = 0; i < n[AST_SENSOR]; i++)
		vgl_check_sensor(&c, by_kind[AST_SENSOR][i], &sensors[i]);

	m->consts = consts;
	m->nconsts = n[AST_CONST];
	m->entities = entities;
	m->nentities = n[AST_ENTITY];
	m->structs = structs;
	m->nstructs = n[AST_STRUCT];
	m->records = records;
	m->nrecords = n[AST_RECORD];
	m->sensors = sensors;
	m->nsensors = n[AST_SENSOR];
}
