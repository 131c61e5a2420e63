/* vigil watch: the query decides which sensors run. The statements are bound against the
 * subject's sensor description, planned into α operators (src/live/alpha.h), and either
 * run live (watch_live.c) or replayed against a full recording (--replay). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/control_link.h"
#include "cli/embedded.h"
#include "cli/statements.h"
#include "cli/watch.h"
#include "display/display.h"
#include "lang/lang.h"
#include "live/delta.h"
#include "relations/derived.h"
#include "relations/relation.h"
#include "trace/source.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil watch (-e 'STATEMENTS' | -f FILE.tq) [--sensors FILE.vgl]\n"
	    "                   [--format text|csv|json] [--unoptimized] [--every DURATION]\n"
	    "                   [--keep DIR] [--tick DURATION] [--stats] [--display D.vgd]\n"
	    "                   -- COMMAND [ARG...]\n"
	    "       vigil watch (-e ... | -f ...) --pid PID [--for DURATION] [--sensors FILE.vgl] "
	    "...\n"
	    "       vigil watch (-e ... | -f ...) --replay TRACE [--sensors FILE.vgl] ...\n\n"
	    "Runs COMMAND with every sensor off, then enables exactly the sensors the TQuel\n"
	    "statements need, on the entities they need (the α operators `vigil explain` shows),\n"
	    "from outside the subject through its control channel (docs/control.md), and prints\n"
	    "each retrieve's tuples as they are produced. A tuple is printed once its valid time\n"
	    "is over; the rest when the subject exits. --replay answers from a full recording\n"
	    "instead, keeping only the packets the plan would have recorded: what the live run\n"
	    "would have seen, through an update network that takes each event once and\n"
	    "prints each answer when it becomes final (aggregates, Clock, \"now\", unique and\n"
	    "statements over earlier results are answered again at each update instead;\n"
	    "VIGIL_WATCH_REEVALUATE=1 does that for all; docs/watch.md). --pid attaches to a\n"
	    "running process started with `vigil record --listen` (or VIGIL_CONTROL=listen),\n"
	    "enables the plan there and answers until the process ends, --for has passed, or\n"
	    "Ctrl-C; detaching switches the plan off again.\n\n"
	    "options:\n"
	    "  -e, --execute TEXT   the statements\n"
	    "  -f, --file FILE      read the statements from FILE\n"
	    "  --sensors FILE.vgl   the subject's sensor description (its relations): the\n"
	    "                       statements are checked against it before anything runs;\n"
	    "                       default: the one COMMAND carries (vigil gen --lang c\n"
	    "                       embeds it in the program)\n"
	    "  --format FMT         text (the default on a terminal), csv, or json (one object\n"
	    "                       per tuple, as vigil query prints them; the default otherwise)\n"
	    "  --unoptimized        enable the sensors as translated, on every entity\n"
	    "  --every DURATION     how often the live trace is read (default 200ms)\n"
	    "  --lateness DURATION  how long after its time an event may still be committed\n"
	    "                       (a writer preempted between the two): live answers wait\n"
	    "                       that long before taking events (default 500ms)\n"
	    "  --keep DIR           keep the subject's trace in DIR (default: a temporary\n"
	    "                       directory, removed at the end)\n"
	    "  --pid PID            attach to a running process instead of running COMMAND\n"
	    "                       (--sensors is then optional: the process's own trace says\n"
	    "                       which sensors it has)\n"
	    "  --for DURATION       with --pid: detach after DURATION (e.g. 30s)\n"
	    "  --replay TRACE       answer from a full recording, as the plan would have seen it\n"
	    "  --tick DURATION      the base tick of Clock (default 1s)\n"
	    "  --stats              one JSON line on stderr at the end: packets asked for,\n"
	    "                       extraneous, entity sources, per α\n"
	    "  --display D.vgd      also enable what that display specification needs (the\n"
	    "                       relations it shows, whole; its derive statements, planned;\n"
	    "                       docs/display.md): vigil ui --watch --display uses it\n"
	    "  -q, --quiet          no summary on stderr\n\n"
	    "examples:\n"
	    "  vigil watch --sensors mailbox.vgl -f resumed.tq -- ./mailbox --seed 7\n"
	    "  vigil watch --sensors mailbox.vgl --format json -e 'range of S is SendMessage\n"
	    "      retrieve (S.mailbox) where S.process = \"P1\"' -- ./mailbox --seed 2\n"
	    "  vigil watch -f resumed.tq --replay run1 --stats     what the plan would record\n"
	    "  vigil record --listen -o srv -- ./mailbox --seed 2 --pace 1000 --messages 100000 &\n"
	    "  vigil watch -f resumed.tq --pid $! --for 10s        attach, watch 10 s, detach\n"
	    "  vigil explain -f resumed.tq --sensors mailbox.vgl   the α operators, "
	    "before/after\n\n"
	    "exit status: the subject's (128+N when killed by signal N; 0 with --pid); 2 usage\n"
	    "error, errors in the statements (nothing is run) or a failed attach; 1 --replay of\n"
	    "a damaged trace.\n");
}

static int duration_arg(const char *opt, const char *text, int64_t *out)
{
	if (vgt_parse_duration(text, out) < 0 || *out < 1) {
		fprintf(stderr,
		        "vigil watch: %s: '%s' is not a positive duration (e.g. 1s, 10ms)\n", opt,
		        text);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct watch_args *a)
{
	static const struct option options[] = {{"execute", required_argument, NULL, 'e'},
	                                        {"file", required_argument, NULL, 'f'},
	                                        {"sensors", required_argument, NULL, 's'},
	                                        {"format", required_argument, NULL, 'F'},
	                                        {"unoptimized", no_argument, NULL, 'u'},
	                                        {"every", required_argument, NULL, 'E'},
	                                        {"keep", required_argument, NULL, 'k'},
	                                        {"replay", required_argument, NULL, 'r'},
	                                        {"pid", required_argument, NULL, 'p'},
	                                        {"for", required_argument, NULL, 'T'},
	                                        {"tick", required_argument, NULL, 't'},
	                                        {"stats", no_argument, NULL, 'S'},
	                                        {"display", required_argument, NULL, 'D'},
	                                        {"quiet", no_argument, NULL, 'q'},
	                                        {"help", no_argument, NULL, 'h'},
	                                        {"update-events", required_argument, NULL, 'U'},
	                                        {"lateness", required_argument, NULL, 'L'},
	                                        {0}};
	memset(a, 0, sizeof *a);
	a->tick = 1000000000;
	a->every = 200000000;
	a->lateness = 500000000;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:he:f:q", options, NULL)) != -1) {
		switch (c) {
		case 'e':
		case 'f':
			if (a->text_arg || a->file) {
				fprintf(stderr,
				        "vigil watch: give the statements once, with -e or -f\n");
				return -1;
			}
			*(c == 'e' ? &a->text_arg : &a->file) = optarg;
			break;
		case 's':
			a->sensors_file = optarg;
			break;
		case 'F':
			if (!strcmp(optarg, "text"))
				a->format = WATCH_TEXT;
			else if (!strcmp(optarg, "csv"))
				a->format = WATCH_CSV;
			else if (!strcmp(optarg, "json"))
				a->format = WATCH_JSON;
			else {
				fprintf(stderr,
				        "vigil watch: --format: '%s' is not text, csv or json\n",
				        optarg);
				return -1;
			}
			a->format_given = true;
			break;
		case 'u':
			a->unoptimized = true;
			break;
		case 'E':
			if (duration_arg("--every", optarg, &a->every) < 0)
				return -1;
			break;
		case 'k':
			a->keep = optarg;
			break;
		case 'r':
			a->replay = optarg;
			break;
		case 'p': {
			char *end;
			errno = 0;
			long pid = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || pid <= 0 || pid > INT32_MAX) {
				fprintf(stderr, "vigil watch: --pid: '%s' is not a process id\n",
				        optarg);
				return -1;
			}
			a->pid = (int)pid;
			break;
		}
		case 'T':
			if (duration_arg("--for", optarg, &a->attach_for) < 0)
				return -1;
			break;
		case 't':
			if (duration_arg("--tick", optarg, &a->tick) < 0)
				return -1;
			break;
		case 'S':
			a->stats = true;
			break;
		case 'L':
			if (duration_arg("--lateness", optarg, &a->lateness) < 0)
				return -1;
			break;
		case 'D':
			a->display = optarg;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'U': { /* hidden: tests and bench/ split a replay into updates */
			char *end;
			errno = 0;
			unsigned long long n = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || n == 0) {
				fprintf(
				    stderr,
				    "vigil watch: --update-events: '%s' is not a positive count\n",
				    optarg);
				return -1;
			}
			a->update_events = n;
			break;
		}
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "vigil watch: %s needs a value (see --help)\n",
			        argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "vigil watch: unknown option '%s' (see --help)\n",
			        argv[optind - 1]);
			return -1;
		}
	}
	if (!a->text_arg && !a->file) {
		fprintf(
		    stderr,
		    "vigil watch: no statements (give -e 'STATEMENTS' or -f FILE; see --help)\n");
		return -1;
	}
	if (a->attach_for && !a->pid) {
		fprintf(stderr, "vigil watch: --for goes with --pid\n");
		return -1;
	}
	if (a->pid) {
		if (a->replay || a->keep || optind < argc) {
			fprintf(stderr, "vigil watch: --pid attaches to a running process; no "
			                "COMMAND, --replay or --keep with it\n");
			return -1;
		}
		return 0;
	}
	if (a->replay) {
		if (optind < argc) {
			fprintf(stderr,
			        "vigil watch: --replay reads a recording; no COMMAND (got '%s')\n",
			        argv[optind]);
			return -1;
		}
		return 0;
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil watch: no command to run (vigil watch ... -- COMMAND)\n");
		return -1;
	}
	a->command = argv + optind; /* no --sensors: the description COMMAND carries */
	return 0;
}

