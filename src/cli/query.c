/* vigil query / vigil explain: TQuel over the relations of a trace (docs/query.md). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/query_need.h"
#include "cli/query_store.h"
#include "cli/statements.h"
#include "common/pool.h"
#include "lang/lang.h"
#include "live/alpha.h"
#include "query/engine.h"
#include "query/output.h"
#include "relations/build_phases.h"
#include "relations/cache.h"
#include "relations/derived.h"
#include "relations/relation.h"
#include "relations/spill.h"
#include "tquel/tquel.h"
#include "trace/source.h"

static void query_usage(FILE *f)
{
	fprintf(
	    f, "usage: vigil query TRACE (-e 'STATEMENTS' | -f FILE.tq) [--format table|csv|json]\n"
	       "                   [--into FILE.db] [--tick DURATION] [--stats] [--threads N]\n"
	       "       vigil query postgresql://... (-e ... | -f ...) [--schema NAME]\n"
	       "                   [--show-sql] [--tick DURATION] [--format table|csv|json]\n\n"
	       "Answers TQuel statements (range, retrieve; docs/tquel.md) over the historical\n"
	       "relations of a trace (vigil relations TRACE lists them) and prints the result\n"
	       "of every retrieve, in order.\n\n"
	       "options:\n"
	       "  -e, --execute TEXT   the statements\n"
	       "  -f, --file FILE      read the statements from FILE (errors cite its lines)\n"
	       "  --format FMT         table (the default on a terminal), csv, or json (one\n"
	       "                       object per tuple; the default otherwise)\n"
	       "  --into FILE.db       write each result into an SQLite table of its name, with\n"
	       "                       valid-time columns, instead of printing it\n"
	       "  --tick DURATION      the base tick of Clock (default 1s): 10us, 1ms, ...\n"
	       "  --stats              one JSON line of timings on stderr at the end\n"
	       "  --max-tuples N       stop a statement whose intermediate results exceed N\n"
	       "                       tuples (default: about 1 GiB of them), with an error\n"
	       "  --threads N          evaluate on N threads (default: VIGIL_THREADS, else the\n"
	       "                       machine's cores); the answers are the same at any N\n"
	       "  --schema NAME        postgresql://: the store's schema (default vigil)\n"
	       "  --show-sql           postgresql://: each statement's SQL on stderr first\n\n"
	       "With a postgresql:// URL instead of a TRACE, the statements are compiled to SQL\n"
	       "and run by PostgreSQL over the tables of vigil store (docs/tquel-sql.md);\n"
	       "retrieve into makes a table there.\n\n"
	       "examples:\n"
	       "  vigil query run1 -e 'range of W is Waiting retrieve (W.process, W.mailbox)'\n"
	       "  vigil query run1 -f resumed.tq --format csv > resumed.csv\n"
	       "  vigil query run1 --threads 1 -f resumed.tq\n"
	       "  vigil query run1 --tick 1ms -e 'range of R is RunningOn range of C is "
	       "Clock[10]\n"
	       "      retrieve (R.process, R.processor) when C overlap R'\n"
	       "  vigil query run1 -f q.tq --into results.db && sqlite3 results.db .tables\n"
	       "  vigil query postgresql://localhost/db --show-sql \\\n"
	       "      -e 'range of W is Waiting retrieve (W.process, W.mailbox)'\n\n"
	       "environment: VIGIL_THREADS=N as --threads N (decoding the trace too);\n"
	       "VIGIL_CACHE=off, VIGIL_CACHE_DIR=DIR: the relations cache, kept beside the trace\n"
	       "(TRACE/.vigil-cache) so that the next query starts at once (docs/query.md).\n\n"
	       "exit status: 0 answered; 1 answered from a damaged trace (damage on stderr);\n"
	       "2 usage error, unreadable trace, or errors in the statements.\n");
}

static void explain_usage(FILE *f)
{
	fprintf(
	    f, "usage: vigil explain (-e 'STATEMENTS' | -f FILE.tq) [--tick DURATION]\n"
	       "                     [--sensors FILE.vgl] [TRACE]\n"
	       "       vigil explain --analyze (-e 'STATEMENTS' | -f FILE.tq) [--threads N] TRACE\n"
	       "       vigil explain (-e ... | -f ...) postgresql://... [--schema NAME]\n\n"
	       "Prints each retrieve's temporal relational algebra before optimization (the\n"
	       "calculus as written: products, σ, σT, π, πT) and after (pushed-down selections,\n"
	       "hash joins, sweep-line overlap joins, semi-joins). With a TRACE, names and types\n"
	       "are checked against it. With a TRACE or a sensor description (--sensors), also\n"
	       "the sensor operators α that vigil watch sets up, before and after optimization:\n"
	       "which sensors each plan enables, and on which entities. With a postgresql://\n"
	       "URL: each retrieve's SQL and the plan PostgreSQL chooses for it (nothing is\n"
	       "written).\n\n"
	       "With --analyze, runs the statements over TRACE and prints each retrieve's\n"
	       "optimized plan with what each operator did: the bindings it returned, in how\n"
	       "many batches, the time spent in it (its inputs included, summed over threads),\n"
	       "and on how many threads it ran (--threads N: as vigil query's, default\n"
	       "VIGIL_THREADS, else the machine's cores).\n\n"
	       "examples:\n"
	       "  vigil explain -f resumed.tq\n"
	       "  vigil explain -e 'range of W is Waiting retrieve (W.process)' run1\n"
	       "  vigil explain -f resumed.tq --sensors examples/mailbox/mailbox.vgl\n"
	       "  vigil explain --analyze -e 'range of W is Waiting retrieve (W.process)' run1\n"
	       "  vigil explain --analyze --threads 2 -f resumed.tq run1\n");
}

struct args {
	const char *text_arg, *file, *into, *trace, *sensors, *schema;
	enum vgq_format format;
	bool format_given, stats, analyze, show_sql, threads_given;
	uint64_t max_tuples;
	unsigned threads;
	int64_t tick;
};

/* Parses the options shared by query and explain; returns -1 after printing the error,
 * 1 after --help, 0 to go on. */
