/* vigil diff: the ranked differences between two behaviour models (docs/model.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "diff_results.h"
#include "model/diff.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil diff BASELINE OTHER [--top N] [--format text|json] [--min-support K]\n"
	    "                  [--events-by share|chi2]\n"
	    "       vigil diff --query TQUEL RUN1 RUN2 [--by ATTR,...] [--top N] [--format F]\n"
	    "       vigil diff RESULT1.json RESULT2.json [--by ATTR,...] [--top N] [--format F]\n\n"
	    "Ranks what differs between two behaviour models (files of `vigil model`),\n"
	    "largest first, in three reports:\n"
	    "  events       each event's share of all events, by the difference of shares\n"
	    "               (--events-by chi2: by the chi-square of its count against all\n"
	    "               the others' in the two runs, so that a rare event that\n"
	    "               changed outranks a dominant one diluted by it)\n"
	    "  transitions  P(E2|E1), by max(P/P', P'/P), smoothed: (n + a) / (out + a*S)\n"
	    "               with S the successors of E1; only where E1 left at least K\n"
	    "               times in each run and E1 -> E2 happened K times in one\n"
	    "  times        transition-time distributions, by earth mover's distance, for\n"
	    "               transitions with at least K timed values in each run\n"
	    "Events are matched by call site and format (names are only shown).\n\n"
	    "Over two query results (the same statements' answers in two runs: files of\n"
	    "`vigil query --format json`, or two traces and --query, run on each), per\n"
	    "result relation, tuples compared by their values (not their times):\n"
	    "  tuples   value tuples counted differently (only in one run, or more often)\n"
	    "  groups   each key's share of the tuples, by the change of its share; the key\n"
	    "           is --by, else the attributes that are not numbers\n"
	    "  changes  per key, each numeric attribute's mean and the intervals' mean\n"
	    "           (duration), by |other - baseline| / max(|baseline|, |other|), where\n"
	    "           each run has K values (--min-support, default 1 here)\n"
	    "Docs: docs/query.md \"Comparing two runs\".\n\n"
	    "options:\n"
	    "  --top N           rows per report (default 10; 0: all)\n"
	    "  --format F        text (default) or json (one document)\n"
	    "  --min-support K   the K above (default %d)\n"
	    "  --alpha A         additive smoothing (default %g)\n"
	    "  --events-by R     share (default) or chi2: the events report's ranking\n"
	    "  --query TQUEL     run these statements on the traces RUN1 and RUN2, compare\n"
	    "  --by ATTRS        results: the key attributes, comma-separated\n"
	    "  -h, --help        this help\n\n"
	    "exit status: 0 report printed, 1 the models have no event in common,\n"
	    "2 usage error or unreadable model.\n\n"
	    "examples:\n"
	    "  vigil diff base.vgm slow.vgm\n"
	    "  vigil diff --top 3 --min-support 50 base.vgm slow.vgm\n"
	    "  vigil diff --format json base.vgm slow.vgm | jq '.transitions[0]'\n"
	    "  vigil diff --query 'range of W is Waiting retrieve (W.mailbox, W.process)' run1 "
	    "run2\n"
	    "  vigil query run1 --format json -e 'range of W is Waiting retrieve (W.mailbox)' > "
	    "a.json\n"
	    "  vigil query run2 --format json -e 'range of W is Waiting retrieve (W.mailbox)' > "
	    "b.json\n"
	    "  vigil diff --by mailbox --top 3 --format json a.json b.json\n",
	    VGM_DIFF_MIN_SUPPORT, VGM_DIFF_ALPHA);
}

struct side {
	const char *path;
	struct vgm_model *m;
};

static const struct vgm_event *pick(const struct side *s, long a, long b)
{
	return a >= 0 ? &s[0].m->events[a] : &s[1].m->events[b];
}

static size_t limit(size_t n, size_t top)
{
	return top && top < n ? top : n;
}

static int print_json(const struct side *s, const struct vgm_diff *d, size_t top,
                      const struct vgm_diff_opts *o)
{
	json_t *doc = vgm_diff_json(s[0].m, s[0].path, s[1].m, s[1].path, d, top, o);
	int rc = json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_ENSURE_ASCII);
	putchar('\n');
	json_decref(doc);
	return rc;
}

static const char *label(const struct side *s, long a, long b, char *buf, size_t size)
{
	return vgm_event_label(pick(s, a, b), buf, size);
}

static void print_text(const struct side *s, const struct vgm_diff *d, size_t top,
                       const struct vgm_diff_opts *o)
{
	char l1[200], l2[200], x[32], y[32], z[32], w[32];
	printf("baseline %s: %" PRIu64 " events of %zu types; other %s: %" PRIu64
	       " events of %zu types; %zu types in common\n",
	       s[0].path, d->total_a, s[0].m->nevents, s[1].path, d->total_b, s[1].m->nevents,
	       d->common);

	printf("\nevent proportions (%zu of %zu events, by %s)\n", limit(d->nevents, top),
	       d->nevents,
	       o->events_by == VGM_EVENTS_BY_CHI2 ? "the chi-square of their counts"
	                                          : "the change of their share");
	printf("%4s  %-11s %-22s %-22s %s\n", "#", "change", "baseline", "other", "event");
	for (size_t i = 0; i < limit(d->nevents, top); i++) {
		const struct vgm_event_row *r = &d->events[i];
		char a[40], b[40];
		snprintf(a, sizeof a, "%.3f%% (%" PRIu64 ")", 100 * r->pa, r->ca);
		snprintf(b, sizeof b, "%.3f%% (%" PRIu64 ")", 100 * r->pb, r->cb);
		printf("%4zu  %+9.3f%%  %-22s %-22s %s\n", i + 1, 100 * (r->pb - r->pa), a, b,
		       label(s, r->a, r->b, l1, sizeof l1));
	}

	printf("\ntransition probabilities P(E2|E1) (%zu of %zu, by max(P/P', P'/P); "
	       "%zu below the support of %" PRIu64 ")\n",
	       limit(d->ntrans, top), d->ntrans, d->trans_unsupported, o->min_support);
	printf("%4s  %-9s %-24s %-24s %s\n", "#", "ratio", "baseline", "other", "transition");
	for (size_t i = 0; i < limit(d->ntrans, top); i++) {
		const struct vgm_trans_row *r = &d->trans[i];
		char a[48], b[48];
		snprintf(a, sizeof a, "%.4f (%" PRIu64 "/%" PRIu64 ")",
		         (double)r->ca / (double)r->outa, r->ca, r->outa);
		snprintf(b, sizeof b, "%.4f (%" PRIu64 "/%" PRIu64 ")",
		         (double)r->cb / (double)r->outb, r->cb, r->outb);
		printf("%4zu  x%-8.3g %-24s %-24s %s -> %s\n", i + 1, r->score, a, b,
		       label(s, r->a_from, r->b_from, l1, sizeof l1),
		       label(s, r->a_to, r->b_to, l2, sizeof l2));
	}

	printf("\ntransition times (%zu of %zu, by earth mover's distance; %zu with fewer than "
	       "%" PRIu64 " timed values)\n",
	       limit(d->ntimes, top), d->ntimes, d->times_unsupported, o->min_support);
	printf("%4s  %-10s %-22s %-22s %-15s %s\n", "#", "EMD", "p50 baseline->other",
	       "p99 baseline->other", "timed", "transition");
	for (size_t i = 0; i < limit(d->ntimes, top); i++) {
		const struct vgm_time_row *r = &d->times[i];
		char p50[48], p99[48], n[40];
		snprintf(p50, sizeof p50, "%s->%s", vgm_format_ns(r->p50a, x, sizeof x),
		         vgm_format_ns(r->p50b, y, sizeof y));
		snprintf(p99, sizeof p99, "%s->%s", vgm_format_ns(r->p99a, z, sizeof z),
		         vgm_format_ns(r->p99b, w, sizeof w));
		snprintf(n, sizeof n, "%" PRIu64 "/%" PRIu64, r->na, r->nb);
		printf("%4zu  %-10s %-22s %-22s %-15s %s -> %s\n", i + 1,
		       vgm_format_ns(r->emd, x, sizeof x), p50, p99, n,
		       label(s, r->a_from, r->b_from, l1, sizeof l1),
		       label(s, r->a_to, r->b_to, l2, sizeof l2));
	}
}

static int parse_count(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	unsigned long long x = strtoull(s, &end, 10);
	if (*end)
		return -1;
	*v = x;
	return 0;
}

int vg_cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {{"top", required_argument, NULL, 't'},
	                                     {"format", required_argument, NULL, 'f'},
	                                     {"min-support", required_argument, NULL, 'k'},
	                                     {"alpha", required_argument, NULL, 'a'},
	                                     {"events-by", required_argument, NULL, 'e'},
	                                     {"query", required_argument, NULL, 'q'},
	                                     {"by", required_argument, NULL, 'b'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {0, 0, 0, 0}};
	uint64_t top = 10;
	bool json = false, support_given = false;
	const char *query = NULL, *by = NULL;
	struct vgm_diff_opts o = {VGM_DIFF_MIN_SUPPORT, VGM_DIFF_ALPHA, VGM_EVENTS_BY_SHARE};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_count(optarg, &top)) {
				fprintf(stderr, "vigil diff: --top '%s' is not a count\n", optarg);
				return 2;
			}
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				fprintf(stderr, "vigil diff: --format '%s': text or json\n",
				        optarg);
				return 2;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'k':
			if (parse_count(optarg, &o.min_support)) {
				fprintf(stderr, "vigil diff: --min-support '%s' is not a count\n",
				        optarg);
				return 2;
			}
			support_given = true;
			break;
		case 'q':
			query = optarg;
			break;
		case 'b':
			by = optarg;
			break;
		case 'a': {
			char *end;
			o.alpha = strtod(optarg, &end);
			if (*end || !*optarg || !(o.alpha > 0) || !isfinite(o.alpha)) {
				fprintf(stderr,
				        "vigil diff: --alpha '%s' is not a positive number\n",
				        optarg);
				return 2;
			}
			break;
		}
		case 'e':
			if (strcmp(optarg, "share") && strcmp(optarg, "chi2")) {
				fprintf(stderr, "vigil diff: --events-by '%s': share or chi2\n",
				        optarg);
				return 2;
			}
			o.events_by =
			    !strcmp(optarg, "chi2") ? VGM_EVENTS_BY_CHI2 : VGM_EVENTS_BY_SHARE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "vigil diff: see 'vigil diff --help'\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "vigil diff: needs BASELINE and OTHER (see 'vigil diff --help')\n");
		return 2;
	}
	const char *a = argv[optind], *b = argv[optind + 1];
	for (int i = 0; i < 2 && !query; i++) /* said here, not as "not results" below */
		if (access(argv[optind + i], R_OK) != 0) {
			fprintf(stderr, "vigil diff: %s: %s\n", argv[optind + i], strerror(errno));
			return 2;
		}
	bool ra = vg_is_results_file(a), rb = vg_is_results_file(b);
	if (!query && ra != rb) {
		fprintf(stderr,
		        "vigil diff: %s holds query results and %s does not (a model? a trace: "
		        "give --query): compare like with like\n",
		        ra ? a : b, ra ? b : a);
		return 2;
	}
	if (query || ra) {
		struct vg_results_diff_opts ro = {.query = query,
		                                  .by = by,
		                                  .top = (size_t)top,
		                                  .json = json,
		                                  .min_support = support_given ? o.min_support : 1};
		return vg_diff_results(a, b, &ro);
	}
	if (by) {
		fprintf(stderr,
		        "vigil diff: --by is for query results (give --query or two results)\n");
		return 2;
	}
	struct side s[2] = {{a, vgm_model_new()}, {b, vgm_model_new()}};
	int rc = 2;
	char err[1024];
	struct vgm_diff d = {0};
	if (!s[0].m || !s[1].m) {
		fprintf(stderr, "vigil diff: out of memory\n");
		goto out;
	}
	for (int i = 0; i < 2; i++)
		if (vgm_read_file(s[i].m, s[i].path, err, sizeof err)) {
			fprintf(stderr, "vigil diff: %s\n", err);
			goto out;
		}
	int r = vgm_diff(s[0].m, s[1].m, &o, &d);
	if (r < 0) {
		fprintf(stderr, "vigil diff: out of memory\n");
		goto out;
	}
	if (r > 0) {
		fprintf(stderr,
		        "vigil diff: %s and %s have no event in common (%zu and %zu event types): "
		        "nothing to compare\n",
		        s[0].path, s[1].path, s[0].m->nevents, s[1].m->nevents);
		rc = 1;
		goto out;
	}
	if (json) {
		if (print_json(s, &d, (size_t)top, &o)) {
			fprintf(stderr, "vigil diff: cannot write the report\n");
			goto out;
		}
	} else {
		print_text(s, &d, (size_t)top, &o);
	}
	rc = fflush(stdout) ? 2 : 0;
out:
	vgm_diff_free(&d);
	vgm_model_free(s[0].m);
	vgm_model_free(s[1].m);
	return rc;
}
