/* An event relation's columns gathered from its pieces on request (unmerged.h). Every
 * `stride` tuples of the merged order, each unit's tuples before that point are noted, so
 * a part of a column is gathered starting anywhere, on any thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "relations/columns.h"
#include "relations/unmerged.h"

/* Tuples between noted positions: a power of two (the writer's parts start at noted
 * ones), at most 64K, and at least 8 of them in a relation of 2K tuples or more. */
#define MAX_STRIDE ((size_t)1 << 16)

struct vgq_unmerged {
	struct vgq_unmerged_from f;
	size_t *len; /* by unit: its piece's tuples */
	size_t stride;
	size_t *at;                 /* [k * nunits + u]: unit u's tuples before tuple k * stride */
	pthread_mutex_t release_mu; /* a piece's column memory, one thread at a time */
	bool released;              /* a column freed */
};

static size_t column_size(const struct vgq_relation *r, long c)
{
	return c < 0 ? sizeof *r->from : vgq_value_size(r->attrs[c].type);
}

static const char *column_of(const struct vgq_relation *r, long c)
{
	return c < 0 ? (const char *)r->from : (const char *)r->cols[c].i;
}

/* n tuples of the units [u0, u1), taken in unit order from `pos` on. */
static void advance(const struct vgq_unmerged *m, size_t *pos, size_t u0, size_t u1, size_t n)
{
	for (size_t u = u0; u < u1 && n; u++) {
		size_t k = m->len[u] - pos[u] < n ? m->len[u] - pos[u] : n;
		pos[u] += k;
		n -= k;
	}
}

static bool bit_at(const uint64_t *bits, size_t t)
{
	return bits[t >> 6] >> (t & 63) & 1;
}

/* Each unit's tuples before tuple t of the merged order. */
static void positions(const struct vgq_unmerged *m, size_t t, size_t *pos)
{
	size_t k = t / m->stride, units = m->f.nunits;
	memcpy(pos, m->at + k * units, units * sizeof *pos);
	size_t i = k * m->stride;
	if (!m->f.bits) {
		for (; i < t; i++)
			pos[m->f.order[i]]++;
		return;
	}
	size_t second = 0;
	for (size_t j = i; j < t; j++)
		second += bit_at(m->f.bits, j);
	advance(m, pos, m->f.a0, m->f.a1, t - i - second);
	advance(m, pos, m->f.b0, m->f.b1, second);
}

static void note_positions(struct vgq_unmerged *m)
{
	size_t stride = 256;
	while (stride < MAX_STRIDE && stride * 8 < m->f.n)
		stride *= 2;
	m->stride = stride;
	size_t units = m->f.nunits, marks = m->f.n / stride + 1;
	m->at = vgq_xcalloc(marks * units + 1, sizeof *m->at);
	size_t *pos = vgq_xcalloc(units + 1, sizeof *pos);
	for (size_t k = 1; k < marks; k++) {
		size_t t0 = (k - 1) * stride;
		if (m->f.order) {
			for (size_t t = t0; t < t0 + stride; t++)
				pos[m->f.order[t]]++;
		} else {
			size_t second = 0;
			for (size_t w = t0 / 64; w < (t0 + stride) / 64; w++)
				second += (size_t)__builtin_popcountll(m->f.bits[w]);
			advance(m, pos, m->f.a0, m->f.a1, stride - second);
			advance(m, pos, m->f.b0, m->f.b1, second);
		}
		memcpy(m->at + k * units, pos, units * sizeof *pos);
	}
	free(pos);
}

void vgq_unmerged_attach(struct vgq_relation *r, const struct vgq_unmerged_from *from)
{
	struct vgq_unmerged *m = vgq_xcalloc(1, sizeof *m);
	m->f = *from;
	m->len = vgq_xcalloc(m->f.nunits + 1, sizeof *m->len);
	for (size_t u = 0; u < m->f.nunits; u++)
		m->len[u] = m->f.piece[u]->ntuples;
	note_positions(m);
	pthread_mutex_init(&m->release_mu, NULL);
	vgq_relation_drop_column(r, -1); /* no columns of its own */
	for (size_t a = 0; a < r->nattrs; a++)
		vgq_relation_drop_column(r, (long)a);
	r->ntuples = m->f.n;
	r->unmerged = m;
}