static int parse_args(const char *cmd, bool explain, int argc, char **argv, struct args *a)
{
	static const struct option options[] = {{"execute", required_argument, NULL, 'e'},
	                                        {"file", required_argument, NULL, 'f'},
	                                        {"format", required_argument, NULL, 'F'},
	                                        {"into", required_argument, NULL, 'i'},
	                                        {"tick", required_argument, NULL, 't'},
	                                        {"stats", no_argument, NULL, 's'},
	                                        {"max-tuples", required_argument, NULL, 'm'},
	                                        {"sensors", required_argument, NULL, 'V'},
	                                        {"analyze", no_argument, NULL, 'A'},
	                                        {"schema", required_argument, NULL, 'S'},
	                                        {"show-sql", no_argument, NULL, 'Q'},
	                                        {"threads", required_argument, NULL, 'T'},
	                                        {"help", no_argument, NULL, 'h'},
	                                        {0}};
	memset(a, 0, sizeof *a);
	a->tick = 1000000000;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":he:f:", options, NULL)) != -1) {
		switch (c) {
		case 'e':
		case 'f':
			if (a->text_arg || a->file) {
				fprintf(stderr,
				        "vigil %s: give the statements once, with -e or -f\n", cmd);
				return -1;
			}
			*(c == 'e' ? &a->text_arg : &a->file) = optarg;
			break;
		case 'F':
			if (explain)
				goto unknown;
			if (!strcmp(optarg, "table"))
				a->format = VGQ_FORMAT_TABLE;
			else if (!strcmp(optarg, "csv"))
				a->format = VGQ_FORMAT_CSV;
			else if (!strcmp(optarg, "json"))
				a->format = VGQ_FORMAT_JSON;
			else {
				fprintf(stderr,
				        "vigil %s: --format: '%s' is not table, csv or json\n", cmd,
				        optarg);
				return -1;
			}
			a->format_given = true;
			break;
		case 'i':
			if (explain)
				goto unknown;
			a->into = optarg;
			break;
		case 't':
			if (vgt_parse_duration(optarg, &a->tick) < 0 || a->tick < 1) {
				fprintf(stderr,
				        "vigil %s: --tick: '%s' is not a positive duration (e.g. "
				        "1s, 10ms)\n",
				        cmd, optarg);
				return -1;
			}
			break;
		case 's':
			if (explain)
				goto unknown;
			a->stats = true;
			break;
		case 'm': {
			if (explain)
				goto unknown;
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v == 0 || optarg[0] == '-') {
				fprintf(stderr,
				        "vigil %s: --max-tuples: '%s' is not a positive integer\n",
				        cmd, optarg);
				return -1;
			}
			a->max_tuples = v;
			break;
		}
		case 'V':
			if (!explain)
				goto unknown;
			a->sensors = optarg;
			break;
		case 'A':
			if (!explain)
				goto unknown;
			a->analyze = true;
			break;
		case 'S':
			a->schema = optarg;
			break;
		case 'Q':
			if (explain)
				goto unknown;
			a->show_sql = true;
			break;
		case 'T':
			if (vg_threads_parse(optarg, &a->threads) < 0) {
				fprintf(
				    stderr,
				    "vigil %s: --threads: '%s' is not a number of threads from 1 "
				    "to %d\n",
				    cmd, optarg, VG_THREADS_MAX);
				return -1;
			}
			a->threads_given = true;
			break;
		case 'h':
			(explain ? explain_usage : query_usage)(stdout);
			return 1;
		case ':':
			fprintf(stderr, "vigil %s: %s needs a value (see --help)\n", cmd,
			        argv[optind - 1]);
			return -1;
		default:
		unknown:
			fprintf(stderr, "vigil %s: unknown option '%s' (see --help)\n", cmd,
			        argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc)
		a->trace = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "vigil %s: unexpected argument '%s' (one trace; see --help)\n", cmd,
		        argv[optind]);
		return -1;
	}
	if (!a->threads_given)
		a->threads = vg_threads_default();
	if (!a->text_arg && !a->file) {
		fprintf(stderr,
		        "vigil %s: no statements (give -e 'STATEMENTS' or -f FILE; see --help)\n",
		        cmd);
		return -1;
	}
	if (!explain && !a->trace) {
		fprintf(stderr, "vigil query: no trace given (usage: vigil query TRACE -e ...)\n");
		return -1;
	}
	if (a->analyze && (!a->trace || a->sensors)) {
		fprintf(stderr, "vigil explain: --analyze runs the statements: give a TRACE (and "
		                "no --sensors)\n");
		return -1;
	}
	bool store = vg_is_store_url(a->trace);
	/* options of one kind of source only (over a store, retrieve into makes tables) */
	const char *bad = store && a->into            ? "--into"
	                  : store && a->stats         ? "--stats"
	                  : store && a->max_tuples    ? "--max-tuples"
	                  : store && a->sensors       ? "--sensors"
	                  : store && a->analyze       ? "--analyze"
	                  : store && a->threads_given ? "--threads"
	                  : !store && a->schema       ? "--schema"
	                  : !store && a->show_sql     ? "--show-sql"
	                                              : NULL;
	if (bad) {
		fprintf(stderr, "vigil %s: %s goes with %s only\n", cmd, bad,
		        store ? "a trace" : "a postgresql:// URL");
		return -1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Opens the trace and its database, from the relations cache when one fits; NULL after
 * printing the error. */
static struct vgq_database *open_db(const char *cmd, const char *path, unsigned threads,
                                    struct vgt_trace **tr, bool progress,
                                    const struct tquel_query *q, struct vgq_cache_result *cache)
{
	char err[512];
	*tr = vgt_open_readable(&path, 1, err, sizeof err);
	if (!*tr) {
		fprintf(stderr, "vigil %s: %s\n", cmd, err);
		return NULL;
	}
	if (progress)
		fprintf(stderr, "vigil %s: reading %s ...\r", cmd, path);
	char who[32];
	snprintf(who, sizeof who, "vigil %s", cmd);
	struct vg_query_need need;
	vg_query_need(q, &need);
	struct vgq_cache_request rq;
	vg_query_need_request(&need, path, who, &rq);
	vgt_set_decode_threads(threads); /* --threads, else VIGIL_THREADS, else the cores */
	struct vgq_database *db = vgq_database_cached(*tr, &rq, cache);
	vg_query_need_free(&need);
	if (progress)
		fprintf(stderr, "\033[K");
	vgq_database_print_warnings(db, who, stderr);
	return db;
}

struct emit_ctx {
	const struct args *a;
	struct vgq_sqlite *sql;
	struct vgq_output_opts out;
	size_t written;
	int failed;
};

static int emit(void *p, const struct vgq_relation *r)
{
	struct emit_ctx *c = p;
	if (c->sql) {
		char err[512];
		if (vgq_sqlite_write(c->sql, r, err, sizeof err) < 0) {
			fprintf(stderr, "vigil query: %s\n", err);
			c->failed = 1;
			return -1;
		}
		fprintf(stderr, "vigil query: %s: %zu tuple%s into table %s\n", c->a->into,
		        r->ntuples, r->ntuples == 1 ? "" : "s", r->name);
		return 0;
	}
	if (c->written++ && c->a->format != VGQ_FORMAT_JSON && putchar('\n') == EOF)
		c->failed = 1;
	if (c->failed || vgq_write_relation(stdout, r, c->a->format, &c->out) < 0) {
		fprintf(stderr, "vigil query: writing the result: %s\n", strerror(errno));
		c->failed = 1;
		return -1;
	}
	return 0;
}

/* Peak resident memory of this process in KiB: the kernel's high-water mark of its
 * memory (VmHWM), which starts anew at exec; getrusage's ru_maxrss if there is none
 * (that one keeps the parent's peak across fork and exec: a vigil started by a large
 * process would report the parent's size). */
static long max_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	struct rusage ru;
	if (kb < 0 && getrusage(RUSAGE_SELF, &ru) == 0)
		kb = ru.ru_maxrss;
	return kb;
}

