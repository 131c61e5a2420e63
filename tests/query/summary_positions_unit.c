/* Positions in packet summaries (trace/summary_positions.c): a build over a rare relation
 * whose events are in every packet, interleaved with a flood of another, decodes only the
 * rare events once a first read has written each stream's summary with positions, and
 * gives the same answer as without positions (VIGIL_SUMMARY_POSITIONS=off: summaries of
 * the first format, every packet read header by header) and as without summaries
 * (VIGIL_SKIP=off). A trace built byte by byte (tests/unit/reader_tracegen.h) with the
 * runtime's compact event header (27-bit times: a visited event's clock must come from
 * its position, the events before it are not decoded), two streams of 40 packets of 200
 * events: Send everywhere, two Rare in every packet, and the interval relation Hold, 14
 * begins and 14 ends in every packet (14% of the events, as bench/query-subject's Lock);
 * in one packet of stream 1 a vg.report.synth marker, then a Send (the synthesized one),
 * then a Rare. Checked, at 1 and 2 threads:
 *   - summaries of the first format are written and used: nothing passed over, nothing
 *     read by positions, the same Rare tuples, events, first and last;
 *   - with positions, such a summary is made again in the third format, then every
 *     packet but the marker's is read by its positions (only the Rare events decoded),
 *     the same answer; under a time bound on Rare and on Send the same as without;
 *   - Hold too is read by positions (its begins and ends merged in the packet's order),
 *     and Rare with Hold (three ids' positions merged),
 *     with the same tuples as without positions and without summaries; and (a trace
 *     without the marker) with each stream read in ranges on 2 threads (VIGIL_SPLIT), the
 *     ranges' packets read by positions counted as the stream's;
 *   - a summary of the second format (16-byte records) is used without its positions
 *     when they are off, made again in the third format when they are on;
 *   - a byte of a position changed: said once, not used, made again;
 *   - a position moved onto another event (its checksum made to hold): said once, the
 *     packet read whole, the same answer, the summary made again; likewise a position
 *     past its packet's end (the group cannot be read);
 *   - a lie the checks cannot see (a Rare position removed, the summary otherwise
 *     consistent) is believed: a Rare tuple lost. The comparisons above would see a
 *     position missing. */
#define _GNU_SOURCE
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
#include "trace/internal.h" /* a cursor's positions buffers */
#include "trace/source.h"
#include "trace/trace.h"

#define RARE 10
#define SEND 11
#define SYNTH 12
#define HOLD_B 13
#define HOLD_E 14
#define PACKETS 40
#define PER_PACKET 200
#define MARKED_PACKET 5 /* of stream 1: the vg.report.synth marker */

static int failures;

static void fail(const char *what)
{
	fprintf(stderr, "query.summary_positions: %s\n", what);
	failures++;
}

/* Far above 2^27 and 40,000 apart: the compact header's 27 bits wrap every 3,355 events. */
static uint64_t clock_at(unsigned st, unsigned k)
{
	return (5ull << 27) + 40000ull * k + 7 * st;
}

static char stream_path[2][4096], side[2][4200];

