/* vigil store: writes every primitive relation of traces into PostgreSQL tables with
 * valid-time columns (docs/store.md), one transaction per process image, idempotently. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <strings.h>

#include "bad_option.h"
#include "commands.h"
#include "relations/derived.h"
#ifdef VIGIL_HAVE_STORE
#include "store/store.h"
#endif

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: vigil store TRACE|MODEL.vgm... --to "
	       "postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DB\n"
	       "                   [--derived[=NAME,...]] [--schema NAME] [--index] [--json] [-q]\n"
	       "       vigil store --index --to URL [--schema NAME]\n\n"
	       "Writes every primitive relation of the traces into PostgreSQL: one table per\n"
	       "relation (named as the relation, in schema `vigil`), one column per attribute\n"
	       "(an entity reference as NAME, NAME_id, NAME_gen), the valid time as ns since\n"
	       "the epoch (valid_at, or valid_from/valid_to and vg_open), and the image's\n"
	       "vg_load, vg_host, vg_pid. Tables are created if missing, rows sent by COPY.\n"
	       "Each process image loads in one transaction and is recorded in the table\n"
	       "`loads`: storing a trace again adds nothing. docs/store.md has the schema.\n"
	       "A behaviour model (a file ending in .vgm, from vigil model) goes into the\n"
	       "tables models, model_events, model_transitions and model_transition_times,\n"
	       "one transaction per model, keyed by the SHA-256 of the file: storing it again\n"
	       "adds nothing; a damaged model is reported before anything is stored.\n"
	       "--derived also stores the derived relations (Network, Message, Violation,\n"
	       "LogEvent...; docs/tquel.md): the whole trace analysed once, its relations\n"
	       "in tables of the same shape with NAME_load beside each entity reference,\n"
	       "under one load keyed by the images it spans and the relations asked for;\n"
	       "stored again after the trace grew (or asking for others), the new analysis\n"
	       "replaces the old.\n\n"
	       "options:\n"
	       "  --to URL       the database (libpq URL; PGPASSWORD and ~/.pgpass work too)\n"
	       "  --schema NAME  the PostgreSQL schema of the tables (default vigil)\n"
	       "  --derived[=NAMES]  also the derived relations, all or those named\n"
	       "                 (comma-separated): vigil query postgresql://... ranges over them\n"
	       "  --index        then create the indexes vigil query postgresql:// uses (B-trees\n"
	       "                 on times, entity ids and strings; docs/tquel-sql.md) and\n"
	       "                 ANALYZE; without a TRACE, on what the store holds\n"
	       "  --json         one JSON line on stdout at the end: {\"images\",\"loaded\",\n"
	       "                 \"skipped\",\"damaged\",\"rows\",\"bytes\",\"copy_ns\",\n"
	       "                 \"rows_per_s\",\"models\",\"models_loaded\",\"models_skipped\",\n"
	       "                 \"derived\",\"derived_rows\",\"derived_skipped\"}\n"
	       "  -q, --quiet    no line per image on stderr\n"
	       "  -h, --help     this help\n\n"
	       "exit status: 0 stored, 1 stored from a damaged trace (what was readable),\n"
	       "2 usage error, unreadable trace, or the database refused (one line says why;\n"
	       "images stored before the failure stay).\n\n"
	       "examples:\n"
	       "  vigil store run1 --to postgresql://vigil@db.example:5432/monitoring\n"
	       "  vigil store run1 --derived=Network,Message --to postgresql://localhost/mon\n"
	       "  psql -c 'SELECT vg_host, count(*) FROM vigil.\"SendMessage\" GROUP BY 1'\n"
	       "  psql -c 'SELECT process, (valid_to - valid_from) / 1e6 AS ms\n"
	       "           FROM vigil.\"Waiting\" ORDER BY valid_from'\n");
}

#ifdef VIGIL_HAVE_STORE
static void progress(void *arg, const char *image, bool loaded, uint64_t rows)
{
	if (*(bool *)arg)
		return;
	if (!image)
		fprintf(stderr,
		        loaded ? "vigil store: derived relations: %" PRIu64 " rows\n"
		               : "vigil store: derived relations: stored already, skipped\n",
		        rows);
	else if (loaded)
		fprintf(stderr, "vigil store: %s: %" PRIu64 " rows\n", image, rows);
	else
		fprintf(stderr, "vigil store: %s: stored already, skipped\n", image);
}
#endif

/* --derived=NAMES: each a derived relation's name, else one line. */
static bool bad_derived(const char *list)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		bool known = false;
		for (size_t i = 0; !known && vgq_derived_registered(i); i++)
			known = strlen(vgq_derived_registered(i)) == len &&
			        !strncasecmp(vgq_derived_registered(i), p, len);
		if (!known) {
			fprintf(stderr,
			        "vigil store: --derived: no derived relation '%.*s' (one of",
			        (int)len, p);
			for (size_t i = 0; vgq_derived_registered(i); i++)
				fprintf(stderr, "%s %s", i ? "," : "", vgq_derived_registered(i));
			fprintf(stderr, ")\n");
			return true;
		}
		p += len + (p[len] == ',');
	}
	return false;
}