void vgq_unmerged_free(struct vgq_unmerged *m)
{
	if (!m)
		return;
	for (size_t u = 0; u < m->f.nunits; u++)
		vgq_relation_free(m->f.piece[u]);
	free(m->f.piece);
	free(m->f.bits);
	free(m->f.order);
	free(m->len);
	free(m->at);
	pthread_mutex_destroy(&m->release_mu);
	free(m);
}

void vgq_unmerged_release(const struct vgq_relation *r, long c)
{
	struct vgq_unmerged *m = r->unmerged;
	pthread_mutex_lock(&m->release_mu);
	for (size_t u = 0; u < m->f.nunits; u++)
		vgq_relation_drop_column(m->f.piece[u], c);
	m->released = true;
	pthread_mutex_unlock(&m->release_mu);
}

/* ---- gathering ---- */

/* One stream's units in a two-stream gather: the unit read, its values left [at, stop). */
struct cursor {
	size_t u, end;
	const char *at, *stop;
};

static void cursor_load(const struct vgq_unmerged *m, long c, size_t size, struct cursor *k,
                        const size_t *pos)
{
	const char *base = m->len[k->u] ? column_of(m->f.piece[k->u], c) : NULL;
	k->at = base ? base + pos[k->u] * size : NULL;
	k->stop = base ? base + m->len[k->u] * size : NULL;
}

/* The cursor at a unit with values left; false when its stream has none left. */
static bool cursor_settle(const struct vgq_unmerged *m, long c, size_t size, struct cursor *k,
                          const size_t *pos)
{
	while (k->at == k->stop) {
		if (k->u + 1 >= k->end)
			return false;
		k->u++;
		cursor_load(m, c, size, k, pos);
	}
	return true;
}

static void gather_two(const struct vgq_unmerged *m, long c, size_t size, size_t t0, size_t t1,
                       char *dst, const size_t *pos)
{
	struct cursor k[2] = {{.u = m->f.a0, .end = m->f.a1}, {.u = m->f.b0, .end = m->f.b1}};
	for (int s = 0; s < 2; s++)
		if (k[s].u < k[s].end)
			cursor_load(m, c, size, &k[s], pos);
	const uint64_t *bits = m->f.bits;
	for (size_t t = t0; t < t1;) {
		bool x = cursor_settle(m, c, size, &k[0], pos),
		     y = cursor_settle(m, c, size, &k[1], pos);
		if (!x || !y) { /* the rest is one stream's, in its order */
			struct cursor *one = &k[x ? 0 : 1];
			while (t < t1 && cursor_settle(m, c, size, one, pos)) {
				size_t n = (size_t)(one->stop - one->at) / size;
				n = n < t1 - t ? n : t1 - t;
				memcpy(dst + (t - t0) * size, one->at, n * size);
				one->at += n * size;
				t += n;
			}
			return;
		}
		size_t kx = (size_t)(k[0].stop - k[0].at) / size,
		       ky = (size_t)(k[1].stop - k[1].at) / size;
		size_t stretch = kx < ky ? kx : ky;
		stretch = stretch < t1 - t ? stretch : t1 - t;
		if (size == 8) { /* most columns (texts too): each value chosen without a branch */
			const uint64_t *xa = (const uint64_t *)(const void *)k[0].at,
			               *ya = (const uint64_t *)(const void *)k[1].at;
			uint64_t *d = (uint64_t *)(void *)(dst + (t - t0) * size);
			for (size_t i = 0; i < stretch; i++, t++) {
				uint64_t b = bits[t >> 6] >> (t & 63) & 1;
				/* both loaded (each side has a value left): a select, not a branch
				 */
				uint64_t vx = *xa, vy = *ya;
				d[i] = b ? vy : vx;
				ya += b;
				xa += b ^ 1;
			}
			k[0].at = (const char *)xa;
			k[1].at = (const char *)ya;
		} else {
			for (size_t i = 0; i < stretch; i++, t++) {
				struct cursor *from = &k[bit_at(bits, t)];
				memcpy(dst + (t - t0) * size, from->at, size);
				from->at += size;
			}
		}
	}
}