/* Stream st; with the marker (stream 1 of the main trace) when marked. */
static void write_stream(struct tg_image *img, unsigned st, bool marked)
{
	struct tg_stream *s = tg_stream_new(img, 42 + st, 0);
	for (unsigned k = 0; k < PACKETS * PER_PACKET; k++) {
		uint64_t t = clock_at(st, k);
		unsigned p = k / PER_PACKET, in = k % PER_PACKET;
		if (in == 0)
			tg_packet_begin(s, t);
		if (marked && p == MARKED_PACKET && in == 60) {
			tg_event(s, SYNTH, t);
			tg_u64(s, clock_at(st, k) - 1000000); /* the next event's time */
		} else if (in == 37 || in == 150 || (marked && p == MARKED_PACKET && in == 62)) {
			tg_event(s, RARE, t);
			tg_u32(s, k * 2 + st);
		} else if ((in % 14 == 1 || in % 14 == 8) &&
		           in < 196) { /* Hold slot in / 14, begun and ended */
			tg_event(s, in % 14 == 1 ? HOLD_B : HOLD_E, t);
			tg_u32(s, in / 14);
		} else {
			tg_event(s, SEND, t);
			tg_u32(s, k);
			tg_str(s, k % 3 ? "a" : "bb");
		}
		if (in == PER_PACKET - 1)
			tg_packet_end(s, 0, 0);
	}
	snprintf(stream_path[st], sizeof stream_path[st], "%s", tg_stream_write(s));
	char *d = strdup(stream_path[st]), *slash = strrchr(d, '/');
	*slash = 0;
	snprintf(side[st], sizeof side[st], "%s/.%s.packets", d, slash + 1);
	free(d);
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

static const int64_t LO = OFFSET_NS + (5ll << 27) + 40000ll * 3000,
                     HI = OFFSET_NS + (5ll << 27) + 40000ll * 5000;

struct result {
	char *rows;
	uint64_t events, skipped, positioned, passed_whole;
	int64_t first, last;
};

/* A build of rel (under the time bound LO..HI when bounded): its tuples and counts. */
/* A build of rel ("A+B": of both, their tuples one after the other; under the time
 * bound LO..HI when bounded): its tuples and counts. */
static struct result build(struct vgt_trace *t, const char *rel, bool bounded, unsigned threads)
{
	char names[64];
	snprintf(names, sizeof names, "%s", rel);
	char *plus = strchr(names, '+');
	if (plus)
		*plus = 0;
	const char *need[] = {names, plus ? plus + 1 : NULL};
	struct vgq_time_bound bound = {rel, LO, HI};
	vgt_set_decode_threads(threads);
	struct vgq_build_options o = {.need = need,
	                              .nneed = plus ? 2 : 1,
	                              .bounds = bounded ? &bound : NULL,
	                              .nbounds = bounded};
	struct vgq_database *db = vgq_database_build_opts(t, &o);
	char *p = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&p, &len);
	for (size_t k = 0; k < o.nneed; k++) {
		const struct vgq_relation *r = vgq_database_find(db, need[k]);
		for (size_t i = 0; r && i < r->ntuples; i++)
			if (!bounded || (r->from[i] >= LO && r->from[i] <= HI))
				it_tuple_line(f, r, i);
	}
	fclose(f);
	struct result res = {p,
	                     db->events,
	                     db->skipped.events_skipped,
	                     db->skipped.packets_positioned,
	                     db->skipped.packets_skipped,
	                     db->first,
	                     db->last};
	vgq_database_free(db);
	return res;
}

static struct result whole(struct vgt_trace *t, const char *rel, bool bounded)
{
	setenv("VIGIL_SKIP", "off", 1);
	struct result r = build(t, rel, bounded, 1);
	unsetenv("VIGIL_SKIP");
	return r;
}

/* Builds rel and compares it with w; the packets read by positions must be `positioned`,
 * those passed over whole `whole`, and the events not decoded all those packets' but
 * rel's (at most 3 Rare, 28 Hold, 31 of both in a packet). */
static void check(const char *what, struct vgt_trace *t, const char *rel, bool bounded,
                  unsigned threads, const struct result *w, uint64_t positioned, uint64_t whole)
{
	struct result r = build(t, rel, bounded, threads);
	char msg[700];
	snprintf(msg, sizeof msg,
	         "%s (%u threads): %s tuples %s, events %" PRIu64 "/%" PRIu64 ", first %" PRId64
	         "/%" PRId64 ", last %" PRId64 "/%" PRId64 ", %" PRIu64
	         " packets read by positions (wanted %" PRIu64 "), %" PRIu64
	         " passed over whole (wanted %" PRIu64 "), %" PRIu64 " events not decoded",
	         what, threads, rel, strcmp(r.rows, w->rows) ? "differ" : "the same", r.events,
	         w->events, r.first, w->first, r.last, w->last, r.positioned, positioned,
	         r.passed_whole, whole, r.skipped);
	unsigned visited = !strcmp(rel, "Hold") ? 28 : !strcmp(rel, "Rare+Hold") ? 31 : 3;
	uint64_t least = positioned * (PER_PACKET - visited) + whole * PER_PACKET;
	if (strcmp(r.rows, w->rows) || r.events != w->events || r.first != w->first ||
	    r.last != w->last || r.positioned != positioned || r.passed_whole != whole ||
	    r.skipped < least || (!least && r.skipped))
		fail(msg);
	else
		printf("query.summary_positions: %s\n", msg);
	free(r.rows);
}

