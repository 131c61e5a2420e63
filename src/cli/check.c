/* vigil check: verifies the sequencing rules of consistent partial reporting
 * (docs/consistency.md) on traces; one line (or JSON object) per violation. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bad_option.h"
#include "check/check.h"
#include "check/waitfor.h"
#include "cli/check_waits.h"
#include "cli/event_json.h"
#include "commands.h"
#include "format_opt.h"
#include "trace/source.h"

struct check_cli {
	bool json, quiet;
	uint64_t max; /* violations printed (0: all) */
	uint64_t printed, seen;
	bool output_error;
	bool deadlocks;    /* --deadlocks: the wait-for graph's cycles, not the violations */
	struct vgc_wf *wf; /* fed by on_lock */
	bool wf_oom;
	const char *svg; /* --svg FILE: the graph at the instant */
	bool at_set;     /* --at TIME: the graph up to this instant (ns since the first event) */
	int64_t at;
	int64_t first_ts; /* of the trace, once a lock event told it */
	int64_t last_lock_ns;
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil check [options] TRACE...\n\n"
	    "Verifies that the reported stream of the traces (all images, merged by time)\n"
	    "obeys the sequencing rules of consistent partial reporting (docs/consistency.md):\n"
	    "  1 an entity is created before it is loaded, renamed or reclaimed\n"
	    "  2 an activity refers only to live entities (after their load, if any)\n"
	    "  3 no entity is reclaimed without the reclamation being reported\n"
	    "  4 no invocation is reported without its parent (vg_depth of enters)\n"
	    "  5 per thread and lock, acquire/release/wait begin/wait end are well formed;\n"
	    "    per thread, suspend and resume alternate\n\n"
	    "Each violation is one line on stdout:\n"
	    "  IMAGE/STREAM@OFFSET t=SECONDS: rule N: MESSAGE\n"
	    "(the stream file and the event's byte offset in it, its time since the first\n"
	    "event of the trace). A summary, damaged places and lost events go to stderr.\n\n"
	    "options:\n"
	    "  --json        (or --format json) one JSON object per violation "
	    "{\"file\",\"offset\",\"ts\",\"t\",\n"
	    "                \"rule\",\"event\",\"synthesized\",\"message\",\"entities\"}, then "
	    "one\n"
	    "                {\"summary\":{...}} object, on stdout\n"
	    "  --max N       print at most N violations (default 100; 0: all); all are counted\n"
	    "  -q, --quiet   print no violation, only the summary\n"
	    "  --deadlocks   build the wait-for graph from the acquire/release/wait events\n"
	    "                (a waiting thread points at the holders of its lock) and print\n"
	    "                each cycle instead of the violations, when it formed, with its\n"
	    "                threads, locks and wait times, and whether it still stands at the\n"
	    "                end of the trace (a deadlock); exit 1 if there is a cycle. With\n"
	    "                --json: one "
	    "{\"cycle\":{\"kind\",\"standing\",\"t\",\"ts\",\"steps\"}}\n"
	    "                object per cycle (docs/consistency.md), then the summary\n"
	    "  --at TIME     with --deadlocks: the graph at TIME since the first event (2ms,\n"
	    "                1.5s, end): only the lock events up to it; cycles formed by then,\n"
	    "                standing if they still stand at TIME\n"
	    "  --svg FILE    with --deadlocks: draw the graph at --at (default: the end) as\n"
	    "                SVG: threads, locks, waits and holds, standing cycles in red\n"
	    "  -h, --help    this help\n\n"
	    "exit status: 0 consistent, 1 violations found, 2 usage error or unreadable trace,\n"
	    "3 no violation but the trace is damaged (what could not be read was not checked).\n\n"
	    "examples:\n"
	    "  vigil check run1                           verify a recording\n"
	    "  vigil check --max 0 run1 > violations.txt  every violation\n"
	    "  vigil check --json run1 | jq -c 'select(.rule == 4)'\n"
	    "  vigil check -q run1 run2 && echo consistent\n"
	    "  vigil check --deadlocks run1               cycles of waiting threads\n"
	    "  vigil check --deadlocks --json run1 | jq -c '.cycle.steps[]?.thread.name'\n"
	    "  vigil check --deadlocks --at 1.5s --svg waits.svg run1\n");
}

static json_t *json_text(const char *s)
{
	return vg_json_text(s, strlen(s));
}

