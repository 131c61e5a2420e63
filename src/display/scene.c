/* The scene at an instant (docs/display.md, "What each statement means"): one icon per tuple
 * of an icon relation that holds (or, with animationtrace, held within the fading
 * window), aspects from attribute values, the icons of relationships' entities changed,
 * placed inside one another or joined by links, then laid out. */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/search.h"
#include "display/colour.h"
#include "display/scene.h"

#define PAD 8.0 /* between the icons inside a container */
#define LABEL_BAND 18.0
#define PER_ROW 4 /* icons per row inside a container */
#define GHOSTS 3  /* past inclusions drawn per container */

enum presence { ABSENT, PRESENT, PAST };

/* Whether tuple i of r holds at `at`; the age of a past one. */
static enum presence presence(const struct vgd_display *d, const struct vgq_relation *r, uint32_t i,
                              int64_t at, int64_t *age)
{
	*age = 0;
	int64_t from = r->from[i];
	if (from > at)
		return ABSENT;
	int64_t end; /* when it stops being present */
	if (!r->to)
		end = from + d->hold;
	else if (r->open[i])
		return PRESENT;
	else
		end = r->to[i];
	if (at < end)
		return PRESENT;
	if (d->f->time == VGD_T_ANIMATION || at - end >= d->window)
		return ABSENT;
	*age = at - end;
	return PAST;
}

void *vgd_grow(void *p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	p = realloc(p, *cap * size);
	if (!p)
		abort();
	return p;
}

/* ---- aspects ---- */

static double axis_pos(const struct vgd_const *c, double extent)
{
	return c->percent ? c->num * extent / 100.0 : c->num;
}

static bool table_lookup(const struct vgd_aspect *a, const struct vgq_relation *r, uint32_t row,
                         const struct vgd_const **out)
{
	char text[256];
	double num = 0;
	bool has_num = vgd_cell_number(r, a->col, row, &num);
	vgd_cell_text(r, a->col, row, text, sizeof text);
	for (size_t i = 0; i < a->nentries; i++) {
		const struct vgd_entry *e = &a->entries[i];
		if (e->key_is_string ? !vgd_cell_null(r, a->col, row) && !strcmp(e->key, text)
		                     : has_num && num == e->key_num) {
			*out = &e->out;
			return true;
		}
	}
	if (a->has_else) {
		*out = &a->otherwise;
		return true;
	}
	return false;
}

/* t in [0, 1] of the row's value (by value) or rank (by order); false if it has none. */
static bool fraction(const struct vgd_aspect *a, const struct vgq_relation *r, uint32_t row,
                     bool centred, double *t)
{
	if (a->drive == VGD_D_VALUE) {
		double v;
		if (!vgd_cell_number(r, a->col, row, &v))
			return false;
		*t = a->vmax > a->vmin ? (v - a->vmin) / (a->vmax - a->vmin) : 0.5;
		return true;
	}
	long k = vgd_order_rank(a->order, r, a->col, row);
	if (k < 0)
		return false;
	size_t n = a->order->n;
	if (centred)
		*t = ((double)k + 0.5) / (double)n;
	else
		*t = n > 1 ? (double)k / (double)(n - 1) : 1.0;
	return true;
}

/* A number aspect: intensity, rotation, scale. */
static void number_aspect(const struct vgd_aspect *a, const struct vgq_relation *r, uint32_t row,
                          double lo, double hi, double *out)
{
	const struct vgd_const *c;
	double t;
	switch (a->drive) {
	case VGD_D_CONST:
		*out = a->c.num;
		break;
	case VGD_D_TABLE:
		if (a->col >= 0 && table_lookup(a, r, row, &c))
			*out = c->num;
		break;
	case VGD_D_VALUE:
	case VGD_D_ORDER:
		if (a->col < 0 || !fraction(a, r, row, false, &t))
			break;
		if (a->has_range) {
			lo = a->lo.num;
			hi = a->hi.num;
		}
		*out = lo + (hi - lo) * t;
		break;
	default:
		break;
	}
}

