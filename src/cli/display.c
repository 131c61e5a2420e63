/* vigil display: the display step without a browser (docs/display.md). `check` parses a
 * `.vgd` file and checks it against a trace; `render` writes the scene at an instant as
 * JSON or as a static SVG. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/out_file.h"
#include "display/display.h"
#include "lang/lang.h"
#include "relations/relation.h"
#include "trace/source.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: vigil display check FILE.vgd (TRACE | --sensors FILE.vgl)\n"
	        "       vigil display render FILE.vgd TRACE [--at TIME] [--json] [-o FILE]\n"
	        "       vigil display changes FILE.vgd TRACE\n\n"
	        "The display step: FILE.vgd associates the relations of the trace (and those\n"
	        "its derive statements compute with TQuel) with icons, aspects, inclusion,\n"
	        "pointers, flashing and a representation of time (docs/display.md).\n\n"
	        "  check     parse and check FILE.vgd against the trace (with --sensors: the\n"
	        "            relations a program with these sensors will have, before it runs);\n"
	        "            errors as FILE:LINE:COL with the line and a caret\n"
	        "  render    the scene at one instant: a standalone SVG (the default) or, with\n"
	        "            --json, the scene as JSON (what `vigil ui` draws)\n"
	        "  changes   the instants at which a shown relation changes, one per line, as\n"
	        "            ns since the trace's first event\n\n"
	        "options:\n"
	        "  --at TIME   the instant: a duration since the trace's first event (12ms,\n"
	        "              1.5s), N%% of the trace's span, 'end', or @NS (absolute ns);\n"
	        "              default: the end\n"
	        "  --json      write the scene as JSON instead of SVG\n"
	        "  -o FILE     write into FILE (default: standard output)\n"
	        "  --sensors FILE.vgl   check against a sensor description instead of a trace\n\n"
	        "exit status: 0 done; 1 done from a damaged trace; 2 usage error, unreadable\n"
	        "trace, or errors in FILE.vgd.\n\n"
	        "examples:\n"
	        "  vigil display check examples/mailbox/mailbox.vgd run1\n"
	        "  vigil display check app.vgd --sensors app.vgl\n"
	        "  vigil display render examples/mailbox/mailbox.vgd run1 --at 40%% -o m.svg\n"
	        "  vigil display render examples/mailbox/mailbox.vgd run1 --at 3ms --json\n");
}

/* TIME of --at into absolute ns; -1 if it is not one. */
static int parse_at(const char *s, int64_t first, int64_t last, int64_t *at)
{
	char *end;
	if (!strcmp(s, "end")) {
		*at = last;
		return 0;
	}
	if (s[0] == '@') {
		errno = 0;
		long long v = strtoll(s + 1, &end, 10);
		if (errno || end == s + 1 || *end)
			return -1;
		*at = v;
		return 0;
	}
	size_t n = strlen(s);
	if (n > 1 && s[n - 1] == '%') {
		errno = 0;
		double p = strtod(s, &end);
		if (errno || end != s + n - 1 || !(p >= 0 && p <= 100))
			return -1;
		*at = first + (int64_t)((double)(last - first) * p / 100.0);
		return 0;
	}
	int64_t d;
	if (vgt_parse_duration(s, &d) < 0 || d < 0 || d > INT64_MAX - first)
		return -1;
	*at = first + d;
	return 0;
}

static struct vgq_database *open_db(const char *path, struct vgt_trace **tr)
{
	char err[512];
	*tr = vgt_open_readable(&path, 1, err, sizeof err);
	if (!*tr) {
		fprintf(stderr, "vigil display: %s\n", err);
		return NULL;
	}
	return vgq_database_build(*tr);
}

