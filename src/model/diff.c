/* The three difference rankings. Events of the other model are mapped onto the
 * baseline's by (site, fmt); a transition is identified by its two events' keys. */
#include "model/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vgm_diff_free(struct vgm_diff *d)
{
	free(d->events);
	free(d->trans);
	free(d->times);
	memset(d, 0, sizeof *d);
}

static int cmp_event_row(const void *x, const void *y)
{
	const struct vgm_event_row *a = x, *b = y;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	uint64_t ma = a->ca > a->cb ? a->ca : a->cb, mb = b->ca > b->cb ? b->ca : b->cb;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	/* stable across runs: by position in the models */
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static int cmp_trans_row(const void *x, const void *y)
{
	const struct vgm_trans_row *a = x, *b = y;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	uint64_t ma = a->ca + a->cb, mb = b->ca + b->cb;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	if (a->a_from != b->a_from)
		return a->a_from < b->a_from ? -1 : 1;
	return a->a_to < b->a_to ? -1 : a->a_to > b->a_to;
}

static int cmp_time_row(const void *x, const void *y)
{
	const struct vgm_time_row *a = x, *b = y;
	if (a->emd != b->emd)
		return a->emd > b->emd ? -1 : 1;
	if (a->a_from != b->a_from)
		return a->a_from < b->a_from ? -1 : 1;
	return a->a_to < b->a_to ? -1 : a->a_to > b->a_to;
}

int vgm_diff(const struct vgm_model *a, const struct vgm_model *b, const struct vgm_diff_opts *o,
             struct vgm_diff *d)
{
	memset(d, 0, sizeof *d);
	uint64_t k_min = o->min_support;
	double alpha = o->alpha;
	/* a2b[i]: the other model's index of baseline event i; b2a the reverse. */
	long *a2b = malloc((a->nevents + 1) * sizeof *a2b);
	long *b2a = malloc((b->nevents + 1) * sizeof *b2a);
	/* S: distinct successors of each baseline event over both models */
	size_t *succ = calloc(a->nevents + 1, sizeof *succ);
	d->events = malloc((a->nevents + b->nevents + 1) * sizeof *d->events);
	d->trans = malloc((a->ntrans + b->ntrans + 1) * sizeof *d->trans);
	d->times = malloc((a->ntrans + 1) * sizeof *d->times);
	int rc = -1;
	if (!a2b || !b2a || !succ || !d->events || !d->trans || !d->times)
		goto out;
	for (size_t i = 0; i < b->nevents; i++)
		b2a[i] = -1;
	for (size_t i = 0; i < a->nevents; i++) {
		a2b[i] = vgm_event_find(b, a->events[i].site, a->events[i].fmt);
		if (a2b[i] >= 0) {
			b2a[a2b[i]] = (long)i;
			d->common++;
		}
	}
	d->total_a = vgm_total_events(a);
	d->total_b = vgm_total_events(b);
	if (!d->common) {
		rc = 1;
		goto out;
	}

	/* Events. */
	for (size_t i = 0; i < a->nevents; i++) {
		long j = a2b[i];
		struct vgm_event_row *r = &d->events[d->nevents++];
		*r = (struct vgm_event_row){.a = (long)i,
		                            .b = j,
		                            .ca = a->events[i].count,
		                            .cb = j >= 0 ? b->events[j].count : 0};
	}
	for (size_t j = 0; j < b->nevents; j++)
		if (b2a[j] < 0)
			d->events[d->nevents++] =
			    (struct vgm_event_row){.a = -1, .b = (long)j, .cb = b->events[j].count};
	for (size_t i = 0; i < d->nevents; i++) {
		struct vgm_event_row *r = &d->events[i];
		r->pa = d->total_a ? (double)r->ca / (double)d->total_a : 0;
		r->pb = d->total_b ? (double)r->cb / (double)d->total_b : 0;
		/* 2x2 table: this event | the others, in a | in b */
		double ea = (double)r->ca, eb = (double)r->cb, na = (double)d->total_a,
		       nb = (double)d->total_b, ra = na - ea, rb = nb - eb;
		double den = (ea + eb) * (ra + rb) * na * nb;
		r->chi2 = den > 0 ? (na + nb) * (ea * rb - eb * ra) * (ea * rb - eb * ra) / den : 0;
		r->score = o->events_by == VGM_EVENTS_BY_CHI2 ? r->chi2 : fabs(r->pb - r->pa);
	}
	qsort(d->events, d->nevents, sizeof *d->events, cmp_event_row);

	/* Successor counts over the union: a's transitions, then b's not in a. */
	for (size_t t = 0; t < a->ntrans; t++)
		succ[a->trans[t].from]++;
	for (size_t t = 0; t < b->ntrans; t++) {
		const struct vgm_trans *bt = &b->trans[t];
		long af = b2a[bt->from], at = b2a[bt->to];
		if (af >= 0 && at >= 0 && vgm_trans_find(a, (uint32_t)af, (uint32_t)at))
			continue;
		if (af >= 0)
			succ[af]++;
	}

	/* Transition probabilities: E1 must be common and leave often enough in both. */
	for (int side = 0; side < 2; side++) {
		const struct vgm_model *m = side ? b : a;
		for (size_t t = 0; t < m->ntrans; t++) {
			const struct vgm_trans *mt = &m->trans[t];
			long af, at, bf, bt;
			const struct vgm_trans *ta, *tb;
			if (!side) {
				af = mt->from, at = mt->to;
				bf = a2b[af], bt = a2b[at];
				ta = mt;
				tb = bf >= 0 && bt >= 0
				         ? vgm_trans_find(b, (uint32_t)bf, (uint32_t)bt)
				         : NULL;
			} else {
				bf = mt->from, bt = mt->to;
				af = b2a[bf], at = b2a[bt];
				tb = mt;
				ta = af >= 0 && at >= 0
				         ? vgm_trans_find(a, (uint32_t)af, (uint32_t)at)
				         : NULL;
				if (ta)
					continue; /* ranked from the baseline's side */
			}
			if (af < 0 || bf < 0)
				continue; /* E1 is in one run only: the event ranking shows it */
			uint64_t outa = a->events[af].out, outb = b->events[bf].out;
			uint64_t ca = ta ? ta->count : 0, cb = tb ? tb->count : 0;
			if (outa < k_min || outb < k_min || (ca < k_min && cb < k_min)) {
				d->trans_unsupported++;
				continue;
			}
			double s = (double)succ[af];
			struct vgm_trans_row *r = &d->trans[d->ntrans++];
			*r = (struct vgm_trans_row){.a_from = af,
			                            .a_to = at,
			                            .b_from = bf,
			                            .b_to = bt,
			                            .ca = ca,
			                            .cb = cb,
			                            .outa = outa,
			                            .outb = outb};
			r->pa = ((double)ca + alpha) / ((double)outa + alpha * s);
			r->pb = ((double)cb + alpha) / ((double)outb + alpha * s);
			r->score = r->pa > r->pb ? r->pa / r->pb : r->pb / r->pa;
		}
	}
	qsort(d->trans, d->ntrans, sizeof *d->trans, cmp_trans_row);

	/* Transition times. */
	for (size_t t = 0; t < a->ntrans; t++) {
		const struct vgm_trans *ta = &a->trans[t];
		long bf = a2b[ta->from], bt = a2b[ta->to];
		const struct vgm_trans *tb =
		    bf >= 0 && bt >= 0 ? vgm_trans_find(b, (uint32_t)bf, (uint32_t)bt) : NULL;
		if (!tb)
			continue;
		if (ta->sk.total < k_min || tb->sk.total < k_min) {
			d->times_unsupported++;
			continue;
		}
		if (!ta->sk.total || !tb->sk.total)
			continue;
		struct vgm_time_row *r = &d->times[d->ntimes++];
		*r = (struct vgm_time_row){.a_from = ta->from,
		                           .a_to = ta->to,
		                           .b_from = bf,
		                           .b_to = bt,
		                           .na = ta->sk.total,
		                           .nb = tb->sk.total,
		                           .ca = ta->count,
		                           .cb = tb->count};
		r->emd = vgm_sketch_emd(&ta->sk, &tb->sk);
		r->p50a = vgm_sketch_quantile(&ta->sk, 0.5);
		r->p50b = vgm_sketch_quantile(&tb->sk, 0.5);
		r->p99a = vgm_sketch_quantile(&ta->sk, 0.99);
		r->p99b = vgm_sketch_quantile(&tb->sk, 0.99);
		r->meana = ta->sum_ns ? (double)ta->sum_ns / (double)ta->sk.total
		                      : vgm_sketch_mean(&ta->sk);
		r->meanb = tb->sum_ns ? (double)tb->sum_ns / (double)tb->sk.total
		                      : vgm_sketch_mean(&tb->sk);
	}
	qsort(d->times, d->ntimes, sizeof *d->times, cmp_time_row);
	rc = 0;
out:
	free(a2b);
	free(b2a);
	free(succ);
	if (rc < 0)
		vgm_diff_free(d);
	return rc;
}
