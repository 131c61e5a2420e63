/* Counter tracks of the export (export_counters.h). */
#define _GNU_SOURCE
#include "export_counters.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The track of (proc, name, key), made when new; SIZE_MAX on no memory. */
static size_t track(struct vgx_model *m, struct vgx_counting *c, uint32_t proc, const char *name,
                    const char *key)
{
	char *k = NULL;
	if (asprintf(&k, "%" PRIu32 "|%s|%s", proc, name, key) < 0)
		return SIZE_MAX;
	size_t *slot = vgx_map_put(&c->tracks, k, m->nctracks);
	free(k);
	if (!slot)
		return SIZE_MAX;
	if (*slot < m->nctracks)
		return *slot;
	struct vgx_ctrack *t = vgx_grow(m->ctracks, &c->cap_tracks, m->nctracks + 1, sizeof *t);
	if (!t)
		return SIZE_MAX;
	m->ctracks = t;
	char *nm = strdup(name), *ky = strdup(key);
	if (!nm || !ky) {
		free(nm);
		free(ky);
		return SIZE_MAX;
	}
	t[m->nctracks] = (struct vgx_ctrack){proc, nm, ky};
	return m->nctracks++;
}

bool vgx_count(struct vgx_model *m, struct vgx_counting *c, uint32_t proc, const char *name,
               const char *key, int64_t ts, struct vgx_counter_value v)
{
	size_t t = track(m, c, proc, name, key);
	if (t == SIZE_MAX)
		return false;
	struct vgx_counter *s =
	    vgx_grow(m->counters, &c->cap_counters, m->ncounters + 1, sizeof *s);
	if (!s)
		return false;
	m->counters = s;
	s[m->ncounters++] = (struct vgx_counter){(uint32_t)t, ts, v};
	return true;
}

bool vgx_count_sampled(struct vgx_model *m, struct vgx_counting *c, uint32_t proc,
                       const struct vgt_event *ev, int open_delta)
{
	const struct vgt_event_type *t = ev->type;
	for (unsigned i = 0; i < t->nfields; i++) {
		const struct vgt_value *v = &ev->values[i];
		struct vgx_counter_value x = {0};
		/* a sampled end's vg_since is the runtime's (its begin's clock), not a value */
		if (t->fields[i].hidden ||
		    (t->kind == VGT_KIND_END && !strcmp(t->fields[i].name, "vg_since")))
			continue;
		if (v->type == VGT_INT)
			x.i = v->i;
		else if (v->type == VGT_UINT && v->u <= INT64_MAX)
			x.i = (int64_t)v->u;
		else if (v->type == VGT_UINT) /* past int64: as a double, like a viewer would */
			x = (struct vgx_counter_value){.is_double = true, .d = (double)v->u};
		else if (v->type == VGT_DOUBLE && isfinite(v->d)) /* JSON has no NaN */
			x = (struct vgx_counter_value){.is_double = true, .d = v->d};
		else
			continue;
		if (!vgx_count(m, c, proc, t->relation, t->fields[i].name, ev->ts, x))
			return false;
	}
	if (t->kind != VGT_KIND_BEGIN && t->kind != VGT_KIND_END)
		return true;
	char *k = NULL;
	if (asprintf(&k, "%" PRIu32 "|%s", proc, t->relation) < 0)
		return false;
	size_t *slot = vgx_map_put(&c->opens, k, c->nopen);
	free(k);
	if (!slot)
		return false;
	if (*slot == c->nopen) {
		int64_t *o = vgx_grow(c->open, &c->cap_open, c->nopen + 1, sizeof *o);
		if (!o)
			return false;
		c->open = o;
		c->open[c->nopen++] = 0;
	}
	c->open[*slot] += open_delta;
	return vgx_count(m, c, proc, t->relation, VGX_OPEN_KEY, ev->ts,
	                 (struct vgx_counter_value){.i = c->open[*slot]});
}

void vgx_counting_free(struct vgx_counting *c)
{
	vgx_map_free(&c->tracks);
	vgx_map_free(&c->opens);
	free(c->open);
	*c = (struct vgx_counting){0};
}
