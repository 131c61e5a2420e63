/* Positions in packet summaries (internal.h, struct stream_summary, second format): for
 * each packet, where the events of its rarest ids lie, so that a reader that passes over
 * every other id of the packet decodes only those events instead of every header of the
 * packet. A rare relation recorded by the same threads as a flood of other events is in
 * every packet: without positions each of its packets is read header by header.
 *
 * Which ids get positions: the packet's ids taken from the rarest up while all taken
 * hold at most one event in 16 of the packet (a record is 16 bytes: at most 1 byte per
 * event beside the trace's 15 to 20). A reader visits a packet by its positions only when
 * every id it holds is either passed over or positioned, and checks, before it hands out
 * any of its events, that each position to visit holds an event header of the id and
 * clock the summary says; a position that does not is said once, the summary given up
 * for the stream and removed (the next read makes it again), the packet read whole. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define OFFSET_MASK ((1ull << POS_OFFSET_BITS) - 1)

/* ---- making them ---- */

void vgt_positions_event(struct stream_summary *r, uint64_t id, size_t off, uint64_t clock)
{
	if (r->nscratch + 2 > r->capscratch) {
		r->capscratch = r->capscratch ? 2 * r->capscratch : 4096;
		r->scratch = vgt__xrealloc(r->scratch, r->capscratch, sizeof *r->scratch);
	}
	r->scratch[r->nscratch++] = (uint64_t)off | id << POS_OFFSET_BITS;
	r->scratch[r->nscratch++] = clock;
	r->counts[id]++;
}

void vgt_positions_forget(struct stream_summary *r)
{
	for (size_t i = 0; i < r->nscratch; i += 2)
		r->counts[r->scratch[i] >> POS_OFFSET_BITS] = 0;
	r->nscratch = 0;
}

