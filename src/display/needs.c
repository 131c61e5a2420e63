/* What a display needs recorded (vigil watch --display, vigil ui --watch --display): the
 * sensors of the relations it shows, whole, and those its derive statements need, planned
 * as vigil watch plans a query (docs/watch.md). */
#include <stdlib.h>
#include <string.h>

#include "display/internal.h"
#include "live/alpha.h"

static bool derived(const struct vgd_display *d, const struct vgq_relation *r)
{
	for (size_t i = 0; i < d->nderived; i++)
		if (d->derived[i] == r)
			return true;
	return false;
}

struct vga_plan *vgd_plan(const struct vgd_display *d, struct vgq_session *s,
                          const struct vga_sensors *sensors, bool optimize, FILE *errors)
{
	struct vga_plan *p = calloc(1, sizeof *p);
	if (!p)
		abort();
	p->optimized = optimize;
	for (size_t i = 0; i < d->nqueries; i++) {
		size_t nerrors = 0;
		struct vga_plan *q =
		    vga_plan_new(s, d->queries[i], sensors, optimize, errors, &nerrors);
		if (!q) { /* it ran when the display loaded, so this is not expected */
			vga_plan_free(p);
			return NULL;
		}
		vga_plan_append(p, q);
		vga_plan_free(q);
	}
	/* a relation shown is shown whole: every tuple, on every entity */
	for (size_t i = 0; i < d->f->nshows; i++) {
		const struct vgd_show *sh = &d->f->shows[i];
		bool again = false;
		for (size_t j = 0; j < i; j++)
			again |= d->f->shows[j].r == sh->r;
		if (sh->r && !again && !derived(d, sh->r))
			vga_plan_add_relation(p, sensors, sh->r->name, "display", sh->loc.line);
	}
	return p;
}
