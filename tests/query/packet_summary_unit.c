/* Packet summaries (trace/summary.c, vgt_packet_summaries): a build that reads only some
 * relations passes over the packets holding none of their events, once a first read has
 * written each stream's summary beside it, and gives the same answer as a build without
 * summaries (VIGIL_SKIP=off). A trace built byte by byte (tests/unit/reader_tracegen.h)
 * of two streams of 60 packets: Send events everywhere, one Lock event in every tenth
 * packet of stream 0. Checked, at 1 and 2 threads:
 *   - the first build writes the summaries and passes over nothing; the next one passes
 *     over every packet without a Lock, with the same Lock tuples and the same events,
 *     first and last as the whole build;
 *   - a Send build under a time bound passes over the packets wholly outside it, with
 *     the whole build's Send tuples within the bound;
 *   - a summary with a byte changed is said once on stderr and not used (the answer the
 *     same), then written again;
 *   - a summary that lies (a Lock-holding packet said to hold only Send, its Lock
 *     positions dropped, its checksum made to hold) is believed: the Lock tuple is lost;
 *     with the positions left, the summary cannot be one (a position of an id the
 *     packet does not hold): said, not used. This is the check's teeth: the
 *     comparisons above see a packet wrongly passed over;
 *   - a stream grown after its summary was made is read whole again (its new Lock kept);
 *   - where a summary cannot be written beside its stream (a folder in its place, left
 *     alone), it goes to the cache directory (VIGIL_CACHE_DIR) and is used from there. */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_io.h"
#include "interleaved_trace.h"
#include "reader_tracegen.h"
#include "relations/relation.h"
#include "summary_file.h"
#include "trace/trace.h"

#define LOCK 10
#define SEND 11
#define PACKETS 60
#define PER_PACKET 100

static int failures;

static void fail(const char *what)
{
	fprintf(stderr, "query.packet_summary: %s\n", what);
	failures++;
}

static char stream_path[2][4096];

/* Stream st's packets (stream 0 with one more packet, holding Lock 999, when grown). */
static void write_stream(struct tg_image *img, unsigned st, bool grown)
{
	struct tg_stream *s = tg_stream_new(img, 42 + st, 0);
	unsigned n = PACKETS * PER_PACKET + (grown ? PER_PACKET : 0);
	for (unsigned k = 0; k < n; k++) {
		uint64_t t = clock_of(st, k);
		unsigned p = k / PER_PACKET;
		if (k % PER_PACKET == 0)
			tg_packet_begin(s, t);
		if (st == 0 && k % PER_PACKET == 50 && (p % 10 == 3 || p == PACKETS)) {
			tg_event(s, LOCK, t);
			tg_u32(s, p == PACKETS ? 999 : p);
		} else {
			tg_event(s, SEND, t);
			tg_u32(s, k);
			tg_str(s, k % 3 ? "a" : "bb");
		}
		if (k % PER_PACKET == PER_PACKET - 1)
			tg_packet_end(s, 0, 0);
	}
	snprintf(stream_path[st], sizeof stream_path[st], "%s", tg_stream_write(s));
}

static struct tg_image *make_trace(const char *root)
{
	struct tg_image *img = tg_image_new(root, "app-42-0", NULL);
	tg_declare(img, "lock", LOCK, "vigil:kind=event;flag=sensor;traced;relation=Lock",
	           "uint32_t n;");
	tg_declare(img, "send", SEND, "vigil:kind=event;flag=sensor;traced;relation=Send",
	           "uint32_t n; string s;");
	tg_write_metadata(img);
	write_stream(img, 0, false);
	write_stream(img, 1, false);
	return img;
}

/* The tuples of r from lo to hi, one line each. */
static char *dump(const struct vgq_relation *r, int64_t lo, int64_t hi, size_t *count)
{
	char *p = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&p, &len);
	*count = 0;
	for (size_t t = 0; r && t < r->ntuples; t++) {
		if (r->from[t] < lo || r->from[t] > hi)
			continue;
		++*count;
		it_tuple_line(f, r, t);
	}
	fclose(f);
	return p;
}

static const int64_t LO = OFFSET_NS + 20000, HI = OFFSET_NS + 24000;

/* A build of `rel` (Send under the time bound LO..HI when bounded). */
static struct vgq_database *build(struct vgt_trace *t, const char *rel, bool bounded,
                                  unsigned threads)
{
	const char *need[] = {rel};
	struct vgq_time_bound bound = {rel, LO, HI};
	vgt_set_decode_threads(threads);
	struct vgq_build_options o = {
	    .need = need, .nneed = 1, .bounds = bounded ? &bound : NULL, .nbounds = bounded};
	return vgq_database_build_opts(t, &o);
}

static struct vgt_trace *open_trace(const char *root)
{
	char err[256];
	const char *paths[] = {root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t) {
		fail(err);
		exit(1);
	}
	return t;
}

