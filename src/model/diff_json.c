/* The JSON document of `vigil diff --format json` (docs/model.md), also what vigil ui's
 * model workbench serves (src/ui/models.c): one function, so both show the same numbers. */
#include <jansson.h>
#include <math.h>

#include "model/diff.h"

static const struct vgm_event *pick(const struct vgm_model *const m[2], long a, long b)
{
	return a >= 0 ? &m[0]->events[a] : &m[1]->events[b];
}

static json_t *json_event(const struct vgm_model *const m[2], long a, long b)
{
	const struct vgm_event *e = pick(m, a, b);
	json_t *o = json_object();
	json_object_set_new(o, "site", json_string(e->site));
	json_object_set_new(o, "fmt", json_string(e->fmt));
	const char *name = a >= 0 && m[0]->events[a].name   ? m[0]->events[a].name
	                   : b >= 0 && m[1]->events[b].name ? m[1]->events[b].name
	                                                    : NULL;
	json_object_set_new(o, "name", name ? json_string(name) : json_null());
	json_object_set_new(o, "id_baseline",
	                    a >= 0 ? json_integer((json_int_t)m[0]->events[a].id) : json_null());
	json_object_set_new(o, "id_other",
	                    b >= 0 ? json_integer((json_int_t)m[1]->events[b].id) : json_null());
	return o;
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static size_t limit(size_t n, size_t top)
{
	return top && top < n ? top : n;
}

json_t *vgm_diff_json(const struct vgm_model *a, const char *path_a, const struct vgm_model *b,
                      const char *path_b, const struct vgm_diff *d, size_t top,
                      const struct vgm_diff_opts *o)
{
	const struct vgm_model *const s[2] = {a, b};
	const char *const paths[2] = {path_a, path_b};
	json_t *doc = json_object();
	for (int i = 0; i < 2; i++) {
		json_t *m = json_object();
		json_object_set_new(m, "path", json_string(paths[i]));
		json_object_set_new(m, "events",
		                    json_integer((json_int_t)(i ? d->total_b : d->total_a)));
		json_object_set_new(m, "types", json_integer((json_int_t)s[i]->nevents));
		json_object_set_new(doc, i ? "other" : "baseline", m);
	}
	json_object_set_new(doc, "common_events", json_integer((json_int_t)d->common));
	json_object_set_new(doc, "min_support", json_integer((json_int_t)o->min_support));
	json_object_set_new(doc, "alpha", json_real(o->alpha));
	json_object_set_new(doc, "events_by",
	                    json_string(o->events_by == VGM_EVENTS_BY_CHI2 ? "chi2" : "share"));
	json_t *ev = json_array();
	for (size_t i = 0; i < limit(d->nevents, top); i++) {
		const struct vgm_event_row *r = &d->events[i];
		json_t *row = json_object();
		json_object_set_new(row, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(row, "event", json_event(s, r->a, r->b));
		json_object_set_new(row, "count_baseline", json_integer((json_int_t)r->ca));
		json_object_set_new(row, "count_other", json_integer((json_int_t)r->cb));
		json_object_set_new(row, "share_baseline", jnum(r->pa));
		json_object_set_new(row, "share_other", jnum(r->pb));
		json_object_set_new(row, "difference", jnum(r->pb - r->pa));
		json_object_set_new(row, "chi2", jnum(r->chi2));
		json_array_append_new(ev, row);
	}
	json_object_set_new(doc, "events", ev);
	json_t *tr = json_array();
	for (size_t i = 0; i < limit(d->ntrans, top); i++) {
		const struct vgm_trans_row *r = &d->trans[i];
		json_t *row = json_object();
		json_object_set_new(row, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(row, "from", json_event(s, r->a_from, r->b_from));
		json_object_set_new(row, "to", json_event(s, r->a_to, r->b_to));
		json_object_set_new(row, "count_baseline", json_integer((json_int_t)r->ca));
		json_object_set_new(row, "count_other", json_integer((json_int_t)r->cb));
		json_object_set_new(row, "out_baseline", json_integer((json_int_t)r->outa));
		json_object_set_new(row, "out_other", json_integer((json_int_t)r->outb));
		json_object_set_new(row, "p_baseline", jnum(r->pa));
		json_object_set_new(row, "p_other", jnum(r->pb));
		json_object_set_new(row, "ratio", jnum(r->score));
		json_array_append_new(tr, row);
	}
	json_object_set_new(doc, "transitions", tr);
	json_object_set_new(doc, "transitions_below_support",
	                    json_integer((json_int_t)d->trans_unsupported));
	json_t *tm = json_array();
	for (size_t i = 0; i < limit(d->ntimes, top); i++) {
		const struct vgm_time_row *r = &d->times[i];
		json_t *row = json_object();
		json_object_set_new(row, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(row, "from", json_event(s, r->a_from, r->b_from));
		json_object_set_new(row, "to", json_event(s, r->a_to, r->b_to));
		json_object_set_new(row, "count_baseline", json_integer((json_int_t)r->ca));
		json_object_set_new(row, "count_other", json_integer((json_int_t)r->cb));
		json_object_set_new(row, "timed_baseline", json_integer((json_int_t)r->na));
		json_object_set_new(row, "timed_other", json_integer((json_int_t)r->nb));
		json_object_set_new(row, "emd_ns", jnum(r->emd));
		json_object_set_new(row, "p50_baseline_ns", jnum(r->p50a));
		json_object_set_new(row, "p50_other_ns", jnum(r->p50b));
		json_object_set_new(row, "p99_baseline_ns", jnum(r->p99a));
		json_object_set_new(row, "p99_other_ns", jnum(r->p99b));
		json_object_set_new(row, "mean_baseline_ns", jnum(r->meana));
		json_object_set_new(row, "mean_other_ns", jnum(r->meanb));
		json_array_append_new(tm, row);
	}
	json_object_set_new(doc, "times", tm);
	json_object_set_new(doc, "times_below_support",
	                    json_integer((json_int_t)d->times_unsupported));
	return doc;
}
