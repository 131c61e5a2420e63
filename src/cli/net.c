/* vigil net: interaction networks (docs/net.md "Analysis"): `split` cuts the traces of
 * all hosts into one network per input, `report` gives their figures, `render` draws
 * one. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bad_option.h"
#include "base/file_io.h"
#include "commands.h"
#include "common/out_file.h"
#include "format_opt.h"
#include "net/net.h"
#include "net_export.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: vigil net split TRACE... -o DIR [options]\n"
	        "       vigil net report DIR|NET.json [--json|--format text|json] [--threads]\n"
	        "       vigil net render NET.json (--svg FILE | --format svg|dot [-o FILE])\n"
	        "       vigil net export DIR|NET.json --format otlp -o FILE\n\n"
	        "An interaction network is everything one input caused: every thread that ran\n"
	        "and every message that flowed because of it, across threads, processes and\n"
	        "machines (docs/net.md). Give each host's trace (vigil record -o DIR on each).\n\n"
	        "split   matches sends to receives (connection endpoints and byte ranges, or\n"
	        "        explicit message ids), corrects clocks (as 'vigil clock'), finds the\n"
	        "        inputs and propagates interactions; writes DIR/net-NNNNN.json per input\n"
	        "        and DIR/index.json (networks, clocks, every unmatched send/receive).\n"
	        "  -o, --output DIR     where to write (created if missing)\n"
	        "  --inputs LIST        what starts an interaction, comma-separated among\n"
	        "                       instrumented (vg_interaction_begin), tty, stdin (reads\n"
	        "                       from them), accept (bytes on an accepted connection\n"
	        "                       from no recorded sender), connect (a request sent on a\n"
	        "                       connection the process opened by a thread serving no\n"
	        "                       interaction: a client's loop); default: all\n"
	        "  --per UNIT           what one input of a client is: connection (all its\n"
	        "                       requests on one connection), exchange (each request\n"
	        "                       after a reply: clients that keep a connection for\n"
	        "                       many user requests), process (all a client process\n"
	        "                       run asks); default: connection for recorded clients,\n"
	        "                       exchange for requests from clients not recorded\n"
	        "  --reference HOST     the clock kept (default: the best connected host)\n"
	        "  --clock FILE         clock correction from 'vigil clock --json'\n"
	        "  --json               the index on stdout too\n"
	        "  --pairs              every matched pair in DIR/pairs.json (with where the\n"
	        "                       bytes they share begin in the send and the receive)\n\n"
	        "report  per network: response time, threads, processes, machines, messages,\n"
	        "        request/reply pairs, bytes, unmatched; time per thread running and\n"
	        "        waiting (waiting: from a thread's previous event to the arrival of a\n"
	        "        message from another thread it received); over several networks:\n"
	        "        response-time percentiles and the most frequent server sequences.\n"
	        "  --threads            the per-thread table of every network (default: only\n"
	        "                       when one network is given)\n"
	        "  --json               one JSON object on stdout (also --format json)\n\n"
	        "render  one column per thread (host/pid/tid, program), time downwards in\n"
	        "        proportion, vertical edges for thread execution, slanted ones for\n"
	        "        messages; one colour per machine, black for messages between machines.\n"
	        "  --svg FILE           write SVG to FILE\n"
	        "  --format svg|dot     format (default svg); -o FILE (default: stdout)\n\n"
	        "export  OpenTelemetry traces as OTLP/JSON (docs/export.md): one trace per\n"
	        "        network (its W3C trace-id when the input carried one), a span per\n"
	        "        thread run and per request/reply pair (client and server), a link\n"
	        "        per message; resources: host, process id, program.\n"
	        "  --format otlp        the format (required); -o FILE ('-': stdout)\n\n"
	        "exit status: 0 done; 1 done with a problem, results written (no input found,\n"
	        "no message between the hosts, clocks not reconciled, a trace unreadable);\n"
	        "2 bad input, nothing written.\n\n"
	        "examples:\n"
	        "  vigil record -o a -- ./front & vigil record -o b -- ./back & ...\n"
	        "  vigil net split a b c -o nets\n"
	        "  vigil net split --inputs instrumented a b -o nets\n"
	        "  vigil net report nets\n"
	        "  vigil net report --json nets | jq .summary.response_ms\n"
	        "  vigil net render nets/net-00001.json --svg n1.svg\n"
	        "  vigil net render nets/net-00001.json --format dot | dot -Tpng > n1.png\n"
	        "  vigil net export nets --format otlp -o nets.otlp.json\n");
}

static void warn(void *ctx, const char *line)
{
	fprintf(stderr, "vigil net %s: %s\n", (const char *)ctx, line);
}

static void progress(const char *line)
{
	fprintf(stderr, "vigil net: %s\n", line);
}

/* A send or receive, for the lists of index.json. */
static json_t *event_json(const struct vgn_set *s, const struct vgn_split *sp, uint32_t ev)
{
	const struct vgn_event *e = &s->events[ev];
	const struct vgn_thread *th = &s->threads[e->thread];
	const struct vgn_proc *pr = &s->procs[th->proc];
	const struct vgn_conn *cn = vgn_event_conn(s, ev);
	json_t *o = json_pack(
	    "{s:s,s:s,s:I,s:I,s:s,s:I,s:I,s:I,s:s,s:I}", "kind", vgn_kind_name(e->kind), "host",
	    s->hosts[pr->host].name, "pid", (json_int_t)pr->pid, "tid", (json_int_t)th->tid,
	    "program", e->program, "ts", (json_int_t)e->cts, "off", (json_int_t)e->off, "len",
	    (json_int_t)e->len, "trace", e->trace, "offset", (json_int_t)e->offset);
	if (!o)
		return json_null();
	if (cn) {
		json_object_set_new(o, "conn_kind", json_string(cn->kind));
		json_object_set_new(o, "local", json_string(cn->local));
		json_object_set_new(o, "remote", json_string(cn->remote));
	}
	if (e->msg)
		json_object_set_new(o, "msg", json_integer((json_int_t)e->msg));
	json_object_set_new(o, "fd", json_integer(e->fd));
	json_object_set_new(o, "network",
	                    sp->net_of[ev] == VGN_NONE
	                        ? json_null()
	                        : json_integer((json_int_t)sp->net_of[ev] + 1));
	return o;
}