static int by_count(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void append(struct stream_summary *r, const uint64_t *w, size_t n)
{
	if (r->npos + n > r->poscap) {
		r->poscap = 2 * (r->npos + n) + 1024;
		r->pos = vgt__xrealloc(r->pos, r->poscap, sizeof *r->pos);
	}
	memcpy(r->pos + r->npos, w, n * sizeof *w);
	r->npos += n;
}

void vgt_positions_packet_end(struct stream_summary *r, uint64_t *entry)
{
	entry[SUM_POS] = r->npos;
	size_t events = r->nscratch / 2, budget = events / 16, nids = 0, taken = 0;
	/* the ids held, as (count << 16 | id): sorted, the rarest first */
	uint64_t *ids = vgt__xmalloc((r->words * 64 + 1) * sizeof *ids);
	for (size_t w = 0; w < r->words; w++)
		for (uint64_t bits = entry[SUM_FIXED + w]; bits; bits &= bits - 1) {
			uint64_t id = w * 64 + (uint64_t)__builtin_ctzll(bits);
			ids[nids++] = (uint64_t)r->counts[id] << 16 | id;
		}
	qsort(ids, nids, sizeof *ids, by_count);
	uint64_t bitmap[SUM_MAX_WORDS] = {0};
	size_t k = 0;
	for (; k < nids && taken + (ids[k] >> 16) <= budget; k++) {
		uint64_t id = ids[k] & 0xffff;
		taken += ids[k] >> 16;
		bitmap[id / 64] |= 1ull << (id % 64);
	}
	free(ids);
	if (taken) {
		append(r, bitmap, r->words);
		for (size_t i = 0; i < r->nscratch; i += 2) {
			uint64_t id = r->scratch[i] >> POS_OFFSET_BITS;
			if (bitmap[id / 64] >> (id % 64) & 1)
				append(r, r->scratch + i, 2);
		}
	}
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

bool vgt_positions_of(const struct stream_summary *sum, size_t i, const uint64_t **bitmap,
                      const uint64_t **rec, size_t *k)
{
	uint64_t from, to;
	block_of(sum, i, &from, &to);
	if (!sum->positions || to <= from)
		return false;
	*bitmap = sum->pos + from;
	*rec = *bitmap + sum->words;
	*k = (size_t)(to - from - sum->words) / 2;
	return true;
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
		if (!sum->positions && e[SUM_POS])
			bad = "names positions in a summary without any";
		else if (from != at || to < from || to > sum->npos)
			bad = "has positions out of their order";
		else if (to > from && (to - from < sum->words + 2 || (to - from - sum->words) % 2))
			bad = "has positions that are not whole records";
		else if (to > from && (to - from - sum->words) / 2 > e[SUM_EVENTS])
			bad = "has more positions than events";
		at = to;
		size_t k = bad || to == from ? 0 : (size_t)(to - from - sum->words) / 2;
		/* no positions at all: pos is NULL, and NULL + 0 is undefined behaviour */
		const uint64_t *bitmap = k ? sum->pos + from : NULL,
		               *rec = k ? bitmap + sum->words : NULL;
		for (size_t j = 0; j < k && !bad; j++) {
			uint64_t off = rec[2 * j] & OFFSET_MASK, id = rec[2 * j] >> POS_OFFSET_BITS;
			if (off >= e[SUM_END] - e[SUM_START] ||
			    (j && off <= (rec[2 * j - 2] & OFFSET_MASK)))
				bad = "has a position out of order or past its end";
			else if (id >= sum->words * 64 || !(bitmap[id / 64] >> (id % 64) & 1))
				bad = "has a position of an event id it does not position";
		}
		if (bad) {
			snprintf(why, whylen, "packet %zu %s", i, bad);
			return why;
		}
	}
	if (sum->n == 0 && sum->npos) {
		snprintf(why, whylen, "positions without packets");
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

bool vgt_positions_plan(struct vgt_cursor *c, size_t i, const uint64_t *e)
{
	struct stream_summary *sum = c->sum_use;
	const uint64_t *bitmap, *rec;
	size_t k;
	if (!vgt_positions_of(sum, i, &bitmap, &rec, &k))
		return false;
	int64_t first = (int64_t)e[SUM_FIRST], last = (int64_t)e[SUM_LAST];
	bool some_passed = false;
	for (size_t w = 0; w < sum->words; w++)
		for (uint64_t bits = e[SUM_FIXED + w]; bits; bits &= bits - 1) {
			uint64_t id = w * 64 + (uint64_t)__builtin_ctzll(bits);
			const struct event_class *ec = vgt_stream_class_event(c->sc, id);
			if (!ec || !ec->usable || times_next(ec))
				return false;
			if (vgt_summary_passed_over(c, id, first, last))
				some_passed = true;
			else if (!(bitmap[w] >> (id % 64) & 1))
				return false;
		}
	if (!some_passed)
		return false;
	if (k > c->jump_cap) {
		c->jump_cap = k + k / 2;
		c->jump_idx = vgt__xrealloc(c->jump_idx, c->jump_cap, sizeof *c->jump_idx);
	}
	size_t n = 0, start = c->pkt.start;
	for (size_t j = 0; j < k; j++) {
		uint64_t id = rec[2 * j] >> POS_OFFSET_BITS, got_id, got_clock;
		if (vgt_summary_passed_over(c, id, first, last))
			continue;
		size_t at = start + (size_t)(rec[2 * j] & OFFSET_MASK);
		if (!vgt_cursor_header_at(c, at, rec[2 * j + 1], &got_id, &got_clock) ||
		    got_id != id || got_clock != rec[2 * j + 1]) {
			char what[120];
			snprintf(what, sizeof what, "do not hold what they say (byte %zu)", at);
			give_up(c, start, what);
			return false;
		}
		c->jump_idx[n++] = (uint32_t)j;
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
	c->jump_rec = rec;
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
	const uint64_t *r = c->jump_rec + 2 * c->jump_idx[c->jump_i++];
	c->pos = c->pkt.start + (size_t)(r[0] & OFFSET_MASK);
	c->clock = r[1];
	return true;
}
