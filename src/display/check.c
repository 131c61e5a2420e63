/* The checker: every relation and attribute a `.vgd` file names exists in the trace (or
 * is derived by its queries), the attributes that join icons are entities shown by an
 * icon, and each attribute that drives an aspect has a type that can drive it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "display/colour.h"
#include "display/internal.h"
#include "query/suggest.h"
#include "relations/derived.h"

const struct vgq_relation *vgd_relation(const struct vgd_display *d, const char *name)
{
	for (size_t i = 0; i < d->nderived; i++)
		if (d->derived[i]->name && !strcasecmp(d->derived[i]->name, name))
			return d->derived[i];
	const struct vgq_relation *r = vgq_database_find(d->db, name);
	if (!r) { /* Message, Network...: built on first mention (docs/tquel.md) */
		char err[512];
		r = vgq_database_derived(d->db, name, err, sizeof err);
	}
	return r;
}

static void unknown_relation(struct vgd_display *d, const struct vgd_show *s)
{
	size_t n = d->db->nrelations + d->nderived;
	const char **names = calloc(n + 1, sizeof *names);
	if (!names)
		abort();
	size_t k = 0;
	for (size_t i = 0; i < d->nderived; i++)
		if (d->derived[i]->name)
			names[k++] = d->derived[i]->name;
	for (size_t i = 0; i < d->db->nrelations; i++)
		names[k++] = d->db->relations[i]->name;
	char list[512];
	int c = vgq_suggest(s->rel, names, k, list, sizeof list);
	free(names);
	vgd_error(d->f, s->rel_loc, "no relation '%s' in the %s%s%s%s%s", s->rel,
	          d->db->from_model ? "sensor description" : "trace",
	          d->nderived ? " nor derived here" : "",
	          c == 1   ? " (did you mean "
	          : c == 0 ? " (relations: "
	                   : "",
	          list,
	          c == 1   ? "?)"
	          : c == 0 ? ")"
	                   : "");
}

/* The column of attribute `name` of r, or -1 after reporting it. */
static int attribute(struct vgd_display *d, const struct vgq_relation *r, const char *name,
                     struct vgd_loc loc)
{
	int col = vgq_relation_attr(r, name);
	if (col >= 0)
		return col;
	const char **names = calloc(r->nattrs + 1, sizeof *names);
	if (!names)
		abort();
	for (size_t i = 0; i < r->nattrs; i++)
		names[i] = r->attrs[i].name;
	char list[512];
	int c = vgq_suggest(name, names, r->nattrs, list, sizeof list);
	free(names);
	vgd_error(d->f, loc, "%s has no attribute '%s'%s%s%s", r->name, name,
	          c == 1           ? "; did you mean "
	          : c == 0         ? "; its attributes: "
	          : r->nattrs == 0 ? "; it has no explicit attributes"
	                           : "",
	          list, c == 1 ? "?" : "");
	return -1;
}

static bool numeric(enum vgq_type t)
{
	return t == VGQ_INT || t == VGQ_UINT || t == VGQ_DOUBLE;
}

/* An icon of an entity relation of that kind is shown somewhere. */
static bool kind_has_icon(const struct vgd_file *f, const char *kind)
{
	for (size_t i = 0; i < f->nshows; i++)
		if (f->shows[i].form == VGD_F_ICON && f->shows[i].rel &&
		    !strcasecmp(f->shows[i].rel, kind))
			return true;
	return false;
}

/* An attribute that joins icons: an entity whose kind has an icon. */
static int entity_attr(struct vgd_display *d, const struct vgd_show *s, const char *name,
                       struct vgd_loc loc, const char **kind)
{
	int col = attribute(d, s->r, name, loc);
	if (col < 0)
		return -1;
	const struct vgq_attr *a = &s->r->attrs[col];
	if (a->type != VGQ_ENTITY) {
		vgd_error(d->f, loc, "%s.%s is a %s, not an entity: %s joins the icons of entities",
		          s->r->name, a->name, vgq_type_name(a->type),
		          s->form == VGD_F_INSIDE  ? "inclusion"
		          : s->form == VGD_F_LINK  ? "a link"
		          : s->form == VGD_F_FLASH ? "flashing"
		                                   : "a relationship");
		return -1;
	}
	*kind = a->ref_kind;
	if (a->ref_kind && !kind_has_icon(d->f, a->ref_kind)) {
		vgd_error(d->f, loc,
		          "%s.%s is a %s, and no icon shows %s entities (add 'show %s as circle', "
		          "for example)",
		          s->r->name, a->name, a->ref_kind, a->ref_kind, a->ref_kind);
		return -1;
	}
	return col;
}

static bool allowed(const struct vgd_show *s, enum vgd_aspect_kind k)
{
	switch (s->form) {
	case VGD_F_ICON:
	case VGD_F_ASPECTS:
		return true;
	case VGD_F_LINK:
		return k == VGD_A_COLOUR || k == VGD_A_INTENSITY || k == VGD_A_LABEL ||
		       k == VGD_A_SIZE;
	default:
		return false;
	}
}

static void check_const_at(struct vgd_display *d, const struct vgd_aspect *a,
                           const struct vgd_const *c, struct vgd_loc loc)
{
	if (a->kind == VGD_A_INTENSITY && (c->num < 0 || c->num > 1 || c->percent))
		vgd_error(d->f, loc, "an intensity is from 0 (faint) to 1 (full)");
	if (a->kind == VGD_A_SCALE && (c->num <= 0 || c->num > 100 || c->percent))
		vgd_error(d->f, loc, "a scale is a factor above 0, up to 100");
	if (a->kind == VGD_A_ROTATION && (fabs(c->num) > 36000 || c->percent))
		vgd_error(d->f, loc, "a rotation is in degrees");
}

