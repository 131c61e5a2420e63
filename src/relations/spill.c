/* Column memory with a budget (spill.h). A heap column of 2 MiB or more is a mapping of
 * its own (base/huge.h). A spilled column is a range of virtual memory
 * reserved for it, into which chunks of one temporary file are mapped one after the
 * other as it grows, so it reads as one array; the chunks need not be neighbours in the
 * file. A column that outgrows its reservation is mapped again, chunk by chunk, into a
 * larger one (no copy: the pages are the page cache's). A thread (the governor) watches
 * the process's resident file pages and drops the spilled columns' pages when they pass
 * half the budget: MADV_DONTNEED on a shared file mapping keeps the data (dirty pages go
 * to the page cache, which writes them to the file when it needs the memory). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file_io.h"
#include "base/huge.h"
#include "relations/cache.h"
#include "relations/columns.h"
#include "relations/spill.h"

#define MIB ((size_t)1 << 20)
#define BIG VGB_HUGE_PAGE   /* heap columns from this size are blocks of their own */
#define GOVERN_NS 10000000L /* how often the governor looks: 10 ms */

struct chunk {
	uint64_t off; /* in the spill file */
	size_t len;
};

struct spilled {
	char *base;
	size_t reserved, mapped; /* bytes of virtual memory held; of them mapped to the file */
	struct chunk *chunks;
	size_t nchunks;
	struct spilled *prev, *next; /* every spilled column, for the governor */
};

struct vgq_colmem {
	size_t heap_bytes; /* of this relation's heap columns, counted in heap_total */
	struct spilled **cols;
	size_t ncols;
	/* large columns: in huge pages where the kernel gives them (each first touch of a
	 * 4 KiB page is a fault, the most expensive part of a build on a virtual machine) */
	struct vgb_huge_block *big;
	size_t nbig;
};

struct governor {
	pthread_t thread;
	bool stop;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int fd;       /* the spill file (unlinked), or -1 */
	uint64_t end; /* of what is allocated in it */
	struct spilled *head;
	size_t live;               /* spilled columns */
	bool failed;               /* cannot spill: said once, columns stay on the heap */
	struct governor *governor; /* running while live > 0 */
	int statm;                 /* /proc/self/statm while the file is open, or -1 */
	size_t baseline;           /* file pages resident after the last drop */
	struct vgq_spill_stats stats;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .fd = -1, .statm = -1};

static size_t file_resident(void);
static void govern_now(void);

static size_t heap_total; /* bytes of heap columns, every relation (atomic) */

static size_t page_size(void)
{
	static size_t p;
	if (!p)
		p = (size_t)sysconf(_SC_PAGESIZE);
	return p;
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* ---- the budget ---- */

static size_t budget;
static pthread_once_t budget_once = PTHREAD_ONCE_INIT;

bool vgq_parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	if (*s < '0' || *s > '9')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	}
	if (shift && (*end == 'i' || *end == 'I') && (end[1] == 'b' || end[1] == 'B'))
		end += 2;
	else if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (shift && v > (SIZE_MAX >> shift)))
		return false;
	*out = (size_t)(v << shift);
	return true;
}

static void read_budget(void)
{
	const char *e = getenv("VIGIL_BUILD_MEMORY");
	if (e && *e) {
		if (!vgq_parse_size(e, &budget)) {
			fprintf(
			    stderr,
			    "vigil: VIGIL_BUILD_MEMORY=%s is not a size (bytes, or a number with "
			    "K, M, G or T: 512M)\n",
			    e);
			exit(2);
		}
		return;
	}
	long pages = sysconf(_SC_PHYS_PAGES);
	budget = pages > 0 ? (size_t)pages * page_size() / 4 : (size_t)1 << 30;
}

size_t vgq_spill_budget(void)
{
	pthread_once(&budget_once, read_budget);
	return __atomic_load_n(&budget, __ATOMIC_RELAXED);
}

void vgq_spill_set_budget(size_t bytes)
{
	pthread_once(&budget_once, read_budget);
	__atomic_store_n(&budget, bytes, __ATOMIC_RELAXED);
}

/* Columns under this size stay on the heap: 1/64 of the budget, at most 1 MiB, at least a
 * page (so a tiny budget, as the tests set, spills nearly everything). */
static size_t spill_min(void)
{
	size_t m = vgq_spill_budget() / 64;
	m = m > MIB ? MIB : m;
	return m < page_size() ? page_size() : m;
}

/* ---- the file (S.lock held) ---- */

