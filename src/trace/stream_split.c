/* A stream read in ranges of its packets, each on a thread of its own (trace/source.h
 * vgt_source_split). Each range is read by a cursor over a view of the stream (its bytes
 * from the range's first packet to the next range's, with damage and counts of its
 * own), resumed where a read from the stream's start would be there: the packet before
 * the range opened for its context, the clock and time of its last event taken from the
 * stream's packet summary. Ranges are cut only where that summary (made by a whole read
 * of the same file, summary.c) says every packet was read without damage, and only after
 * a packet holding events. The ranges' counts become the stream's as one read from its
 * start leaves them; damage met in any range (the file changed under its summary, a
 * context check across a range's first packet) refuses the join, and the caller reads
 * the stream whole instead, as it is read without a split. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "source.h"

struct range {
	struct vgt_cursor c;
	struct stream view;
	bool open;
};

struct vgt_split {
	struct stream *s;
	struct stream_summary *sum; /* the views' cursors pass over packets by it */
	struct range *r;
	size_t n;
};

static const uint64_t *entry(const struct stream_summary *sum, size_t i)
{
	return sum->v + i * (SUM_FIXED + sum->words);
}

/* Range [lo, hi) of s (lo a packet start after entry `prev`, which holds events). */
static bool range_open(struct vgt_split *sp, struct range *r, const uint64_t *prev, size_t lo,
                       size_t hi)
{
	struct stream *s = sp->s;
	r->view = *s;
	r->view.damage = (struct damage_list){0};
	r->view.start = lo;
	r->view.size = hi;
	if (r->view.data_end > hi)
		r->view.data_end = hi;
	r->view.file = s->file ? s->file : s; /* drop_behind: the file's memory */
	vgt_cursor_init(&r->c, &r->view);
	r->c.ev.stream = &s->pub; /* the events are the stream's */
	r->c.sum_use = sp->sum;
	r->open = true;
	if (!prev)
		return true;
	return vgt_cursor_resume(&r->c, (size_t)prev[SUM_START], lo, prev[SUM_CLOCK],
	                         (int64_t)prev[SUM_LAST]);
}

static void range_close(struct range *r)
{
	if (!r->open)
		return;
	r->c.sum_use = NULL; /* the split's */
	vgt_cursor_fini(&r->c);
	vgt_damage_clear(&r->view.damage);
	r->open = false;
}

static void split_free(struct vgt_split *sp)
{
	for (size_t k = 0; k < sp->n; k++)
		range_close(&sp->r[k]);
	vgt_summary_free(sp->sum);
	free(sp->r);
	free(sp);
}

/* The stream's packet summary when one fits, every packet in it clean (NULL else). */
static struct stream_summary *clean_summary(struct vgt_trace *t, size_t i, size_t *first,
                                            size_t *count)
{
	if (i >= t->nstreams)
		return NULL;
	struct vgt_cursor *c = vgt__xmalloc(sizeof *c);
	vgt_cursor_init(c, t->streams[i]);
	c->sum_quiet = true;   /* the whole read, if it comes to that, says it */
	vgt_summary_attach(c); /* reads nothing */
	struct stream_summary *sum = c->sum_use;
	c->sum_use = NULL;
	vgt_cursor_close(c);
	if (!sum)
		return NULL;
	const struct stream *s = t->streams[i];
	size_t a = 0, n = 0;
	while (a < sum->n && entry(sum, a)[SUM_START] < s->start)
		a++;
	for (size_t e = a; e < sum->n && entry(sum, e)[SUM_START] < s->size; e++, n++)
		if (!(entry(sum, e)[SUM_FLAGS] & SUM_CLEAN) ||
		    (e > a && entry(sum, e)[SUM_START] != entry(sum, e - 1)[SUM_END]))
			n = 0, a = sum->n; /* damage, or a gap: read whole */
	if (!n || entry(sum, a)[SUM_START] != s->start ||
	    entry(sum, a + n - 1)[SUM_END] != s->size) {
		vgt_summary_free(sum);
		return NULL;
	}
	*first = a;
	*count = n;
	return sum;
}

struct vgt_split *vgt__split_open(struct vgt_trace *t, size_t i, size_t parts)
{
	if (!t->summaries || i >= t->nstreams || parts < 2)
		return NULL;
	size_t a, n;
	struct stream_summary *sum = clean_summary(t, i, &a, &n);
	if (!sum)
		return NULL;
	struct vgt_split *sp = vgt__xcalloc(1, sizeof *sp);
	sp->s = t->streams[i];
	sp->sum = sum;
	sp->r = vgt__xcalloc(parts, sizeof *sp->r);
	size_t lo = sp->s->start, bytes = sp->s->size - lo, at = a;
	const uint64_t *prev = NULL;
	bool ok = true;
	for (size_t k = 0; k < parts && ok && at < a + n; k++) {
		/* the range ends at the first packet start past its share, after a packet
		 * holding events (the next range resumes with that packet's last clock) */
		size_t want = sp->s->start + bytes * (k + 1) / parts, e = at + 1;
		while (e < a + n &&
		       (entry(sum, e)[SUM_START] < want || !entry(sum, e - 1)[SUM_EVENTS]))
			e++;
		size_t hi = e < a + n ? (size_t)entry(sum, e)[SUM_START] : sp->s->size;
		ok = range_open(sp, &sp->r[sp->n++], prev, lo, hi);
		prev = entry(sum, e - 1);
		lo = hi;
		at = e;
	}
	if (!ok || sp->n < 2) {
		split_free(sp);
		return NULL;
	}
	return sp;
}

size_t vgt_split_count(const struct vgt_split *sp)
{
	return sp->n;
}

uint64_t vgt_split_bytes(const struct vgt_split *sp, size_t k)
{
	return sp->r[k].view.size - sp->r[k].view.start;
}

struct vgt_cursor *vgt_split_cursor(struct vgt_split *sp, size_t k)
{
	return &sp->r[k].c;
}

void vgt__split_windows(struct vgt_split *sp, const bool *skip,
                        const struct vgt_class_window *windows, size_t nclasses)
{
	for (size_t k = 0; k < sp->n; k++) {
		sp->r[k].c.skip = skip;
		if (windows)
			vgt_cursor_windows(&sp->r[k].c, windows, nclasses);
	}
}

bool vgt_split_join(struct vgt_split *sp)
{
	bool clean = true;
	for (size_t k = 0; k < sp->n; k++)
		if (sp->r[k].view.damage.total || !sp->r[k].c.done)
			clean = false;
	if (clean) { /* the stream as a read from its start leaves it */
		struct vgt_cursor fresh;
		vgt_cursor_init(&fresh, sp->s);
		vgt_cursor_fini(&fresh);
		struct vgt_stream_stats *st = &sp->s->pub.stats;
		for (size_t k = 0; k < sp->n; k++) {
			const struct vgt_stream_stats *r = &sp->r[k].view.pub.stats;
			if (r->events && !st->events)
				st->first_ts = r->first_ts;
			if (r->events)
				st->last_ts = r->last_ts;
			st->events += r->events;
			st->packets += r->packets;
			if (r->events_discarded > st->events_discarded)
				st->events_discarded = r->events_discarded;
			st->events_outside += r->events_outside;
			st->packets_outside += r->packets_outside;
			st->packets_skipped += r->packets_skipped;
			st->events_skipped += r->events_skipped;
			st->packets_positioned += r->packets_positioned;
		}
	}
	split_free(sp);
	return clean;
}