static void print_stats(const struct vgq_session *s, const struct vgq_database *db,
                        uint64_t build_ns, const struct vgq_cache_result *cache)
{
	size_t n;
	const struct vgq_stat *st = vgq_session_stats(s, &n);
	const struct vgq_skip_stats *k = &db->skipped;
	struct vgq_spill_stats sp = vgq_spill_stats();
	fprintf(stderr,
	        "{\"stats\":{\"events\":%" PRIu64 ",\"build_ns\":%" PRIu64
	        ",\"cache\":\"%s\",\"cache_write_ns\":%" PRIu64 ",\"cache_checked_bytes\":%" PRIu64
	        ",\"cache_copied_bytes\":%" PRIu64 ",\"derived_cached\":%zu,\"max_rss_kb\":%ld"
	        ",\"build_memory\":%zu,\"query_memory\":%zu,\"spilled_bytes\":%" PRIu64
	        ",\"spilled_columns\":%" PRIu64 ",\"spill_trims\":%" PRIu64 ","
	        "\"skip\":{\"keyed\":%zu,\"bounded\":%zu,\"packets\":%" PRIu64
	        ",\"packets_read\":%" PRIu64 ",\"events\":%" PRIu64 ",\"packets_skipped\":%" PRIu64
	        ",\"events_skipped\":%" PRIu64 ",\"packets_positioned\":%" PRIu64
	        "},\"statements\":[",
	        db->events, build_ns, vgq_cache_outcome_name(cache->outcome), cache->write_ns,
	        vgq_cache_checked_bytes(), vgq_cache_copied_bytes(), vgq_derived_cached(db),
	        max_rss_kb(), vgq_spill_budget(), vgq_query_memory(), sp.bytes, sp.columns,
	        sp.trims, k->nkeyed, k->nbounded, k->packets, k->packets_read, k->events,
	        k->packets_skipped, k->events_skipped, k->packets_positioned);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr,
		        "%s{\"line\":%u,\"relation\":\"%s\",\"tuples\":%" PRIu64
		        ",\"exec_ns\":%" PRIu64 ",\"exec_cpu_ns\":%" PRIu64
		        ",\"peak_state\":%" PRIu64 ",\"peak_memory\":%" PRIu64
		        ",\"spilled_memory\":%" PRIu64 ",\"spill_partitions\":%" PRIu32
		        ",\"spill_written\":%" PRIu64 ",\"spill_depth\":%" PRIu32 "}",
		        i ? "," : "", st[i].line, st[i].relation, st[i].tuples, st[i].exec_ns,
		        st[i].exec_cpu_ns, st[i].peak_state, st[i].peak_memory,
		        st[i].spilled_memory, st[i].spill_partitions, st[i].spill_written,
		        st[i].spill_depth);
	fprintf(stderr, "],");
	vgq_phases_json(stderr);
	fprintf(stderr, "}}\n");
}