static char side[2][4200];

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

struct want {
	char *rows;
	uint64_t events;
	int64_t first, last;
};

/* Builds `rel` and compares it with w; the packets passed over must be in [min, max]. */
static void check(const char *what, struct vgt_trace *t, const char *rel, bool bounded,
                  unsigned threads, const struct want *w, uint64_t min, uint64_t max)
{
	struct vgq_database *db = build(t, rel, bounded, threads);
	size_t n;
	char *rows = dump(vgq_database_find(db, rel), bounded ? LO : INT64_MIN,
	                  bounded ? HI : INT64_MAX, &n);
	const struct vgq_skip_stats *k = &db->skipped;
	char msg[600];
	snprintf(msg, sizeof msg,
	         "%s (%u threads): %s %zu tuples %s, events %" PRIu64 "/%" PRIu64 ", first %" PRId64
	         "/%" PRId64 ", last %" PRId64 "/%" PRId64 ", %" PRIu64
	         " packets passed over whole (%" PRIu64 " events; wanted %" PRIu64 "..%" PRIu64 ")",
	         what, threads, rel, n, strcmp(rows, w->rows) ? "differ" : "the same", db->events,
	         w->events, db->first, w->first, db->last, w->last, k->packets_skipped,
	         k->events_skipped, min, max);
	if (strcmp(rows, w->rows) || db->events != w->events || db->first != w->first ||
	    db->last != w->last || k->packets_skipped < min || k->packets_skipped > max ||
	    (k->packets_skipped && !k->events_skipped))
		fail(msg);
	else
		printf("query.packet_summary: %s\n", msg);
	free(rows);
	vgq_database_free(db);
}

static struct want whole(struct vgt_trace *t, const char *rel, bool bounded)
{
	setenv("VIGIL_SKIP", "off", 1);
	struct vgq_database *db = build(t, rel, bounded, 1);
	unsetenv("VIGIL_SKIP");
	size_t n;
	struct want w = {dump(vgq_database_find(db, rel), bounded ? LO : INT64_MIN,
	                      bounded ? HI : INT64_MAX, &n),
	                 db->events, db->first, db->last};
	vgq_database_free(db);
	return w;
}

/* The summary file's 64-bit words (header of 8, then entries of 8 + bitmap words). */
static uint64_t *read_words(const char *path, size_t *n)
{
	size_t len;
	char *b = vgb_read_file(path, 1 << 24, 0, &len);
	*n = b ? len / 8 : 0;
	return (uint64_t *)b;
}

static void write_words(const char *path, uint64_t *v, size_t n, bool fix_sum)
{
	if (fix_sum) { /* the checksum of the body (trace/summary.c) made to hold */
		uint64_t h = 1469598103934665603ull;
		for (size_t i = 8; i < n; i++)
			h = (h ^ v[i]) * 1099511628211ull;
		v[6] = h;
	}
	tg_write_file(path, v, n * 8);
}

/* stderr to a file while f runs: what it said. */
static char *said(void (*f)(void *), void *arg, const char *root)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/stderr.txt", root);
	fflush(stderr);
	int saved = dup(2);
	if (!freopen(path, "w", stderr))
		exit(1);
	f(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	size_t len;
	char *text = vgb_read_file(path, 1 << 20, 0, &len);
	return text ? text : strdup("");
}

struct damaged_run {
	struct vgt_trace *t;
	const struct want *w;
};

static void damaged_build(void *arg)
{
	struct damaged_run *r = arg;
	/* stream 0's summary unused: only stream 1's 60 packets */
	check("a damaged summary", r->t, "Lock", false, 1, r->w, PACKETS, PACKETS);
}

