/* vigil dump: prints every event of one or more traces, merged in time order, as text
 * or JSON lines; reports damage and discarded events on stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bad_option.h"
#include "commands.h"
#include "event_json.h"
#include "trace/source.h"

struct dump {
	bool json, relative, stats;
	bool have_from, have_to;
	int64_t from, to; /* relative to the first event */
	char **globs;
	size_t nglobs;
	struct vgt_names *names;
	int64_t first;
	uint64_t shown, total;
	uint64_t *matching; /* per stream */
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: vigil dump [options] TRACE...\n\n"
	        "Prints every event of the traces, merged across all threads and processes in\n"
	        "time order, one line each: time, procname/pid:tid, event name, fields.\n"
	        "A summary, each damaged place and any discarded events go to stderr.\n\n"
	        "options:\n"
	        "  --json        JSON lines: "
	        "{\"ts\",\"clock\",\"time\",\"host\",\"pid\",\"proc\",\"tid\",\"name\",\n"
	        "                \"fields\"} (clock: the raw clock value the runtime wrote)\n"
	        "                (bytes as hex, references as {\"kind\",\"id\",\"gen\",\"name\"},\n"
	        "                integers above 2^63-1 as strings of digits)\n"
	        "  --relative    times in seconds since the first event instead of UTC dates\n"
	        "  --from T      only events at or after T since the first event\n"
	        "  --to T        only events at or before T since the first event\n"
	        "                (T: a number with an optional unit ns, us, ms, s; default s)\n"
	        "  --name GLOB   only events whose name matches GLOB (repeatable)\n"
	        "  --stats       counts per image and per stream instead of the events\n"
	        "  -h, --help    this help\n\n"
	        "exit status: 0 clean trace, 1 damage found (events are still printed),\n"
	        "2 usage error or unreadable trace.\n\n"
	        "examples:\n"
	        "  vigil dump run1                          every event\n"
	        "  vigil dump --relative --from 1.5s --to 2s run1\n"
	        "  vigil dump --name 'mailbox.*' --name 'vg.thread.*' run1\n"
	        "  vigil dump --json run1 | jq -r .name | sort | uniq -c\n"
	        "  vigil dump --stats run1 run2             two recordings, merged\n");
}

static bool name_matches(const struct dump *d, const char *name)
{
	if (!d->nglobs)
		return true;
	for (size_t i = 0; i < d->nglobs; i++)
		if (!fnmatch(d->globs[i], name, 0))
			return true;
	return false;
}

/* A name printed bare when it is one plain word, else quoted. */
static void write_name(FILE *f, const char *s)
{
	bool plain = *s != 0;
	for (const char *p = s; *p && plain; p++)
		plain =
		    (unsigned char)*p > ' ' && *p != '"' && *p != '=' && *p != '\\' && *p != 0x7f;
	if (plain)
		fputs(s, f);
	else
		vgt_write_cstring(f, s, strlen(s));
}

static void write_double(FILE *f, double v)
{
	char buf[40];
	snprintf(buf, sizeof buf, "%.15g", v);
	if (isfinite(v) && strtod(buf, NULL) != v)
		snprintf(buf, sizeof buf, "%.17g", v);
	fputs(buf, f);
}

static void write_uint(FILE *f, uint64_t v, unsigned base)
{
	if (base == 16) {
		fprintf(f, "0x%" PRIx64, v);
	} else if (base == 8) {
		fprintf(f, "0%" PRIo64, v);
	} else if (base == 2) {
		char buf[68] = "0b";
		int n = 2, top = 63;
		while (top > 0 && !(v >> top & 1))
			top--;
		for (int b = top; b >= 0; b--)
			buf[n++] = (char)('0' + (v >> b & 1));
		buf[n] = 0;
		fputs(buf, f);
	} else {
		fprintf(f, "%" PRIu64, v);
	}
}

static void write_text_value(const struct dump *d, FILE *f, const struct vgt_field *fd,
                             const struct vgt_value *v)
{
	switch (v->type) {
	case VGT_INT:
		fprintf(f, "%" PRId64, v->i);
		break;
	case VGT_UINT:
		write_uint(f, v->u, fd->base);
		break;
	case VGT_DOUBLE:
		write_double(f, v->d);
		break;
	case VGT_STRING:
		vgt_write_cstring(f, v->str.ptr, v->str.len);
		break;
	case VGT_BYTES:
		putc('<', f);
		for (size_t i = 0; i < v->bytes.len; i++)
			fprintf(f, "%02x", v->bytes.ptr[i]);
		putc('>', f);
		break;
	case VGT_REF: {
		const char *name = vgt_names_lookup(d->names, fd->ref_kind, v->ref.id, v->ref.gen);
		if (name)
			write_name(f, name);
		else
			fprintf(f, "%s#%" PRIu64 ".%" PRIu32,
			        fd->ref_kind ? fd->ref_kind : "entity", v->ref.id, v->ref.gen);
		break;
	}
	}
}