void watch_print_stats(const char *mode, const struct vga_plan *plan,
                       const struct watch_answer *ans, uint64_t printed, const char *extra)
{
	fprintf(stderr,
	        "{\"watch\":{\"mode\":\"%s\",\"plan\":\"%s\",\"packets\":{\"asked\":%" PRIu64
	        ",\"extraneous\":%" PRIu64 ",\"sources\":%" PRIu64 ",\"earlier\":%" PRIu64
	        "},\"tuples\":%" PRIu64 ",\"alphas\":[",
	        mode, plan->optimized ? "optimized" : "unoptimized", ans->counts.kept,
	        ans->counts.extraneous, ans->counts.sources, ans->counts.earlier, printed);
	for (size_t i = 0; i < plan->n; i++) {
		const struct vga_alpha *al = &plan->alphas[i];
		static const char *const src[] = {"sensor", "all", "named", "trigger"};
		fprintf(stderr,
		        "%s{\"var\":\"%s\",\"relation\":\"%s\",\"line\":%u,\"source\":\"%s\","
		        "\"end_only\":%s,\"sample_every\":%" PRIu64 ",\"packets\":%" PRIu64 "}",
		        i ? "," : "", al->var, al->relation, al->line, src[al->source],
		        al->end_only ? "true" : "false", al->sample_every,
		        ans->per_alpha ? ans->per_alpha[i] : 0);
	}
	/* analyses run whole (or read from the cache): none for the derived relations a
	 * watch follows (relations/derived.h) */
	fprintf(stderr, "],\"analyses\":%zu%s}}\n", vgq_derived_analyses(), extra ? extra : "");
}

