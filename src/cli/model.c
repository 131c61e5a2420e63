/* vigil model: merges log models, recordings and traces into one model file
 * (docs/model.md). */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "model/inputs.h"
#include "model/names.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil model INPUT... -o MODEL [--name SITE_OR_GLOB=TAG]... [--names FILE]\n\n"
	    "Merges behaviour models into one model file (docs/model.md). An INPUT is\n"
	    "  a model file (vigil-model 1),\n"
	    "  a recording by `vigil record`: the log models its processes wrote\n"
	    "    (DIR/logmodel-IMAGE-N.vgm, the latest N of each process image), or, when\n"
	    "    it has none (or with --from-trace), the model of its recorded events:\n"
	    "    one event type per sensor, transitions between consecutive events of a\n"
	    "    thread, their times from the timestamps.\n"
	    "Raw call sites (/abs/module+0xHEX) become file.c:LINE when the module has\n"
	    "debug information, else module+0xHEX. A one-line summary goes to stderr.\n\n"
	    "options:\n"
	    "  -o, --output MODEL      the model file to write ('-': stdout)\n"
	    "  --name PATTERN=TAG      name the events whose site matches PATTERN (a glob\n"
	    "                          over the whole site, or its tail after a '/', or a\n"
	    "                          trace sensor's name; fmt:GLOB: whose format or\n"
	    "                          message template matches GLOB); repeatable\n"
	    "  --names FILE            one PATTERN=TAG per line (# comments)\n"
	    "  --from-trace            model a recording's events even if it has log models\n"
	    "  -h, --help              this help\n\n"
	    "examples:\n"
	    "  vigil model run1 -o run1.vgm                  a recording's log models\n"
	    "  vigil model run1 run2 old.vgm -o all.vgm      merge runs and models\n"
	    "  vigil model run1 -o m.vgm --name 'bufmgr.c:725=buffer miss'\n"
	    "  vigil model --from-trace run1 -o sensors.vgm  the recorded sensors' events\n");
}

static void warn(const char *line)
{
	fprintf(stderr, "vigil model: warning: %s\n", line);
}

int vg_cmd_model(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'}, {"name", required_argument, NULL, 'n'},
	    {"names", required_argument, NULL, 'N'},  {"from-trace", no_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},         {0, 0, 0, 0}};
	const char *out = NULL;
	char **names = calloc((size_t)argc + 1, sizeof *names);
	char **files = calloc((size_t)argc + 1, sizeof *files);
	size_t nnames = 0, nfiles = 0;
	bool from_trace = false;
	int c, rc = 2;
	struct vgm_model *m = NULL;
	struct vgm_symbolizer *sym = NULL;
	if (!names || !files)
		goto done;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'n':
			names[nnames++] = optarg;
			break;
		case 'N':
			files[nfiles++] = optarg;
			break;
		case 't':
			from_trace = true;
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto done;
		default:
			fprintf(stderr, "vigil model: see 'vigil model --help'\n");
			goto done;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil model: no INPUT given (see 'vigil model --help')\n");
		goto done;
	}
	if (!out) {
		fprintf(stderr,
		        "vigil model: no output given: -o MODEL (see 'vigil model --help')\n");
		goto done;
	}
	m = vgm_model_new();
	sym = vgm_symbolizer_new();
	if (!m || !sym) {
		fprintf(stderr, "vigil model: out of memory\n");
		goto done;
	}
	char err[1024];
	struct vgm_input_stats st = {0};
	rc = 2; /* an input that cannot be read is bad input, as for every command */
	for (int i = optind; i < argc; i++)
		if (vgm_load_input(m, argv[i], from_trace, sym, &st, err, sizeof err)) {
			fprintf(stderr, "vigil model: %s\n", err);
			goto done;
		}
	rc = 1;
	for (size_t i = 0; i < nfiles; i++)
		if (vgm_tag_file(m, files[i], warn, err, sizeof err)) {
			fprintf(stderr, "vigil model: %s\n", err);
			goto done;
		}
	for (size_t i = 0; i < nnames; i++) {
		long n = vgm_tag(m, names[i], err, sizeof err);
		if (n < 0) {
			fprintf(stderr, "vigil model: --name %s\n", err);
			rc = 2;
			goto done;
		}
		if (!n)
			fprintf(stderr, "vigil model: warning: --name '%s' names no event\n",
			        names[i]);
	}
	if (vgm_write_file(m, out, err, sizeof err)) {
		fprintf(stderr, "vigil model: %s\n", err);
		goto done;
	}
	if (st.unmodelled_sensors) /* docs/model.md, "Log models and recorded sensors" */
		fprintf(stderr,
		        "vigil model: hint: %s also recorded %zu sensor%s (%s%s) that its log "
		        "models do not hold; `vigil model --from-trace %s` models those events\n",
		        st.unmodelled_path, st.unmodelled_sensors,
		        st.unmodelled_sensors == 1 ? "" : "s", st.unmodelled_example,
		        st.unmodelled_sensors > 1 ? ", ..." : "", st.unmodelled_path);
	size_t raw, resolved;
	vgm_symbolizer_stats(sym, &raw, &resolved);
	fprintf(stderr,
	        "vigil model: %" PRIu64 " events of %zu types, %" PRIu64
	        " transitions of %zu kinds, from %d input%s (%zu model file%s, %zu trace%s)",
	        vgm_total_events(m), m->nevents, vgm_total_transitions(m), m->ntrans, argc - optind,
	        argc - optind == 1 ? "" : "s", st.files, st.files == 1 ? "" : "s", st.traces,
	        st.traces == 1 ? "" : "s");
	if (raw)
		fprintf(stderr, "; %zu of %zu raw sites symbolized", resolved, raw);
	if (raw && vgm_symbolizer_unavailable()) /* libdw is loaded at the first raw site */
		fprintf(stderr, " (no libdw: %s)", vgm_symbolizer_unavailable());
	/* Messages whose site had more templates than its cap (docs/logcapture.md). */
	uint64_t over = 0;
	size_t over_sites = 0;
	for (size_t i = 0; i < m->nevents; i++)
		if (m->events[i].fmt && !strncmp(m->events[i].fmt, "<overflow: templates", 20)) {
			over += m->events[i].count;
			over_sites++;
		}
	if (over)
		fprintf(stderr,
		        "; %" PRIu64 " messages of %zu site%s past the template cap merged into "
		        "overflow events",
		        over, over_sites, over_sites == 1 ? "" : "s");
	if (st.stale)
		fprintf(stderr, "; %zu earlier snapshots skipped", st.stale);
	if (st.damaged)
		fprintf(stderr, "; %" PRIu64 " damaged places read past (see vigil dump)",
		        st.damaged);
	fprintf(stderr, " -> %s\n", out);
	rc = 0;
done:
	vgm_model_free(m);
	vgm_symbolizer_free(sym);
	free(names);
	free(files);
	return rc;
}
