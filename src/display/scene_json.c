/* The scene as JSON, for the page (ui/src/display/render.js) and `vigil display render
 * --json`. Fields: docs/display.md, "Scenes". */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "display/scene.h"

static json_t *colour(uint32_t rgb)
{
	char buf[8];
	snprintf(buf, sizeof buf, "#%06x", rgb & 0xffffff);
	return json_string(buf);
}

static json_t *num(double v)
{
	return json_real(round(v * 10000) / 10000);
}

static json_t *shapes(const struct vgd_icon *ic)
{
	const struct vgd_show *s = ic->show;
	if (ic->bar || ic->mark)
		return json_pack("[{s:s}]", "shape", ic->bar ? "rectangle" : "point");
	json_t *a = json_array();
	for (size_t i = 0; i < s->nshapes; i++) {
		json_t *o = json_pack("{s:s}", "shape", vgd_shape_name(s->shapes[i]));
		if (s->shapes[i] == VGD_POLYGON)
			json_object_set_new(o, "sides", json_integer(s->sides[i]));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *icon(const struct vgd_scene *sc, const struct vgd_icon *ic)
{
	char id[256], parent[256];
	vgd_icon_id(ic, id, sizeof id);
	const struct vgq_relation *r = ic->show->r;
	json_t *o = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o}", "id", id, "relation", r->name,
	                      "shapes", shapes(ic), "x", num(ic->x), "y", num(ic->y), "w",
	                      num(ic->w), "h", num(ic->h));
	json_object_set_new(o, "rotation", num(ic->rotation));
	json_object_set_new(o, "scale", num(ic->scale));
	json_object_set_new(o, "colour", colour(ic->colour));
	json_object_set_new(o, "fill", colour(vgd_icon_fill(ic)));
	json_object_set_new(o, "intensity", num(ic->intensity));
	json_object_set_new(o, "opacity", num(ic->opacity));
	json_object_set_new(o, "label", ic->label[0] ? json_string(ic->label) : json_null());
	json_object_set_new(o, "label_at", json_string(vgd_place_name(ic->label_at)));
	json_object_set_new(o, "flash", json_boolean(ic->flash));
	json_object_set_new(o, "past", json_boolean(ic->past));
	json_object_set_new(o, "ghost", json_boolean(ic->ghost));
	json_object_set_new(o, "age", json_integer(ic->age));
	if (ic->parent >= 0) {
		vgd_icon_id(&sc->icons[ic->parent], parent, sizeof parent);
		json_object_set_new(o, "parent", json_string(parent));
	} else {
		json_object_set_new(o, "parent", json_null());
	}
	if (ic->entity)
		json_object_set_new(o, "entity",
		                    json_pack("{s:s,s:I,s:I,s:s?}", "kind", ic->kind, "id",
		                              (json_int_t)ic->id, "gen", (json_int_t)ic->gen,
		                              "name", r->cols[0].s[ic->row]));
	else
		json_object_set_new(o, "entity", json_null());
	json_object_set_new(o, "from", json_integer(r->from[ic->row]));
	json_object_set_new(o, "to", r->to ? json_integer(r->to[ic->row]) : json_null());
	return o;
}

static json_t *link_json(const struct vgd_scene *sc, const struct vgd_link *l)
{
	char a[256], b[256];
	vgd_icon_id(&sc->icons[l->from], a, sizeof a);
	vgd_icon_id(&sc->icons[l->to], b, sizeof b);
	json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "relation", l->show->r->name, "shape",
	                      vgd_shape_name(l->show->link), "from", a, "to", b);
	json_object_set_new(o, "x1", num(l->x1));
	json_object_set_new(o, "y1", num(l->y1));
	json_object_set_new(o, "x2", num(l->x2));
	json_object_set_new(o, "y2", num(l->y2));
	json_object_set_new(o, "colour", colour(l->colour));
	json_object_set_new(o, "width", num(l->width));
	json_object_set_new(o, "opacity", num(l->opacity));
	json_object_set_new(o, "label", l->label[0] ? json_string(l->label) : json_null());
	json_object_set_new(o, "past", json_boolean(l->past));
	json_object_set_new(o, "age", json_integer(l->age));
	json_object_set_new(o, "count", json_integer(l->count));
	return o;
}

char *vgd_scene_json(const struct vgd_display *d, int64_t at)
{
	at = vgd_clamp_at(d, at);
	struct vgd_scene *sc = vgd_scene_build(d, at);
	static const char *const modes[] = {"animation", "animationtrace", "axis"};
	json_t *o = json_object();
	json_object_set_new(o, "at", json_integer(at));
	json_object_set_new(o, "since_first", json_integer(at - d->first));
	json_object_set_new(o, "first", json_integer(d->first));
	json_object_set_new(o, "last", json_integer(d->last));
	json_object_set_new(o, "width", num(d->f->width));
	json_object_set_new(o, "height", num(d->f->height));
	json_object_set_new(o, "time",
	                    json_pack("{s:s,s:I,s:I}", "mode", modes[d->f->time], "window",
	                              (json_int_t)d->window, "hold", (json_int_t)d->hold));
	if (d->f->clock) {
		char text[64];
		vgd_clock_text(at - d->first, text, sizeof text);
		json_object_set_new(o, "clock",
		                    json_pack("{s:s,s:o,s:o,s:s}", "text", text, "x",
		                              num(sc->clock_x), "y", num(sc->clock_y), "at",
		                              vgd_place_name(d->f->clock_at)));
	} else {
		json_object_set_new(o, "clock", json_null());
	}
	json_t *icons = json_array(), *links = json_array();
	for (size_t i = 0; i < sc->nicons; i++)
		json_array_append_new(icons, icon(sc, &sc->icons[i]));
	for (size_t i = 0; i < sc->nlinks; i++)
		json_array_append_new(links, link_json(sc, &sc->links[i]));
	if (d->f->time == VGD_T_AXIS) {
		json_t *ticks = json_array();
		for (int k = 0; k <= 4; k++) {
			int64_t t = sc->t0 + (sc->at - sc->t0) * k / 4;
			char text[64];
			vgd_clock_text(t - d->first, text, sizeof text);
			json_array_append_new(
			    ticks,
			    json_pack("{s:o,s:s}", "x", num(vgd_axis_x(sc, t)), "text", text));
		}
		json_object_set_new(o, "axis",
		                    json_pack("{s:I,s:I,s:o,s:o,s:o,s:o}", "from",
		                              (json_int_t)sc->t0, "to", (json_int_t)at, "x0",
		                              num(sc->x0), "x1", num(sc->x1), "y", num(sc->ruler_y),
		                              "ticks", ticks));
	} else {
		json_object_set_new(o, "axis", json_null());
	}
	json_object_set_new(o, "icons", icons);
	json_object_set_new(o, "links", links);
	json_object_set_new(o, "unplaced", json_integer((json_int_t)sc->unplaced));
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	vgd_scene_free(sc);
	return text;
}