static uint64_t *read_words(const char *path, size_t *n)
{
	size_t len;
	char *b = vgb_read_file(path, 1 << 24, 0, &len);
	*n = b ? len / 8 : 0;
	return (uint64_t *)b;
}

/* Writes the words, the body's checksum (trace/summary.c) made to hold when fix_sum. */
static void write_words(const char *path, uint64_t *v, size_t n, bool fix_sum)
{
	if (fix_sum) {
		uint64_t h = 1469598103934665603ull;
		for (size_t i = 8; i < n; i++)
			h = (h ^ v[i]) * 1099511628211ull;
		v[6] = h;
	}
	tg_write_file(path, v, n * 8);
}

static const uint64_t MAGIC1 = 0x314d55534b504756ull, MAGIC2 = 0x324d55534b504756ull;

static uint64_t magic_of(const char *path)
{
	size_t n;
	uint64_t *v = read_words(path, &n);
	uint64_t m = n ? v[0] : 0;
	free(v);
	return m;
}

static int by_offset(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a & ((1ull << 48) - 1),
	         y = *(const uint64_t *)b & ((1ull << 48) - 1);
	return (x > y) - (x < y);
}

/* f written at path in the second format (VGPKSUM2, as vigil wrote it before the third):
 * per packet with positions, the bitmap of the ids positioned, then for each of their
 * events in the packet's order its offset (with its id above bit 48) and its clock; an
 * entry's position word counts words. */
static void write_second_format(const char *path, struct sf_file *f)
{
	size_t words = f->count * f->per, bw = f->per - 8, cap = 0, npos = 0;
	for (size_t p = 0; p < f->count; p++) {
		cap += bw;
		for (size_t k = 0; k < f->ngroups[p]; k++)
			cap += 2 * f->g[p][k].count;
	}
	uint64_t *v = calloc(8 + words + cap, 8), *pos = v + 8 + words;
	memcpy(v + 8, f->entries, words * 8);
	for (size_t p = 0; p < f->count; p++) {
		v[8 + p * f->per + 7] = npos;
		if (!f->ngroups[p])
			continue;
		uint64_t *bitmap = pos + npos, *rec = bitmap + bw;
		size_t k = 0;
		for (size_t g = 0; g < f->ngroups[p]; g++) {
			const struct sf_group *gr = &f->g[p][g];
			bitmap[gr->id / 64] |= 1ull << (gr->id % 64);
			for (uint64_t j = 0; j < gr->count; j++, k++) {
				rec[2 * k] = gr->off[j] | gr->id << 48;
				rec[2 * k + 1] = gr->clock[j];
			}
		}
		qsort(rec, k, 16, by_offset);
		npos += bw + 2 * k;
	}
	memcpy(v, f->head, 64);
	v[0] = MAGIC2;
	v[7] = npos;
	write_words(path, v, 8 + words + npos, true);
	free(v);
}

/* said(): stderr to a file while the build runs. */
static char *said_build(struct vgt_trace *t, const char *root, const struct result *w,
                        const char *what, uint64_t positioned)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/stderr.txt", root);
	fflush(stderr);
	int saved = dup(2);
	if (!freopen(path, "w", stderr))
		exit(1);
	check(what, t, "Rare", false, 1, w, positioned, 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	size_t len;
	char *text = vgb_read_file(path, 1 << 20, 0, &len);
	return text ? text : strdup("");
}

static bool one_line_with(const char *text, const char *a, const char *b)
{
	return strstr(text, a) && strstr(text, b) && strchr(text, '\n') == text + strlen(text) - 1;
}