static void position_aspect(const struct vgd_aspect *a, const struct vgq_relation *r, uint32_t row,
                            double extent, double lo, double hi, double *out)
{
	double t;
	if (a->drive == VGD_D_CONST) {
		*out = axis_pos(&a->c, extent);
	} else if (a->col >= 0 && fraction(a, r, row, a->drive == VGD_D_ORDER, &t)) {
		if (a->has_range) {
			lo = axis_pos(&a->lo, extent);
			hi = axis_pos(&a->hi, extent);
		}
		*out = lo + (hi - lo) * t;
	}
}

static void colour_aspect(const struct vgd_aspect *a, const struct vgq_relation *r, uint32_t row,
                          uint32_t *out)
{
	const struct vgd_const *c;
	double t;
	if (a->drive == VGD_D_CONST) {
		*out = a->c.colour;
	} else if (a->col < 0) {
		return;
	} else if (a->drive == VGD_D_TABLE) {
		if (table_lookup(a, r, row, &c))
			*out = c->colour;
	} else if (a->drive == VGD_D_ORDER && !a->has_range) {
		long k = vgd_order_rank(a->order, r, a->col, row);
		if (k >= 0)
			*out = vgd_palette((size_t)k);
	} else if (fraction(a, r, row, false, &t)) {
		uint32_t lo = a->has_range ? a->lo.colour : 0xc6dbef;
		uint32_t hi = a->has_range ? a->hi.colour : 0x08306b;
		*out = vgd_colour_mix(lo, hi, t);
	}
}

void vgd_apply_aspects(const struct vgd_display *d, const struct vgd_show *s, uint32_t row,
                       struct vgd_icon *ic)
{
	double W = d->f->width, H = d->f->height;
	for (size_t i = 0; i < s->naspects; i++) {
		const struct vgd_aspect *a = &s->aspects[i];
		switch (a->kind) {
		case VGD_A_X:
			position_aspect(a, s->r, row, W, 0.08 * W, 0.92 * W, &ic->x);
			break;
		case VGD_A_Y:
			position_aspect(a, s->r, row, H, 0.12 * H, 0.95 * H, &ic->y);
			break;
		case VGD_A_SIZE:
			ic->w = a->c.num;
			ic->h = a->size_h >= 0 ? a->size_h : a->c.num;
			break;
		case VGD_A_LABEL:
			if (a->drive == VGD_D_CONST)
				snprintf(ic->label, sizeof ic->label, "%s", a->text);
			else if (a->col >= 0)
				vgd_cell_text(s->r, a->col, row, ic->label, sizeof ic->label);
			ic->label_at = a->label_at;
			break;
		case VGD_A_INTENSITY:
			number_aspect(a, s->r, row, 0.15, 1, &ic->intensity);
			break;
		case VGD_A_ROTATION:
			number_aspect(a, s->r, row, 0, 360, &ic->rotation);
			break;
		case VGD_A_SCALE:
			number_aspect(a, s->r, row, 0.5, 2, &ic->scale);
			break;
		case VGD_A_COLOUR:
			colour_aspect(a, s->r, row, &ic->colour);
			break;
		}
	}
}

void vgd_default_size(const struct vgd_show *s, double *w, double *h)
{
	*w = *h = 0;
	for (size_t i = 0; i < s->nshapes; i++) {
		double sw, sh;
		switch (s->shapes[i]) {
		case VGD_POINT:
			sw = sh = 8;
			break;
		case VGD_OVAL:
			sw = 64, sh = 32;
			break;
		case VGD_RECTANGLE:
			sw = 90, sh = 50;
			break;
		case VGD_TEXT:
			sw = 40, sh = 16;
			break;
		case VGD_LINE:
		case VGD_POINTER:
			sw = 40, sh = 10;
			break;
		case VGD_CURVE:
			sw = 40, sh = 14;
			break;
		default:
			sw = sh = 28;
			break;
		}
		*w = sw > *w ? sw : *w;
		*h = sh > *h ? sh : *h;
	}
}