static void on_violation(void *ctx, const struct vgc_violation *v)
{
	struct check_cli *cl = ctx;
	cl->seen++;
	if (cl->quiet || (cl->max && cl->printed >= cl->max) || cl->output_error)
		return;
	cl->printed++;
	if (!cl->json) {
		printf("%s@%" PRIu64 " t=%.9f: rule %d: %s\n", v->file, v->event->offset, v->t,
		       v->rule, v->message);
	} else {
		json_t *ents = json_array();
		for (unsigned i = 0; i < v->nentities; i++) {
			const struct vgc_entity_ref *e = &v->entities[i];
			json_t *o = json_pack("{s:o,s:o,s:o}", "kind", json_text(e->kind), "id",
			                      vg_json_u64(e->id), "gen", vg_json_u64(e->gen));
			if (e->name)
				json_object_set_new(o, "name", json_text(e->name));
			json_array_append_new(ents, o);
		}
		json_t *o = json_pack(
		    "{s:o,s:o,s:I,s:f,s:i,s:o,s:b,s:o,s:o}", "file", json_text(v->file), "offset",
		    vg_json_u64(v->event->offset), "ts", (json_int_t)v->event->ts, "t", v->t,
		    "rule", v->rule, "event", json_text(v->event->type->name), "synthesized",
		    v->synthesized, "message", json_text(v->message), "entities", ents);
		if (v->synthesized)
			json_object_set_new(o, "valid_ts", json_integer(v->valid_ts));
		json_dumpf(o, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		json_decref(o);
	}
	if (ferror(stdout))
		cl->output_error = true;
}

static void on_warning(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "vigil check: warning: %s\n", line);
}

static void report_damage(struct vgt_trace *t)
{
	vgt_damage_report(t, "vigil check", ": violations near them may come from the loss",
	                  stderr);
}

static void print_summary(const struct check_cli *cl, const struct vgc_summary *s, size_t cycles)
{
	if (cl->json) {
		json_t *rules = json_object();
		for (int r = 1; r <= VGC_RULES; r++) {
			char k[4];
			snprintf(k, sizeof k, "%d", r);
			json_object_set_new(rules, k, vg_json_u64(s->per_rule[r]));
		}
		json_t *o = json_pack(
		    "{s:{s:o,s:o,s:o,s:o,s:o,s:i,s:o,s:o,s:o,s:o,s:o,s:b}}", "summary", "events",
		    vg_json_u64(s->events), "entities", vg_json_u64(s->entities), "invocations",
		    vg_json_u64(s->invocations), "locks", vg_json_u64(s->locks), "synthesized",
		    vg_json_u64(s->synthesized), "max_depth", (int)s->max_depth, "violations",
		    vg_json_u64(s->violations), "rules", rules, "printed", vg_json_u64(cl->printed),
		    "damage", vg_json_u64(s->damage), "discarded", vg_json_u64(s->discarded),
		    "consistent", s->violations == 0 && s->damage == 0);
		if (cl->deadlocks)
			json_object_set_new(json_object_get(o, "summary"), "cycles",
			                    json_integer((json_int_t)cycles));
		json_dumpf(o, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		json_decref(o);
	} else if (cl->printed < cl->seen && !cl->quiet) {
		printf("... %" PRIu64 " more violations not shown (--max 0 shows all)\n",
		       cl->seen - cl->printed);
	}
	fprintf(stderr,
	        "vigil check: %" PRIu64 " events (%" PRIu64 " synthesized), %" PRIu64
	        " entities, %" PRIu64 " invocations, %" PRIu64 " locks; ",
	        s->events, s->synthesized, s->entities, s->invocations, s->locks);
	if (!s->violations)
		fprintf(stderr, "no violation%s\n", s->damage ? " in what could be read" : "");
	else
		fprintf(stderr,
		        "%" PRIu64 " violation%s (rule 1: %" PRIu64 ", rule 2: %" PRIu64
		        ", rule 3: %" PRIu64 ", rule 4: %" PRIu64 ", rule 5: %" PRIu64 ")\n",
		        s->violations, s->violations == 1 ? "" : "s", s->per_rule[1],
		        s->per_rule[2], s->per_rule[3], s->per_rule[4], s->per_rule[5]);
	if (s->damage)
		fprintf(stderr, "vigil check: %" PRIu64 " damaged place%s in the trace\n",
		        s->damage, s->damage == 1 ? "" : "s");
}

static int parse_options(struct check_cli *cl, int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_MAX, OPT_FORMAT, OPT_DEADLOCKS, OPT_SVG, OPT_AT };
	static const struct option longopts[] = {{"json", no_argument, NULL, OPT_JSON},
	                                         {"format", required_argument, NULL, OPT_FORMAT},
	                                         {"max", required_argument, NULL, OPT_MAX},
	                                         {"deadlocks", no_argument, NULL, OPT_DEADLOCKS},
	                                         {"svg", required_argument, NULL, OPT_SVG},
	                                         {"at", required_argument, NULL, OPT_AT},
	                                         {"quiet", no_argument, NULL, 'q'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	optind = 0;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "hq", longopts, NULL)) != -1;) {
		switch (c) {
		case OPT_JSON:
			cl->json = true;
			break;
		case OPT_FORMAT:
			if (vg_cli_format("check", optarg, &cl->json))
				return 2;
			break;
		case OPT_MAX: {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(optarg, &end, 10);
			if (!*optarg || *end || errno || *optarg == '-') {
				fprintf(
				    stderr,
				    "vigil check: bad count '%s' for --max (a number, 0: all)\n",
				    optarg);
				return 2;
			}
			cl->max = n;
			break;
		}
		case 'q':
			cl->quiet = true;
			break;
		case OPT_DEADLOCKS:
			cl->deadlocks = true;
			break;
		case OPT_SVG:
			cl->svg = optarg;
			break;
		case OPT_AT:
			if (!strcmp(optarg, "end"))
				break;
			if (vgt_parse_duration(optarg, &cl->at) < 0 || cl->at < 0) {
				fprintf(
				    stderr,
				    "vigil check: --at: '%s' is not a time since the first event "
				    "(2ms, 1.5s, end)\n",
				    optarg);
				return 2;
			}
			cl->at_set = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("check", argv);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil check: no trace given (see 'vigil check --help')\n");
		return 2;
	}
	if ((cl->svg || cl->at_set) && !cl->deadlocks) {
		fprintf(stderr, "vigil check: --svg and --at are options of --deadlocks\n");
		return 2;
	}
	return -1;
}