static void say_failed(const char *what, const char *dir, int err)
{
	if (S.failed)
		return;
	S.failed = true;
	fprintf(stderr, "vigil: cannot spill columns to %s (%s: %s): they stay in memory\n", dir,
	        what, strerror(err));
}

/* The cache directory (vgq_cache_dir), else the temporary directory. */
static void spill_dir(char *out, size_t n)
{
	const char *tmp = getenv("TMPDIR");
	if (!vgq_cache_dir(out, n))
		snprintf(out, n, "%s", tmp && *tmp ? tmp : "/tmp");
}

static bool open_file(void)
{
	if (S.fd >= 0)
		return true;
	if (S.failed)
		return false;
	char dir[4096];
	spill_dir(dir, sizeof dir);
	if (vgb_mkdirs(dir, 0700) < 0) {
		say_failed("mkdir", dir, errno);
		return false;
	}
	/* never linked: the file goes with the descriptor, whatever ends the process */
	int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		char path[4200];
		snprintf(path, sizeof path, "%s/vigil-spill-XXXXXX", dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0) {
		say_failed("open", dir, errno);
		return false;
	}
	S.fd = fd;
	S.end = 0;
	S.statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	S.baseline = file_resident();
	return true;
}

/* Maps `len` more bytes of the file after what sp has mapped (within its reservation). */
static bool map_chunk(struct spilled *sp, size_t len)
{
	/* the blocks are allocated now, so that a full disk is an error here and never a
	 * SIGBUS when a page is first written */
	int rc = posix_fallocate(S.fd, (off_t)S.end, (off_t)len);
	if (rc) {
		char dir[4096];
		spill_dir(dir, sizeof dir);
		say_failed("allocating", dir, rc);
		return false;
	}
	void *p = mmap(sp->base + sp->mapped, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
	               S.fd, (off_t)S.end);
	if (p == MAP_FAILED) {
		fallocate(S.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)S.end,
		          (off_t)len);
		return false;
	}
	sp->chunks = vgq_xrealloc(sp->chunks, sp->nchunks + 1, sizeof *sp->chunks);
	sp->chunks[sp->nchunks++] = (struct chunk){S.end, len};
	S.end += len;
	sp->mapped += len;
	S.stats.bytes += len;
	return true;
}

static char *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Moves sp's chunks into a reservation of `bytes`: the same file pages, another place. */
static bool relocate(struct spilled *sp, size_t bytes)
{
	char *base = reserve(bytes);
	if (!base)
		return false;
	size_t at = 0;
	for (size_t i = 0; i < sp->nchunks; i++) {
		if (mmap(base + at, sp->chunks[i].len, PROT_READ | PROT_WRITE,
		         MAP_SHARED | MAP_FIXED, S.fd, (off_t)sp->chunks[i].off) == MAP_FAILED) {
			munmap(base, bytes);
			return false;
		}
		at += sp->chunks[i].len;
	}
	munmap(sp->base, sp->reserved);
	sp->base = base;
	sp->reserved = bytes;
	return true;
}

/* Makes sp map at least `bytes`. */
static bool grow(struct spilled *sp, size_t bytes)
{
	if (bytes <= sp->mapped)
		return true;
	size_t len = round_up(bytes - sp->mapped, page_size());
	if (sp->mapped + len > sp->reserved && !relocate(sp, round_up(4 * (sp->mapped + len), MIB)))
		return false;
	if (!map_chunk(sp, len))
		return false;
	govern_now();
	return true;
}

static bool grow_locked(struct spilled *sp, size_t bytes)
{
	pthread_mutex_lock(&S.lock);
	bool grown = grow(sp, bytes);
	pthread_mutex_unlock(&S.lock);
	return grown;
}

static void unmap_spilled(struct spilled *sp)
{
	munmap(sp->base, sp->reserved);
	for (size_t i = 0; i < sp->nchunks; i++) /* the disk space back at once */
		fallocate(S.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		          (off_t)sp->chunks[i].off, (off_t)sp->chunks[i].len);
	free(sp->chunks);
}

/* ---- the governor ---- */

/* The process's resident pages backed by files (statm's third field), in bytes. */
static size_t file_resident(void)
{
	char buf[256];
	ssize_t n = S.statm >= 0 ? pread(S.statm, buf, sizeof buf - 1, 0) : -1;
	unsigned long size, resident, shared;
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%lu %lu %lu", &size, &resident, &shared) != 3)
		return 0;
	return (size_t)shared * page_size();
}