static struct tg_image *make_image(const char *root)
{
	struct tg_image_opts io = {.compact = 1};
	struct tg_image *img = tg_image_new(root, "app-42-0", &io);
	tg_declare(img, "rare", RARE, "vigil:kind=event;flag=sensor;traced;relation=Rare",
	           "uint32_t n;");
	tg_declare(img, "send", SEND, "vigil:kind=event;flag=sensor;traced;relation=Send",
	           "uint32_t n; string s;");
	tg_declare_builtin(img, "vg.report.synth", SYNTH);
	tg_declare(img, "hold.begin", HOLD_B, "vigil:kind=begin;flag=sensor;traced;relation=Hold",
	           "uint32_t slot;");
	tg_declare(img, "hold.end", HOLD_E, "vigil:kind=end;flag=sensor;traced;relation=Hold",
	           "uint32_t slot;");
	tg_write_metadata(img);
	return img;
}

/* A range's cursor gives its positions buffers back when it reaches its end, not when
 * the ranges are joined: a stream cut in 43 ranges held about 1 MB of them per range
 * until the join (a 2-thread query over Lock, 10M events: 135-140 MB, 97-103 MB so). */
static void range_buffers_released(const char *root)
{
	char err[256];
	const char *paths[] = {root};
	struct vgt_source *src = vgt_source_open(paths, 1, 0, err, sizeof err);
	if (!src) {
		fail(err);
		return;
	}
	struct vgt_trace *t = vgt_source_trace(src);
	vgt_packet_summaries(t, true);
	size_t n = vgt_class_count(t);
	bool *skip = calloc(n + 1, sizeof *skip); /* Hold's ids read, the others passed over */
	for (size_t c = 0; c < n; c++)
		skip[c] = strncmp(vgt_class_at(t, c)->name, "hold.", 5) != 0;
	vgt_source_skip_payloads(src, skip);
	struct vgt_split *sp = vgt_source_split(src, 0, 4);
	if (!sp) {
		fail("stream 0 was not cut in ranges");
	} else {
		bool jumped = false, held = false;
		for (size_t k = 0; k < vgt_split_count(sp); k++) {
			struct vgt_cursor *c = vgt_split_cursor(sp, k);
			while (vgt_cursor_next(c))
				jumped |= c->jump_cap > 0;
			held |= c->jump_cap > 0 || c->jump_at;
		}
		if (!jumped)
			fail("the ranges were not read by positions");
		if (held)
			fail("a range's cursor at its end still holds its positions buffers");
		vgt_split_join(sp);
	}
	vgt_source_close(src);
	free(skip);
}

/* A trace without the marker, each stream cut in ranges of 16 KiB read each on its own
 * (VIGIL_SPLIT, trace/stream_split.c; stream 1's marker keeps the main trace's streams
 * whole at 2 threads): the packets read by positions in the ranges are the stream's. */
static void in_ranges(void)
{
	char *root = tg_tempdir();
	struct tg_image *img = make_image(root);
	write_stream(img, 0, false);
	write_stream(img, 1, false);
	struct vgt_trace *t = open_trace(root);
	struct result hold = whole(t, "Hold", false);
	check("no marker, first read", t, "Hold", false, 1, &hold, 0, 0);
	setenv("VIGIL_SPLIT", "16384", 1);
	check("no marker, streams in ranges", t, "Hold", false, 2, &hold, 2 * PACKETS, 0);
	unsetenv("VIGIL_SPLIT");
	range_buffers_released(root);
	free(hold.rows);
	vgt_close(t);
	tg_image_free(img);
	tg_rmtree(root);
	free(root);
}