/* ---- finding the icon of an entity ---- */

static int by_key(const void *a, const void *b, void *arg)
{
	const struct vgd_icon *icons = arg;
	const struct vgd_icon *x = &icons[*(const long *)a], *y = &icons[*(const long *)b];
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	if (x->past != y->past)
		return x->past ? 1 : -1;
	return *(const long *)a < *(const long *)b ? -1 : 1;
}

void vgd_finder_build(struct vgd_finder *f, struct vgd_icon *const *icons, size_t n)
{
	f->icons = icons; /* the scene's array, which grows (and moves) later */
	f->by_key = malloc((n + 1) * sizeof *f->by_key);
	if (!f->by_key)
		abort();
	f->n = 0;
	for (size_t i = 0; i < n; i++)
		if ((*icons)[i].entity)
			f->by_key[f->n++] = (long)i;
	/* qsort_r: scenes may be built by several threads at once (vigil ui) */
	qsort_r(f->by_key, f->n, sizeof *f->by_key, by_key, (void *)*icons);
}

/* The icon of the entity in cell (r, col, row), present ones first; -1 if none. */
long vgd_finder_find(const struct vgd_finder *f, const struct vgq_relation *r, int col,
                     uint32_t row, const char *kind)
{
	if (col < 0 || vgd_cell_null(r, col, row))
		return -1;
	const struct vgq_ref *ref = &r->cols[col].r[row];
	size_t lo = 0, hi = f->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct vgd_icon *ic = &(*f->icons)[f->by_key[mid]];
		if (ic->id < ref->id || (ic->id == ref->id && ic->gen < ref->gen))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < f->n; i++) {
		const struct vgd_icon *ic = &(*f->icons)[f->by_key[i]];
		if (ic->id != ref->id || ic->gen != ref->gen)
			break;
		if (!kind || !strcasecmp(ic->kind, kind))
			return f->by_key[i];
	}
	return -1;
}

/* ---- building ---- */

static void add_icons(struct vgd_scene *sc, const struct vgd_show *s, size_t *cap)
{
	const struct vgd_display *d = sc->d;
	const struct vgq_relation *r = s->r;
	for (uint32_t i = vgd_lower(sc->d, s, sc->at), n = vgd_upto(s, sc->at); i < n; i++) {
		int64_t age;
		enum presence p = presence(d, r, i, sc->at, &age);
		if (p == ABSENT)
			continue;
		sc->icons = vgd_grow(sc->icons, sc->nicons, cap, sizeof *sc->icons);
		struct vgd_icon *ic = &sc->icons[sc->nicons++];
		vgd_icon_init(d, s, i, ic);
		ic->past = p == PAST;
		ic->age = age;
	}
}

uint32_t vgd_upto(const struct vgd_show *s, int64_t at)
{
	const struct vgq_relation *r = s->r;
	if (!s->sorted)
		return (uint32_t)r->ntuples;
	return (uint32_t)vgb_first_after(r->from, r->ntuples, at); /* the first starting after */
}

uint32_t vgd_lower(const struct vgd_display *d, const struct vgd_show *s, int64_t at)
{
	const int64_t *m = d->endmax ? d->endmax[s - d->f->shows] : NULL;
	if (!m)
		return 0;
	int64_t need = at - d->window - 1; /* at and window are clamped: no overflow */
	/* the first whose prefix maximum reaches `need` */
	return (uint32_t)vgb_first_at_least(m, s->r->ntuples, need);
}