static void write_time(const struct dump *d, FILE *f, int64_t ts)
{
	if (d->relative) {
		int64_t rel = ts - d->first;
		const char *sign = rel < 0 ? "-" : "";
		uint64_t mag = rel < 0 ? -(uint64_t)rel : (uint64_t)rel;
		fprintf(f, "%s%" PRIu64 ".%09" PRIu64, sign, mag / 1000000000, mag % 1000000000);
	} else {
		char buf[64];
		vgt_format_time(ts, buf, sizeof buf);
		fputs(buf, f);
	}
}

static void write_text(const struct dump *d, const struct vgt_event *ev)
{
	FILE *f = stdout;
	write_time(d, f, ev->ts);
	const struct vgt_image *img = ev->image;
	fprintf(f, " %s/", img->procname ? img->procname : "?");
	if (img->pid >= 0)
		fprintf(f, "%" PRId64, img->pid);
	else
		putc('?', f);
	fprintf(f, ":%" PRIu32 " %s", ev->tid, ev->type->name);
	for (unsigned i = 0; i < ev->type->nfields; i++) {
		const struct vgt_field *fd = &ev->type->fields[i];
		if (fd->hidden)
			continue;
		fprintf(f, " %s=", fd->name);
		write_text_value(d, f, fd, &ev->values[i]);
	}
	putc('\n', f);
}

static json_t *json_opt_text(const char *s)
{
	return s ? vg_json_text(s, strlen(s)) : json_null();
}

static void write_json(const struct dump *d, const struct vgt_event *ev)
{
	json_t *o = vg_event_json(ev, d->names);
	json_dumpf(o, stdout, JSON_COMPACT);
	putc('\n', stdout);
	json_decref(o);
}

static void write_stats(const struct dump *d, struct vgt_trace *t)
{
	bool filtered = d->nglobs || d->have_from || d->have_to;
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		const struct vgt_image *img = vgt_image_at(t, i);
		uint64_t events = 0, discarded = 0, damage = img->ndamage;
		for (size_t k = 0; k < img->nstreams; k++) {
			events += img->streams[k]->stats.events;
			discarded += img->streams[k]->stats.events_discarded;
			damage += img->streams[k]->ndamage_total;
		}
		if (d->json) {
			json_t *o = json_pack(
			    "{s:s,s:o,s:I,s:o,s:I,s:I,s:I,s:I}", "image", img->path, "proc",
			    json_opt_text(img->procname), "pid", (json_int_t)img->pid, "host",
			    json_opt_text(img->hostname), "streams", (json_int_t)img->nstreams,
			    "events", (json_int_t)events, "discarded", (json_int_t)discarded,
			    "damage", (json_int_t)damage);
			if (o) {
				json_dumpf(o, stdout, JSON_COMPACT);
				putc('\n', stdout);
				json_decref(o);
			}
		} else {
			printf("%s: %s/%" PRId64 " on %s, %zu streams, %" PRIu64 " events, %" PRIu64
			       " discarded, %" PRIu64 " damaged%s\n",
			       img->path, img->procname ? img->procname : "?", img->pid,
			       img->hostname ? img->hostname : "?", img->nstreams, events,
			       discarded, damage, img->readable ? "" : " (unreadable metadata)");
		}
		for (size_t k = 0; k < img->nstreams; k++) {
			const struct vgt_stream *s = img->streams[k];
			const struct vgt_stream_stats *st = &s->stats;
			if (d->json) {
				json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "stream",
				                      s->path, "bytes", (json_int_t)s->size,
				                      "events", (json_int_t)st->events, "matching",
				                      (json_int_t)d->matching[s->index], "packets",
				                      (json_int_t)st->packets, "discarded",
				                      (json_int_t)st->events_discarded, "damage",
				                      (json_int_t)s->ndamage_total, "duration_ns",
				                      (json_int_t)(st->last_ts - st->first_ts));
				if (o) {
					json_dumpf(o, stdout, JSON_COMPACT);
					putc('\n', stdout);
					json_decref(o);
				}
				continue;
			}
			printf("  %s: %" PRIu64 " events", s->path, st->events);
			if (filtered)
				printf(" (%" PRIu64 " matching)", d->matching[s->index]);
			printf(", %" PRIu64 " packet%s, %" PRIu64 " bytes, %" PRIu64
			       " discarded, %" PRIu64 " damaged",
			       st->packets, st->packets == 1 ? "" : "s", s->size,
			       st->events_discarded, s->ndamage_total);
			if (st->events)
				printf(", %.9f s", (double)(st->last_ts - st->first_ts) / 1e9);
			putc('\n', stdout);
		}
	}
}

/* The summary, each damaged place, and each stream that lost events. */
static void report(const struct dump *d, struct vgt_trace *t)
{
	uint64_t discarded = 0, damage = vgt_damage_total(t);
	for (size_t i = 0; i < vgt_stream_count(t); i++)
		discarded += vgt_stream_at(t, i)->stats.events_discarded;
	fprintf(stderr,
	        "vigil dump: %" PRIu64 " event%s (%" PRIu64 " %s) from %zu stream%s in %zu "
	        "image%s; %" PRIu64 " event%s discarded; %" PRIu64 " damaged place%s\n",
	        d->total, d->total == 1 ? "" : "s", d->shown, d->stats ? "matching" : "shown",
	        vgt_stream_count(t), vgt_stream_count(t) == 1 ? "" : "s", vgt_image_count(t),
	        vgt_image_count(t) == 1 ? "" : "s", discarded, discarded == 1 ? "" : "s", damage,
	        damage == 1 ? "" : "s");
	vgt_damage_report(t, "vigil dump", " (size cap, full disk, or nested in a signal handler)",
	                  stderr);
}

