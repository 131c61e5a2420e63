/* A warm query's columns read with pread into anonymous huge-page memory instead of used
 * where they are mapped (cache_read.c, vgc_rfile_check). Under a shadow-paging hypervisor
 * (this VM's PVM) the first load from each 4 KiB page of a mapped file costs about 2 us in
 * every new process, even after MADV_POPULATE_READ; the kernel's copy out of the page
 * cache pays no such fault, and the destination is a few 2 MiB pages (README, the scan's
 * 1-thread exec, issue 31). Under nested paging (KVM) the same load costs about 0.1 us
 * and the copy into fresh memory is the dearer: so the first loads of a stretch of pages are timed
 * once per process, and the columns copied only where they are dear (copy_pays). Only columns an
 * earlier query checked are copied (a column summed now has had its pages touched by the sum), and
 * only while the copy fits half the build's memory budget: larger columns stay mapped, held by the
 * page cache, not the heap (a billion-event trace). The copy is made in pieces on up to
 * vgt_decode_threads() threads, each writing (and so faulting in) its own part of the block. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

/* A mapped page's first load is dear when it costs more than this (shadow paging: about
 * 2 us; nested paging with the kernel's fault-around: about 0.1 us, where a copy into
 * fresh memory costs more than the loads it saves). */
#define DEAR_PAGE_NS 1000
#define SAMPLE_PAGES 256

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The least time a page of `pages` pages at p took to load first, in ns a page. */
static uint64_t first_loads(const volatile uint8_t *p, size_t pages, size_t page)
{
	uint64_t t0 = mono_ns();
	uint8_t x = 0;
	for (size_t i = 0; i < pages; i++)
		x ^= p[i * page];
	(void)x;
	return (mono_ns() - t0) / (pages ? pages : 1);
}

/* Whether copying pays on this machine: VIGIL_CACHE_COPY=on or off (tests), else
 * measured once per process on the first pages of the columns to read (pages the query
 * loads anyway): dear twice, on two stretches, to rule out a preemption. */
static bool copy_pays(const uint8_t *base, const struct vgc_column *const *cols, size_t n)
{
	static int pays = -1; /* atomic: a racing second measure decides alike */
	const char *env = getenv("VIGIL_CACHE_COPY");
	if (env && (!strcmp(env, "on") || !strcmp(env, "off")))
		return !strcmp(env, "on");
	int known = __atomic_load_n(&pays, __ATOMIC_RELAXED);
	if (known >= 0)
		return known;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), c = 0;
	while (c < n && cols[c]->size < 2 * SAMPLE_PAGES * page)
		c++;
	if (!base || c == n)
		return true; /* too little to tell: copy as before */
	const uint8_t *p = base + (cols[c]->offset + page - 1) / page * page;
	bool dear = first_loads(p, SAMPLE_PAGES, page) > DEAR_PAGE_NS &&
	            first_loads(p + SAMPLE_PAGES * page, SAMPLE_PAGES, page) > DEAR_PAGE_NS;
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
	    !copy_pays(base, cols, n) || !vgb_huge_map(blk, total))
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