void vgq_gather_units(struct vgq_relation *const *piece, size_t nunits, long c, size_t size,
                      const uint32_t *order, size_t t0, size_t t1, const size_t *pos, void *out)
{
	char *dst = out;
	const char **src = vgq_xcalloc(nunits + 1, sizeof *src);
	for (size_t u = 0; u < nunits; u++) /* an empty unit: none of order names it */
		src[u] = piece[u]->ntuples ? column_of(piece[u], c) + pos[u] * size : NULL;
	if (size == 8) { /* most columns (texts too): a word a value */
		uint64_t *d = (uint64_t *)(void *)dst;
		const uint64_t **w = (const uint64_t **)(void *)src;
		for (size_t t = t0; t < t1; t++)
			d[t - t0] = *w[order[t]]++;
	} else {
		for (size_t t = t0; t < t1; t++) {
			memcpy(dst + (t - t0) * size, src[order[t]], size);
			src[order[t]] += size;
		}
	}
	free(src);
}

/* Tuples [t0, t1) of column c (the piece's relation schema: r's) into dst. */
static void gather(const struct vgq_unmerged *m, const struct vgq_relation *r, long c, size_t t0,
                   size_t t1, void *dst)
{
	if (t0 >= t1)
		return;
	size_t *pos = vgq_xcalloc(m->f.nunits + 1, sizeof *pos);
	positions(m, t0, pos);
	size_t size = column_size(r, c);
	if (m->f.bits)
		gather_two(m, c, size, t0, t1, dst, pos);
	else
		vgq_gather_units(m->f.piece, m->f.nunits, c, size, m->f.order, t0, t1, pos, dst);
	free(pos);
}

const void *vgq_column_values(const struct vgq_relation *r, long c, size_t t0, size_t t1, void *buf)
{
	if (r->unmerged) {
		gather(r->unmerged, r, c, t0, t1, buf);
		return buf;
	}
	return column_of(r, c) + t0 * column_size(r, c);
}

void vgq_unmerged_span(const struct vgq_unmerged *m, int64_t *first, int64_t *last)
{
	bool any = false;
	for (size_t u = 0; u < m->f.nunits; u++) {
		const int64_t *from = m->f.piece[u]->from;
		for (size_t i = 0; i < m->len[u]; i++) {
			if (!any || from[i] < *first)
				*first = from[i];
			if (!any || from[i] > *last)
				*last = from[i];
			any = true;
		}
	}
	if (!any)
		*first = *last = 0;
}

/* ---- gathered into the relation's own columns ---- */

#define SETTLE_TUPLES ((size_t)1 << 18) /* a thread's share of a column */

struct settle {
	struct vgq_relation *r;
	const struct vgq_unmerged *m;
	size_t parts; /* of a column */
	size_t njobs, next;
};

static void settle_work(void *arg, unsigned worker)
{
	(void)worker;
	struct settle *s = arg;
	for (;;) {
		size_t job = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
		if (job >= s->njobs)
			return;
		long c = (long)(job / s->parts) - 1;
		size_t t0 = job % s->parts * SETTLE_TUPLES, n = s->m->f.n;
		size_t t1 = n - t0 > SETTLE_TUPLES ? t0 + SETTLE_TUPLES : n;
		char *dst = (char *)column_of(s->r, c) + t0 * column_size(s->r, c);
		gather(s->m, s->r, c, t0, t1, dst);
	}
}

bool vgq_database_released(const struct vgq_database *db)
{
	for (size_t i = 0; i < db->nrelations; i++) {
		struct vgq_unmerged *m = db->relations[i]->unmerged;
		if (m && __atomic_load_n(&m->released, __ATOMIC_ACQUIRE))
			return true;
	}
	return false;
}

/* r gathered into columns of its own; false if a column was released. */
static bool relation_settle(struct vgq_relation *r, unsigned threads)
{
	struct vgq_unmerged *m = r->unmerged;
	if (!m)
		return true;
	if (m->released)
		return false;
	r->unmerged = NULL;
	r->ntuples = 0;
	vgq_relation_reserve(r, m->f.n);
	struct settle s = {.r = r, .m = m, .parts = (m->f.n + SETTLE_TUPLES - 1) / SETTLE_TUPLES};
	s.njobs = s.parts * (r->nattrs + 1);
	vg_threads_run(threads, s.njobs, settle_work, &s);
	vgq_unmerged_free(m);
	return true;
}

bool vgq_database_settle(struct vgq_database *db, unsigned threads)
{
	bool ok = true;
	for (size_t i = 0; i < db->nrelations; i++)
		ok &= relation_settle(db->relations[i], threads);
	return ok;
}