void vgd_icon_init(const struct vgd_display *d, const struct vgd_show *s, uint32_t row,
                   struct vgd_icon *ic)
{
	const struct vgq_relation *r = s->r;
	memset(ic, 0, sizeof *ic);
	ic->show = s;
	ic->row = row;
	ic->parent = -1;
	ic->entity = s->entity;
	ic->kind = r->name;
	if (s->entity) {
		ic->id = r->cols[1].u[row];
		ic->gen = r->cols[2].u[row];
	}
	ic->x = 0.5 * d->f->width;
	ic->y = 0.5 * d->f->height;
	vgd_default_size(s, &ic->w, &ic->h);
	ic->intensity = 0.35;
	ic->scale = 1;
	ic->opacity = 1;
	ic->colour = s->palette;
	vgd_apply_aspects(d, s, row, ic);
}

static double past_opacity(const struct vgd_display *d, int64_t age)
{
	double t = d->window > 0 ? (double)age / (double)d->window : 1;
	return 0.05 + 0.6 * (1 - (t > 1 ? 1 : t));
}

static bool is_ancestor(const struct vgd_scene *sc, long a, long of)
{
	for (long p = of, steps = 0; p >= 0 && steps <= (long)sc->nicons;
	     p = sc->icons[p].parent, steps++)
		if (p == a)
			return true;
	return false;
}

/* Inclusions that hold: the child's parent. Past ones (animationtrace): ghosts of the
 * child inside the container, the most recent GHOSTS per container. */
static void include(struct vgd_scene *sc, const struct vgd_show *s, const struct vgd_finder *f,
                    size_t *cap)
{
	const struct vgq_relation *r = s->r;
	size_t nbase = sc->nicons;
	/* first what holds, then the past around it */
	for (int pass = PRESENT; pass <= PAST; pass++)
		for (uint32_t i = vgd_lower(sc->d, s, sc->at), n = vgd_upto(s, sc->at); i < n;
		     i++) {
			int64_t age;
			if (presence(sc->d, r, i, sc->at, &age) != (enum presence)pass)
				continue;
			long child = vgd_finder_find(f, r, s->a_col, i, s->a_kind);
			long parent = vgd_finder_find(f, r, s->b_col, i, s->b_kind);
			if (child < 0 || parent < 0 || child == parent) {
				sc->unplaced += pass == PRESENT;
				continue;
			}
			if (pass == PRESENT) {
				if (sc->icons[child].parent < 0 && !is_ancestor(sc, child, parent))
					sc->icons[child].parent = parent;
				continue;
			}
			if (sc->icons[child].parent == parent)
				continue; /* it is back in there: no ghost of itself beside it */
			/* a ghost: one per child and container, the GHOSTS youngest per container
			 */
			size_t count = 0, oldest = 0, same = SIZE_MAX;
			for (size_t k = nbase; k < sc->nicons; k++) {
				const struct vgd_icon *g = &sc->icons[k];
				if (g->parent != parent)
					continue;
				if (g->id == sc->icons[child].id &&
				    g->gen == sc->icons[child].gen &&
				    g->row == sc->icons[child].row)
					same = k;
				if (!count || g->age > sc->icons[oldest].age)
					oldest = k;
				count++;
			}
			struct vgd_icon g = sc->icons[child];
			g.past = g.ghost = true;
			g.age = age;
			g.parent = parent;
			g.flash = false;
			g.ghost_of = s;
			g.ghost_row = i;
			g.opacity = past_opacity(sc->d, age);
			if (same != SIZE_MAX || count >= GHOSTS) {
				size_t k = same != SIZE_MAX ? same : oldest;
				if (sc->icons[k].age > age)
					sc->icons[k] = g;
				continue;
			}
			sc->icons = vgd_grow(sc->icons, sc->nicons, cap, sizeof *sc->icons);
			sc->icons[sc->nicons++] = g;
		}
}

