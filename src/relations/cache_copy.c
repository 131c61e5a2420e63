/* A warm query's columns read with pread into anonymous huge-page memory instead of used
 * where they are mapped (cache_read.c, vgc_rfile_check). Under a shadow-paging hypervisor
 * (this VM's PVM) the first load from each 4 KiB page of a mapped file costs about 2 us in
 * every new process, even after MADV_POPULATE_READ; the kernel's copy out of the page
 * cache pays no such fault, and the destination is a few 2 MiB pages (README, the scan's
 * 1-thread exec, issue 31). Under nested paging (KVM) the same load costs about 0.1 us
 * and the copy into fresh memory is the dearer: so loads are timed once per process, and
 * the columns copied only where they are dear (vgc_copy_pays). Only columns an earlier
 * query checked are copied (a column summed now has had its pages touched by the sum), and
 * only while the copy fits half the build's memory budget: larger columns stay mapped, held by the
 * page cache, not the heap (a billion-event trace). The copy is made in pieces on up to
 * vgt_decode_threads() threads, each writing (and so faulting in) its own part of the block. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/huge.h"
#include "common/pool.h"
#include "relations/cache.h"
#include "relations/cache_internal.h"
#include "relations/spill.h"
#include "trace/trace.h" /* vgt_decode_threads: the query's --threads */

#define PIECE ((size_t)4 << 20)

struct copy_piece {
	uint64_t from; /* file offset */
	char *to;
	size_t size;
};

struct copy_job {
	int fd;
	struct copy_piece *pieces;
	size_t npieces, next; /* next: atomic */
	bool failed;          /* atomic */
};

static void copy_work(void *p, unsigned worker)
{
	(void)worker;
	struct copy_job *j = p;
	for (;;) {
		size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->npieces)
			return;
		const struct copy_piece *pc = &j->pieces[i];
		for (size_t done = 0; done < pc->size;) {
			ssize_t got =
			    pread(j->fd, pc->to + done, pc->size - done, (off_t)(pc->from + done));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				__atomic_store_n(&j->failed, true, __ATOMIC_RELAXED);
				break;
			}
			done += (size_t)got;
		}
	}
}

static uint64_t copied_bytes; /* atomic */

uint64_t vgq_cache_copied_bytes(void)
{
	return __atomic_load_n(&copied_bytes, __ATOMIC_RELAXED);
}

/* Copies are worth their 2 MiB pages from this many bytes on. */
#define COPY_MIN ((size_t)256 << 10)

/* A mapped page's first load (after MADV_POPULATE_READ, as vgc_columns_map leaves the
 * columns it maps) is dear when it costs more than this: shadow paging about 2 us; nested
 * paging about 0.1 us, where a copy into fresh memory costs more than the loads it saves. */
#define DEAR_PAGE_NS 1000

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int vgc_copy_setting(void)
{
	const char *env = getenv("VIGIL_CACHE_COPY");
	if (env && !strcmp(env, "on"))
		return 1;
	if (env && !strcmp(env, "off"))
		return 0;
	return -1;
}

bool vgc_copy_dear(const uint64_t *ns_a_page, size_t n)
{
	if (!n)
		return false;
	uint64_t least = ns_a_page[0];
	for (size_t i = 1; i < n; i++)
		if (ns_a_page[i] < least)
			least = ns_a_page[i];
	return least > DEAR_PAGE_NS;
}

void vgc_copy_sample(const uint8_t *p, size_t page, uint64_t (*clock_ns)(void),
                     uint64_t ns_a_page[VGC_COPY_STRETCHES])
{
	size_t pages = VGC_COPY_STRETCHES * VGC_COPY_STRETCH_PAGES;
	/* The pages mapped first, as the columns a query maps are (cache_verify.c): what is
	 * timed is a load's own cost, not the guest's fault. A kernel without
	 * MADV_POPULATE_READ (before 5.14: EINVAL) maps none there either: the loads then
	 * fault, as the query's own would. */
#ifdef MADV_POPULATE_READ
	(void)madvise((void *)p, pages * page, MADV_POPULATE_READ);
#endif
	const volatile uint8_t *v = p;
	uint8_t x = 0;
	for (size_t s = 0; s < VGC_COPY_STRETCHES; s++) {
		uint64_t t0 = clock_ns();
		for (size_t i = 0; i < VGC_COPY_STRETCH_PAGES; i++)
			x ^= v[(s * VGC_COPY_STRETCH_PAGES + i) * page];
		ns_a_page[s] = (clock_ns() - t0) / VGC_COPY_STRETCH_PAGES;
	}
	(void)x;
}

bool vgc_copy_pays(const uint8_t *base, const struct vgc_column *const *cols, size_t n)
{
	static int pays = -1; /* atomic: a racing second measure decides alike */
	int set = vgc_copy_setting();
	if (set >= 0)
		return set;
	int known = __atomic_load_n(&pays, __ATOMIC_RELAXED);
	if (known >= 0)
		return known;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), c = 0;
	size_t need = (VGC_COPY_STRETCHES * VGC_COPY_STRETCH_PAGES + 1) * page;
	while (c < n && cols[c]->size < need)
		c++;
	if (!base || c == n)
		return true; /* too little to tell: copy as before */
	/* the first pages of the column, page-aligned within it (pages the query reads) */
	const uint8_t *p = base + (cols[c]->offset + page - 1) / page * page;
	uint64_t ns[VGC_COPY_STRETCHES];
	vgc_copy_sample(p, page, mono_ns, ns);
	/* the cheapest stretch: a preemption or an interrupt only makes a stretch dearer */
	bool dear = vgc_copy_dear(ns, VGC_COPY_STRETCHES);
	__atomic_store_n(&pays, dear, __ATOMIC_RELAXED);
	return dear;
}

bool vgc_columns_copy(int fd, const uint8_t *base, const struct vgc_column *const *cols, size_t n,
                      struct vgb_huge_block *blk, const uint8_t **at)
{
	size_t total = 0, npieces = 0;
	for (size_t c = 0; c < n; c++) {
		total += (cols[c]->size + VGC_ALIGN - 1) / VGC_ALIGN * VGC_ALIGN;
		npieces += cols[c]->size / PIECE + 1;
	}
	if (fd < 0 || total < COPY_MIN || total > vgq_spill_budget() / 2 ||
	    !vgc_copy_pays(base, cols, n) || !vgb_huge_map(blk, total))
		return false;
	struct copy_job j = {fd, calloc(npieces, sizeof *j.pieces), 0, 0, false};
	if (!j.pieces) {
		vgb_huge_unmap(blk);
		return false;
	}
	char *to = blk->base;
	for (size_t c = 0; c < n; c++) {
		at[c] = (const uint8_t *)to;
		for (size_t off = 0; off < cols[c]->size; off += PIECE) {
			size_t sz = cols[c]->size - off < PIECE ? cols[c]->size - off : PIECE;
			j.pieces[j.npieces++] =
			    (struct copy_piece){cols[c]->offset + off, to + off, sz};
		}
		to += (cols[c]->size + VGC_ALIGN - 1) / VGC_ALIGN * VGC_ALIGN;
	}
	vg_threads_run(vgt_decode_threads(), j.npieces, copy_work, &j);
	free(j.pieces);
	if (j.failed) { /* a file cut short under us: its mapping is read as before */
		vgb_huge_unmap(blk);
		return false;
	}
	__atomic_fetch_add(&copied_bytes, total, __ATOMIC_RELAXED);
	return true;
}