/* Networks compact (there may be many), the index indented. */
static int write_json(json_t *j, const char *path, size_t flags)
{
	struct vg_out o;
	char err[4200];
	int rc = vg_out_open(&o, path, err, sizeof err);
	if (rc == 0 && json_dumpf(j, o.f, flags) < 0) {
		snprintf(err, sizeof err, "%s: %s", path, strerror(errno ? errno : EIO));
		vg_out_abort(&o);
		rc = -1;
	} else if (rc == 0) {
		rc = vg_out_commit(&o, err, sizeof err);
	}
	if (rc < 0)
		fprintf(stderr, "vigil net split: cannot write %s\n", err);
	return rc;
}

/* --pairs: every matched pair, with where the bytes they share begin in each (for
 * checking a match against the bytes a program wrote and read). */
static int write_pairs(const struct vgn_set *s, const struct vgn_split *sp, const char *dir)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->nmsgs; i++) {
		const struct vgn_msg *m = &s->msgs[i];
		json_array_append_new(
		    a, json_pack("{s:o,s:o,s:I,s:I,s:I,s:b}", "send", event_json(s, sp, m->send),
		                 "recv", event_json(s, sp, m->recv), "bytes", (json_int_t)m->bytes,
		                 "send_at", (json_int_t)m->send_at, "recv_at",
		                 (json_int_t)m->recv_at, "explicit", m->explicit_id));
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/pairs.json", dir);
	int rc = write_json(a, path, JSON_COMPACT);
	json_decref(a);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_split(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_INPUTS, OPT_REF, OPT_CLOCK, OPT_PAIRS, OPT_PER };
	static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
	                                         {"inputs", required_argument, NULL, OPT_INPUTS},
	                                         {"per", required_argument, NULL, OPT_PER},
	                                         {"reference", required_argument, NULL, OPT_REF},
	                                         {"clock", required_argument, NULL, OPT_CLOCK},
	                                         {"json", no_argument, NULL, OPT_JSON},
	                                         {"pairs", no_argument, NULL, OPT_PAIRS},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	const char *dir = NULL, *ref = NULL, *clock_file = NULL;
	unsigned mask = VGN_IN_ALL, per = 0; /* 0: vgn_split_run's default */
	bool json = false, pairs = false;
	char err[1024];
	optind = 0;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1;) {
		switch (c) {
		case 'o':
			dir = optarg;
			break;
		case OPT_INPUTS:
			if (vgn_inputs_parse(optarg, &mask, err, sizeof err) < 0) {
				fprintf(stderr, "vigil net split: --inputs %s: %s\n", optarg, err);
				return 2;
			}
			break;
		case OPT_PER:
			if (vgn_per_parse(optarg, &per, err, sizeof err) < 0) {
				fprintf(stderr, "vigil net split: --per %s: %s\n", optarg, err);
				return 2;
			}
			break;
		case OPT_REF:
			ref = optarg;
			break;
		case OPT_CLOCK:
			clock_file = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_PAIRS:
			pairs = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("net split", argv);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil net split: no trace given (see 'vigil net --help')\n");
		return 2;
	}
	if (!dir) {
		fprintf(stderr, "vigil net split: no output directory (-o DIR)\n");
		return 2;
	}
	double t_start = now_s();
	struct vgn_session ss = {.warn = warn, .ctx = "split", .progress = progress};
	if (vgn_session_open(&ss, (const char *const *)argv + optind, (size_t)(argc - optind), ref,
	                     clock_file, err, sizeof err) < 0) {
		fprintf(stderr, "vigil net split: %s\n", err);
		vgn_session_close(&ss);
		return 2;
	}
	if (vgb_mkdirs(dir, 0777) < 0) {
		fprintf(stderr, "vigil net split: cannot create %s: %s\n", dir, strerror(errno));
		vgn_session_close(&ss);
		return 2;
	}
	const struct vgn_set *s = ss.set;
	struct vgn_split sp;
	vgn_split_run(s, mask | per, &sp);
	double t_split = now_s();
	int rc = 0;
	json_t *nets = json_array();
	char path[4096];
	for (size_t n = 0; n < sp.nnets; n++) {
		struct vgn_graph *g = vgn_graph_build(s, &sp, n);
		if (!g) {
			fprintf(stderr, "vigil net split: out of memory\n");
			rc = 2;
			break;
		}
		json_t *j = vgn_graph_to_json(g);
		snprintf(path, sizeof path, "%s/net-%05zu.json", dir, n + 1);
		if (write_json(j, path, JSON_COMPACT) < 0) {
			json_decref(j);
			vgn_graph_free(g);
			rc = 2;
			break;
		}
		const struct vgn_event *in = &s->events[sp.inputs[n]];
		const struct vgn_thread *th = &s->threads[in->thread];
		struct vgn_stats gst;
		vgn_stats_compute(g, &gst);
		size_t nmsg = gst.messages;
		vgn_stats_free(&gst);
		char file[64];
		snprintf(file, sizeof file, "net-%05zu.json", n + 1);
		json_t *o = json_pack(
		    "{s:I,s:s,s:s,s:s,s:I,s:I,s:s,s:I,s:O,s:I,s:I,s:I}", "network",
		    (json_int_t)n + 1, "file", file, "input", vgn_input_kind(s, sp.inputs[n]),
		    "host", s->hosts[s->procs[th->proc].host].name, "pid",
		    (json_int_t)s->procs[th->proc].pid, "tid", (json_int_t)th->tid, "program",
		    in->program, "start_ns", (json_int_t)in->cts, "response_ns",
		    json_object_get(j, "response_ns"), "threads", (json_int_t)g->nthreads,
		    "vertices", (json_int_t)g->nvertices, "messages", (json_int_t)nmsg);
		if (o && *in->text)
			json_object_set_new(o, "what", json_string(in->text));
		if (o && g->iid[0])
			json_object_set_new(o, "iid", json_string(g->iid));
		json_array_append_new(nets, o ? o : json_null());
		json_decref(j);
		vgn_graph_free(g);
		if ((n + 1) % 10000 == 0)
			fprintf(stderr, "vigil net split: %zu/%zu networks written\n", n + 1,
			        sp.nnets);
	}
	json_t *unmatched = json_array();
	uint64_t nunmatched = 0;
	for (size_t e = 0; e < s->nevents; e++) {
		int k = s->events[e].kind;
		if ((k == VGN_SEND || k == VGN_RECV) && !s->nmatch[e]) {
			json_array_append_new(unmatched, event_json(s, &sp, (uint32_t)e));
			nunmatched++;
		}
	}
	/* messages received before they were sent, even after clock correction: the first
	 * 100, to look at (a clock that jumped, or bytes matched wrongly) */
	json_t *back = json_array();
	for (size_t i = 0, shown = 0; i < s->nmsgs && shown < 100; i++) {
		const struct vgn_msg *m = &s->msgs[i];
		if (s->events[m->recv].cts >= s->events[m->send].cts)
			continue;
		json_array_append_new(
		    back, json_pack("{s:o,s:o,s:I}", "send", event_json(s, &sp, m->send), "recv",
		                    event_json(s, &sp, m->recv), "bytes", (json_int_t)m->bytes));
		shown++;
	}
	json_t *traces = json_array();
	for (int i = optind; i < argc; i++)
		json_array_append_new(traces, json_string(argv[i]));
	json_t *clock = vgn_clock_to_json(s, &ss.clock);
	json_t *index = json_pack(
	    "{s:o,s:o,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I},s:I,s:I,s:I,s:b,s:o,s:o,s:o,"
	    "s:{s:I,s:I,s:I}}",
	    "traces", traces, "clock", clock, "events", (json_int_t)ss.load.events,
	    "structural_events", (json_int_t)s->nevents, "networks_count", (json_int_t)sp.nnets,
	    "messages", "sends", (json_int_t)ss.match.sends, "recvs", (json_int_t)ss.match.recvs,
	    "matched_sends", (json_int_t)ss.match.matched_sends, "matched_recvs",
	    (json_int_t)ss.match.matched_recvs, "pairs", (json_int_t)ss.match.pairs,
	    "cross_host_pairs", (json_int_t)ss.match.cross_host_pairs, "outside_events",
	    (json_int_t)sp.outside, "backwards", (json_int_t)ss.backwards, "forced",
	    (json_int_t)sp.forced, "unrelated", ss.unrelated, "networks", nets, "unmatched",
	    unmatched, "backwards_list", back, "unfollowed", "scanf",
	    (json_int_t)ss.load.unfollowed_scanf, "io_uring",
	    (json_int_t)ss.load.unfollowed_io_uring, "exec_static",
	    (json_int_t)ss.load.unfollowed_static);
	if (index) {
		json_t *m = json_object_get(index, "messages");
		json_object_set_new(m, "refused", json_integer((json_int_t)ss.match.refused));
		json_object_set_new(m, "shared_channels",
		                    json_integer((json_int_t)ss.match.shared_channels));
	}
	if (pairs && write_pairs(s, &sp, dir) < 0)
		rc = 2;
	snprintf(path, sizeof path, "%s/index.json", dir);
	if (index && write_json(index, path, JSON_INDENT(1)) < 0)
		rc = 2;
	if (json && index) {
		json_dumpf(index, stdout, JSON_INDENT(1));
		fputc('\n', stdout);
	}
	json_decref(index);
	double t_end = now_s();
	fprintf(stderr,
	        "vigil net split: %zu networks from %llu structural events (%zu host%s, %zu "
	        "thread%s); %llu messages matched (%llu between hosts), %llu sends and receives "
	        "unmatched, %llu events in no network; %.2f s (split %.2f s) -> %s\n",
	        sp.nnets, (unsigned long long)s->nevents, s->nhosts, s->nhosts == 1 ? "" : "s",
	        s->nthreads, s->nthreads == 1 ? "" : "s", (unsigned long long)ss.match.pairs,
	        (unsigned long long)ss.match.cross_host_pairs, (unsigned long long)nunmatched,
	        (unsigned long long)sp.outside, t_end - t_start, t_split - t_start, dir);
	if (ss.load.unfollowed_scanf + ss.load.unfollowed_io_uring + ss.load.unfollowed_static)
		fprintf(
		    stderr,
		    "vigil net split: bytes not followed (vg.net.unfollowed, docs/net.md): %llu "
		    "scanf refills, %llu io_uring submissions, %llu statically linked programs "
		    "run\n",
		    (unsigned long long)ss.load.unfollowed_scanf,
		    (unsigned long long)ss.load.unfollowed_io_uring,
		    (unsigned long long)ss.load.unfollowed_static);
	if (!sp.nnets) {
		fprintf(stderr,
		        "vigil net split: no input found in the traces (--inputs: none of "
		        "vg_interaction_begin, tty or stdin reads, requests from unrecorded "
		        "peers); %s/index.json lists what was recorded\n",
		        dir);
		if (!rc)
			rc = 1;
	}
	if (ss.backwards)
		fprintf(stderr,
		        "vigil net split: %llu messages are still received before they are sent "
		        "after clock correction\n",
		        (unsigned long long)ss.backwards);
	if (sp.forced)
		fprintf(stderr,
		        "vigil net split: %llu events taken out of order (matches that contradict "
		        "each other)\n",
		        (unsigned long long)sp.forced);
	if (!rc && (ss.unrelated || ss.crossed || ss.skipped))
		rc = 1;
	vgn_split_free(&sp);
	vgn_session_close(&ss);
	return rc;
}