/* A point on the border of icon ic on the way from its centre towards (tx, ty). */
static void border(const struct vgd_icon *ic, double tx, double ty, double *x, double *y)
{
	double dx = tx - ic->x, dy = ty - ic->y, len = hypot(dx, dy);
	double w = ic->w * ic->scale / 2, h = ic->h * ic->scale / 2;
	*x = ic->x;
	*y = ic->y;
	if (len < 1e-9 || (w <= 0 && h <= 0))
		return;
	bool box = false;
	for (size_t i = 0; i < ic->show->nshapes; i++)
		box |= ic->show->shapes[i] == VGD_RECTANGLE || ic->show->shapes[i] == VGD_TEXT;
	double t;
	if (box)
		t = fmin(w > 0 ? w / fabs(dx) : INFINITY, h > 0 ? h / fabs(dy) : INFINITY);
	else
		t = 1 / sqrt((dx * dx) / (w * w > 0 ? w * w : 1e-9) +
		             (dy * dy) / (h * h > 0 ? h * h : 1e-9));
	if (!(t < 1))
		t = 1;
	*x += dx * t;
	*y += dy * t;
}

static void link(struct vgd_scene *sc, const struct vgd_show *s, const struct vgd_finder *f,
                 size_t *cap)
{
	const struct vgq_relation *r = s->r;
	for (uint32_t i = vgd_lower(sc->d, s, sc->at), n = vgd_upto(s, sc->at); i < n; i++) {
		int64_t age;
		enum presence p = presence(sc->d, r, i, sc->at, &age);
		if (p == ABSENT)
			continue;
		long a = vgd_finder_find(f, r, s->a_col, i, s->a_kind);
		long b = vgd_finder_find(f, r, s->b_col, i, s->b_kind);
		if (a < 0 || b < 0) {
			sc->unplaced += p == PRESENT;
			continue;
		}
		struct vgd_link *l = NULL;
		for (size_t k = 0; k < sc->nlinks; k++) /* the same ends: one link, counted */
			if (sc->links[k].show == s && sc->links[k].from == a &&
			    sc->links[k].to == b && sc->links[k].past == (p == PAST))
				l = &sc->links[k];
		if (l) {
			l->count++;
			if (age < l->age) {
				l->age = age;
				l->row = i;
				l->opacity = p == PAST ? past_opacity(sc->d, age) : 1;
			}
			continue;
		}
		sc->links = vgd_grow(sc->links, sc->nlinks, cap, sizeof *sc->links);
		l = &sc->links[sc->nlinks++];
		memset(l, 0, sizeof *l);
		l->show = s;
		l->row = i;
		l->from = a;
		l->to = b;
		l->past = p == PAST;
		l->age = age;
		l->count = 1;
		l->opacity = p == PAST ? past_opacity(sc->d, age) : 1;
		struct vgd_icon tmp = {.show = s, .colour = s->palette, .intensity = 1, .w = 2};
		vgd_apply_aspects(sc->d, s, i, &tmp);
		l->colour = vgd_colour_mix(0xffffff, tmp.colour, tmp.intensity);
		l->width = tmp.w > 0 ? tmp.w : 2;
		memcpy(l->label, tmp.label, sizeof l->label);
	}
}

static int depth_of(const struct vgd_scene *sc, size_t i)
{
	int n = 0;
	for (long p = sc->icons[i].parent; p >= 0 && n < 64; p = sc->icons[p].parent)
		n++;
	return n;
}

/* The cell every child of icon i gets inside it: the largest child's scaled size. */
static void child_cell(const struct vgd_scene *sc, size_t i, double *cw, double *ch)
{
	*cw = *ch = 0;
	for (size_t k = 0; k < sc->nicons; k++)
		if (sc->icons[k].parent == (long)i) {
			*cw = fmax(*cw, sc->icons[k].w * sc->icons[k].scale);
			*ch = fmax(*ch, sc->icons[k].h * sc->icons[k].scale);
		}
}

/* Containers grow to hold their children (deepest first); then children are placed in
 * rows inside them (outermost first). */
