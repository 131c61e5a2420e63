/* The model workbench's timelines (docs/ui.md, "Model workbench"): a run given as a trace
 * (a folder) is opened as a timeline too, served with `run=R` on the timeline's routes,
 * and /api/model/where?edge=K|node=K&run=R finds where the trace first has that
 * transition (two consecutive events of one thread) or event: the timeline's jump. Only
 * events of the trace's own types (`sensor:NAME` sites, as vigil model makes them from a
 * trace) are found; a log statement's site names no event type. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ui/ui.h"

void vgu_models_open_timelines(struct vgu_app *a, const char *const path[2])
{
	for (int i = 0; i < 2; i++) {
		struct stat st;
		if (stat(path[i], &st) || !S_ISDIR(st.st_mode))
			continue;
		struct vgu_app *t = calloc(1, sizeof *t);
		if (!t)
			continue;
		t->tick_ns = a->tick_ns;
		t->assets = a->assets;
		fprintf(stderr, "vigil ui: opening the timeline of %s\n", path[i]);
		if (vgu_app_open(t, &path[i], 1) < 0) {
			fprintf(stderr, "vigil ui: the workbench goes on without %s's timeline\n",
			        path[i]);
			free(t);
			continue;
		}
		a->run_timeline[i] = t;
	}
}

void vgu_models_close_timelines(struct vgu_app *a)
{
	for (int i = 0; i < 2; i++)
		if (a->run_timeline[i]) {
			vgu_app_close(a->run_timeline[i]);
			free(a->run_timeline[i]);
			a->run_timeline[i] = NULL;
		}
}

struct vgu_app *vgu_models_timeline(struct vgu_app *a, vgu_arg_fn arg, void *ctx)
{
	const char *run = arg(ctx, "run");
	if (!run || (strcmp(run, "0") && strcmp(run, "1")))
		return NULL;
	return a->run_timeline[run[0] - '0'];
}

/* The timeline's event type of a model event's site, or -1. */
static long type_of(const struct vgu_app *t, const char *site)
{
	if (strncmp(site, "sensor:", 7))
		return -1;
	for (size_t i = 0; i < t->tl.ntypes; i++)
		if (!strcmp(t->tl.types[i]->name, site + 7))
			return (long)i;
	return -1;
}

void vgu_models_where(struct vgu_app *a, int run, const char *from_site, const char *to_site,
                      struct vgu_reply *r)
{
	const struct vgu_app *t = a->run_timeline[run];
	if (!t)
		return vgu_reply_error(r, 404, "run %d has no timeline (not given as a trace)",
		                       run);
	long ta = type_of(t, from_site), tb = to_site ? type_of(t, to_site) : ta;
	if (ta < 0 || tb < 0)
		return vgu_reply_error(r, 404,
		                       "%s is no event type of the trace (a log statement?)",
		                       ta < 0 ? from_site : to_site);
	/* the earliest, over the threads: an event of type ta (then one of tb next) */
	const struct vgu_row *best = NULL;
	size_t bk = 0;
	for (size_t ri = 0; ri < t->tl.nbase; ri++) {
		const struct vgu_row *w = &t->tl.rows[ri];
		if (!w->image)
			continue;
		for (size_t k = 0; k + (to_site ? 1 : 0) < w->n; k++) {
			if (t->tl.events[w->ref[k]].type != (uint32_t)ta ||
			    (to_site && t->tl.events[w->ref[k + 1]].type != (uint32_t)tb))
				continue;
			if (!best || w->from[k] < best->from[bk])
				best = w, bk = k;
			break;
		}
	}
	if (!best)
		return vgu_reply_error(r, 404, "not found in the trace's threads");
	/* absolute ns as digits: the page's numbers are doubles */
	char from[32], to[32];
	snprintf(from, sizeof from, "%" PRId64, best->from[bk]);
	snprintf(to, sizeof to, "%" PRId64, best->from[bk + (to_site ? 1 : 0)]);
	vgu_reply_json(r, 200,
	               json_pack("{s:i,s:s,s:s,s:I,s:I}", "run", run, "from", from, "to", to, "pid",
	                         (json_int_t)best->image->pid, "tid", (json_int_t)best->tid));
}