int main(void)
{
	char *root = tg_tempdir();
	struct tg_image *img = make_trace(root);
	for (int i = 0; i < 2; i++) {
		char *d = strdup(stream_path[i]), *slash = strrchr(d, '/');
		*slash = 0;
		snprintf(side[i], sizeof side[i], "%s/.%s.packets", d, slash + 1);
		free(d);
	}
	struct vgt_trace *t = open_trace(root);
	struct want lock = whole(t, "Lock", false), send = whole(t, "Send", true);
	if (exists(side[0]) || exists(side[1]))
		fail("VIGIL_SKIP=off wrote a summary");
	if (!strstr(lock.rows, " 3\n") || !strstr(lock.rows, " 53\n"))
		fail("the trace is not the one the test means (Lock 3 .. 53)");

	/* 6 packets of stream 0 hold a Lock: 54 + 60 are passed over */
	check("first read, summaries written", t, "Lock", false, 1, &lock, 0, 0);
	if (!exists(side[0]) || !exists(side[1]))
		fail("no summary beside the streams after a whole read");
	for (unsigned th = 1; th <= 2; th++) {
		check("Lock with summaries", t, "Lock", false, th, &lock, 2 * PACKETS - 6,
		      2 * PACKETS - 6);
		check("Send under a time bound", t, "Send", true, th, &send, 2 * PACKETS - 20,
		      2 * PACKETS - 8);
	}

	/* a byte changed: said, not used, made again */
	size_t n;
	uint64_t *v = read_words(side[0], &n);
	uint64_t *good = malloc(n * 8);
	memcpy(good, v, n * 8);
	v[8 + 2] ^= 4; /* the first packet's event count */
	write_words(side[0], v, n, false);
	struct damaged_run dr = {t, &lock};
	char *err = said(damaged_build, &dr, root);
	if (!strstr(err, "not a packet summary") || !strstr(err, side[0]) ||
	    strchr(err, '\n') != err + strlen(err) - 1)
		fail("a damaged summary was not said in one line");
	free(err);
	check("the summary made again", t, "Lock", false, 1, &lock, 2 * PACKETS - 6,
	      2 * PACKETS - 6);

	/* packet 3 of stream 0 said to hold only Send, its Lock positions left: no summary */
	memcpy(v, good, n * 8);
	write_words(side[0], v, n, false);
	struct sf_file *sf = sf_read(side[0]);
	if (!sf || !sf_group_of(sf, 3, LOCK))
		fail("packet 3 of stream 0 has no Lock positions in a summary of the third format");
	else {
		sf->entries[3 * sf->per + 8] &= ~(1ull << LOCK);
		sf_write(side[0], sf);
		char *said_bad = said(damaged_build, &dr, root);
		if (!strstr(said_bad, "not a packet summary") ||
		    !strstr(said_bad, "an event id it does not hold"))
			fail("positions of an id the packet does not hold were not said");
		free(said_bad);
		sf_free(sf);
	}

	/* a lie the checks cannot see: packet 3 of stream 0 said to hold only Send, its Lock
	 * positions dropped */
	write_words(side[0], good, n, false);
	sf = sf_read(side[0]);
	if (!sf || !sf_drop_group(sf, 3, LOCK))
		fail("no Lock positions to drop in packet 3 of stream 0");
	else
		sf->entries[3 * sf->per + 8] &= ~(1ull << LOCK);
	if (sf)
		sf_write(side[0], sf);
	sf_free(sf);
	struct vgq_database *db = build(t, "Lock", false, 1);
	size_t nrows;
	char *rows = dump(vgq_database_find(db, "Lock"), INT64_MIN, INT64_MAX, &nrows);
	if (!strcmp(rows, lock.rows) || strstr(rows, " 3\n"))
		fail("a lying summary was not believed: the test cannot see a wrong skip");
	free(rows);
	vgq_database_free(db);
	write_words(side[0], good, n, false);
	free(v);
	free(good);
	vgt_close(t);

	/* stream 0 grows: its summary is stale, the stream read whole, Lock 999 kept */
	write_stream(img, 0, true);
	t = open_trace(root);
	struct want grown = whole(t, "Lock", false);
	if (!strstr(grown.rows, " 999\n"))
		fail("the grown stream's Lock is not in the whole build");
	check("a grown stream", t, "Lock", false, 1, &grown, PACKETS, PACKETS);
	check("its summary made again", t, "Lock", false, 1, &grown, 2 * PACKETS - 6,
	      2 * PACKETS - 6);
	vgt_close(t);

	/* where the side file would go, something that is no file (a folder): left as it is,
	 * the summary made in the cache directory (VIGIL_CACHE_DIR) and used from there; as
	 * an unwritable trace folder would be */
	char cache[4200];
	snprintf(cache, sizeof cache, "%s/cache", root);
	unlink(side[0]);
	mkdir(side[0], 0755);
	setenv("VIGIL_CACHE_DIR", cache, 1);
	t = open_trace(root);
	check("no file beside stream 0, first read", t, "Lock", false, 1, &grown, PACKETS, PACKETS);
	check("stream 0's summary in the cache", t, "Lock", false, 1, &grown, 2 * PACKETS - 6,
	      2 * PACKETS - 6);
	vgt_close(t);
	unsetenv("VIGIL_CACHE_DIR");
	DIR *d = opendir(cache);
	unsigned files = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		files += !strncmp(e->d_name, "packets-", 8);
	if (d)
		closedir(d);
	struct stat st;
	if (files != 1 || stat(side[0], &st) < 0 || !S_ISDIR(st.st_mode))
		fail("stream 0's summary is not in the cache directory, or the folder in its "
		     "place was touched");
	rmdir(side[0]);
	free(lock.rows);
	free(send.rows);
	free(grown.rows);
	tg_image_free(img);
	tg_rmtree(root);
	free(root);
	vgt_set_decode_threads(1);
	return failures ? 1 : 0;
}