static int parse_time_option(const char *opt, const char *text, int64_t *out)
{
	if (vgt_parse_duration(text, out) == 0)
		return 0;
	fprintf(stderr, "vigil dump: bad time '%s' for %s (examples: 1.5s, 200ms, 30us, 7ns)\n",
	        text, opt);
	return -1;
}

static int parse_options(struct dump *d, int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_RELATIVE, OPT_FROM, OPT_TO, OPT_NAME, OPT_STATS };
	static const struct option longopts[] = {{"json", no_argument, NULL, OPT_JSON},
	                                         {"relative", no_argument, NULL, OPT_RELATIVE},
	                                         {"from", required_argument, NULL, OPT_FROM},
	                                         {"to", required_argument, NULL, OPT_TO},
	                                         {"name", required_argument, NULL, OPT_NAME},
	                                         {"stats", no_argument, NULL, OPT_STATS},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	optind = 0; /* GNU: start over, whoever parsed before */
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1;) {
		switch (c) {
		case OPT_JSON:
			d->json = true;
			break;
		case OPT_RELATIVE:
			d->relative = true;
			break;
		case OPT_STATS:
			d->stats = true;
			break;
		case OPT_FROM:
			if (parse_time_option("--from", optarg, &d->from) < 0)
				return 2;
			d->have_from = true;
			break;
		case OPT_TO:
			if (parse_time_option("--to", optarg, &d->to) < 0)
				return 2;
			d->have_to = true;
			break;
		case OPT_NAME:
			d->globs = realloc(d->globs, (d->nglobs + 1) * sizeof *d->globs);
			if (!d->globs) {
				fputs("vigil dump: out of memory\n", stderr);
				return 2;
			}
			d->globs[d->nglobs++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("dump", argv);
		}
	}
	if (d->have_from && d->have_to && d->from > d->to) {
		fprintf(stderr, "vigil dump: --from is after --to\n");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "vigil dump: no trace given (see 'vigil dump --help')\n");
		return 2;
	}
	return -1;
}

/* Output failed: a closed pipe ends quietly, anything else is an error. */
static int output_failed(void)
{
	if (errno == EPIPE)
		return 0;
	fprintf(stderr, "vigil dump: cannot write output: %s\n", strerror(errno));
	return 2;
}

/* t + delta (delta >= 0), saturated. */
static int64_t after(int64_t t, int64_t delta)
{
	return t > INT64_MAX - delta ? INT64_MAX : t + delta;
}

static int run(struct dump *d, struct vgt_source *src)
{
	struct vgt_trace *t = vgt_source_trace(src);
	if (!vgt_source_readable(src)) {
		vgt_damage_report(t, "vigil dump", "", stderr); /* the metadata's damage */
		return 2;
	}
	d->matching = calloc(vgt_stream_count(t) + 1, sizeof *d->matching);
	d->names = vgt_names_new();
	d->first = vgt_source_first_ts(src);
	int64_t from = d->have_from ? after(d->first, d->from) : INT64_MIN;
	int64_t to = d->have_to ? after(d->first, d->to) : INT64_MAX;
	int rc = -1;
	for (const struct vgt_event *ev; (ev = vgt_source_next(src));) {
		d->total++;
		vgt_names_observe(d->names, ev); /* names outside the window count too */
		if (ev->ts < from || ev->ts > to || !name_matches(d, ev->type->name))
			continue;
		d->matching[ev->stream->index]++;
		d->shown++;
		if (d->stats)
			continue;
		if (d->json)
			write_json(d, ev);
		else
			write_text(d, ev);
		if (ferror(stdout)) {
			rc = output_failed();
			break;
		}
	}
	if (rc < 0 && d->stats)
		write_stats(d, t);
	if (rc < 0 && fflush(stdout) == EOF)
		rc = output_failed();
	if (rc < 0) {
		report(d, t);
		rc = vgt_damage_total(t) ? 1 : 0;
	}
	vgt_names_free(d->names);
	free(d->matching);
	return rc;
}

int vg_cmd_dump(int argc, char **argv)
{
	struct dump d = {0};
	int rc = parse_options(&d, argc, argv);
	if (rc >= 0) {
		free(d.globs);
		return rc;
	}
	signal(SIGPIPE, SIG_IGN);
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	char err[512];
	struct vgt_source *src =
	    vgt_source_open((const char *const *)argv + optind, (size_t)(argc - optind),
	                    VGT_SOURCE_UNREADABLE_OK, err, sizeof err);
	if (!src) {
		fprintf(stderr, "vigil dump: %s\n", err);
		free(d.globs);
		return 2;
	}
	rc = run(&d, src);
	vgt_source_close(src);
	free(d.globs);
	return rc;
}