int vg_cmd_store(int argc, char **argv)
{
	static const struct option options[] = {
	    {"to", required_argument, NULL, 't'},      {"schema", required_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},          {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},          {"index", no_argument, NULL, 'i'},
	    {"derived", optional_argument, NULL, 'd'}, {0}};
	const char *url = NULL, *schema = NULL, *derived = NULL;
	bool json = false, quiet = false, index = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qh", options, NULL)) != -1) {
		switch (c) {
		case 't':
			url = optarg;
			break;
		case 's':
			schema = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'i':
			index = true;
			break;
		case 'd':
			derived = optarg ? optarg : "";
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("store", argv);
		}
	}
	if ((optind >= argc && !index) || !url) {
		fprintf(stderr, "vigil store: %s (usage: vigil store TRACE... --to URL)\n",
		        !url ? "no --to URL given" : "no trace given");
		return 2;
	}
	if (derived && bad_derived(derived))
		return 2;
#ifndef VIGIL_HAVE_STORE
	(void)schema;
	(void)json;
	(void)quiet;
	(void)index;
	fprintf(stderr, "vigil store: this vigil was built without libpq (install libpq-dev)\n");
	return 2;
#else
	char err[1024];
	struct vgs_options o = {
	    .schema = schema, .progress = progress, .progress_arg = &quiet, .derived = derived};
	struct vgs_pg *pg = vgs_pg_open(url, &o, err, sizeof err);
	if (!pg) {
		fprintf(stderr, "vigil store: %s\n", err);
		return 2;
	}
	/* Models (files ending in .vgm) apart from traces; models first, since every model
	 * file is checked before anything is stored. */
	size_t nargs = (size_t)(argc - optind), ntraces = 0, nmodels = 0;
	const char **traces = calloc(nargs + 1, sizeof *traces);
	const char **models = calloc(nargs + 1, sizeof *models);
	if (!traces || !models)
		abort();
	for (int i = optind; i < argc; i++) {
		size_t len = strlen(argv[i]);
		struct stat sb;
		bool dir = stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode);
		if (!dir && len > 4 && strcmp(argv[i] + len - 4, ".vgm") == 0)
			models[nmodels++] = argv[i];
		else
			traces[ntraces++] = argv[i];
	}
	struct vgs_stats st = {0};
	int rc = nmodels ? vgs_pg_store_models(pg, models, nmodels, &st, err, sizeof err) : 0;
	if (rc == 0 && ntraces)
		rc = vgs_pg_load(pg, traces, ntraces, &st, err, sizeof err);
	uint64_t indexes = 0;
	if (rc == 0 && index) {
		rc = vgs_pg_index(pg, &indexes, err, sizeof err);
		if (rc == 0 && !quiet)
			fprintf(stderr,
			        "vigil store: %" PRIu64 " indexes in schema %s, tables analyzed\n",
			        indexes, schema ? schema : "vigil");
	}
	vgs_pg_close(pg);
	free(traces);
	free(models);
	if (rc != 0) {
		fprintf(stderr, "vigil store: %s\n", err);
		return 2;
	}
	double secs = (double)st.copy_ns / 1e9;
	if (json)
		printf("{\"images\":%" PRIu64 ",\"loaded\":%" PRIu64 ",\"skipped\":%" PRIu64
		       ",\"damaged\":%" PRIu64 ",\"rows\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"copy_ns\":%" PRId64 ",\"rows_per_s\":%.0f,\"models\":%" PRIu64
		       ",\"models_loaded\":%" PRIu64 ",\"models_skipped\":%" PRIu64
		       ",\"derived\":%" PRIu64 ",\"derived_rows\":%" PRIu64
		       ",\"derived_skipped\":%" PRIu64 "}\n",
		       st.images, st.loaded, st.skipped, st.damaged, st.rows, st.bytes, st.copy_ns,
		       secs > 0 ? (double)st.rows / secs : 0.0, st.models, st.models_loaded,
		       st.models_skipped, st.derived, st.derived_rows, st.derived_skipped);
	if (st.damaged) {
		fprintf(stderr,
		        "vigil store: %" PRIu64 " image%s read from a damaged trace: stored what "
		        "was readable (vigil dump lists the places)\n",
		        st.damaged, st.damaged == 1 ? "" : "s");
		return 1;
	}
	return 0;
#endif
}