/* Drops the spilled pages when the file pages resident grew by half the budget since the
 * last drop (the others, the trace's and the program's, are the baseline). Called by the
 * governor every GOVERN_NS and when a column grows (S.lock held). */
static void govern_now(void)
{
	size_t now = file_resident();
	if (now > S.baseline + vgq_spill_budget() / 2) {
		for (struct spilled *sp = S.head; sp; sp = sp->next)
			madvise(sp->base, sp->mapped, MADV_DONTNEED);
		S.stats.trims++;
		S.baseline = file_resident();
	} else if (now < S.baseline) {
		S.baseline = now;
	}
}

static void *govern(void *arg)
{
	struct governor *g = arg;
	pthread_mutex_lock(&S.lock);
	while (!g->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += GOVERN_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&S.wake, &S.lock, &until);
		if (!g->stop)
			govern_now();
	}
	pthread_mutex_unlock(&S.lock);
	free(g);
	return NULL;
}

/* ---- columns ---- */

static struct spilled *spill_new(size_t bytes)
{
	pthread_mutex_lock(&S.lock);
	struct spilled *sp = NULL;
	if (!open_file())
		goto out;
	sp = vgq_xcalloc(1, sizeof *sp);
	size_t want = round_up(4 * bytes, MIB);
	sp->base = reserve(want);
	if (!sp->base || (sp->reserved = want, !grow(sp, bytes))) {
		if (sp->base)
			unmap_spilled(sp);
		free(sp);
		sp = NULL;
		goto out;
	}
	sp->next = S.head;
	if (S.head)
		S.head->prev = sp;
	S.head = sp;
	S.live++;
	S.stats.columns++;
	if (!S.governor) {
		struct governor *g = vgq_xcalloc(1, sizeof *g);
		if (pthread_create(&g->thread, NULL, govern, g) == 0)
			S.governor = g;
		else
			free(g); /* the pages are then only the page cache's to drop */
	}
out:
	pthread_mutex_unlock(&S.lock);
	return sp;
}

static void spill_free(struct spilled *sp)
{
	pthread_mutex_lock(&S.lock);
	if (sp->prev)
		sp->prev->next = sp->next;
	else
		S.head = sp->next;
	if (sp->next)
		sp->next->prev = sp->prev;
	unmap_spilled(sp);
	free(sp);
	struct governor *g = NULL;
	pthread_t thread;
	if (--S.live == 0) { /* the last one: the file and the governor go */
		close(S.fd);
		S.fd = -1;
		if (S.statm >= 0)
			close(S.statm);
		S.statm = -1;
		g = S.governor;
		S.governor = NULL;
		if (g) {
			thread = g->thread; /* g is freed by its thread once it sees stop */
			g->stop = true;
			pthread_cond_broadcast(&S.wake);
		}
	}
	pthread_mutex_unlock(&S.lock);
	if (g)
		pthread_join(thread, NULL);
}

static size_t find(const struct vgq_colmem *m, const void *col)
{
	for (size_t i = 0; m && i < m->ncols; i++)
		if (m->cols[i]->base == col)
			return i;
	return SIZE_MAX;
}

static void heap_add(struct vgq_colmem *m, size_t old_bytes, size_t bytes)
{
	m->heap_bytes += bytes - old_bytes; /* modular: a shrink subtracts */
	__atomic_add_fetch(&heap_total, bytes - old_bytes, __ATOMIC_RELAXED);
}

/* ---- large heap columns (blocks of their own, base/huge.h) ---- */

static size_t find_big(const struct vgq_colmem *m, const void *col)
{
	for (size_t i = 0; m && col && i < m->nbig; i++)
		if (m->big[i].base == col)
			return i;
	return SIZE_MAX;
}

/* Frees a column of the heap (i SIZE_MAX) or large column i. */
static void heap_release(struct vgq_colmem *m, void *col, size_t i)
{
	if (i == SIZE_MAX) {
		free(col);
		return;
	}
	vgb_huge_unmap(&m->big[i]);
	m->big[i] = m->big[--m->nbig];
}

/* *col (old_bytes of the heap, or large column i) as a large column of `bytes`: false
 * when the address space is refused (the heap then). */
static bool big_resize(struct vgq_colmem *m, void **col, size_t i, size_t old_bytes, size_t bytes)
{
	if (i != SIZE_MAX) {
		if (!vgb_huge_grow(&m->big[i], bytes))
			return false;
		*col = m->big[i].base;
		return true;
	}
	struct vgb_huge_block b;
	if (!vgb_huge_map(&b, bytes))
		return false;
	if (*col)
		memcpy(b.base, *col, old_bytes < bytes ? old_bytes : bytes);
	free(*col);
	m->big = vgq_xrealloc(m->big, m->nbig + 1, sizeof *m->big);
	m->big[m->nbig++] = b;
	*col = b.base;
	return true;
}

