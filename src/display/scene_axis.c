/* Time as a horizontal axis (docs/display.md, "Time"): the scene at `at` shows valid time
 * [at - window, at] from left to right. Each tuple of an icon relation in that time is a
 * bar over its valid time (an event keeps its icon, at its instant) in the row its y
 * aspect gives; relationships that change an entity's aspects colour the parts of its bar
 * they cover; an inclusion is a bar of the contained entity inside the container's row; a
 * link is an arrow between the rows at its start; a flashing tuple is a mark on its
 * entity's row (and the entity flashes while it holds at `at`). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "display/scene.h"

double vgd_axis_x(const struct vgd_scene *sc, int64_t t)
{
	double span = (double)(sc->at - sc->t0);
	double f = span > 0 ? (double)(t - sc->t0) / span : 1;
	return sc->x0 + (sc->x1 - sc->x0) * (f < 0 ? 0 : f > 1 ? 1 : f);
}

/* The part of tuple i's valid time inside the window; false if none. */
static bool clip(const struct vgd_scene *sc, const struct vgq_relation *r, uint32_t i,
                 int64_t *from, int64_t *to)
{
	*from = r->from[i];
	*to = !r->to || r->open[i] ? (r->to ? sc->at : r->from[i]) : r->to[i];
	if (*from > sc->at || *to < sc->t0 || (r->to && !r->open[i] && *to == sc->t0))
		return false;
	*from = *from < sc->t0 ? sc->t0 : *from;
	*to = *to > sc->at ? sc->at : *to;
	return true;
}

static struct vgd_icon *push(struct vgd_scene *sc, size_t *cap)
{
	sc->icons = vgd_grow(sc->icons, sc->nicons, cap, sizeof *sc->icons);
	return &sc->icons[sc->nicons++];
}

/* An icon spread over [from, to] as a bar (intervals), or at `from` (events). */
static void spread(const struct vgd_scene *sc, struct vgd_icon *ic, bool interval, int64_t from,
                   int64_t to)
{
	double a = vgd_axis_x(sc, from), b = vgd_axis_x(sc, to);
	if (interval) {
		ic->bar = true;
		ic->x = (a + b) / 2;
		ic->w = fmax(b - a, 2) / ic->scale;
	} else {
		ic->x = a;
	}
}

