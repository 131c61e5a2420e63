/* Positions in packet summaries (internal.h, struct stream_summary, third format): for
 * each packet, where the events of its rarest ids lie, so that a reader that passes over
 * every other id of the packet decodes only those events instead of every header of the
 * packet. A rare relation recorded by the same threads as a flood of other events is in
 * every packet: without positions each of its packets is read header by header.
 *
 * Which ids get positions: the packet's ids taken from the rarest up while all taken
 * hold at most one event in 4 of the packet (an interval relation's begins and ends
 * together, as bench/query-subject's Lock, about 14%). Records are grouped by id, each
 * two varints (offset and clock less the previous record's of the id): 3 to 5 bytes for
 * an event of the trace's 15 to 20, so that the summary stays a few percent of the
 * trace at most. A reader visits a packet by its positions only when every id it holds
 * is either passed over or positioned; it decodes only the groups of the ids it reads
 * (the others are passed over by their length), merges them in the packet's order and
 * checks, before it hands out any of their events, that each holds an event header of
 * the id and clock the summary says; a group that does not decode, or a position that
 * does not hold what it says, is said once, the summary given up for the stream and
 * removed (the next read makes it again), the packet read whole. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define POS_SHARE 4 /* ids positioned while together at most 1 event in POS_SHARE */

/* While a summary is made: an event's offset (low 48 bits) and id (above). */
#define OFFSET_BITS 48
#define OFFSET_MASK ((1ull << OFFSET_BITS) - 1)