void vgq_colmem_resize(struct vgq_colmem **mp, void **col, size_t old_bytes, size_t bytes)
{
	struct vgq_colmem *m = *mp ? *mp : (*mp = vgq_xcalloc(1, sizeof **mp));
	size_t i = *col ? find(m, *col) : SIZE_MAX;
	if (i != SIZE_MAX) {
		struct spilled *sp = m->cols[i];
		if (grow_locked(sp, bytes)) {
			*col = sp->base;
			return;
		}
		/* the disk is full (said once): back to the heap */
		void *p = vgq_xrealloc(NULL, bytes ? bytes : 1, 1);
		memcpy(p, sp->base, old_bytes < bytes ? old_bytes : bytes);
		m->cols[i] = m->cols[--m->ncols];
		spill_free(sp);
		heap_add(m, 0, bytes);
		*col = p;
		return;
	}
	size_t bi = find_big(m, *col); /* SIZE_MAX: on the heap */
	size_t heap = __atomic_load_n(&heap_total, __ATOMIC_RELAXED);
	if (bytes >= spill_min() && heap - old_bytes + bytes > vgq_spill_budget() / 2) {
		struct spilled *sp = spill_new(bytes);
		if (sp) {
			if (*col)
				memcpy(sp->base, *col, old_bytes < bytes ? old_bytes : bytes);
			heap_release(m, *col, bi);
			heap_add(m, old_bytes, 0);
			m->cols = vgq_xrealloc(m->cols, m->ncols + 1, sizeof *m->cols);
			m->cols[m->ncols++] = sp;
			*col = sp->base;
			return;
		}
	}
	if ((bytes >= BIG || bi != SIZE_MAX) && big_resize(m, col, bi, old_bytes, bytes)) {
		heap_add(m, old_bytes, bytes);
		return;
	}
	if (bi != SIZE_MAX) { /* no larger range: copied to the heap */
		void *p = vgq_xrealloc(NULL, bytes ? bytes : 1, 1);
		memcpy(p, *col, old_bytes < bytes ? old_bytes : bytes);
		heap_release(m, *col, bi);
		*col = p;
	} else {
		*col = vgq_xrealloc(*col, bytes ? bytes : 1, 1);
	}
	heap_add(m, old_bytes, bytes);
}

bool vgq_colmem_spill(struct vgq_colmem **mp, void **col, size_t old_bytes, size_t bytes)
{
	struct vgq_colmem *m = *mp ? *mp : (*mp = vgq_xcalloc(1, sizeof **mp));
	size_t i = *col ? find(m, *col) : SIZE_MAX;
	if (i != SIZE_MAX) {
		struct spilled *sp = m->cols[i];
		if (!grow_locked(sp, bytes))
			return false; /* *col as it was */
		*col = sp->base;
		return true;
	}
	struct spilled *sp = spill_new(bytes ? bytes : 1);
	if (!sp)
		return false;
	if (*col)
		memcpy(sp->base, *col, old_bytes < bytes ? old_bytes : bytes);
	free(*col); /* a heap column of the caller's, not counted in heap_total */
	m->cols = vgq_xrealloc(m->cols, m->ncols + 1, sizeof *m->cols);
	m->cols[m->ncols++] = sp;
	*col = sp->base;
	return true;
}

void vgq_colmem_release(struct vgq_colmem *m, void *col)
{
	size_t i = col ? find(m, col) : SIZE_MAX;
	if (i == SIZE_MAX) {
		heap_release(m, col, find_big(m, col));
		return;
	}
	struct spilled *sp = m->cols[i];
	m->cols[i] = m->cols[--m->ncols];
	spill_free(sp);
}

void vgq_colmem_free(struct vgq_colmem *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->ncols; i++)
		spill_free(m->cols[i]);
	free(m->cols);
	for (size_t i = 0; i < m->nbig; i++)
		vgb_huge_unmap(&m->big[i]);
	free(m->big);
	__atomic_sub_fetch(&heap_total, m->heap_bytes, __ATOMIC_RELAXED);
	free(m);
}

struct vgq_spill_stats vgq_spill_stats(void)
{
	pthread_mutex_lock(&S.lock);
	struct vgq_spill_stats s = S.stats;
	pthread_mutex_unlock(&S.lock);
	return s;
}