static void layout(struct vgd_scene *sc)
{
	int maxdepth = 0;
	for (size_t i = 0; i < sc->nicons; i++) {
		sc->icons[i].depth = depth_of(sc, i);
		maxdepth = sc->icons[i].depth > maxdepth ? sc->icons[i].depth : maxdepth;
		sc->icons[i].nchildren = 0;
	}
	for (size_t i = 0; i < sc->nicons; i++)
		if (sc->icons[i].parent >= 0)
			sc->icons[sc->icons[i].parent].nchildren++;
	for (int dep = maxdepth; dep >= 0; dep--)
		for (size_t i = 0; i < sc->nicons; i++) {
			struct vgd_icon *c = &sc->icons[i];
			if (c->depth != dep || !c->nchildren)
				continue;
			double cw, ch;
			child_cell(sc, i, &cw, &ch);
			size_t cols = c->nchildren < PER_ROW ? c->nchildren : PER_ROW;
			size_t rows = (c->nchildren + PER_ROW - 1) / PER_ROW;
			c->w = fmax(c->w, ((double)cols * (cw + PAD) + PAD) / c->scale);
			c->h =
			    fmax(c->h, ((double)rows * (ch + PAD) + PAD + LABEL_BAND) / c->scale);
		}
	for (int dep = 0; dep <= maxdepth; dep++)
		for (size_t i = 0; i < sc->nicons; i++) {
			struct vgd_icon *c = &sc->icons[i];
			if (c->depth != dep || !c->nchildren)
				continue;
			double cw, ch;
			child_cell(sc, i, &cw, &ch);
			size_t cols = c->nchildren < PER_ROW ? c->nchildren : PER_ROW, n = 0;
			double left = c->x - ((double)cols * (cw + PAD) - PAD) / 2 + cw / 2;
			double top = c->y - c->h * c->scale / 2 + LABEL_BAND + PAD + ch / 2;
			for (size_t k = 0; k < sc->nicons; k++)
				if (sc->icons[k].parent == (long)i) {
					sc->icons[k].x = left + (double)(n % PER_ROW) * (cw + PAD);
					sc->icons[k].y = top + (double)(n / PER_ROW) * (ch + PAD);
					n++;
				}
		}
}

static int by_depth(const void *a, const void *b, void *arg)
{
	const struct vgd_scene *sc = arg;
	const struct vgd_icon *x = &sc->icons[*(const size_t *)a],
	                      *y = &sc->icons[*(const size_t *)b];
	if (x->depth != y->depth)
		return x->depth - y->depth;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Drawing order: containers before their contents; indices renumbered. */
void vgd_sort_by_depth(struct vgd_scene *sc)
{
	size_t n = sc->nicons;
	size_t *order = malloc((n + 1) * sizeof *order);
	long *where = malloc((n + 1) * sizeof *where);
	struct vgd_icon *sorted = malloc((n + 1) * sizeof *sorted);
	if (!order || !where || !sorted)
		abort();
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, by_depth, sc);
	for (size_t i = 0; i < n; i++)
		where[order[i]] = (long)i;
	for (size_t i = 0; i < n; i++) {
		sorted[i] = sc->icons[order[i]];
		if (sorted[i].parent >= 0)
			sorted[i].parent = where[sorted[i].parent];
	}
	for (size_t i = 0; i < sc->nlinks; i++) {
		sc->links[i].from = where[sc->links[i].from];
		sc->links[i].to = where[sc->links[i].to];
	}
	free(sc->icons);
	sc->icons = sorted;
	free(order);
	free(where);
}

int64_t vgd_clamp_at(const struct vgd_display *d, int64_t at)
{
	/* first and last are times of a trace (ns since 1970, below 2^62): no overflow */
	if (at < d->first - VGD_MAX_DURATION)
		return d->first - VGD_MAX_DURATION;
	if (at > d->last + VGD_MAX_DURATION)
		return d->last + VGD_MAX_DURATION;
	return at;
}