static inline bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned s = 0; *p < end; s += 7) {
		uint8_t b = *(*p)++;
		if (s == 63 && b > 1)
			return false; /* past 64 bits */
		x |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
		if (s == 63)
			return false;
	}
	return false;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	for (; v >= 0x80; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

static uint64_t zigzag(uint64_t d)
{
	return d << 1 ^ (uint64_t)((int64_t)d >> 63);
}

static uint64_t unzigzag(uint64_t z)
{
	return z >> 1 ^ (0 - (z & 1));
}

/* ---- making them ---- */

void vgt_positions_event(struct stream_summary *r, uint64_t id, size_t off, uint64_t clock)
{
	if (r->nscratch + 2 > r->capscratch) {
		r->capscratch = r->capscratch ? 2 * r->capscratch : 4096;
		r->scratch = vgt__xrealloc(r->scratch, r->capscratch, sizeof *r->scratch);
	}
	r->scratch[r->nscratch++] = (uint64_t)off | id << OFFSET_BITS;
	r->scratch[r->nscratch++] = clock;
	r->counts[id]++;
}

void vgt_positions_forget(struct stream_summary *r)
{
	for (size_t i = 0; i < r->nscratch; i += 2)
		r->counts[r->scratch[i] >> OFFSET_BITS] = 0;
	r->nscratch = 0;
}

static int by_count(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Room for n more position bytes. */
static uint8_t *room(struct stream_summary *r, size_t n)
{
	if (r->npos + n > r->poscap) {
		r->poscap = 2 * (r->npos + n) + 4096;
		r->pos = vgt__xrealloc(r->pos, r->poscap, 1);
	}
	return r->pos + r->npos;
}

void vgt_positions_packet_end(struct stream_summary *r, uint64_t *entry)
{
	entry[SUM_POS] = r->npos;
	size_t events = r->nscratch / 2, budget = events / POS_SHARE, nids = 0, taken = 0;
	/* the ids held, as (count << 16 | id): sorted, the rarest first */
	uint64_t *ids = vgt__xmalloc((r->words * 64 + 1) * sizeof *ids);
	for (size_t w = 0; w < r->words; w++)
		for (uint64_t bits = entry[SUM_FIXED + w]; bits; bits &= bits - 1) {
			uint64_t id = w * 64 + (uint64_t)__builtin_ctzll(bits);
			ids[nids++] = (uint64_t)r->counts[id] << 16 | id;
		}
	qsort(ids, nids, sizeof *ids, by_count);
	uint64_t taken_ids[SUM_MAX_WORDS] = {0};
	for (size_t k = 0; k < nids && taken + (ids[k] >> 16) <= budget; k++) {
		uint64_t id = ids[k] & 0xffff;
		taken += ids[k] >> 16;
		taken_ids[id / 64] |= 1ull << (id % 64);
	}
	free(ids);
	if (!taken) {
		vgt_positions_forget(r);
		return;
	}
	/* the events taken grouped by id (ids increasing, each group in the packet's order):
	 * each id's first slot, then the events put in place */
	uint32_t *slot = vgt__xmalloc(r->words * 64 * sizeof *slot);
	uint64_t *by_id = vgt__xmalloc(2 * taken * sizeof *by_id);
	size_t at = 0;
	for (size_t w = 0; w < r->words; w++)
		for (uint64_t bits = taken_ids[w]; bits; bits &= bits - 1) {
			uint64_t id = w * 64 + (uint64_t)__builtin_ctzll(bits);
			slot[id] = (uint32_t)at;
			at += r->counts[id];
		}
	for (size_t i = 0; i < r->nscratch; i += 2) {
		uint64_t id = r->scratch[i] >> OFFSET_BITS;
		if (taken_ids[id / 64] >> (id % 64) & 1) {
			uint32_t j = slot[id]++;
			by_id[2 * j] = r->scratch[i] & OFFSET_MASK;
			by_id[2 * j + 1] = r->scratch[i + 1];
		}
	}
	at = 0;
	for (size_t w = 0; w < r->words; w++)
		for (uint64_t bits = taken_ids[w]; bits; bits &= bits - 1) {
			uint64_t id = w * 64 + (uint64_t)__builtin_ctzll(bits), n = r->counts[id];
			/* the records first (at most 20 bytes each), then the group's head before
			 * them (at most 30 bytes) */
			uint8_t *rec = room(r, 30 + 20 * n) + 30, *p = rec;
			uint64_t off = 0, clock = 0;
			for (uint64_t j = at; j < at + n; j++) {
				p += put_varint(p, by_id[2 * j] - off);
				p += put_varint(p, zigzag(by_id[2 * j + 1] - clock));
				off = by_id[2 * j];
				clock = by_id[2 * j + 1];
			}
			size_t len = (size_t)(p - rec);
			uint8_t *h = r->pos + r->npos;
			size_t hl = put_varint(h, id);
			hl += put_varint(h + hl, n);
			hl += put_varint(h + hl, len);
			memmove(h + hl, rec, len);
			r->npos += hl + len;
			at += n;
		}
	free(slot);
	free(by_id);
	vgt_positions_forget(r);
}

/* ---- reading them ---- */

/* Where entry i's block starts and ends in sum->pos. */
static void block_of(const struct stream_summary *sum, size_t i, uint64_t *from, uint64_t *to)
{
	size_t per = SUM_FIXED + sum->words;
	*from = sum->v[i * per + SUM_POS];
	*to = i + 1 < sum->n ? sum->v[(i + 1) * per + SUM_POS] : sum->npos;
}

bool vgt_positions_group(const struct stream_summary *sum, size_t i, size_t *at,
                         struct vgt_pos_group *g)
{
	uint64_t from, to;
	block_of(sum, i, &from, &to);
	if (!sum->positions || to > sum->npos || from > to)
		return false;
	if (!*at)
		*at = (size_t)from;
	if (*at >= to)
		return false;
	const uint8_t *p = sum->pos + *at, *end = sum->pos + to;
	uint64_t len;
	if (!get_varint(&p, end, &g->id) || !get_varint(&p, end, &g->count) ||
	    !get_varint(&p, end, &len) || len > (uint64_t)(end - p))
		return false;
	g->rec = p;
	g->len = (size_t)len;
	*at = (size_t)(p - sum->pos) + g->len;
	return true;
}

bool vgt_positions_decode(const struct vgt_pos_group *g, uint64_t size, uint64_t *out)
{
	const uint8_t *p = g->rec, *end = g->rec + g->len;
	uint64_t off = 0, clock = 0, d, z;
	for (uint64_t j = 0; j < g->count; j++) {
		if (!get_varint(&p, end, &d) || !get_varint(&p, end, &z) || (j && !d) ||
		    d >= size - off)
			return false; /* not a record, or out of order, or past the packet's end */
		off += d;
		clock += unzigzag(z);
		out[2 * j] = off;
		out[2 * j + 1] = clock;
	}
	return p == end;
}

const char *vgt_positions_check(const struct stream_summary *sum, char *why, size_t whylen)
{
	size_t per = SUM_FIXED + sum->words;
	uint64_t at = 0;
	for (size_t i = 0; i < sum->n; i++) {
		const uint64_t *e = sum->v + i * per;
		uint64_t from, to;
		block_of(sum, i, &from, &to);
		const char *bad = NULL;
		if (!sum->positions && e[SUM_POS] && sum->format != 2)
			bad = "names positions in a summary without any";
		else if (!sum->positions)
			continue;
		else if (from != at || to < from || to > sum->npos)
			bad = "has positions out of their order";
		at = to;
		/* its groups' heads: ids increasing, held by the packet, no more records than
		 * events, each at least two bytes (the records themselves are decoded, and
		 * checked, where a reader visits them) */
		struct vgt_pos_group g;
		size_t p = 0, end = 0;
		uint64_t records = 0, prev = 0;
		for (bool first = true; !bad && vgt_positions_group(sum, i, &p, &g);
		     first = false) {
			if ((!first && g.id <= prev) || g.id >= sum->words * 64 ||
			    !(e[SUM_FIXED + g.id / 64] >> (g.id % 64) & 1))
				bad = "has a position of an event id it does not hold, or out of "
				      "order";
			else if (!g.count || g.count > e[SUM_EVENTS] - records ||
			         g.len / 2 < g.count)
				bad = "has more positions than events, or not whole records";
			records += g.count;
			prev = g.id;
			end = p;
		}
		if (!bad && end != (to > from ? to : 0))
			bad = "has positions that are not whole groups";
		if (bad) {
			snprintf(why, whylen, "packet %zu %s", i, bad);
			return why;
		}
	}
	if (sum->positions && at != sum->npos) {
		snprintf(why, whylen, "positions past the last packet's");
		return why;
	}
	return NULL;
}

/* vg.report.synth: its stream's next event takes its time (docs/consistency.md), so the
 * events after it are all read in order. */
static bool times_next(const struct event_class *ec)
{
	return !strcmp(ec->pub.name, "vg.report.synth");
}

/* The summary's positions do not hold what they say: said once, given up for this
 * stream, and the file removed so that the next whole read makes it again. */
static void give_up(struct vgt_cursor *c, size_t packet, const char *what)
{
	struct stream_summary *sum = c->sum_use;
	fprintf(stderr,
	        "vigil: warning: %s: a packet summary's positions in the packet at byte %zu %s; "
	        "not used, the summary made again\n",
	        c->s->path, packet, what);
	sum->positions = false;
	if (sum->from)
		unlink(sum->from);
}

void vgt_positions_release(struct vgt_cursor *c)
{
	free(c->jump_at);
	free(c->jump_tmp);
	c->jump_at = c->jump_tmp = NULL;
	c->jump_cap = 0;
	c->jumping = false;
}

static void jump_room(struct vgt_cursor *c, size_t n)
{
	if (n <= c->jump_cap)
		return;
	c->jump_cap = n + n / 2;
	c->jump_at = vgt__xrealloc(c->jump_at, 2 * c->jump_cap, sizeof *c->jump_at);
	c->jump_tmp = vgt__xrealloc(c->jump_tmp, 2 * c->jump_cap, sizeof *c->jump_tmp);
}

/* The runs of pairs in tmp (run r from start[r] to start[r + 1], each in offset order)
 * merged into out in offset order; few runs (the ids read), so the least head is looked
 * for among them all. */
static void merge(const uint64_t *tmp, size_t *start, size_t runs, uint64_t *out)
{
	size_t head[64], n = 0;
	for (size_t r = 0; r < runs; r++)
		head[r] = start[r];
	for (;;) {
		size_t best = runs;
		for (size_t r = 0; r < runs; r++)
			if (head[r] < start[r + 1] &&
			    (best == runs || (tmp[2 * head[r]] & OFFSET_MASK) <
			                         (tmp[2 * head[best]] & OFFSET_MASK)))
				best = r;
		if (best == runs)
			return;
		out[2 * n] = tmp[2 * head[best]];
		out[2 * n + 1] = tmp[2 * head[best] + 1];
		n++;
		head[best]++;
	}
}

#define PREFETCH_AHEAD 16

/* The merge's runs at most: a packet with more ids to visit is read header by header. */
#define MAX_RUNS 63

bool vgt_positions_plan(struct vgt_cursor *c, size_t i, const uint64_t *e)
{
	struct stream_summary *sum = c->sum_use;
	int64_t first = (int64_t)e[SUM_FIRST], last = (int64_t)e[SUM_LAST];
	uint64_t positioned[SUM_MAX_WORDS] = {0}, visits = 0;
	struct vgt_pos_group g;
	size_t at = 0, runs = 0, groups = 0;
	while (vgt_positions_group(sum, i, &at, &g)) {
		positioned[g.id / 64] |= 1ull << (g.id % 64);
		groups++;
		if (!vgt_summary_passed_over(c, g.id, first, last))
			visits += g.count, runs++;
	}
	if (!groups || runs > MAX_RUNS)
		return false; /* no positions in this packet, or too many ids to read */
	bool some_passed = false;
	for (size_t w = 0; w < sum->words; w++)
		for (uint64_t bits = e[SUM_FIXED + w]; bits; bits &= bits - 1) {
			uint64_t id = w * 64 + (uint64_t)__builtin_ctzll(bits);
			const struct event_class *ec = vgt_stream_class_event(c->sc, id);
			if (!ec || !ec->usable || times_next(ec))
				return false;
			if (vgt_summary_passed_over(c, id, first, last))
				some_passed = true;
			else if (!(positioned[w] >> (id % 64) & 1))
				return false;
		}
	if (!some_passed)
		return false;
	/* the groups read decoded, each a run of tmp (its id above each offset), then merged
	 * in the packet's order */
	jump_room(c, (size_t)visits);
	size_t start[MAX_RUNS + 1], n = 0, r = 0, pkt = c->pkt.start;
	uint64_t size = e[SUM_END] - e[SUM_START];
	at = 0;
	while (vgt_positions_group(sum, i, &at, &g)) {
		if (vgt_summary_passed_over(c, g.id, first, last))
			continue;
		start[r++] = n;
		uint64_t *out = c->jump_tmp + 2 * n;
		if (size > OFFSET_MASK || !vgt_positions_decode(&g, size, out)) {
			char what[120];
			snprintf(what, sizeof what, "cannot be read (event id %" PRIu64 ")", g.id);
			give_up(c, pkt, what);
			return false;
		}
		for (uint64_t j = 0; j < g.count; j++)
			out[2 * j] |= g.id << OFFSET_BITS;
		n += (size_t)g.count;
	}
	start[r] = n;
	uint64_t *visit = c->jump_tmp;
	if (runs > 1) {
		merge(c->jump_tmp, start, runs, c->jump_at);
		visit = c->jump_at;
	}
	/* each position to visit: after the one before, an event header there of the id
	 * and the clock its record says */
	const uint8_t *bytes = vgt_stream_bytes_at(c->s, pkt);
	for (size_t j = 0; j < n; j++) {
		/* the headers ahead fetched while this one is decoded (each its own cache line
		 * mostly: the events between them are not read) */
		if (j + PREFETCH_AHEAD < n &&
		    (visit[2 * (j + PREFETCH_AHEAD)] & OFFSET_MASK) < size)
			__builtin_prefetch(bytes + (visit[2 * (j + PREFETCH_AHEAD)] & OFFSET_MASK));
		uint64_t got_id, got_clock, want_clock = visit[2 * j + 1];
		uint64_t off = visit[2 * j] & OFFSET_MASK, id = visit[2 * j] >> OFFSET_BITS;
		size_t where = pkt + (size_t)off;
		if ((j && off <= (visit[2 * j - 2] & OFFSET_MASK)) ||
		    !vgt_cursor_header_at(c, where, want_clock, &got_id, &got_clock) ||
		    got_id != id || got_clock != want_clock) {
			char what[120];
			snprintf(what, sizeof what, "do not hold what they say (byte %zu)", where);
			give_up(c, pkt, what);
			return false;
		}
	}
	if (visit != c->jump_at) { /* one run: swapped in place of the merged */
		uint64_t *t = c->jump_at;
		c->jump_at = c->jump_tmp;
		c->jump_tmp = t;
	}
	uint64_t unvisited = e[SUM_EVENTS] - n;
	struct vgt_stream_stats *st = &c->s->pub.stats;
	if (!st->events)
		st->first_ts = first;
	st->events += unvisited;
	st->events_skipped += unvisited;
	st->packets_positioned++;
	c->jumping = true;
	c->jump_entry = e;
	c->jump_n = n;
	c->jump_i = 0;
	return true;
}

bool vgt_positions_next(struct vgt_cursor *c)
{
	const uint64_t *e = c->jump_entry;
	if (c->jump_i == c->jump_n) {
		struct vgt_stream_stats *st = &c->s->pub.stats;
		st->last_ts = (int64_t)e[SUM_LAST];
		c->have_ts = true;
		c->last_ts = (int64_t)e[SUM_LAST];
		c->clock = e[SUM_CLOCK];
		c->in_packet = false;
		c->jumping = false;
		return false;
	}
	const uint64_t *r = c->jump_at + 2 * c->jump_i++;
	c->pos = c->pkt.start + (size_t)(r[0] & OFFSET_MASK);
	c->clock = r[1];
	return true;
}