int vg_cmd_query(int argc, char **argv)
{
	struct args a;
	int rc = parse_args("query", false, argc, argv, &a);
	if (rc)
		return rc < 0 ? 2 : 0;
	if (!a.format_given)
		a.format = isatty(STDOUT_FILENO) ? VGQ_FORMAT_TABLE : VGQ_FORMAT_JSON;
	struct tquel_query *q = vg_cli_statements("query", a.text_arg, a.file);
	if (!q)
		return 2;
	if (vg_is_store_url(a.trace)) {
		struct vg_store_query sq = {.cmd = "query",
		                            .url = a.trace,
		                            .schema = a.schema,
		                            .q = q,
		                            .format = a.format,
		                            .show_sql = a.show_sql,
		                            .tick_ns = a.tick};
		rc = vg_query_store(&sq);
		tquel_free(q);
		return rc;
	}
	bool progress = isatty(STDERR_FILENO);
	struct vgt_trace *tr;
	uint64_t t0 = now_ns();
	struct vgq_cache_result cache;
	struct vgq_database *db = open_db("query", a.trace, a.threads, &tr, progress, q, &cache);
	if (!db) {
		tquel_free(q);
		return 2;
	}
	uint64_t build_ns = now_ns() - t0;
	struct vgq_options o = {
	    .tick_ns = a.tick, .max_bindings = a.max_tuples, .threads = a.threads};
	struct vgq_session *s = vgq_session_new(db, &o);
	struct emit_ctx ctx = {.a = &a, .out = {.origin = db->first}};
	char err[512];
	if (a.into && !(ctx.sql = vgq_sqlite_open(a.into, err, sizeof err))) {
		fprintf(stderr, "vigil query: %s\n", err);
		rc = 2;
	} else {
		size_t errors = vgq_run(s, q, emit, &ctx, stderr);
		if (errors)
			rc = 2;
		else if (ctx.failed)
			rc = 2;
		if (ctx.sql && vgq_sqlite_close(ctx.sql, err, sizeof err) < 0) {
			fprintf(stderr, "vigil query: %s\n", err);
			rc = 2;
		}
		if (a.stats && !errors)
			print_stats(s, db, build_ns, &cache);
	}
	if (!rc && db->partial) {
		fprintf(stderr,
		        "vigil query: %s: %" PRIu64
		        " damaged place%s; answered from what was readable "
		        "(vigil dump lists the places)\n",
		        a.trace, db->damage, db->damage == 1 ? "" : "s");
		rc = 1;
	}
	vgq_session_free(s);
	vgq_database_free(db);
	vgt_close(tr);
	tquel_free(q);
	return rc;
}

