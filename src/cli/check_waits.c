/* The outputs of vigil check --deadlocks: cycles (text, JSON lines) and the SVG. */
#define _GNU_SOURCE
#include "cli/check_waits.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/event_json.h"
#include "common/out_file.h"

static json_t *text_json(const char *s)
{
	return vg_json_text(s, strlen(s));
}

json_t *vg_json_u64(uint64_t v)
{
	char buf[24];
	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof buf, "%" PRIu64, v);
	return json_string(buf);
}

/* {"kind","id","gen","name","text"}: a thread (kind "thread") or a lock. */
static json_t *node_json(const struct vgc_wf_node *n)
{
	json_t *o = json_object();
	json_object_set_new(o, "kind", text_json(n->kind));
	json_object_set_new(o, "id", vg_json_u64(n->id));
	json_object_set_new(o, "gen", vg_json_u64(n->gen));
	json_object_set_new(o, "name", n->name ? text_json(n->name) : json_null());
	json_object_set_new(o, "text", text_json(n->text));
	return o;
}

static void cycle_json(struct vgc_wf *wf, const struct vgc_wf_cycle *c)
{
	json_t *steps = json_array();
	for (size_t i = 0; i < c->nsteps; i++) {
		const struct vgc_wf_step *s = &c->steps[i];
		size_t holder = c->steps[(i + 1) % c->nsteps].thread_index;
		json_t *o = json_object();
		json_object_set_new(o, "thread", node_json(vgc_wf_thread(wf, s->thread_index)));
		json_object_set_new(o, "lock", node_json(vgc_wf_lock(wf, s->lock_index)));
		json_object_set_new(o, "holder", node_json(vgc_wf_thread(wf, holder)));
		json_object_set_new(o, "since", json_real(s->since));
		json_object_set_new(o, "since_ts", json_integer(s->since_ts));
		json_array_append_new(steps, o);
	}
	json_t *o = json_pack("{s:{s:s,s:b,s:f,s:I,s:o}}", "cycle", "kind",
	                      c->standing ? "deadlock" : "cycle", "standing", c->standing, "t",
	                      c->t, "ts", (json_int_t)c->ts, "steps", steps);
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	json_decref(o);
}

/* "deadlock t=T (standing at INSTANT): A waits for L1 (since t=..) held by
 * B; B waits for L2 (since t=..) held by A" */
static void cycle_text(const struct vgc_wf_cycle *c, const char *instant)
{
	printf("%s t=%.9f (%s %s):", c->standing ? "deadlock" : "cycle", c->t,
	       c->standing ? "standing at" : "broken before", instant);
	for (size_t i = 0; i < c->nsteps; i++) {
		const struct vgc_wf_step *s = &c->steps[i];
		printf("%s %s waits for %s (since t=%.9f) held by %s", i ? ";" : "", s->thread,
		       s->lock, s->since, c->steps[(i + 1) % c->nsteps].thread);
	}
	putchar('\n');
}

size_t vg_check_cycles_print(struct vgc_wf *wf, bool json, bool incomplete, const char *instant)
{
	const struct vgc_wf_cycle *cy;
	size_t n = vgc_wf_cycles(wf, &cy);
	for (size_t c = 0; c < n; c++) {
		if (json)
			cycle_json(wf, &cy[c]);
		else
			cycle_text(&cy[c], instant);
	}
	fprintf(stderr, "vigil check: %zu wait-for cycle%s%s\n", n, n == 1 ? "" : "s",
	        incomplete ? " (out of memory: the graph is incomplete)" : "");
	return n;
}

int vg_check_waits_svg(struct vgc_wf *wf, const char *path, int64_t at_ts, double at_t)
{
	struct vg_out o;
	char err[512];
	if (vg_out_open(&o, path, err, sizeof err) < 0) {
		fprintf(stderr, "vigil check: %s\n", err);
		return -1;
	}
	if (vgc_wf_svg(wf, at_ts, at_t, o.f) < 0) {
		fprintf(stderr, "vigil check: %s: write failed\n", path);
		vg_out_abort(&o);
		return -1;
	}
	if (vg_out_commit(&o, err, sizeof err) < 0) {
		fprintf(stderr, "vigil check: %s\n", err);
		return -1;
	}
	return 0;
}