struct emit_ctx {
	struct watch_printer *pr;
	bool final;
	int64_t horizon;
	bool failed;
};

static int emit(void *p, const struct vgq_relation *r)
{
	struct emit_ctx *c = p;
	if (watch_print(c->pr, r, c->final, c->horizon) < 0) {
		fprintf(stderr, "vigil watch: writing the result: %s\n", strerror(errno));
		c->failed = true;
		return -1;
	}
	return 0;
}

int watch_answer(const char *path, const struct tquel_query *q, const struct vga_plan *plan,
                 const struct vgq_options *o, struct watch_printer *pr, bool final,
                 struct watch_answer *ans)
{
	char err[512];
	struct vgt_trace *tr = vgt_open(&path, 1, err, sizeof err);
	if (!tr || !vgt_any_readable(tr)) {
		if (tr)
			vgt_close(tr);
		if (final)
			fprintf(stderr, "vigil watch: %s\n",
			        tr ? "nothing readable was recorded" : err);
		return 1;
	}
	struct vga_filter *f = vga_filter_new(plan);
	vga_filter_since(f, ans->since);
	/* The clocks tick where the subjects were told to sample: the raw origin on the
	 * trace's absolute time (every image of a watched run shares one clock). */
	int64_t origin = INT64_MIN;
	if (ans->clock_origin && vgt_image_count(tr))
		origin = vgt_image_at(tr, 0)->clock_offset_ns + (int64_t)ans->clock_origin;
	vga_filter_clock(f, o->tick_ns > 0 ? o->tick_ns : 1000000000, origin);
	struct vgq_build_options bo = {.keep = vga_filter_keep,
	                               .keep_arg = f,
	                               .ends_without_begin = vga_plan_end_only(plan),
	                               .end_since = vga_filter_end_since,
	                               .max_events = ans->max_events};
	struct vgq_database *db = vgq_database_build_opts(tr, &bo);
	vgq_database_print_warnings(db, "vigil watch", stderr);
	if (origin != INT64_MIN)
		vgq_database_set_clock_origin(db, origin);
	struct vgq_session *s = vgq_session_new(db, o);
	if (db->events)
		watch_printer_origin(pr, db->first);
	struct emit_ctx ctx = {pr, final, db->last, false};
	/* A snapshot taken before the subject registered its sensors lacks their relations:
	 * it answers nothing yet. Only the final answer reports that as an error. */
	char *msgs = NULL;
	size_t msglen = 0;
	FILE *errs = final ? stderr : open_memstream(&msgs, &msglen);
	size_t errors = vgq_run(s, q, emit, &ctx, errs ? errs : stderr);
	if (errs && errs != stderr)
		fclose(errs);
	free(msgs);
	if (errors && final)
		fprintf(stderr, "vigil watch: the subject's trace lacks what the query needs (its "
		                "sensors were never registered?)\n");
	ans->counts = vga_filter_counts(f);
	free(ans->per_alpha);
	ans->per_alpha = calloc(plan->n + 1, sizeof *ans->per_alpha);
	if (ans->per_alpha)
		memcpy(ans->per_alpha, vga_filter_per_alpha(f), plan->n * sizeof *ans->per_alpha);
	ans->events = db->events;
	ans->first = db->first;
	ans->last = db->last;
	ans->partial = db->partial;
	vgq_session_free(s);
	vgq_database_free(db);
	vga_filter_free(f);
	vgt_close(tr);
	if (ctx.failed || (errors && final))
		return -1;
	return errors ? 1 : 0;
}

