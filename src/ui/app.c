/* The application's state: the trace, its relations, names and timeline, opened once. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tquel/tquel.h"
#include "trace/source.h"
#include "ui/ui.h"

int vgu_app_open(struct vgu_app *a, const char *const *paths, size_t npaths)
{
	char err[512];
	a->paths = paths;
	a->npaths = npaths;
	if (!a->tick_ns)
		a->tick_ns = 1000000000;
	a->trace = vgt_open_readable(paths, npaths, err, sizeof err);
	if (!a->trace) {
		fprintf(stderr, "vigil ui: %s\n", err);
		return -1;
	}
	/* one merged pass: the relations, and the timeline's rows of events */
	a->names = vgt_names_new();
	struct vgq_build_options o = {
	    .keep = vgu_timeline_feed, .keep_arg = a, .ends_without_begin = a->ends_without_begin};
	a->db = a->names ? vgq_database_build_opts(a->trace, &o) : NULL;
	if (!a->db || !a->names || vgu_timeline_build(a) < 0) {
		fprintf(stderr, "vigil ui: out of memory\n");
		vgu_app_close(a);
		return -1;
	}
	return 0;
}

void vgu_app_forget_results(struct vgu_app *a)
{
	vgu_timeline_truncate(&a->tl, a->tl.nbase);
	free(a->results);
	a->results = NULL;
	a->nresults = 0;
	vgq_session_free(a->session);
	a->session = NULL;
	if (a->query)
		tquel_free(a->query);
	a->query = NULL;
}

void vgu_app_close(struct vgu_app *a)
{
	vgu_app_forget_results(a);
	vgu_timeline_free(&a->tl);
	if (a->names)
		vgt_names_free(a->names);
	vgq_database_free(a->db);
	if (a->trace)
		vgt_close(a->trace);
	a->names = NULL;
	a->db = NULL;
	a->trace = NULL;
}