int main(void)
{
	char *root = tg_tempdir();
	struct tg_image *img = make_image(root);
	write_stream(img, 0, false);
	write_stream(img, 1, true);
	struct vgt_trace *t = open_trace(root);
	/* every packet but the marker's; under the time bound, packets 15 to 25 of stream 0
	 * and 15 to 24 of stream 1 are read (by positions for Rare), the others passed over
	 * whole but the marker's */
	const uint64_t read_by_positions = 2 * PACKETS - 1, inside = 21,
	               outside = 2 * PACKETS - inside - 1;
	struct result rare = whole(t, "Rare", false), rare_b = whole(t, "Rare", true),
	              send_b = whole(t, "Send", true), hold = whole(t, "Hold", false);
	size_t nrare = 0;
	for (const char *c = rare.rows; (c = strchr(c, '\n')); c++)
		nrare++;
	/* the marker is no event of the database */
	if (nrare != 2 * 2 * PACKETS + 1 || rare.events != 2 * PACKETS * PER_PACKET - 1)
		fail("the trace is not the one the test means (161 Rare tuples of 15999 events)");
	size_t nhold = 0;
	for (const char *c = hold.rows; (c = strchr(c, '\n')); c++)
		nhold++;
	if (nhold != 2 * PACKETS * 14) {
		fprintf(stderr, "%zu Hold tuples\n", nhold);
		fail("the trace is not the one the test means (1120 Hold tuples)");
	}

	/* the first format: written, then used (every packet holds Rare: none passed over) */
	setenv("VIGIL_SUMMARY_POSITIONS", "off", 1);
	check("first format, first read", t, "Rare", false, 1, &rare, 0, 0);
	if (magic_of(side[0]) != MAGIC1 || magic_of(side[1]) != MAGIC1)
		fail("VIGIL_SUMMARY_POSITIONS=off did not write summaries of the first format");
	for (unsigned th = 1; th <= 2; th++)
		check("first format, used", t, "Rare", false, th, &rare, 0, 0);
	unsetenv("VIGIL_SUMMARY_POSITIONS");

	/* with positions: the first format made again, then read by positions */
	check("positions, the first format made again", t, "Rare", false, 1, &rare, 0, 0);
	if (magic_of(side[0]) != SF_MAGIC3 || magic_of(side[1]) != SF_MAGIC3)
		fail("the summaries were not made again with positions");
	for (unsigned th = 1; th <= 2; th++) {
		check("positions", t, "Rare", false, th, &rare, read_by_positions, 0);
		check("positions, Rare under a time bound", t, "Rare", true, th, &rare_b, inside,
		      outside);
		/* Send is nowhere positioned: the packets in the bound read header by header */
		check("positions, Send under a time bound", t, "Send", true, th, &send_b, 0,
		      outside);
	}
	/* Hold, 14% of the events: read by positions, the same as without them */
	setenv("VIGIL_SUMMARY_POSITIONS", "off", 1);
	struct result hold_off = build(t, "Hold", false, 1);
	unsetenv("VIGIL_SUMMARY_POSITIONS");
	if (strcmp(hold_off.rows, hold.rows) || hold_off.positioned)
		fail("Hold without positions differs from Hold without summaries");
	/* Rare and Hold together: three ids' positions merged in each packet */
	struct result both = {0};
	size_t lr = strlen(rare.rows), lh = strlen(hold.rows);
	both.rows = malloc(lr + lh + 1);
	memcpy(both.rows, rare.rows, lr);
	memcpy(both.rows + lr, hold.rows, lh + 1);
	both.events = rare.events;
	both.first = rare.first;
	both.last = rare.last;
	for (unsigned th = 1; th <= 2; th++) {
		check("positions, Hold (14% of the events)", t, "Hold", false, th, &hold,
		      read_by_positions, 0);
		check("positions, Rare and Hold", t, "Rare+Hold", false, th, &both,
		      read_by_positions, 0);
	}
	free(both.rows);

	/* with positions turned off, a summary with them is used without them */
	setenv("VIGIL_SUMMARY_POSITIONS", "off", 1);
	check("positions not used", t, "Rare", false, 1, &rare, 0, 0);
	unsetenv("VIGIL_SUMMARY_POSITIONS");

	/* the second format: used without positions when off, made again when on */
	struct sf_file *sf[2] = {sf_read(side[0]), sf_read(side[1])};
	if (!sf[0] || !sf[1] || !sf_group_of(sf[0], 0, RARE) || !sf_group_of(sf[0], 0, HOLD_B) ||
	    !sf_group_of(sf[0], 0, HOLD_E) || sf_group_of(sf[0], 0, SEND))
		fail("stream 0's summary does not position Rare and Hold, and only them");
	for (int i = 0; i < 2 && sf[i]; i++)
		write_second_format(side[i], sf[i]);
	setenv("VIGIL_SUMMARY_POSITIONS", "off", 1);
	check("the second format, positions off", t, "Hold", false, 1, &hold, 0, 0);
	unsetenv("VIGIL_SUMMARY_POSITIONS");
	if (magic_of(side[0]) != MAGIC2)
		fail("a summary of the second format was not used with positions off");
	check("the second format made again", t, "Hold", false, 1, &hold, 0, 0);
	if (magic_of(side[0]) != SF_MAGIC3 || magic_of(side[1]) != SF_MAGIC3)
		fail("summaries of the second format were not made again in the third");
	check("and used", t, "Hold", false, 2, &hold, read_by_positions, 0);
	sf_free(sf[1]);

	/* a byte of stream 0's first Rare position changed: the checksum fails */
	size_t n;
	uint64_t *good = read_words(side[0], &n), *v = malloc(n * 8);
	memcpy(v, good, n * 8);
	/* packet 0's block, its first group (Rare's, the least id) and record */
	size_t pos0 = 8 * (8 + (size_t)v[4] * (8 + (size_t)v[5]));
	((uint8_t *)v)[pos0 + 4] ^= 8;
	write_words(side[0], v, n, false);
	char *err = said_build(t, root, &rare, "a damaged position", read_by_positions - PACKETS);
	if (!one_line_with(err, "not a packet summary", side[0]))
		fail("a damaged position was not said in one line");
	free(err);
	check("the damaged one made again", t, "Rare", false, 1, &rare, read_by_positions, 0);

	/* the position moved to the Send after it, its checksum made to hold: the checks of
	 * the file pass, the event header there does not */
	write_words(side[0], good, n, false);
	struct sf_group *g = sf[0] ? sf_group_of(sf[0], 0, RARE) : NULL;
	if (g) {
		g->off[0] += 8; /* the Send after it (a Rare is a 4-byte header and a 4-byte n) */
		sf_write(side[0], sf[0]);
		g->off[0] -= 8;
	}
	err =
	    said_build(t, root, &rare, "a position on another event", read_by_positions - PACKETS);
	if (!one_line_with(err, "positions", "do not hold what they say"))
		fail("a position on another event was not said in one line");
	free(err);
	struct stat st;
	if (stat(side[0], &st) == 0)
		fail("a summary whose positions lie was not removed");
	check("the lying one made again", t, "Rare", false, 1, &rare, read_by_positions - PACKETS,
	      0);
	check("and used", t, "Rare", false, 1, &rare, read_by_positions, 0);

	/* a position past its packet's end: the group cannot be read */
	if (g) {
		uint64_t was = g->off[g->count - 1];
		g->off[g->count - 1] = sf[0]->entries[1] - sf[0]->entries[0] + 3;
		sf_write(side[0], sf[0]);
		g->off[g->count - 1] = was;
	}
	err = said_build(t, root, &rare, "a position past its packet", read_by_positions - PACKETS);
	if (!one_line_with(err, "positions", "cannot be read"))
		fail("a position past its packet was not said in one line");
	free(err);
	if (stat(side[0], &st) == 0)
		fail("a summary whose positions cannot be read was not removed");
	check("made again", t, "Rare", false, 1, &rare, read_by_positions - PACKETS, 0);

	/* a lie the checks cannot see: packet 0's first Rare position removed (the summary
	 * otherwise consistent, its checksum made to hold) */
	if (g) {
		g->count--;
		memmove(g->off, g->off + 1, g->count * 8);
		memmove(g->clock, g->clock + 1, g->count * 8);
		sf_write(side[0], sf[0]);
	}
	struct result lie = build(t, "Rare", false, 1);
	if (!strcmp(lie.rows, rare.rows) || lie.positioned != read_by_positions)
		fail("a position removed was not believed: the test cannot see one missing");
	free(lie.rows);
	write_words(side[0], good, n, false);
	free(v);
	free(good);
	sf_free(sf[0]);
	free(hold_off.rows);
	free(hold.rows);

	vgt_close(t);
	free(rare.rows);
	free(rare_b.rows);
	free(send_b.rows);
	tg_image_free(img);
	tg_rmtree(root);
	free(root);
	in_ranges();
	vgt_set_decode_threads(1);
	return failures ? 1 : 0;
}