/* The first relation named `name` that q ranges over, or NULL. */
static const char *ranges_over(const struct tquel_query *q, const char *name)
{
	for (size_t i = 0; i < q->nstmts; i++)
		if (q->stmts[i].kind == TQ_RANGE && !strcasecmp(q->stmts[i].u.range.relation, name))
			return q->stmts[i].u.range.relation;
	return NULL;
}

/* The derived relations a watch cannot follow as asked: from an attach, what needs every
 * operation since the processes began; Network (given at the end by the update network
 * only) where the statements are re-evaluated, whose snapshots' networks are not final.
 * One line, and true. */
static bool refused_live(const struct tquel_query *q, const struct watch_args *a)
{
	static const struct {
		const char *relation, *why;
	} from_attach[] = {
	    /* locks held before the attach are unknown: edges would be missed */
	    {"WaitFor", "the wait-for graph needs every lock operation since the process began "
	                "(docs/tquel.md \"Derived relations\")"},
	    /* bytes sent before the attach are unknown: receives would match nothing */
	    {"Message", "matching messages and splitting networks need every send and receive "
	                "since the processes began (docs/watch.md \"Derived relations live\")"},
	    {"NetRunning", "splitting networks needs every send and receive since the processes "
	                   "began (docs/watch.md \"Derived relations live\")"},
	    {"NetWaiting", "splitting networks needs every send and receive since the processes "
	                   "began (docs/watch.md \"Derived relations live\")"},
	    {"Network", "splitting networks needs every send and receive since the processes "
	                "began (docs/watch.md \"Derived relations live\")"},
	};
	for (size_t i = 0; a->pid && i < sizeof from_attach / sizeof *from_attach; i++)
		if (ranges_over(q, from_attach[i].relation)) {
			fprintf(stderr,
			        "vigil watch: %s cannot be followed from an attach (--pid): %s\n",
			        ranges_over(q, from_attach[i].relation), from_attach[i].why);
			return true;
		}
	const char *net = ranges_over(q, "Network");
	char why[256] = "VIGIL_WATCH_REEVALUATE=1";
	const char *env = getenv("VIGIL_WATCH_REEVALUATE");
	if (net && ((env && !strcmp(env, "1")) || !vgq_delta_takes(q, why, sizeof why))) {
		fprintf(
		    stderr,
		    "vigil watch: %s is given at the end of the run by the update network, which "
		    "cannot answer these statements (%s); re-evaluated, a snapshot's networks "
		    "are not final (docs/watch.md \"Derived relations live\")\n",
		    net, why);
		return true;
	}
	return false;
}