/* What the build passed over for the statements' time bounds and key selections (docs/query.md "How
 * selections reach decoding"). */
static void print_skipped(const struct vgq_skip_stats *k)
{
	printf("\nbuild: %zu event relation%s bounded in time; %" PRIu64 " of %" PRIu64
	       " packets wholly outside the bounds; %" PRIu64
	       " events outside them passed over (headers read, payloads not decoded); %zu "
	       "event relation%s selected by key (other tuples not built); %" PRIu64
	       " packets passed over whole by their summaries, %" PRIu64
	       " read by their positions (%" PRIu64 " events not decoded)\n",
	       k->nbounded, k->nbounded == 1 ? "" : "s", k->packets, k->packets_read, k->events,
	       k->nkeyed, k->nkeyed == 1 ? "" : "s", k->packets_skipped, k->packets_positioned,
	       k->events_skipped);
}

/* The α operators of both plans, when the sensors behind the relations are known. */
static size_t explain_sensors(const struct tquel_query *q, struct vgq_database *db,
                              const struct vga_sensors *sensors, const struct vgq_options *o)
{
	for (int optimize = 0; optimize < 2; optimize++) {
		struct vgq_session *s = vgq_session_new(db, o);
		size_t errors = 0;
		struct vga_plan *p = vga_plan_new(s, q, sensors, optimize, stderr, &errors);
		if (!p) {
			vgq_session_free(s);
			return errors ? errors : 1;
		}
		fputc('\n', stdout);
		vga_print(p, stdout); /* its labels live in the session */
		vga_plan_free(p);
		vgq_session_free(s);
	}
	return 0;
}

