/* CDF combination by bounded search and random walks. The search is Sentinel's
 * Algorithm 2 with a depth bound as well (a cycle of probability 1 would not end
 * otherwise); a terminal event ends a path. */
#include "model/cdf.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct edge {
	uint32_t t;  /* transition index */
	uint32_t to; /* event index */
	double p;    /* P(to | from) in the model */
	double q;    /* renormalised over kept edges */
};

struct graph {
	const struct vgm_model *m;
	const struct vgm_cdf_opts *o;
	size_t *first; /* edges of event e: edges[first[e] .. first[e+1]) */
	struct edge *edges;
	bool *kept; /* per edge */
	bool *term; /* per event */
	double mass;
	uint64_t paths;
};

static bool dfs(struct graph *g, uint32_t node, double p, unsigned depth)
{
	bool any = false;
	for (size_t i = g->first[node]; i < g->first[node + 1]; i++) {
		struct edge *e = &g->edges[i];
		double pn = p * e->p;
		if (pn < g->o->cutoff)
			continue;
		if (g->term[e->to]) {
			g->kept[i] = any = true;
			g->mass += pn;
			g->paths++;
		} else if (depth + 1 < g->o->depth && dfs(g, e->to, pn, depth + 1)) {
			g->kept[i] = any = true;
		}
	}
	return any;
}

static uint64_t next_rand(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ z >> 27) * 0x94d049bb133111ebull;
	return z ^ z >> 31;
}

static double uniform(uint64_t *s)
{
	return (double)(next_rand(s) >> 11) * 0x1p-53;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void vgm_cdf_free(struct vgm_cdf_result *r)
{
	free(r->samples);
	memset(r, 0, sizeof *r);
}

double vgm_cdf_quantile(const struct vgm_cdf_result *r, double q)
{
	if (!r->nsamples)
		return NAN;
	double rank = ceil(q * (double)r->nsamples);
	size_t i = rank < 1 ? 0 : (size_t)rank - 1;
	return r->samples[i < r->nsamples ? i : r->nsamples - 1];
}

int vgm_cdf(const struct vgm_model *m, const struct vgm_cdf_opts *o, struct vgm_cdf_result *r)
{
	memset(r, 0, sizeof *r);
	struct graph g = {.m = m, .o = o};
	size_t n = m->nevents;
	g.first = calloc(n + 2, sizeof *g.first);
	g.edges = malloc((m->ntrans + 1) * sizeof *g.edges);
	g.kept = calloc(m->ntrans + 1, sizeof *g.kept);
	g.term = calloc(n + 1, sizeof *g.term);
	int rc = -1;
	if (!g.first || !g.edges || !g.kept || !g.term)
		goto out;
	/* Edges grouped by source event (counting sort), in transition order. */
	for (size_t t = 0; t < m->ntrans; t++)
		g.first[m->trans[t].from + 1]++;
	for (size_t e = 0; e < n; e++)
		g.first[e + 1] += g.first[e];
	g.first[n + 1] = g.first[n];
	{
		size_t *fill = calloc(n + 1, sizeof *fill);
		if (!fill)
			goto out;
		for (size_t t = 0; t < m->ntrans; t++) {
			const struct vgm_trans *tr = &m->trans[t];
			uint64_t out = m->events[tr->from].out;
			size_t k = g.first[tr->from] + fill[tr->from]++;
			g.edges[k] = (struct edge){(uint32_t)t, tr->to,
			                           out ? (double)tr->count / (double)out : 0, 0};
		}
		free(fill);
	}
	for (size_t i = 0; i < o->nterms; i++)
		g.term[o->terms[i]] = true;
	if (!dfs(&g, o->start, 1.0, 0)) {
		rc = 1;
		goto out;
	}
	r->mass = g.mass;
	r->paths = g.paths;
	/* Renormalise the kept edges of each event. */
	for (size_t e = 0; e < n; e++) {
		double sum = 0;
		for (size_t i = g.first[e]; i < g.first[e + 1]; i++)
			if (g.kept[i])
				sum += g.edges[i].p;
		for (size_t i = g.first[e]; i < g.first[e + 1]; i++)
			if (g.kept[i]) {
				g.edges[i].q = g.edges[i].p / sum;
				r->edges++;
				if (!m->trans[g.edges[i].t].sk.total)
					r->untimed++;
			}
	}
	r->samples = malloc((o->walks + 1) * sizeof *r->samples);
	if (!r->samples)
		goto out;
	uint64_t seed = o->seed;
	for (uint64_t w = 0; w < o->walks; w++) {
		uint32_t node = o->start;
		double total = 0, p = 1;
		unsigned steps = 0;
		bool done = false;
		while (!done) {
			double u = uniform(&seed), acc = 0;
			size_t pick = SIZE_MAX;
			for (size_t i = g.first[node]; i < g.first[node + 1]; i++)
				if (g.kept[i]) {
					pick = i;
					acc += g.edges[i].q;
					if (u < acc)
						break;
				}
			if (pick == SIZE_MAX)
				break; /* cannot happen: every kept path continues to a terminal */
			const struct edge *e = &g.edges[pick];
			const struct vgm_sketch *sk = &m->trans[e->t].sk;
			if (sk->total)
				total += vgm_sketch_at_rank(sk, next_rand(&seed) % sk->total);
			p *= e->q;
			steps++;
			node = e->to;
			if (g.term[node])
				done = true;
			else if (steps >= o->depth || p < o->cutoff)
				break;
		}
		if (done)
			r->samples[r->nsamples++] = total;
		else
			r->abandoned++;
	}
	qsort(r->samples, r->nsamples, sizeof *r->samples, cmp_double);
	rc = 0;
out:
	free(g.first);
	free(g.edges);
	free(g.kept);
	free(g.term);
	if (rc < 0)
		vgm_cdf_free(r);
	return rc;
}