static void on_lock(void *ctx, const struct vgc_lock_event *e)
{
	struct check_cli *cl = ctx;
	cl->first_ts = e->ts - e->t_ns;
	if (cl->at_set && e->t_ns > cl->at)
		return;
	if (e->t_ns > cl->last_lock_ns)
		cl->last_lock_ns = e->t_ns;
	if (!cl->wf_oom && !vgc_wf_event(cl->wf, e))
		cl->wf_oom = true;
}

/* The --deadlocks outputs; the number of cycles. */
static size_t deadlock_outputs(struct check_cli *cl, int *rc)
{
	char instant[64] = "the end of the trace";
	if (cl->at_set)
		snprintf(instant, sizeof instant, "t=%.9f", (double)cl->at / 1e9);
	size_t n = vg_check_cycles_print(cl->wf, cl->json, cl->wf_oom, instant);
	if (cl->svg) {
		int64_t at = cl->at_set ? cl->at : cl->last_lock_ns;
		if (vg_check_waits_svg(cl->wf, cl->svg, cl->first_ts + at, (double)at / 1e9) < 0)
			*rc = 2;
	}
	return n;
}

int vg_cmd_check(int argc, char **argv)
{
	struct check_cli cl = {.max = 100};
	int rc = parse_options(&cl, argc, argv);
	if (rc >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	char err[512];
	struct vgt_trace *t =
	    vgt_open((const char *const *)argv + optind, (size_t)(argc - optind), err, sizeof err);
	if (!t) {
		fprintf(stderr, "vigil check: %s\n", err);
		return 2;
	}
	if (!vgt_readable_or_say(t, argv[optind], err, sizeof err)) {
		report_damage(t);
		fprintf(stderr, "vigil check: %s\n", err);
		vgt_close(t);
		return 2;
	}
	struct vgc_sink sink = {.ctx = &cl, .violation = on_violation, .warning = on_warning};
	if (cl.deadlocks) {
		cl.quiet = true; /* the violations are counted in the summary */
		sink.lock = on_lock;
		if (!(cl.wf = vgc_wf_new())) {
			fprintf(stderr, "vigil check: out of memory\n");
			vgt_close(t);
			return 2;
		}
	}
	struct vgc_summary sum;
	if (vgc_check(t, &sink, &sum, err, sizeof err) < 0) {
		fprintf(stderr, "vigil check: %s\n", err);
		vgt_close(t);
		return 2;
	}
	report_damage(t);
	int out_rc = 0;
	size_t cycles = cl.deadlocks ? deadlock_outputs(&cl, &out_rc) : 0;
	vgc_wf_free(cl.wf);
	print_summary(&cl, &sum, cycles);
	if (fflush(stdout) == EOF || ferror(stdout))
		cl.output_error = true;
	vgt_close(t);
	if (cl.output_error && errno != EPIPE) {
		fprintf(stderr, "vigil check: cannot write output: %s\n", strerror(errno));
		return 2;
	}
	if (out_rc)
		return out_rc;
	if (cl.deadlocks)
		return cycles ? 1 : sum.damage ? 3 : 0;
	return sum.violations ? 1 : sum.damage ? 3 : 0;
}