struct vgd_scene *vgd_scene_build(const struct vgd_display *d, int64_t at)
{
	at = vgd_clamp_at(d, at);
	struct vgd_scene *sc = calloc(1, sizeof *sc);
	if (!sc)
		abort();
	sc->d = d;
	sc->at = at;
	const struct vgd_file *f = d->f;
	if (f->time == VGD_T_AXIS) {
		vgd_scene_axis(sc);
		goto placed;
	}
	size_t icap = 0, lcap = 0;
	for (size_t i = 0; i < f->nshows; i++)
		if (f->shows[i].form == VGD_F_ICON)
			add_icons(sc, &f->shows[i], &icap);
	for (size_t i = 0; i < sc->nicons; i++)
		if (sc->icons[i].past)
			sc->icons[i].opacity = past_opacity(d, sc->icons[i].age);
		else
			sc->icons[i].opacity = 1;
	struct vgd_finder fd;
	vgd_finder_build(&fd, &sc->icons, sc->nicons);
	/* relationships that change icons: aspects, then flashing (present tuples only) */
	for (size_t i = 0; i < f->nshows; i++) {
		const struct vgd_show *s = &f->shows[i];
		if (s->form != VGD_F_ASPECTS && s->form != VGD_F_FLASH)
			continue;
		for (uint32_t k = vgd_lower(d, s, at), n = vgd_upto(s, at); k < n; k++) {
			int64_t age;
			if (presence(d, s->r, k, at, &age) != PRESENT)
				continue;
			long ic = vgd_finder_find(&fd, s->r, s->a_col, k, s->a_kind);
			if (ic < 0 || sc->icons[ic].past) {
				sc->unplaced++;
				continue;
			}
			if (s->form == VGD_F_FLASH)
				sc->icons[ic].flash = true;
			else
				vgd_apply_aspects(d, s, k, &sc->icons[ic]);
		}
	}
	for (size_t i = 0; i < f->nshows; i++)
		if (f->shows[i].form == VGD_F_INSIDE) {
			include(sc, &f->shows[i], &fd, &icap);
		}
	layout(sc);
	for (size_t i = 0; i < f->nshows; i++)
		if (f->shows[i].form == VGD_F_LINK)
			link(sc, &f->shows[i], &fd, &lcap);
	for (size_t i = 0; i < sc->nlinks; i++) {
		struct vgd_link *l = &sc->links[i];
		const struct vgd_icon *a = &sc->icons[l->from], *b = &sc->icons[l->to];
		border(a, b->x, b->y, &l->x1, &l->y1);
		border(b, a->x, a->y, &l->x2, &l->y2);
	}
	free(fd.by_key);
	vgd_sort_by_depth(sc);
placed:;
	double W = f->width, H = f->height;
	static const double px[] = {0.5, 0.5, 0.5, 0.02, 0.98, 0.02, 0.98, 0.02, 0.98};
	static const double py[] = {0.5, 0.04, 0.97, 0.5, 0.5, 0.04, 0.04, 0.97, 0.97};
	sc->clock_x = px[f->clock_at] * W;
	sc->clock_y = py[f->clock_at] * H;
	return sc;
}

void vgd_scene_free(struct vgd_scene *s)
{
	if (!s)
		return;
	free(s->icons);
	free(s->links);
	free(s);
}

void vgd_icon_id(const struct vgd_icon *ic, char *buf, size_t size)
{
	int n;
	if (ic->entity)
		n = snprintf(buf, size, "%s:%llu.%llu", ic->kind, (unsigned long long)ic->id,
		             (unsigned long long)ic->gen);
	else
		n = snprintf(buf, size, "%s#%u", ic->show->r->name, ic->row);
	if (ic->ghost && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "~%s#%u", ic->ghost_of->r->name, ic->ghost_row);
}

void vgd_clock_text(int64_t since, char *buf, size_t size)
{
	double v = (double)since;
	if (since < 0)
		snprintf(buf, size, "-%.6f ms", -v / 1e6);
	else if (since < 1000000000)
		snprintf(buf, size, "%.6f ms", v / 1e6);
	else
		snprintf(buf, size, "%.6f s", v / 1e9);
}

uint32_t vgd_icon_fill(const struct vgd_icon *ic)
{
	return vgd_colour_mix(0xffffff, ic->colour, ic->intensity);
}
