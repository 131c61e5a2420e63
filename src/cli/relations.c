/* vigil relations: lists the historical relations of a trace (docs/architecture.md):
 * name, kind, attributes and their types, tuple count and time span. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "embedded.h"
#include "format_opt.h"
#include "front_end.h"
#include "lang/lang.h"
#include "relations/derived.h"
#include "relations/relation.h"
#include "trace/source.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil relations [--json|--format text|json] [--tick DURATION] TRACE...\n"
	    "       vigil relations [--json|--format text|json] PROGRAM\n\n"
	    "Lists every historical relation of the trace, as queries see them:\n"
	    "  event     one tuple per event, with the time attribute `at`\n"
	    "  interval  begin/end pairs, with `from` and `to`\n"
	    "  state     state changes: each one ends the entity's previous tuple\n"
	    "  entity    one tuple per lifetime of an entity (name, id, gen)\n"
	    "For each: its attributes and types (entity references with their kind), the\n"
	    "number of tuples, those still open at the end of the trace, ends that closed\n"
	    "nothing, and the time span. Then the derived relations the trace can have,\n"
	    "what vigil's analyses find (docs/tquel.md \"Derived relations\"): Network,\n"
	    "Message, NetRunning, NetWaiting (vigil net split), Violation, Deadlock (vigil\n"
	    "check), LogEvent, Transition, ModelEvent, ModelTransition (vigil model), with\n"
	    "their attributes; a query builds them when it names one, --derived here (and\n"
	    "counts them). Attribute and relation names match queries\n"
	    "case-insensitively. Given a program whose sensors vigil gen --lang c made, the\n"
	    "relations its embedded sensor description declares (no tuples yet).\n\n"
	    "options:\n"
	    "  --json        (or --format json) one JSON object per relation and line: "
	    "{\"name\",\"kind\",\n"
	    "                \"attributes\":[{\"name\",\"type\",\"entity\"}],\"tuples\",\"open\",\n"
	    "                \"unmatched_ends\",\"from\",\"to\"[,\"derived\"]} (times in ns since "
	    "the epoch;\n"
	    "                null for a derived relation not built)\n"
	    "  --derived     build the derived relations to count their tuples (reads the\n"
	    "                trace again per analysis)\n"
	    "  --tick DUR    the base tick of the Clock relation listed (default 1s)\n"
	    "  -h, --help    this help\n\n"
	    "exit status: 0 clean trace, 1 damage found (relations hold what was readable),\n"
	    "2 usage error or unreadable trace.\n\n"
	    "examples:\n"
	    "  vigil relations run1\n"
	    "  vigil relations --json run1 | jq -r 'select(.kind==\"interval\") | .name'\n"
	    "  vigil relations --derived run1          with the analyses' tuples counted\n"
	    "  vigil query run1 -e 'range of W is Waiting retrieve (W.process)'   ask them\n");
}

/* derived: the analysis a derived relation comes from (NULL: primitive); counted: its
 * tuples were built (--derived), else only its attributes are known. */
static void print_text(const struct vgq_relation *r, const char *derived, bool counted)
{
	char from[32], to[32];
	vgt_format_time(r->first, from, sizeof from);
	vgt_format_time(r->last, to, sizeof to);
	if (derived && !counted) {
		printf("%s  %s  derived (%s): built when a query names it (--derived counts it)\n",
		       r->name, vgq_rkind_name(r->kind), derived);
	} else {
		printf("%s  %s  %zu tuple%s", r->name, vgq_rkind_name(r->kind), r->ntuples,
		       r->ntuples == 1 ? "" : "s");
		if (r->kind != VGQ_REL_EVENT)
			printf(", %" PRIu64 " open at the end", r->open_at_end);
		if (r->unmatched_ends)
			printf(", %" PRIu64 " unmatched end%s", r->unmatched_ends,
			       r->unmatched_ends == 1 ? "" : "s");
		if (r->ntuples)
			printf(", %s .. %s", from, to);
		if (derived)
			printf(", derived (%s)", derived);
		printf("\n");
	}
	if (r->kind == VGQ_REL_EVENT)
		printf("  %-16s time\n", "at");
	else
		printf("  %-16s time\n  %-16s time\n", "from", "to");
	for (size_t a = 0; a < r->nattrs; a++) {
		const struct vgq_attr *at = &r->attrs[a];
		printf("  %-16s %s", at->name, vgq_type_name(at->type));
		if (at->type == VGQ_ENTITY)
			printf(" %s", at->ref_kind ? at->ref_kind : "(kind not declared)");
		printf("\n");
	}
}

