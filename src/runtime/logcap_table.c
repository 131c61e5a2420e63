/* Log capture tables: event counts, transition counts and per-transition time sketches,
 * in one anonymous mapping made once (pages are touched only as they are used). A
 * thread's table has one writer, the thread itself, and is read by model writes under the
 * capture lock: counters are written with relaxed atomic stores, new transition slots and
 * sketch chunks are published with release stores. No lock, no malloc. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "common/sketch_index.h"
#include "logcap.h"

#define TRANS_SLOTS (1u << LC_TRANS_BITS)
#define TRANS_MAX (TRANS_SLOTS / 4 * 3)
#define OCT_TABLE_SIZE 256 /* LC_OCTAVES uint32 offsets, rounded up */
#define CHUNK_SIZE (64 * sizeof(uint64_t))
#define POOL_START 64 /* offset 0 means "none" */

_Static_assert(LC_OCTAVES *VG_SKETCH_SUB >= VG_SKETCH_BUCKETS, "octaves cover the sketch");
_Static_assert(LC_OCTAVES * sizeof(uint32_t) <= OCT_TABLE_SIZE, "octave table fits");

static size_t head_len(void)
{
	return LC_MAX_EVENTS * sizeof(uint64_t) + TRANS_SLOTS * sizeof(struct lc_trans) +
	       TRANS_SLOTS * sizeof(uint32_t);
}

int vg__lc_table_init(struct lc_table *t, size_t pool_len)
{
	memset(t, 0, sizeof *t);
	size_t len = head_len() + pool_len;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	t->map = m;
	t->map_len = len;
	t->counts = (_Atomic uint64_t *)t->map;
	t->trans = (struct lc_trans *)(t->map + LC_MAX_EVENTS * sizeof(uint64_t));
	t->used = (uint32_t *)(t->trans + TRANS_SLOTS);
	t->pool = t->map + head_len();
	t->pool_len = pool_len;
	atomic_store(&t->pool_used, POOL_START);
	return 0;
}

void vg__lc_table_free(struct lc_table *t)
{
	if (t->map)
		munmap(t->map, t->map_len);
	memset(t, 0, sizeof *t);
}

void vg__lc_table_clear(struct lc_table *t)
{
	/* Private anonymous pages read back as zeros after MADV_DONTNEED. */
	madvise(t->map, t->map_len, MADV_DONTNEED);
	atomic_store(&t->nused, 0);
	atomic_store(&t->pool_used, POOL_START);
	atomic_store(&t->lost_trans, 0);
	atomic_store(&t->lost_times, 0);
	atomic_store(&t->lost_events, 0);
}

struct lc_trans *vg__lc_trans_get(struct lc_table *t, uint32_t key)
{
	uint32_t i = (key * 2654435761u) >> (32 - LC_TRANS_BITS);
	for (;;) {
		struct lc_trans *e = &t->trans[i];
		if (__builtin_expect(e->key == key, 1))
			return e;
		if (e->key == 0)
			break;
		i = (i + 1) & (TRANS_SLOTS - 1);
	}
	uint32_t n = atomic_load_explicit(&t->nused, memory_order_relaxed);
	if (n >= TRANS_MAX)
		return NULL;
	t->trans[i].key = key;
	t->used[n] = i;
	atomic_store_explicit(&t->nused, n + 1, memory_order_release);
	return &t->trans[i];
}

static uint32_t pool_alloc(struct lc_table *t, size_t len)
{
	size_t at = atomic_load_explicit(&t->pool_used, memory_order_relaxed);
	if (at + len > t->pool_len)
		return 0;
	atomic_store_explicit(&t->pool_used, at + len, memory_order_relaxed);
	return (uint32_t)at;
}

static _Atomic uint32_t *octaves(const struct lc_table *t, uint32_t off)
{
	return (_Atomic uint32_t *)(t->pool + off);
}

static _Atomic uint64_t *chunk(const struct lc_table *t, uint32_t off)
{
	return (_Atomic uint64_t *)(t->pool + off);
}

void vg__lc_time_add(struct lc_table *t, struct lc_trans *e, uint32_t bucket, uint64_t n)
{
	uint32_t sk = atomic_load_explicit(&e->sketch, memory_order_relaxed);
	if (__builtin_expect(!sk, 0)) {
		sk = pool_alloc(t, OCT_TABLE_SIZE);
		if (!sk)
			goto lost;
		atomic_store_explicit(&e->sketch, sk, memory_order_release);
	}
	_Atomic uint32_t *oct = octaves(t, sk);
	uint32_t o = bucket / VG_SKETCH_SUB;
	uint32_t c = atomic_load_explicit(&oct[o], memory_order_relaxed);
	if (__builtin_expect(!c, 0)) {
		c = pool_alloc(t, CHUNK_SIZE);
		if (!c)
			goto lost;
		atomic_store_explicit(&oct[o], c, memory_order_release);
	}
	vg__lc_bump(&chunk(t, c)[bucket % VG_SKETCH_SUB], n);
	vg__lc_bump(&e->timed, n);
	return;
lost:
	vg__lc_bump(&t->lost_times, n);
}

const _Atomic uint64_t *vg__lc_octave(const struct lc_table *t, const struct lc_trans *e,
                                      uint32_t o)
{
	uint32_t sk = atomic_load_explicit(&((struct lc_trans *)e)->sketch, memory_order_acquire);
	if (!sk || o >= LC_OCTAVES)
		return NULL;
	uint32_t c = atomic_load_explicit(&octaves(t, sk)[o], memory_order_acquire);
	return c ? chunk(t, c) : NULL;
}

static uint64_t ld(const _Atomic uint64_t *p)
{
	return atomic_load_explicit((_Atomic uint64_t *)p, memory_order_relaxed);
}

static void add_sketch(struct lc_table *dst, struct lc_trans *d, const struct lc_table *src,
                       struct lc_trans *e)
{
	for (uint32_t o = 0; o < LC_OCTAVES; o++) {
		const _Atomic uint64_t *c = vg__lc_octave(src, e, o);
		if (!c)
			continue;
		for (uint32_t j = 0; j < VG_SKETCH_SUB; j++) {
			uint64_t v = ld(&c[j]);
			if (v)
				vg__lc_time_add(dst, d, o * VG_SKETCH_SUB + j, v);
		}
	}
}

void vg__lc_table_add(struct lc_table *dst, const struct lc_table *src)
{
	uint32_t nev = vg__lc_event_count();
	for (uint32_t id = 1; id <= nev && id < LC_MAX_EVENTS; id++) {
		uint64_t v = ld(&src->counts[id]);
		if (v)
			vg__lc_bump(&dst->counts[id], v);
	}
	uint32_t n = atomic_load_explicit(&((struct lc_table *)src)->nused, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++) {
		struct lc_trans *e = &src->trans[src->used[i]];
		struct lc_trans *d = vg__lc_trans_get(dst, e->key);
		if (!d) {
			vg__lc_bump(&dst->lost_trans, ld(&e->count));
			continue;
		}
		/* `timed` is rebuilt by vg__lc_time_add, bucket by bucket. */
		vg__lc_bump(&d->count, ld(&e->count));
		vg__lc_bump(&d->sum_ns, ld(&e->sum_ns));
		add_sketch(dst, d, src, e);
	}
	vg__lc_bump(&dst->lost_trans, ld(&src->lost_trans));
	vg__lc_bump(&dst->lost_times, ld(&src->lost_times));
	vg__lc_bump(&dst->lost_events, ld(&src->lost_events));
}