int vg_cmd_watch(int argc, char **argv)
{
	struct watch_args a;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? 2 : 0;
	vgt_set_copy_streams(true); /* the trace may still be written (trace.h) */
	if (!a.format_given)
		a.format = isatty(STDOUT_FILENO) ? WATCH_TEXT : WATCH_JSON;
	struct tquel_query *q = vg_cli_statements("watch", a.text_arg, a.file);
	if (!q)
		return 2;

	/* The relations the statements are bound against, and the sensors behind them. */
	struct vgl_model *model = NULL;
	struct vgt_trace *tr = NULL;
	struct vgq_database *schema = NULL;
	struct vga_sensors sensors = {0};
	struct vgc_subject *attached = NULL;
	char err[512];
	rc = 2;
	if (refused_live(q, &a))
		goto out;
	if (a.pid && !(attached = vgc_attach(a.pid, err, sizeof err))) {
		fprintf(stderr, "vigil watch: %s\n", err);
		goto out;
	}
	if (a.sensors_file) {
		int nerr = 0;
		model = vgl_load(a.sensors_file, stderr, &nerr);
		if (!model)
			goto out;
		schema = vgq_database_from_model(model);
		vga_sensors_from_model(model, &sensors);
	} else if (a.command) {
		/* Without --sensors: the description the program carries (vigil gen --lang c). */
		int found;
		model = vg_cli_embedded_model("watch", a.command[0], &found);
		if (!model) {
			if (!found)
				fprintf(stderr,
				        "vigil watch: --sensors FILE.vgl is needed to know the "
				        "subject's "
				        "relations before it runs (%s carries no embedded sensor "
				        "description)\n",
				        a.command[0]);
			goto out;
		}
		schema = vgq_database_from_model(model);
		vga_sensors_from_model(model, &sensors);
	} else {
		/* Without a .vgl: the sensors a recording (or the attached process) registered. */
		const char *path = attached ? vgc_subject_image(attached) : a.replay;
		tr = vgt_open_readable(&path, 1, err, sizeof err);
		if (!tr) {
			fprintf(stderr, "vigil watch: %s\n", err);
			goto out;
		}
		vga_sensors_from_trace(tr, &sensors);
		schema = vgq_database_build(tr); /* its warnings: when the answer is read */
	}
	/* Message, followed live from vigil's own vg.net.* events whatever the sensors, and
	 * over a recording too: bound from its schema, its analysis never run at bind
	 * (relations/derived.h); the other analyses are refused at bind time, with why */
	vgq_derived_live_schemas(schema);
	struct vgq_options o = {.tick_ns = a.tick};
	struct vgq_session *s = vgq_session_new(schema, &o);
	size_t nerrors = 0;
	struct vga_plan *plan = vga_plan_new(s, q, &sensors, !a.unoptimized, stderr, &nerrors);
	/* --display: the display's needs join the plan; its answers are not printed */
	struct vgd_display *display = NULL;
	struct vgq_session *display_session = NULL;
	if (plan && a.display) {
		display = vgd_load(a.display, schema, stderr);
		struct vga_plan *dp = NULL;
		if (display) {
			display_session = vgq_session_new(schema, &o);
			dp = vgd_plan(display, display_session, &sensors, !a.unoptimized, stderr);
		}
		if (!dp) {
			fprintf(stderr,
			        "vigil watch: %s: not displayed (errors above); nothing run\n",
			        a.display);
			vga_plan_free(plan);
			plan = NULL;
		} else {
			vga_plan_append(plan, dp);
			vga_plan_free(dp);
		}
	}
	if (plan) {
		if (attached) {
			rc = watch_attach(&a, attached, q, plan, &o);
			attached = NULL; /* closed by watch_attach */
		} else {
			rc = a.replay ? watch_replay(&a, q, plan, &o) : watch_live(&a, q, plan, &o);
		}
		vga_plan_free(plan);
	}
	vgq_session_free(s); /* after the plan: its labels live in the session */
	if (display_session)
		vgq_session_free(display_session);
	vgd_free(display);
out:
	if (attached)
		vgc_subject_close(attached); /* nothing was enabled: the process is as before */
	vga_sensors_free(&sensors);
	vgq_database_free(schema);
	if (tr)
		vgt_close(tr);
	vgl_free(model);
	tquel_free(q);
	return rc;
}
