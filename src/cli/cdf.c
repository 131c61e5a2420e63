/* vigil cdf: the distribution of the time from one event to others over the paths of a
 * model's transition graph (docs/model.md, "CDFs"). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/out_file.h"
#include "model/cdf.h"
#include "model/names.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil cdf MODEL --from EVENT --to EVENT[,EVENT...] [options]\n\n"
	    "Estimates the distribution of the time from the start event to the first of\n"
	    "the terminal events: a depth-first search keeps the transitions on paths from\n"
	    "start to a terminal (at most D transitions, each path at least P probable),\n"
	    "their probabilities are renormalised, and random walks add a time drawn from\n"
	    "each transition's distribution. Prints percentiles, the walks that reached a\n"
	    "terminal and the probability mass of the paths found.\n"
	    "An EVENT is a name (tag), a site or its tail (bufmgr.c:725), a trace sensor's\n"
	    "name, or an event id of the model file.\n\n"
	    "options:\n"
	    "  --from EVENT      the start event\n"
	    "  --to EVENTS       terminal events, comma-separated (repeatable)\n"
	    "  --depth D         longest path in transitions (default %d)\n"
	    "  --cutoff P        prune paths less probable than P (default %g)\n"
	    "  --walks N         random walks (default %d)\n"
	    "  --seed S          random seed (default 1): same seed, same answer\n"
	    "  --svg FILE        also draw the CDF as an SVG plot\n"
	    "  --format F        text (default) or json\n"
	    "  -h, --help        this help\n\n"
	    "exit status: 0 printed, 1 no path from the start reaches a terminal,\n"
	    "2 usage error, unknown event or unreadable model.\n\n"
	    "examples:\n"
	    "  vigil cdf run.vgm --from 'buffer access' --to 'buffer miss done'\n"
	    "  vigil cdf run.vgm --from bufmgr.c:701 --to bufmgr.c:725,bufmgr.c:760 --svg a.svg\n"
	    "  vigil cdf sensors.vgm --from mailbox.SendMessage --to mailbox.Waiting.end "
	    "--format json\n",
	    VGM_CDF_DEPTH, VGM_CDF_CUTOFF, VGM_CDF_WALKS);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (*end || errno)
		return -1;
	*v = x;
	return 0;
}

int vg_cmd_cdf(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"from", required_argument, NULL, 'F'},  {"to", required_argument, NULL, 'T'},
	    {"depth", required_argument, NULL, 'd'}, {"cutoff", required_argument, NULL, 'c'},
	    {"walks", required_argument, NULL, 'w'}, {"seed", required_argument, NULL, 's'},
	    {"svg", required_argument, NULL, 'g'},   {"format", required_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},        {0, 0, 0, 0}};
	const char *from = NULL, *svg = NULL;
	char *to_all = NULL;
	bool json = false;
	uint64_t depth = VGM_CDF_DEPTH, walks = VGM_CDF_WALKS, seed = 1;
	double cutoff = VGM_CDF_CUTOFF;
	int c, rc = 2;
	struct vgm_model *m = NULL;
	uint32_t *terms = NULL;
	struct vgm_cdf_result res = {0};
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'F':
			from = optarg;
			break;
		case 'T': {
			size_t n = to_all ? strlen(to_all) : 0;
			char *v = realloc(to_all, n + strlen(optarg) + 2);
			if (!v)
				goto out;
			if (!n)
				v[0] = 0;
			else
				strcat(v, ",");
			strcat(v, optarg);
			to_all = v;
			break;
		}
		case 'd':
			if (parse_u64(optarg, &depth) || !depth || depth > 1000) {
				fprintf(stderr, "vigil cdf: --depth '%s': a count from 1 to 1000\n",
				        optarg);
				goto out;
			}
			break;
		case 'c':
			cutoff = strtod(optarg, &end);
			if (*end || !*optarg || !(cutoff > 0 && cutoff <= 1)) {
				fprintf(stderr,
				        "vigil cdf: --cutoff '%s': a probability in (0, 1]\n",
				        optarg);
				goto out;
			}
			break;
		case 'w':
			if (parse_u64(optarg, &walks) || !walks || walks > 100000000) {
				fprintf(stderr, "vigil cdf: --walks '%s': a count from 1 to 10^8\n",
				        optarg);
				goto out;
			}
			break;
		case 's':
			if (parse_u64(optarg, &seed)) {
				fprintf(stderr, "vigil cdf: --seed '%s' is not a number\n", optarg);
				goto out;
			}
			break;
		case 'g':
			svg = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				fprintf(stderr, "vigil cdf: --format '%s': text or json\n", optarg);
				goto out;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto out;
		default:
			fprintf(stderr, "vigil cdf: see 'vigil cdf --help'\n");
			goto out;
		}
	}
	if (argc - optind != 1 || !from || !to_all) {
		fprintf(stderr,
		        "vigil cdf: needs MODEL, --from and --to (see 'vigil cdf --help')\n");
		goto out;
	}
	const char *path = argv[optind];
	char err[1024];
	if (!(m = vgm_model_new())) {
		fprintf(stderr, "vigil cdf: out of memory\n");
		goto out;
	}
	if (vgm_read_file(m, path, err, sizeof err)) {
		fprintf(stderr, "vigil cdf: %s\n", err);
		goto out;
	}
	long start = vgm_lookup(m, from, err, sizeof err);
	if (start < 0) {
		fprintf(stderr, "vigil cdf: %s: --from: %s\n", path, err);
		goto out;
	}
	size_t nterms = 0;
	terms = malloc((strlen(to_all) + 1) * sizeof *terms);
	if (!terms)
		goto out;
	for (char *save = NULL, *tok = strtok_r(to_all, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long t = vgm_lookup(m, tok, err, sizeof err);
		if (t < 0) {
			fprintf(stderr, "vigil cdf: %s: --to: %s\n", path, err);
			goto out;
		}
		terms[nterms++] = (uint32_t)t;
	}
	if (!nterms) {
		fprintf(stderr, "vigil cdf: --to names no event\n");
		goto out;
	}
	struct vgm_cdf_opts o = {(uint32_t)start, terms, nterms, (unsigned)depth,
	                         cutoff,          walks, seed};
	int r = vgm_cdf(m, &o, &res);
	if (r < 0) {
		fprintf(stderr, "vigil cdf: out of memory\n");
		goto out;
	}
	if (r > 0 || !res.nsamples) {
		fprintf(stderr,
		        "vigil cdf: %s: no path from '%s' reaches '%s' within %" PRIu64
		        " transitions and probability %g%s\n",
		        path, from, to_all, depth, cutoff,
		        r > 0 ? "" : " (every walk was abandoned)");
		rc = 1;
		goto out;
	}
	if (res.untimed)
		fprintf(stderr,
		        "vigil cdf: warning: %zu transitions on the paths have no timed values; "
		        "they count as 0 ns\n",
		        res.untimed);
	static const double qs[] = {0.5, 0.9, 0.99, 0.999};
	static const char *qn[] = {"p50", "p90", "p99", "p99.9"};
	if (json) {
		json_t *doc = json_object();
		json_object_set_new(doc, "model", json_string(path));
		json_object_set_new(doc, "from", json_string(from));
		json_object_set_new(doc, "to", json_string(to_all));
		json_object_set_new(doc, "walks", json_integer((json_int_t)walks));
		json_object_set_new(doc, "walks_reached", json_integer((json_int_t)res.nsamples));
		json_object_set_new(doc, "walks_abandoned",
		                    json_integer((json_int_t)res.abandoned));
		json_object_set_new(doc, "mass", json_real(res.mass));
		json_object_set_new(doc, "paths", json_integer((json_int_t)res.paths));
		json_object_set_new(doc, "transitions", json_integer((json_int_t)res.edges));
		json_t *p = json_object();
		for (int i = 0; i < 4; i++)
			json_object_set_new(p, qn[i], json_real(vgm_cdf_quantile(&res, qs[i])));
		json_object_set_new(doc, "percentiles_ns", p);
		json_object_set_new(doc, "min_ns", json_real(res.samples[0]));
		json_object_set_new(doc, "max_ns", json_real(res.samples[res.nsamples - 1]));
		json_dumpf(doc, stdout, JSON_INDENT(1));
		putchar('\n');
		json_decref(doc);
	} else {
		char b[32];
		printf("from %s to %s: %zu of %" PRIu64 " walks reached a terminal; %" PRIu64
		       " paths found, probability mass %.4f, %zu transitions\n",
		       from, to_all, res.nsamples, walks, res.paths, res.mass, res.edges);
		for (int i = 0; i < 4; i++)
			printf("%-6s %s\n", qn[i],
			       vgm_format_ns(vgm_cdf_quantile(&res, qs[i]), b, sizeof b));
	}
	if (svg) {
		struct vg_out o;
		char title[512], xl[600], why[4200];
		snprintf(title, sizeof title, "time from %s to %s (%zu walks, mass %.3f)", from,
		         to_all, res.nsamples, res.mass);
		snprintf(xl, sizeof xl, "time from %s", from);
		if (vg_out_open(&o, svg, why, sizeof why) < 0) {
			fprintf(stderr, "vigil cdf: %s\n", why);
			goto out;
		}
		if (vgm_cdf_svg(o.f, res.samples, res.nsamples, title, xl)) {
			int e = errno ? errno : EIO;
			vg_out_abort(&o);
			fprintf(stderr, "vigil cdf: %s: %s\n", svg, strerror(e));
			goto out;
		}
		if (vg_out_commit(&o, why, sizeof why) < 0) {
			fprintf(stderr, "vigil cdf: %s\n", why);
			goto out;
		}
	}
	rc = fflush(stdout) ? 2 : 0;
out:
	vgm_cdf_free(&res);
	vgm_model_free(m);
	free(terms);
	free(to_all);
	return rc;
}