static void check_const(struct vgd_display *d, const struct vgd_aspect *a,
                        const struct vgd_const *c)
{
	check_const_at(d, a, c, a->loc);
}

static void check_aspect(struct vgd_display *d, struct vgd_show *s, struct vgd_aspect *a)
{
	const char *what = vgd_aspect_name(a->kind);
	if (!allowed(s, a->kind)) {
		vgd_error(d->f, a->loc, "%s has no %s aspect%s",
		          s->form == VGD_F_LINK     ? "a link"
		          : s->form == VGD_F_INSIDE ? "an inclusion"
		                                    : "flashing",
		          what,
		          s->form == VGD_F_LINK
		              ? " (its ends are the icons it joins)"
		              : " (it only changes the icons of the entities it names)");
		return;
	}
	if (a->drive == VGD_D_CONST && (a->kind != VGD_A_SIZE && a->kind != VGD_A_LABEL))
		check_const(d, a, &a->c);
	if (a->drive == VGD_D_TABLE) {
		for (size_t i = 0; i < a->nentries; i++)
			check_const_at(d, a, &a->entries[i].out, a->entries[i].loc);
		if (a->has_else)
			check_const(d, a, &a->otherwise);
	}
	if (a->has_range && a->kind != VGD_A_COLOUR && a->kind != VGD_A_X && a->kind != VGD_A_Y) {
		check_const(d, a, &a->lo);
		check_const(d, a, &a->hi);
	}
	if (!a->attr)
		return;
	a->col = attribute(d, s->r, a->attr, a->attr_loc);
	if (a->col < 0)
		return;
	const struct vgq_attr *at = &s->r->attrs[a->col];
	if (at->type == VGQ_BYTES) {
		vgd_error(d->f, a->attr_loc, "%s.%s is bytes: it cannot drive the %s of an icon",
		          s->r->name, at->name, what);
		a->col = -1;
		return;
	}
	switch (a->drive) {
	case VGD_D_VALUE:
		if (!numeric(at->type)) {
			vgd_error(d->f, a->attr_loc,
			          "%s.%s is a%s %s: '%s by value of' needs a number (int, uint or "
			          "double); use 'by order of'%s",
			          s->r->name, at->name, at->type == VGQ_ENTITY ? "n" : "",
			          vgq_type_name(at->type), what,
			          a->kind == VGD_A_X || a->kind == VGD_A_Y ? "" : " or a table");
			a->col = -1;
			return;
		}
		a->vmin = INFINITY;
		a->vmax = -INFINITY;
		for (uint32_t i = 0; i < s->r->ntuples; i++) {
			double v;
			if (vgd_cell_number(s->r, a->col, i, &v)) {
				a->vmin = v < a->vmin ? v : a->vmin;
				a->vmax = v > a->vmax ? v : a->vmax;
			}
		}
		break;
	case VGD_D_ORDER:
		a->order = vgd_order_build(s->r, a->col);
		break;
	case VGD_D_TABLE:
		for (size_t i = 0; i < a->nentries; i++) {
			const struct vgd_entry *e = &a->entries[i];
			if (e->key_is_string && numeric(at->type))
				vgd_error(d->f, e->loc, "\"%s\" is a string, but %s.%s is a%s %s",
				          e->key, s->r->name, at->name,
				          at->type == VGQ_INT ? "n" : "", vgq_type_name(at->type));
			else if (!e->key_is_string && !numeric(at->type))
				vgd_error(d->f, e->loc,
				          "%s is a number, but %s.%s is a%s %s: write \"%s\"",
				          e->key, s->r->name, at->name,
				          at->type == VGQ_ENTITY ? "n" : "",
				          vgq_type_name(at->type), e->key);
		}
		break;
	default:
		break;
	}
}

static void check_show(struct vgd_display *d, struct vgd_show *s, size_t index)
{
	s->palette = vgd_palette(index);
	if (!s->rel)
		return;
	s->r = vgd_relation(d, s->rel);
	if (!s->r) {
		unknown_relation(d, s);
		return;
	}
	s->entity = s->form == VGD_F_ICON && s->r->kind == VGQ_REL_ENTITY;
	s->sorted = s->r->ntuples < UINT32_MAX;
	for (size_t i = 1; i < s->r->ntuples && s->sorted; i++)
		s->sorted = s->r->from[i - 1] <= s->r->from[i];
	if (s->a && s->form != VGD_F_ICON)
		s->a_col = entity_attr(d, s, s->a, s->a_loc, &s->a_kind);
	if (s->b)
		s->b_col = entity_attr(d, s, s->b, s->b_loc, &s->b_kind);
	bool seen[VGD_A_SCALE + 1] = {0};
	for (size_t i = 0; i < s->naspects; i++) {
		struct vgd_aspect *a = &s->aspects[i];
		if (seen[a->kind]) {
			vgd_error(d->f, a->loc, "a second %s aspect in one show",
			          vgd_aspect_name(a->kind));
			continue;
		}
		seen[a->kind] = true;
		check_aspect(d, s, a);
	}
}

void vgd_check(struct vgd_display *d)
{
	for (size_t i = 0; i < d->f->nshows; i++)
		check_show(d, &d->f->shows[i], i);
}
