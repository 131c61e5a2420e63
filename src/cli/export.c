/* vigil export: a trace for the viewers users already have (docs/export.md): Chrome's
 * JSON Trace Event Format, Perfetto's protobuf trace. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/out_file.h"
#include "export_model.h"
#include "trace/source.h"

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: vigil export TRACE... --format chrome|perfetto -o FILE\n\n"
	       "Writes the traces for another viewer (docs/export.md):\n"
	       "  chrome    the JSON Trace Event Format (chrome://tracing, Perfetto UI,\n"
	       "            speedscope)\n"
	       "  perfetto  Perfetto's native protobuf trace (Perfetto UI, trace_processor)\n"
	       "Processes and threads are named as in the trace; events are instants with\n"
	       "their fields as arguments; interval relations are slices (on their thread\n"
	       "when they nest there, else on an async track of the process); states and\n"
	       "entity lifetimes are async slices; events discarded are a counter per\n"
	       "process; messages matched by `vigil net` are flow arrows. Every event of the\n"
	       "trace is in the file once: as an instant, or as a slice's begin or end\n"
	       "(their names are the arguments vigil.event and vigil.end_event).\n\n"
	       "options:\n"
	       "  -f, --format F    chrome or perfetto (required)\n"
	       "  -o, --output FILE the file to write ('-': standard output; a device such as\n"
	       "                    /dev/null is written in place, never replaced)\n"
	       "  -h, --help        this help\n\n"
	       "exit status: 0 written; 1 written from a damaged trace (what was readable;\n"
	       "the damage is listed on stderr); 2 usage error, unreadable trace or output.\n\n"
	       "examples:\n"
	       "  vigil export run1 --format chrome -o run1.json        for chrome://tracing\n"
	       "  vigil export run1 --format perfetto -o run1.pftrace   for ui.perfetto.dev\n"
	       "  vigil export a b c --format perfetto -o net.pftrace   three hosts, with flows\n");
}

/* The first 20 damaged places, then how many more. */
static void not_exported(void *ctx, const char *line)
{
	if ((*(size_t *)ctx)++ < 20)
		fprintf(stderr, "vigil export: not exported: %s\n", line);
}

static void report_damage(struct vgt_trace *t)
{
	size_t listed = 0;
	vgt_damage_each(t, not_exported, &listed);
	size_t shown = listed < 20 ? listed : 20;
	uint64_t total = vgt_damage_total(t);
	if (total > shown)
		fprintf(stderr,
		        "vigil export: %" PRIu64 " more damaged places (vigil dump lists them)\n",
		        total - shown);
}

int vg_cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
	                                     {"output", required_argument, NULL, 'o'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {0, 0, 0, 0}};
	const char *format = NULL, *out = NULL;
	optind = 1;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, ":f:o:h", opts, NULL)) != -1;) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr,
			        "vigil export: %s needs a value (see 'vigil export --help')\n",
			        argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr,
			        "vigil export: unknown option '%s' (see 'vigil export --help')\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (!format) {
		fprintf(stderr, "vigil export: --format chrome or --format perfetto is needed\n");
		return 2;
	}
	bool perfetto = !strcmp(format, "perfetto");
	if (!perfetto && strcmp(format, "chrome")) {
		fprintf(stderr, "vigil export: unknown format '%s' (chrome or perfetto)\n", format);
		return 2;
	}
	if (perfetto && !vgx_perfetto_available()) {
		fprintf(stderr, "vigil export: this vigil was built without protobuf-c "
		                "(libprotobuf-c-dev, protobuf-c-compiler): no perfetto format\n");
		return 2;
	}
	if (!out) {
		fprintf(stderr, "vigil export: -o FILE is needed ('-' for standard output)\n");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil export: no trace given (see 'vigil export --help')\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	const char *const *paths = (const char *const *)argv + optind;
	size_t npaths = (size_t)(argc - optind);
	char err[1024];
	struct vgt_trace *t = vgt_open(paths, npaths, err, sizeof err);
	if (!t) {
		fprintf(stderr, "vigil export: %s\n", err);
		return 2;
	}
	if (!vgt_readable_or_say(t, paths[0], err, sizeof err)) {
		fprintf(stderr, "vigil export: %s\n", err);
		report_damage(t);
		vgt_close(t);
		return 2;
	}
	struct vgx_model *m = vgx_build(t, paths, npaths);
	if (!m) {
		fprintf(stderr, "vigil export: out of memory\n");
		vgt_close(t);
		return 2;
	}
	struct vg_out o;
	int rc = 2;
	if (vg_out_open(&o, out, err, sizeof err) < 0) {
		fprintf(stderr, "vigil export: %s\n", err);
		goto done;
	}
	if ((perfetto ? vgx_write_perfetto : vgx_write_chrome)(m, o.f, err, sizeof err) < 0) {
		fprintf(stderr, "vigil export: %s: %s\n", out, err);
		vg_out_abort(&o);
		goto done;
	}
	if (vg_out_commit(&o, err, sizeof err) < 0) {
		fprintf(stderr, "vigil export: %s\n", err);
		goto done;
	}
	rc = 0;
	fprintf(stderr,
	        "vigil export: %" PRIu64 " events of %zu processes, %zu threads; %" PRIu64
	        " flows; %" PRIu64 " discarded -> %s\n",
	        m->events, m->nprocs, m->nthreads, m->flows, m->discarded, out);
	if (m->net_note)
		fprintf(stderr, "vigil export: %s\n", m->net_note);
	if (m->damage) {
		report_damage(t);
		fprintf(stderr,
		        "vigil export: %" PRIu64
		        " damaged place%s: what was readable is exported\n",
		        m->damage, m->damage == 1 ? "" : "s");
		rc = 1;
	}
done:
	vgx_free(m);
	vgt_close(t);
	return rc;
}