/* ---- report ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The network files of a DIR (from its index.json, else net-*.json) or the one file. */
char **vg_cli_network_files(const char *arg, size_t *n, char *err, size_t errsize)
{
	struct stat st;
	*n = 0;
	if (stat(arg, &st) < 0) {
		snprintf(err, errsize, "%s: %s", arg, strerror(errno));
		return NULL;
	}
	char **files = NULL;
	if (!S_ISDIR(st.st_mode)) {
		files = calloc(1, sizeof *files);
		files[0] = strdup(arg);
		*n = 1;
		return files;
	}
	DIR *d = opendir(arg);
	if (!d) {
		snprintf(err, errsize, "%s: %s", arg, strerror(errno));
		return NULL;
	}
	size_t cap = 0;
	for (struct dirent *de; (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		if (strncmp(de->d_name, "net-", 4) || l < 9 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			files = realloc(files, cap * sizeof *files);
		}
		if (asprintf(&files[*n], "%s/%s", arg, de->d_name) < 0)
			break;
		(*n)++;
	}
	closedir(d);
	if (!*n) {
		snprintf(err, errsize, "%s: no network (net-*.json) in this directory", arg);
		free(files);
		return NULL;
	}
	qsort(files, *n, sizeof *files, cmp_str);
	return files;
}

struct seq {
	char *servers;
	size_t count;
};

static int by_count(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->servers, y->servers);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct(const int64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	size_t k = (size_t)ceil(p / 100 * (double)n);
	return (double)v[k ? k - 1 : 0];
}

static int cmd_report(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_THREADS, OPT_FORMAT };
	static const struct option longopts[] = {{"json", no_argument, NULL, OPT_JSON},
	                                         {"format", required_argument, NULL, OPT_FORMAT},
	                                         {"threads", no_argument, NULL, OPT_THREADS},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	bool json = false, threads = false;
	optind = 0;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1;) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_THREADS:
			threads = true;
			break;
		case OPT_FORMAT:
			if (vg_cli_format("net report", optarg, &json))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("net report", argv);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr,
		        "vigil net report: give one DIR or NET.json (see 'vigil net --help')\n");
		return 2;
	}
	char err[1024];
	size_t nf;
	char **files = vg_cli_network_files(argv[optind], &nf, err, sizeof err);
	if (!files) {
		fprintf(stderr, "vigil net report: %s\n", err);
		return 2;
	}
	if (nf == 1)
		threads = true;
	int rc = 0;
	int64_t *resp = calloc(nf + 1, sizeof *resp);
	struct seq *seqs = calloc(nf + 1, sizeof *seqs);
	size_t nresp = 0, nseq = 0;
	json_t *jnets = json_array();
	for (size_t i = 0; i < nf; i++) {
		struct vgn_graph *g = vgn_graph_load(files[i], err, sizeof err);
		if (!g) {
			fprintf(stderr, "vigil net report: %s\n", err);
			rc = 2;
			continue;
		}
		struct vgn_stats st;
		vgn_stats_compute(g, &st);
		resp[nresp++] = st.response;
		size_t k = 0;
		while (k < nseq && strcmp(seqs[k].servers, st.servers))
			k++;
		if (k == nseq)
			seqs[nseq++] = (struct seq){strdup(st.servers), 0};
		seqs[k].count++;
		if (json) {
			json_t *pt = json_array();
			for (size_t t = 0; t < g->nthreads; t++) {
				const struct vgn_gthread *th = &g->threads[t];
				json_array_append_new(
				    pt, json_pack(
				            "{s:s,s:I,s:I,s:s,s:s,s:f,s:f}", "host", th->host,
				            "pid", (json_int_t)th->pid, "tid", (json_int_t)th->tid,
				            "program", th->program, "name", th->name, "running_ms",
				            (double)st.per_thread[t].running / 1e6, "waiting_ms",
				            (double)st.per_thread[t].waiting / 1e6));
			}
			json_t *states = json_object();
			for (size_t k = 0; k < st.nstates; k++)
				json_object_set_new(states, st.states[k].label,
				                    json_real((double)st.states[k].ns / 1e6));
			json_t *o =
			    json_pack("{s:s,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:o,s:o}",
			              "file", files[i], "network", (json_int_t)g->id, "response_ms",
			              (double)st.response / 1e6, "threads", (json_int_t)st.threads,
			              "processes", (json_int_t)st.processes, "machines",
			              (json_int_t)st.machines, "messages", (json_int_t)st.messages,
			              "cross_host_messages", (json_int_t)st.cross_host_messages,
			              "pairs", (json_int_t)st.pairs, "bytes", (json_int_t)st.bytes,
			              "unmatched", (json_int_t)st.unmatched, "servers", st.servers,
			              "per_thread", pt, "states_ms", states);
			json_array_append_new(jnets, o ? o : json_null());
		} else {
			printf(
			    "network %" PRIu64 ": response %.3f ms, %zu thread%s, %zu process%s, "
			    "%zu machine%s, %" PRIu64 " messages (%" PRIu64
			    " between machines), %" PRIu64 " request/reply pairs, %" PRIu64
			    " bytes, %" PRIu64 " unmatched\n"
			    "  servers: %s\n",
			    g->id, (double)st.response / 1e6, st.threads,
			    st.threads == 1 ? "" : "s", st.processes, st.processes == 1 ? "" : "es",
			    st.machines, st.machines == 1 ? "" : "s", st.messages,
			    st.cross_host_messages, st.pairs, st.bytes, st.unmatched, st.servers);
			for (size_t k = 0; k < st.nstates; k++)
				printf("%s %s %.3f ms", k ? "," : "  states:", st.states[k].label,
				       (double)st.states[k].ns / 1e6);
			if (st.nstates)
				fputc('\n', stdout);
			if (threads) {
				printf("  %-40s %14s %14s\n", "thread (host/pid/tid program)",
				       "running ms", "waiting ms");
				for (size_t t = 0; t < g->nthreads; t++) {
					const struct vgn_gthread *th = &g->threads[t];
					char label[256];
					snprintf(label, sizeof label,
					         "%s/%" PRId64 "/%" PRId64 " %s%s%s%s", th->host,
					         th->pid, th->tid, th->program,
					         *th->name ? " (" : "", th->name,
					         *th->name ? ")" : "");
					printf("  %-40s %14.3f %14.3f\n", label,
					       (double)st.per_thread[t].running / 1e6,
					       (double)st.per_thread[t].waiting / 1e6);
				}
			}
		}
		vgn_stats_free(&st);
		vgn_graph_free(g);
	}
	qsort(resp, nresp, sizeof *resp, cmp_i64);
	qsort(seqs, nseq, sizeof *seqs, by_count);
	double mean = 0;
	for (size_t i = 0; i < nresp; i++)
		mean += (double)resp[i] / (double)nresp;
	if (json) {
		json_t *top = json_array();
		for (size_t i = 0; i < nseq && i < 10; i++)
			json_array_append_new(top,
			                      json_pack("{s:s,s:I}", "servers", seqs[i].servers,
			                                "networks", (json_int_t)seqs[i].count));
		json_t *sum = json_pack(
		    "{s:I,s:{s:f,s:f,s:f,s:f,s:f,s:f},s:o}", "networks", (json_int_t)nresp,
		    "response_ms", "min", nresp ? (double)resp[0] / 1e6 : 0.0, "p50",
		    pct(resp, nresp, 50) / 1e6, "p90", pct(resp, nresp, 90) / 1e6, "p99",
		    pct(resp, nresp, 99) / 1e6, "max", nresp ? (double)resp[nresp - 1] / 1e6 : 0.0,
		    "mean", mean / 1e6, "servers", top);
		json_t *j = json_pack("{s:o,s:o}", "networks", jnets, "summary", sum);
		json_dumpf(j, stdout, JSON_INDENT(1));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		json_decref(jnets);
		if (nresp > 1) {
			printf(
			    "\n%zu networks: response ms min %.3f, p50 %.3f, p90 %.3f, p99 %.3f, "
			    "max %.3f, mean %.3f\nmost frequent server sequences:\n",
			    nresp, (double)resp[0] / 1e6, pct(resp, nresp, 50) / 1e6,
			    pct(resp, nresp, 90) / 1e6, pct(resp, nresp, 99) / 1e6,
			    (double)resp[nresp - 1] / 1e6, mean / 1e6);
			for (size_t i = 0; i < nseq && i < 10; i++)
				printf("  %6zu  %s\n", seqs[i].count, seqs[i].servers);
		}
	}
	for (size_t i = 0; i < nseq; i++)
		free(seqs[i].servers);
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	free(seqs);
	free(resp);
	return rc;
}

