/* A scene: what the display shows at one instant, laid out (positions in pixels of the
 * canvas). Built by scene.c, written as JSON (scene_json.c) or SVG (scene_svg.c). */
#ifndef VIGIL_DISPLAY_SCENE_H
#define VIGIL_DISPLAY_SCENE_H

#include "display/internal.h"

struct vgd_icon {
	const struct vgd_show *show;
	uint32_t row; /* the tuple of show->r */
	bool entity;  /* an entity's icon: kind, id, gen identify it */
	const char *kind;
	uint64_t id, gen;
	double x, y, w, h; /* center and size, unscaled */
	double intensity, rotation, scale, opacity;
	uint32_t colour;
	char label[128];
	int label_at;
	bool past, ghost, flash;
	int64_t age;                     /* past: how long ago it ended (ns) */
	long parent;                     /* index of the icon it is drawn inside, or -1 */
	const struct vgd_show *ghost_of; /* ghost: the inclusion it is a past state of */
	uint32_t ghost_row;
	int depth;
	size_t nchildren;
	bool bar;  /* time axis: drawn as a bar over its valid time, whatever its icon */
	bool mark; /* time axis: a mark where a flashing tuple held */
};

struct vgd_link {
	const struct vgd_show *show;
	uint32_t row;
	long from, to;
	double x1, y1, x2, y2, width, opacity;
	uint32_t colour;
	char label[128];
	bool past;
	int64_t age;
	unsigned count; /* tuples drawn as this one link (the same ends) */
};

struct vgd_scene {
	const struct vgd_display *d;
	int64_t at;
	struct vgd_icon *icons; /* drawing order: containers before what they contain */
	size_t nicons;
	struct vgd_link *links;
	size_t nlinks;
	size_t unplaced; /* tuples whose entities have no icon at this instant */
	double clock_x, clock_y;
	/* time axis: valid time [t0, at] spread over x0..x1, the ruler at ruler_y */
	int64_t t0;
	double x0, x1, ruler_y;
};

struct vgd_scene *vgd_scene_build(const struct vgd_display *d, int64_t at);
/* `at` within VGD_MAX_DURATION of the trace's span, where time arithmetic cannot overflow. */
int64_t vgd_clamp_at(const struct vgd_display *d, int64_t at);
/* The scene with time as a horizontal axis (scene_axis.c), after which vgd_scene_build
 * sorts and places the clock. */
void vgd_scene_axis(struct vgd_scene *sc);
/* The x of valid time t on the axis. */
double vgd_axis_x(const struct vgd_scene *sc, int64_t t);
void vgd_scene_free(struct vgd_scene *s);
/* The icon's id in the scene: "Process:1234.0", "SendMessage#12", "...~RunningOn#3". */
void vgd_icon_id(const struct vgd_icon *ic, char *buf, size_t size);
/* The clock's text: time since the trace's first event, e.g. "12.345678 ms". */
void vgd_clock_text(int64_t since, char *buf, size_t size);
/* The fill colour of an icon: its colour mixed with white by its intensity. */
uint32_t vgd_icon_fill(const struct vgd_icon *ic);

/* Shared by scene.c and scene_axis.c. */
void *vgd_grow(void *p, size_t n, size_t *cap, size_t size);
void vgd_apply_aspects(const struct vgd_display *d, const struct vgd_show *s, uint32_t row,
                       struct vgd_icon *ic);
void vgd_default_size(const struct vgd_show *s, double *w, double *h);
void vgd_icon_init(const struct vgd_display *d, const struct vgd_show *s, uint32_t row,
                   struct vgd_icon *ic);
void vgd_sort_by_depth(struct vgd_scene *sc);
/* How many of the relation's first tuples can hold at `at` or before: those that start
 * by then (all of them if the relation is not in order of start). */
uint32_t vgd_upto(const struct vgd_show *s, int64_t at);

/* The first of the relation's tuples that can show at `at` (present, past, or on the
 * axis): before it, every tuple ended before `at` minus the window (binary search on
 * d->endmax; 0 without an index). */
uint32_t vgd_lower(const struct vgd_display *d, const struct vgd_show *s, int64_t at);

/* The icon of an entity: icons sorted by (id, gen), present ones first among equals. */
struct vgd_finder {
	long *by_key;
	size_t n;
	struct vgd_icon *const *icons; /* &scene->icons: valid however the array moves */
};
void vgd_finder_build(struct vgd_finder *f, struct vgd_icon *const *icons, size_t n);
/* The icon of the entity in cell (r, col, row) of that kind (NULL: any); -1 if none. */
long vgd_finder_find(const struct vgd_finder *f, const struct vgq_relation *r, int col,
                     uint32_t row, const char *kind);

#endif