static void print_json(const struct vgq_relation *r, const char *derived, bool counted)
{
	json_t *attrs = json_array();
	for (size_t a = 0; a < r->nattrs; a++) {
		const struct vgq_attr *at = &r->attrs[a];
		json_t *o =
		    json_pack("{s:s, s:s}", "name", at->name, "type", vgq_type_name(at->type));
		if (at->type == VGQ_ENTITY)
			json_object_set_new(o, "entity",
			                    at->ref_kind ? json_string(at->ref_kind) : json_null());
		json_array_append_new(attrs, o);
	}
	json_t *o = json_pack("{s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I}", "name", r->name, "kind",
	                      vgq_rkind_name(r->kind), "attributes", attrs, "tuples",
	                      (json_int_t)r->ntuples, "open", (json_int_t)r->open_at_end,
	                      "unmatched_ends", (json_int_t)r->unmatched_ends, "from",
	                      (json_int_t)r->first, "to", (json_int_t)r->last);
	if (derived)
		json_object_set_new(o, "derived", json_string(derived));
	if (derived && !counted) /* not built: no figures */
		for (const char *const *k =
		         (const char *const[]){"tuples", "open", "unmatched_ends", "from", "to",
		                               NULL};
		     *k; k++)
			json_object_set_new(o, *k, json_null());
	char *s = json_dumps(o, JSON_COMPACT);
	puts(s);
	free(s);
	json_decref(o);
}

/* A program instead of a trace: the relations its embedded sensor description declares
 * (vigil gen --lang c), as a recording of it would have them, with no tuples. */
static int program_relations(const char *program, bool json)
{
	int found;
	if (!vg_embedded_model) /* the front end: vigil-full reads ELF files (front_end.h) */
		return vg_run_full(vg_front_end_argv);
	struct vgl_model *m = vg_embedded_model("relations", program, &found);
	if (!m) {
		if (!found)
			fprintf(
			    stderr,
			    "vigil relations: %s is a program with no embedded sensor description "
			    "(its sensors are not made by vigil gen --lang c); give a trace of "
			    "it\n",
			    program);
		return 2;
	}
	struct vgq_database *db = vgq_database_from_model(m);
	for (size_t i = 0; i < db->nrelations; i++)
		(json ? print_json : print_text)(db->relations[i], NULL, true);
	vgq_database_free(db);
	vgl_free(m);
	return 0;
}

int vg_cmd_relations(int argc, char **argv)
{
	static const struct option options[] = {
	    {"json", no_argument, NULL, 'j'},       {"format", required_argument, NULL, 'F'},
	    {"tick", required_argument, NULL, 't'}, {"derived", no_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},       {0}};
	bool json = false, count_derived = false;
	int64_t tick = 1000000000;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'd':
			count_derived = true;
			break;
		case 'F':
			if (vg_cli_format("relations", optarg, &json))
				return 2;
			break;
		case 't':
			if (vgt_parse_duration(optarg, &tick) < 0 || tick < 1) {
				fprintf(stderr,
				        "vigil relations: --tick: '%s' is not a positive duration "
				        "(e.g. 1s, 10ms)\n",
				        optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "vigil relations: %s needs a value (see --help)\n",
			        argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "vigil relations: unknown option '%s' (see --help)\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil relations: no trace given (usage: vigil relations [--json] "
		                "TRACE...)\n");
		return 2;
	}
	if (argc - optind == 1 && vg_cli_is_elf(argv[optind]))
		return program_relations(argv[optind], json);
	char err[512];
	struct vgt_trace *t = vgt_open_readable((const char *const *)argv + optind,
	                                        (size_t)(argc - optind), err, sizeof err);
	if (!t) {
		fprintf(stderr, "vigil relations: %s\n", err);
		return 2;
	}
	struct vgq_database *db = vgq_database_build(t);
	vgq_database_print_warnings(db, "vigil relations", stderr);
	for (size_t i = 0; i < db->nrelations; i++)
		(json ? print_json : print_text)(db->relations[i], NULL, true);
	int rc = 0;
	if (count_derived) {
		const char **derived;
		char said[sizeof err] = "";
		size_t nderived = vgq_derived_names(db, &derived);
		for (size_t i = 0; i < nderived; i++) {
			const struct vgq_relation *r =
			    vgq_database_derived(db, derived[i], err, sizeof err);
			if (r)
				(json ? print_json : print_text)(r, vgq_derived_source(r->name),
				                                 true);
			else if (strcmp(err, said)) /* one line per analysis, not per relation */
				fprintf(stderr, "vigil relations: warning: %s\n", err);
			snprintf(said, sizeof said, "%s", r ? "" : err);
		}
		free(derived);
	} else {
		struct vgq_relation **schemas;
		size_t n = vgq_derived_schemas(db, &schemas);
		for (size_t i = 0; i < n; i++)
			(json ? print_json : print_text)(
			    schemas[i], vgq_derived_source(schemas[i]->name), false);
		vgq_derived_schemas_free(schemas, n);
	}
	const struct vgq_relation *clock = vgq_database_clock(db, tick, 1, err, sizeof err);
	if (clock) {
		(json ? print_json : print_text)(clock, NULL, true);
	} else {
		fprintf(stderr, "vigil relations: %s\n", err);
		rc = 2;
	}
	if (db->partial) {
		fprintf(stderr,
		        "vigil relations: %s: %" PRIu64 " damaged place%s; the relations hold what "
		        "was readable (vigil dump lists the places)\n",
		        argv[optind], db->damage, db->damage == 1 ? "" : "s");
		rc = rc ? rc : 1;
	}
	vgq_database_free(db);
	vgt_close(t);
	return rc;
}