/* ---- render ---- */

static int cmd_render(int argc, char **argv)
{
	enum { OPT_SVG = 256, OPT_FORMAT };
	static const struct option longopts[] = {{"svg", required_argument, NULL, OPT_SVG},
	                                         {"format", required_argument, NULL, OPT_FORMAT},
	                                         {"output", required_argument, NULL, 'o'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	const char *out = NULL;
	bool dot = false;
	optind = 0;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1;) {
		switch (c) {
		case OPT_SVG:
			out = optarg;
			dot = false;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "dot"))
				dot = true;
			else if (!strcmp(optarg, "svg"))
				dot = false;
			else {
				fprintf(stderr, "vigil net render: --format %s: svg or dot\n",
				        optarg);
				return 2;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("net render", argv);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "vigil net render: give one NET.json (see 'vigil net --help')\n");
		return 2;
	}
	char err[1024];
	struct vgn_graph *g = vgn_graph_load(argv[optind], err, sizeof err);
	if (!g) {
		fprintf(stderr, "vigil net render: %s\n", err);
		return 2;
	}
	struct vg_out o;
	if (vg_out_open(&o, out ? out : "-", err, sizeof err) < 0) {
		fprintf(stderr, "vigil net render: cannot write %s\n", err);
		vgn_graph_free(g);
		return 2;
	}
	int rc = dot ? vgn_render_dot(g, o.f) : vgn_render_svg(g, o.f);
	if (rc < 0) {
		vg_out_abort(&o);
		fprintf(stderr, "vigil net render: cannot write %s\n", out ? out : "stdout");
	} else if (vg_out_commit(&o, err, sizeof err) < 0) {
		rc = -1;
		fprintf(stderr, "vigil net render: cannot write %s\n", err);
	}
	vgn_graph_free(g);
	return rc < 0 ? 2 : 0;
}

int vg_cmd_net(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(sub, "split"))
		return cmd_split(argc - 1, argv + 1);
	if (!strcmp(sub, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(sub, "render"))
		return cmd_render(argc - 1, argv + 1);
	if (!strcmp(sub, "export"))
		return vg_net_export(argc - 1, argv + 1);
	fprintf(stderr,
	        "vigil net: unknown subcommand '%s' (split, report, render, export; see 'vigil net "
	        "--help')\n",
	        sub);
	return 2;
}