void vgd_scene_axis(struct vgd_scene *sc)
{
	const struct vgd_display *d = sc->d;
	const struct vgd_file *f = d->f;
	double W = f->width, H = f->height;
	sc->t0 = sc->at - d->window;
	sc->x0 = 0.12 * W;
	sc->x1 = 0.96 * W;
	sc->ruler_y = H - 24;
	size_t cap = 0, lcap = 0;
	int64_t from, to;
	for (size_t k = 0; k < f->nshows; k++) {
		const struct vgd_show *s = &f->shows[k];
		if (s->form != VGD_F_ICON)
			continue;
		for (uint32_t i = vgd_lower(d, s, sc->at), n = vgd_upto(s, sc->at); i < n; i++) {
			if (!clip(sc, s->r, i, &from, &to))
				continue;
			struct vgd_icon *ic = push(sc, &cap);
			vgd_icon_init(d, s, i, ic);
			if (ic->label_at == VGD_CENTER && s->r->to)
				ic->label_at = VGD_LEFT; /* names in the margin, as rows are read */
			spread(sc, ic, s->r->to != NULL, from, to);
		}
	}
	size_t nbase = sc->nicons;
	struct vgd_finder fd;
	vgd_finder_build(&fd, &sc->icons, nbase);
	for (size_t k = 0; k < f->nshows; k++) {
		const struct vgd_show *s = &f->shows[k];
		if (s->form == VGD_F_ICON || s->form == VGD_F_LINK)
			continue;
		for (uint32_t i = vgd_lower(d, s, sc->at), n = vgd_upto(s, sc->at); i < n; i++) {
			if (!clip(sc, s->r, i, &from, &to))
				continue;
			long e = vgd_finder_find(&fd, s->r, s->a_col, i, s->a_kind);
			long c = s->form == VGD_F_INSIDE
			             ? vgd_finder_find(&fd, s->r, s->b_col, i, s->b_kind)
			             : -1;
			if (e < 0 || (s->form == VGD_F_INSIDE && c < 0)) {
				sc->unplaced++;
				continue;
			}
			bool holds = s->r->from[i] <= sc->at &&
			             (!s->r->to ? sc->at - s->r->from[i] < d->hold
			                        : s->r->open[i] || sc->at < s->r->to[i]);
			if (s->form == VGD_F_FLASH && holds)
				sc->icons[e].flash = true;
			struct vgd_icon *ic = push(sc, &cap);
			*ic = sc->icons[e];
			ic->flash = false;
			ic->ghost = true; /* a part of another icon: named after the tuple */
			ic->ghost_of = s;
			ic->ghost_row = i;
			ic->label[0] = 0;
			ic->depth = 1;
			if (s->form == VGD_F_ASPECTS) {
				vgd_apply_aspects(d, s, i, ic);
				ic->label[0] = 0;
				spread(sc, ic, s->r->to != NULL, from, to);
			} else if (s->form == VGD_F_INSIDE) {
				const struct vgd_icon *cont = &sc->icons[c];
				ic->parent = c;
				ic->y = cont->y;
				ic->h = cont->h * cont->scale * 0.6 / ic->scale;
				ic->label_at = VGD_CENTER;
				memcpy(ic->label, sc->icons[e].label, sizeof ic->label);
				spread(sc, ic, s->r->to != NULL, from, to);
			} else { /* a mark where the flashing tuple starts */
				ic->mark = true;
				ic->x = vgd_axis_x(sc, from);
				ic->w = ic->h = 8;
				ic->scale = 1;
				ic->rotation = 0;
				ic->colour = 0xd62728;
				ic->intensity = 1;
			}
		}
	}
	/* links: arrows between the rows of their ends, at their start */
	for (size_t k = 0; k < f->nshows; k++) {
		const struct vgd_show *s = &f->shows[k];
		if (s->form != VGD_F_LINK)
			continue;
		for (uint32_t i = vgd_lower(d, s, sc->at), n = vgd_upto(s, sc->at); i < n; i++) {
			if (!clip(sc, s->r, i, &from, &to))
				continue;
			long a = vgd_finder_find(&fd, s->r, s->a_col, i, s->a_kind);
			long b = vgd_finder_find(&fd, s->r, s->b_col, i, s->b_kind);
			if (a < 0 || b < 0) {
				sc->unplaced++;
				continue;
			}
			sc->links = vgd_grow(sc->links, sc->nlinks, &lcap, sizeof *sc->links);
			struct vgd_link *l = &sc->links[sc->nlinks++];
			memset(l, 0, sizeof *l);
			l->show = s;
			l->row = i;
			l->from = a;
			l->to = b;
			l->count = 1;
			l->opacity = 1;
			struct vgd_icon tmp = {
			    .show = s, .colour = s->palette, .intensity = 1, .w = 2};
			vgd_apply_aspects(d, s, i, &tmp);
			l->colour = tmp.colour;
			l->width = tmp.w > 0 ? tmp.w : 2;
			memcpy(l->label, tmp.label, sizeof l->label);
			const struct vgd_icon *ia = &sc->icons[a], *ib = &sc->icons[b];
			double dir = ib->y >= ia->y ? 1 : -1;
			l->x1 = l->x2 = vgd_axis_x(sc, from);
			l->y1 = ia->y + dir * ia->h * ia->scale / 2;
			l->y2 = ib->y - dir * ib->h * ib->scale / 2;
		}
	}
	free(fd.by_key);
	vgd_sort_by_depth(sc);
}
