/* The relations cache's columns checked against their checksums before first use, in
 * pieces shared by threads (a warm query's columns are hundreds of megabytes: summing
 * them is most of its work). Each piece's pages are mapped in one call first, so the
 * threads share the page-table work too. The pieces' sums are combined in order
 * (cache_internal.h), so the checksum is the one the writer computed in one pass. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/pool.h"
#include "relations/cache.h"
#include "relations/cache_internal.h"
#include "trace/trace.h" /* vgt_decode_threads: the query's --threads */

#define PIECE ((size_t)4 << 20) /* bytes, a multiple of 32 */

struct piece {
	size_t col;
	uint64_t at, size; /* file offset and bytes (whole 32-byte rows) */
	struct vgc_sums sums;
};

struct verify_job {
	const uint8_t *base;
	struct piece *pieces;
	size_t npieces, next; /* next: atomic */
	bool sum;             /* false: the pages mapped only */
};

static void verify_work(void *p, unsigned worker)
{
	(void)worker;
	struct verify_job *j = p;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (;;) {
		size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->npieces)
			return;
		struct piece *pc = &j->pieces[i];
		const uint8_t *at = j->base + pc->at;
		/* One call maps the pages: no guest fault per page. Under a shadow-paging
		 * hypervisor (this VM's PVM) each page's first load still costs about 2 us in
		 * every process; touching them here only moves that into build (README, the
		 * scan's 1-thread exec, issue 31). */
#ifdef MADV_POPULATE_READ
		uintptr_t start = (uintptr_t)at & ~(page - 1);
		madvise((void *)start, (uintptr_t)at + pc->size - start, MADV_POPULATE_READ);
#else
		(void)page;
#endif
		if (j->sum)
			pc->sums = vgc_sums_of(at, pc->size);
	}
}

/* Runs every piece of j, on up to vgt_decode_threads() threads, no more than one per
 * PIECE bytes: a small relation's columns (an entity relation's few hundred bytes) are
 * mapped and summed here, without starting a thread for them. */
static void run_job(struct verify_job *j)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < j->npieces; i++)
		bytes += j->pieces[i].size;
	unsigned threads = vgt_decode_threads();
	if (threads > (bytes + PIECE - 1) / PIECE)
		threads = (unsigned)((bytes + PIECE - 1) / PIECE);
	vg_threads_run(threads ? threads : 1, j->npieces, verify_work, j);
}

static uint64_t checked_bytes; /* atomic */

uint64_t vgq_cache_checked_bytes(void)
{
	return __atomic_load_n(&checked_bytes, __ATOMIC_RELAXED);
}

/* The n columns cut into pieces and each piece mapped (and summed, if sum) by one of up
 * to vgt_decode_threads() threads; the job's pieces, to free. */
static struct piece *run_pieces(const uint8_t *base, const struct vgc_column *const *cols, size_t n,
                                bool sum, size_t *npieces_out)
{
	size_t npieces = 0;
	for (size_t c = 0; c < n; c++)
		npieces += cols[c]->size / 32 / (PIECE / 32) + 1;
	struct verify_job j = {base, calloc(npieces ? npieces : 1, sizeof *j.pieces), 0, 0, sum};
	if (!j.pieces)
		abort();
	for (size_t c = 0; c < n; c++) {
		uint64_t whole = cols[c]->size / 32 * 32;
		for (uint64_t off = 0; off < whole || off == 0; off += PIECE) {
			uint64_t sz = whole - off < PIECE ? whole - off : PIECE;
			j.pieces[j.npieces++] =
			    (struct piece){.col = c, .at = cols[c]->offset + off, .size = sz};
			if (sz < PIECE)
				break;
		}
	}
	run_job(&j);
	*npieces_out = j.npieces;
	return j.pieces;
}

bool vgc_columns_ok(const uint8_t *base, const struct vgc_column *const *cols, size_t n)
{
	for (size_t c = 0; c < n; c++)
		__atomic_fetch_add(&checked_bytes, cols[c]->size, __ATOMIC_RELAXED);
	size_t npieces;
	struct piece *pieces = run_pieces(base, cols, n, true, &npieces);
	bool ok = true;
	for (size_t c = 0, i = 0; c < n; c++) {
		struct vgc_sums s = {{0}, {0}, 0};
		for (; i < npieces && pieces[i].col == c; i++)
			s = vgc_sums_then(s, &pieces[i].sums);
		ok = ok &&
		     vgc_checksum_end(s, base + cols[c]->offset, cols[c]->size) == cols[c]->sum;
	}
	free(pieces);
	return ok;
}

void vgc_columns_map(const uint8_t *base, const struct vgc_column *const *cols, size_t n)
{
	size_t npieces;
	free(run_pieces(base, cols, n, false, &npieces));
}

struct vgc_sums vgc_sums_threads(const void *p, size_t n)
{
	struct verify_job j = {p, calloc(n / PIECE + 1, sizeof *j.pieces), 0, 0, true};
	if (!j.pieces)
		abort();
	for (size_t off = 0; off < n; off += PIECE)
		j.pieces[j.npieces++] =
		    (struct piece){.at = off, .size = n - off < PIECE ? n - off : PIECE};
	run_job(&j);
	struct vgc_sums s = {{0}, {0}, 0};
	for (size_t i = 0; i < j.npieces; i++)
		s = vgc_sums_then(s, &j.pieces[i].sums);
	free(j.pieces);
	return s;
}