int vg_cmd_explain(int argc, char **argv)
{
	struct args a;
	int rc = parse_args("explain", true, argc, argv, &a);
	if (rc)
		return rc < 0 ? 2 : 0;
	struct tquel_query *q = vg_cli_statements("explain", a.text_arg, a.file);
	if (!q)
		return 2;
	if (vg_is_store_url(a.trace)) {
		struct vg_store_query sq = {.cmd = "explain",
		                            .url = a.trace,
		                            .schema = a.schema,
		                            .q = q,
		                            .explain = true,
		                            .tick_ns = a.tick};
		rc = vg_query_store(&sq);
		tquel_free(q);
		return rc;
	}
	struct vgt_trace *tr = NULL;
	struct vgq_database *db = NULL;
	struct vgl_model *model = NULL;
	struct vga_sensors sensors = {0};
	bool have_sensors = false;
	size_t errors = 1;
	if (a.sensors) {
		int nerr = 0;
		if (!(model = vgl_load(a.sensors, stderr, &nerr)))
			goto out;
		vga_sensors_from_model(model, &sensors);
		have_sensors = true;
	}
	if (a.trace) {
		struct vgq_cache_result cache;
		if (!(db = open_db("explain", a.trace, a.threads, &tr, false, q, &cache)))
			goto out;
		if (!have_sensors)
			vga_sensors_from_trace(tr, &sensors);
		have_sensors = true;
	} else if (model) {
		db = vgq_database_from_model(model);
	}
	/* workers only for a run */
	struct vgq_options o = {.tick_ns = a.tick, .threads = a.analyze ? a.threads : 1};
	struct vgq_session *s = vgq_session_new(db, &o);
	if (a.analyze) {
		vgq_session_analyze(s, stdout);
		errors = vgq_run(s, q, NULL, NULL, stderr);
		if (!errors && (db->skipped.nbounded || db->skipped.nkeyed))
			print_skipped(&db->skipped);
		vgq_session_free(s);
		goto out;
	}
	errors = vgq_explain(s, q, stdout, stderr);
	vgq_session_free(s);
	if (!errors && have_sensors)
		errors = explain_sensors(q, db, &sensors, &o);
out:
	vga_sensors_free(&sensors);
	vgq_database_free(db);
	if (tr)
		vgt_close(tr);
	vgl_free(model);
	tquel_free(q);
	return errors ? 2 : 0;
}