static int write_out(const struct vgd_display *d, int64_t at, bool json, const char *path)
{
	struct vg_out o;
	char err[512];
	if (vg_out_open(&o, path ? path : "-", err, sizeof err) < 0) {
		fprintf(stderr, "vigil display: %s\n", err);
		return -1;
	}
	int rc = 0;
	if (json) {
		char *text = vgd_scene_json(d, at);
		if (!text || fprintf(o.f, "%s\n", text) < 0)
			rc = -1;
		free(text);
	} else {
		rc = vgd_scene_svg(d, at, o.f);
	}
	if (rc < 0) {
		fprintf(stderr, "vigil display: %s: write failed\n",
		        path ? path : "standard output");
		vg_out_abort(&o);
		return -1;
	}
	if (vg_out_commit(&o, err, sizeof err) < 0) {
		fprintf(stderr, "vigil display: %s\n", err);
		return -1;
	}
	return 0;
}

int vg_cmd_display(int argc, char **argv)
{
	static const struct option options[] = {
	    {"at", required_argument, NULL, 'a'},     {"json", no_argument, NULL, 'j'},
	    {"output", required_argument, NULL, 'o'}, {"sensors", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},         {0}};
	const char *at_text = NULL, *out = NULL, *sensors = NULL;
	bool json = false;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
		switch (c) {
		case 'a':
			at_text = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 's':
			sensors = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "vigil display: %s needs a value (see --help)\n",
			        argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "vigil display: unknown option '%s' (see --help)\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (argc - optind != (sensors ? 2 : 3)) {
		fprintf(stderr,
		        "vigil display: expected check|render|changes FILE.vgd %s (see --help)\n",
		        sensors ? "and no trace with --sensors" : "TRACE");
		return 2;
	}
	const char *cmd = argv[optind], *vgd = argv[optind + 1];
	const char *trace = sensors ? sensors : argv[optind + 2];
	bool check = !strcmp(cmd, "check"), render = !strcmp(cmd, "render"),
	     changes = !strcmp(cmd, "changes");
	if (!check && !render && !changes) {
		fprintf(stderr, "vigil display: unknown subcommand '%s' (check, render, changes)\n",
		        cmd);
		return 2;
	}
	if (!render && (at_text || json || out)) {
		fprintf(stderr, "vigil display %s: --at, --json and -o are options of render\n",
		        cmd);
		return 2;
	}
	if (sensors && !check) {
		fprintf(stderr, "vigil display %s: --sensors is an option of check\n", cmd);
		return 2;
	}
	struct vgt_trace *tr = NULL;
	struct vgl_model *model = NULL;
	struct vgq_database *db;
	if (sensors) {
		int nerr = 0;
		if (!(model = vgl_load(sensors, stderr, &nerr)))
			return 2;
		db = vgq_database_from_model(model);
	} else if (!(db = open_db(trace, &tr))) {
		return 2;
	}
	int rc = db->partial ? 1 : 0;
	struct vgd_display *d = vgd_load(vgd, db, stderr);
	if (!d) {
		fprintf(stderr, "vigil display: %s: not displayed (errors above)\n", vgd);
		rc = 2;
		goto done;
	}
	int64_t first, last;
	vgd_span(d, &first, &last);
	if (check) {
		size_t n;
		vgd_changes(d, &n);
		if (sensors)
			printf("%s: checked against the sensor description %s\n", vgd, sensors);
		else
			printf("%s: checked against %s: %zu instants of change over %.6f ms\n", vgd,
			       trace, n, (double)(last - first) / 1e6);
	} else if (changes) {
		size_t n;
		const int64_t *t = vgd_changes(d, &n);
		for (size_t i = 0; i < n; i++)
			printf("%" PRId64 "\n", t[i] - first);
	} else {
		int64_t at = last;
		if (at_text && parse_at(at_text, first, last, &at) < 0) {
			fprintf(stderr,
			        "vigil display: --at: '%s' is not a time (12ms, 40%%, end, @NS)\n",
			        at_text);
			rc = 2;
		} else if (write_out(d, at, json, out) < 0) {
			rc = 2;
		}
	}
done:
	vgd_free(d);
	vgq_database_free(db);
	if (tr)
		vgt_close(tr);
	if (model)
		vgl_free(model);
	return rc;
}
