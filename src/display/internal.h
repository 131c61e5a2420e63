/* What the rooms of src/display share: the loaded display and the values of cells.
 * Private. */
#ifndef VIGIL_DISPLAY_INTERNAL_H
#define VIGIL_DISPLAY_INTERNAL_H

#include "display/ast.h"
#include "display/display.h"
#include "relations/relation.h"

struct vgq_session;
struct tquel_query;

struct vgd_display {
	struct vgd_file *f;
	char *text; /* the file's text, owned */
	struct vgq_database *db;
	struct vgq_session *session; /* holds the derived relations */
	struct tquel_query **queries;
	size_t nqueries;
	const struct vgq_relation **derived;
	size_t nderived;
	int64_t first, last;  /* the span shown */
	int64_t window, hold; /* the fading window, how long an event is present (ns) */
	int64_t *changes;
	size_t nchanges;
	/* per show over a relation in order of start: prefix maxima of when each tuple stops
	 * being present (INT64_MAX while open), so a scene skips the tuples that all ended
	 * long before its instant (vgd_lower); NULL: no index */
	int64_t **endmax;
};

/* The sorted distinct values of one attribute over a relation (by order of ATTR). */
struct vgd_order {
	enum vgq_type type;
	size_t n;
	union vgd_key {
		double d;
		const char *s;
		struct vgq_ref r;
	} v[];
};

/* Resolves every relation and attribute of d->f and checks the types that drive aspects;
 * errors go to d->f. */
void vgd_check(struct vgd_display *d);
/* The relation named `name`: a derived one first, then the trace's. */
const struct vgq_relation *vgd_relation(const struct vgd_display *d, const char *name);

struct vgd_order *vgd_order_build(const struct vgq_relation *r, int col);
/* The rank of the value in row `row` among o's values, or -1. */
long vgd_order_rank(const struct vgd_order *o, const struct vgq_relation *r, int col, uint32_t row);

/* A cell as a number (false when it has none: a null, a non-numeric type). */
bool vgd_cell_number(const struct vgq_relation *r, int col, uint32_t row, double *v);
/* A cell as text (an entity: its name, else KIND#ID); "" for a null. */
void vgd_cell_text(const struct vgq_relation *r, int col, uint32_t row, char *buf, size_t size);
bool vgd_cell_null(const struct vgq_relation *r, int col, uint32_t row);

#endif
