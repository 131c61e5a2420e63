/* vigil clock: each host's clock offset (and drift) against a reference host, from the
 * messages matched between the hosts' traces (docs/net.md "Clocks"). */
#define _GNU_SOURCE
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bad_option.h"
#include "commands.h"
#include "format_opt.h"
#include "net/net.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil clock [options] TRACE...\n\n"
	    "Estimates how far each host's clock is ahead of a reference host's, from the\n"
	    "messages matched between the traces (one trace per host; a host is the\n"
	    "metadata env `host`, else the hostname). A message cannot arrive before it\n"
	    "left: messages REF->H bound H's offset from above, H->REF from below. The\n"
	    "estimate is the middle of the bounds; a drift (ppm) is fitted only when the\n"
	    "data rules out a constant offset (Duda et al.'s convex-hull method). Hosts\n"
	    "without messages to the reference are chained through other hosts.\n\n"
	    "One line per host: status (reference, ok, one-sided: messages in one direction\n"
	    "only, unconnected, crossed: bounds that cannot be reconciled, with why),\n"
	    "offset, its bounds, drift, and the messages used. `vigil net split --clock FILE`\n"
	    "applies a saved --json result instead of estimating again.\n\n"
	    "options:\n"
	    "  --reference HOST  the host whose clock is kept (default: the host with most\n"
	    "                    messages to other hosts)\n"
	    "  --json            (or --format json) one JSON object {reference, t0, hosts:[{host, "
	    "status,\n"
	    "                    offset_ns, lo_ns, hi_ns, drift_ppm, ...}]} on stdout\n"
	    "  -h, --help        this help\n\n"
	    "exit status: 0 all clocks reconciled; 1 some host's bounds cross, or a trace could\n"
	    "not be read (the others were used); 2 bad input.\n\n"
	    "examples:\n"
	    "  vigil clock hostA.trace hostB.trace\n"
	    "  vigil clock --reference front a/ b/ c/\n"
	    "  vigil clock --json a/ b/ > clock.json && vigil net split --clock clock.json "
	    "a/ b/ -o nets\n");
}

static void warn(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "vigil clock: %s\n", line);
}

static void fmt_ms(char *buf, size_t n, double ns)
{
	if (!isfinite(ns))
		snprintf(buf, n, "%s", ns < 0 ? "-inf" : "+inf");
	else
		snprintf(buf, n, "%+.6f ms", ns / 1e6);
}

static void print_text(const struct vgn_session *ss)
{
	const struct vgn_set *s = ss->set;
	const struct vgn_clock *c = &ss->clock;
	printf("reference: %s\n", s->hosts[c->reference].name);
	printf("%-20s %-11s %16s  %-36s %-26s %s\n", "host", "status", "offset", "bounds", "drift",
	       "messages to/from ref");
	for (size_t h = 0; h < c->nhosts; h++) {
		const struct vgn_clock_host *e = &c->hosts[h];
		char off[48], lo[48], hi[48], bounds[112], drift[64] = "-";
		fmt_ms(off, sizeof off, e->offset);
		fmt_ms(lo, sizeof lo, e->lo);
		fmt_ms(hi, sizeof hi, e->hi);
		if (e->status == VGN_CLOCK_REFERENCE || e->status == VGN_CLOCK_UNCONNECTED)
			snprintf(bounds, sizeof bounds, "-");
		else
			snprintf(bounds, sizeof bounds, "[%s, %s]", lo, hi);
		if (e->has_drift)
			snprintf(drift, sizeof drift, "%+.3f ppm [%+.3f, %+.3f]", e->drift * 1e6,
			         e->drift_lo * 1e6, e->drift_hi * 1e6);
		printf("%-20s %-11s %16s  %-36s %-26s %llu/%llu", s->hosts[h].name,
		       vgn_clock_status_name(e->status),
		       e->status == VGN_CLOCK_REFERENCE || e->status == VGN_CLOCK_UNCONNECTED ? "0"
		                                                                              : off,
		       bounds, drift, (unsigned long long)e->to_ref,
		       (unsigned long long)e->from_ref);
		if (e->via != VGN_NONE)
			printf(" (via %s)", s->hosts[e->via].name);
		printf("\n");
	}
}

int vg_cmd_clock(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_REF, OPT_FORMAT };
	static const struct option longopts[] = {{"json", no_argument, NULL, OPT_JSON},
	                                         {"format", required_argument, NULL, OPT_FORMAT},
	                                         {"reference", required_argument, NULL, OPT_REF},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	bool json = false;
	const char *ref = NULL;
	optind = 0;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1;) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_FORMAT:
			if (vg_cli_format("clock", optarg, &json))
				return 2;
			break;
		case OPT_REF:
			ref = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("clock", argv);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil clock: no trace given (see 'vigil clock --help')\n");
		return 2;
	}
	struct vgn_session ss = {.warn = warn};
	char err[1024];
	if (vgn_session_open(&ss, (const char *const *)argv + optind, (size_t)(argc - optind), ref,
	                     NULL, err, sizeof err) < 0) {
		fprintf(stderr, "vigil clock: %s\n", err);
		vgn_session_close(&ss);
		return 2;
	}
	if (json) {
		json_t *j = vgn_clock_to_json(ss.set, &ss.clock);
		json_object_set_new(j, "backwards", json_integer((json_int_t)ss.backwards));
		json_object_set_new(j, "matched_pairs", json_integer((json_int_t)ss.match.pairs));
		json_object_set_new(j, "cross_host_pairs",
		                    json_integer((json_int_t)ss.match.cross_host_pairs));
		json_dumpf(j, stdout, JSON_INDENT(1));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		print_text(&ss);
	}
	fprintf(stderr,
	        "vigil clock: %zu host%s, %llu matched messages (%llu between hosts); after "
	        "correction %llu received before sent\n",
	        ss.set->nhosts, ss.set->nhosts == 1 ? "" : "s", (unsigned long long)ss.match.pairs,
	        (unsigned long long)ss.match.cross_host_pairs, (unsigned long long)ss.backwards);
	int rc = ss.crossed || ss.skipped ? 1 : 0;
	vgn_session_close(&ss);
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "vigil clock: cannot write output\n");
		return 2;
	}
	return rc;
}
