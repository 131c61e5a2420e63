/* Partitioned spill files (exec_spill_parts.h). */
#define _GNU_SOURCE /* O_TMPFILE, mkdtemp */
#include "query/exec_spill_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file_io.h"
#include "relations/cache.h" /* vgq_cache_dir */
#include "relations/columns.h"

#define BUF_MIN 512         /* bytes of one partition's buffer, at least */
#define BUF_RECS 4          /* and records, at least (a chunk's entry in the chain: 16 bytes) */
#define BUF_MAX (64 * 1024) /* and bytes at most */

/* Each partition's buffer, in records: an eighth of the room, shared out, within the
 * bounds. */
static size_t buffer_records(size_t room, size_t nparts, size_t rec)
{
	size_t each = room / 8 / (nparts ? nparts : 1), least = BUF_RECS * rec;
	if (each > BUF_MAX)
		each = BUF_MAX;
	if (each < BUF_MIN)
		each = BUF_MIN;
	if (each < least)
		each = least;
	return each / rec;
}

size_t vgq_parts_chunk_bytes(const struct vgq_parts *pt)
{
	return pt->bufrecs * pt->rec;
}

/* The largest partition when the hash's top lg bits choose it. */
static uint64_t largest(const uint64_t *fine, unsigned lg)
{
	uint64_t most = 0;
	size_t per = (size_t)1 << (VGQ_PARTS_FINE_LOG2 - lg);
	for (size_t p = 0; p < ((size_t)1 << lg); p++) {
		uint64_t k = 0;
		for (size_t f = p * per; f < (p + 1) * per; f++)
			k += fine[f];
		if (k > most)
			most = k;
	}
	return most;
}

unsigned vgq_parts_choose(const uint64_t *fine, size_t (*bytes)(uint64_t n, size_t arg), size_t arg,
                          size_t rec, size_t room, size_t *worst)
{
	uint64_t total = 0;
	for (size_t f = 0; f < ((size_t)1 << VGQ_PARTS_FINE_LOG2); f++)
		total += fine[f];
	unsigned best = 1;
	size_t least = SIZE_MAX;
	for (unsigned lg = 1; lg <= VGQ_PARTS_FINE_LOG2; lg++) {
		size_t np = (size_t)1 << lg, each = buffer_records(room, np, rec);
		/* the buffers, and the chain of chunks as it grows (doubling: twice at most) */
		size_t part = bytes(largest(fine, lg), arg),
		       io = np * each * rec + 2 * (total / each + np) * sizeof(struct vgq_chunk);
		if (part + io <= room / 2) {
			*worst = part + io;
			return lg;
		}
		if (part + io < least) {
			least = part + io;
			best = lg;
		}
	}
	*worst = least;
	return best;
}

static void say_failed(const char *what, const char *how, const char *dir, int err)
{
	fprintf(stderr, "vigil: cannot spill %s to %s (%s: %s)\n", what, dir, how, strerror(err));
}

/* A file nobody else can reach and nothing can leave behind: never linked, or linked in
 * a private directory only until it is unlinked, with the directory, at once. */
static int open_file(const char *what)
{
	char dir[4096];
	const char *tmp = getenv("TMPDIR");
	if (!vgq_cache_dir(dir, sizeof dir))
		snprintf(dir, sizeof dir, "%s", tmp && *tmp ? tmp : "/tmp");
	if (vgb_mkdirs(dir, 0700) < 0) {
		say_failed(what, "mkdir", dir, errno);
		return -1;
	}
	int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) {
		if (fd < 0)
			say_failed(what, "open", dir, errno);
		return fd;
	}
	char priv[4200], path[4300];
	snprintf(priv, sizeof priv, "%s/vigil-spill-XXXXXX", dir);
	if (!mkdtemp(priv)) {
		say_failed(what, "mkdtemp", dir, errno);
		return -1;
	}
	snprintf(path, sizeof path, "%s/parts", priv);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int err = errno;
	if (fd >= 0)
		unlink(path);
	rmdir(priv);
	if (fd < 0)
		say_failed(what, "open", priv, err);
	return fd;
}

/* A file's buffers and the chain's first entries: a chunk per partition (a file written
 * partition after partition, as joined rows are, needs no more). */
static size_t open_bytes(size_t bufrecs, size_t nparts, size_t rec)
{
	return nparts * bufrecs * rec + (nparts + 64) * sizeof(struct vgq_chunk);
}

size_t vgq_parts_open_bytes(const struct vgq_session *s, size_t nparts, size_t rec)
{
	return open_bytes(buffer_records(vgq_mem_room(s), nparts, rec), nparts, rec);
}

bool vgq_parts_open(struct vgq_parts *pt, struct vgq_session *s, const char *what, size_t nparts,
                    size_t rec)
{
	memset(pt, 0, sizeof *pt);
	pt->s = s;
	pt->what = what;
	pt->fd = -1;
	pt->nparts = nparts;
	pt->rec = rec;
	pt->bufrecs = buffer_records(vgq_mem_room(s), nparts, rec);
	size_t bytes = nparts * pt->bufrecs * rec,
	       chain = open_bytes(pt->bufrecs, nparts, rec) - bytes; /* the chain's first entries */
	if (!vgq_mem_take(s, what, bytes + chain)) {
		pt->failed = true;
		return false;
	}
	pt->charged = bytes + chain;
	pt->chunks = vgq_xcalloc(nparts + 64, sizeof *pt->chunks);
	pt->capchunks = nparts + 64;
	pt->fd = open_file(what);
	if (pt->fd < 0) {
		pt->failed = true;
		vgq_mem_refuse(s, what, bytes + chain);
		return false;
	}
	pt->buf = vgq_xcalloc(bytes ? bytes : 1, 1);
	pt->fill = vgq_xcalloc(nparts, sizeof *pt->fill);
	pt->head = vgq_xcalloc(nparts, sizeof *pt->head);
	pt->tail = vgq_xcalloc(nparts, sizeof *pt->tail);
	pt->count = vgq_xcalloc(nparts, sizeof *pt->count);
	return true;
}

/* Partition p's buffer to the end of the file, chained after its last chunk. */
static bool write_chunk(struct vgq_parts *pt, size_t p)
{
	size_t n = pt->fill[p];
	if (!n || pt->failed)
		return !pt->failed;
	if (pt->nchunks == pt->capchunks) { /* the chain grows with the file: counted too */
		size_t cap = pt->capchunks ? 2 * pt->capchunks : 64;
		if (!vgq_mem_take(pt->s, pt->what, (cap - pt->capchunks) * sizeof *pt->chunks)) {
			pt->failed = true;
			return false;
		}
		pt->charged += (cap - pt->capchunks) * sizeof *pt->chunks;
		pt->chunks = vgq_xrealloc(pt->chunks, cap, sizeof *pt->chunks);
		pt->capchunks = cap;
	}
	const unsigned char *b = pt->buf + p * pt->bufrecs * pt->rec;
	if (vgb_write_all(pt->fd, b, n * pt->rec) < 0) {
		say_failed(pt->what, "write", "the spill file", errno);
		vgq_mem_refuse(pt->s, pt->what, n * pt->rec);
		pt->failed = true;
		return false;
	}
	__atomic_add_fetch(&pt->s->mem.spilled, n * pt->rec, __ATOMIC_RELAXED);
	__atomic_add_fetch(&pt->s->mem.parts_written, n * pt->rec, __ATOMIC_RELAXED);
	pt->fill[p] = 0;
	struct vgq_chunk *last = pt->tail[p] ? &pt->chunks[pt->tail[p] - 1] : NULL;
	if (last && pt->tail[p] == pt->nchunks && last->n <= UINT32_MAX - n) {
		/* the file's last chunk is this partition's: one chunk grows (a partition
		 * written whole at a time takes one) */
		last->n += (uint32_t)n;
		pt->end += n * pt->rec;
		return true;
	}
	uint32_t c = (uint32_t)pt->nchunks++;
	pt->chunks[c] = (struct vgq_chunk){pt->end, (uint32_t)n, 0};
	if (pt->tail[p])
		pt->chunks[pt->tail[p] - 1].next = c + 1;
	else
		pt->head[p] = c + 1;
	pt->tail[p] = c + 1;
	pt->end += n * pt->rec;
	return true;
}

bool vgq_parts_put(struct vgq_parts *pt, size_t p, const void *record)
{
	if (pt->fill[p] == pt->bufrecs && !write_chunk(pt, p))
		return false;
	memcpy(pt->buf + (p * pt->bufrecs + pt->fill[p]++) * pt->rec, record, pt->rec);
	pt->count[p]++;
	return !pt->failed;
}

bool vgq_parts_seal(struct vgq_parts *pt)
{
	for (size_t p = 0; p < pt->nparts && pt->buf; p++)
		write_chunk(pt, p);
	free(pt->buf);
	pt->buf = NULL;
	size_t bufs = pt->nparts * pt->bufrecs * pt->rec;
	if (pt->charged >= bufs && bufs) {
		vgq_mem_give(pt->s, bufs);
		pt->charged -= bufs;
	}
	return !pt->failed;
}

void vgq_parts_close(struct vgq_parts *pt)
{
	if (pt->fd >= 0)
		close(pt->fd);
	free(pt->buf);
	free(pt->fill);
	free(pt->chunks);
	free(pt->head);
	free(pt->tail);
	free(pt->count);
	if (pt->charged)
		vgq_mem_give(pt->s, pt->charged);
	memset(pt, 0, sizeof *pt);
	pt->fd = -1;
}

void vgq_parts_reader_init(struct vgq_parts_reader *r, const struct vgq_parts *pt, size_t p)
{
	memset(r, 0, sizeof *r);
	r->pt = pt;
	r->chunk = pt->head ? pt->head[p] : 0;
	r->buf = vgq_xcalloc(pt->bufrecs ? pt->bufrecs * pt->rec : 1, 1);
}

static bool read_at(const struct vgq_parts *pt, void *out, size_t len, uint64_t off)
{
	unsigned char *o = out;
	while (len) {
		ssize_t k = pread(pt->fd, o, len, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			say_failed(pt->what, "read", "the spill file", k < 0 ? errno : EIO);
			vgq_mem_refuse(pt->s, pt->what, len);
			return false;
		}
		o += k;
		off += (uint64_t)k;
		len -= (size_t)k;
	}
	return true;
}

const void *vgq_parts_next(struct vgq_parts_reader *r)
{
	if (r->i == r->n) { /* the buffer's worth of the chunk after what was read */
		const struct vgq_parts *pt = r->pt;
		while (r->chunk && r->done == pt->chunks[r->chunk - 1].n) {
			r->chunk = pt->chunks[r->chunk - 1].next;
			r->done = 0;
		}
		if (!r->chunk)
			return NULL;
		const struct vgq_chunk *c = &pt->chunks[r->chunk - 1];
		size_t n = c->n - r->done < pt->bufrecs ? c->n - r->done : pt->bufrecs;
		if (!read_at(pt, r->buf, n * pt->rec, c->off + (uint64_t)r->done * pt->rec))
			return NULL;
		r->done += (uint32_t)n;
		r->n = n;
		r->i = 0;
	}
	return r->buf + r->i++ * r->pt->rec;
}

void vgq_parts_reader_free(struct vgq_parts_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

bool vgq_parts_read_all(struct vgq_parts *pt, size_t p, void *out)
{
	unsigned char *o = out;
	for (uint32_t c = pt->head[p]; c; c = pt->chunks[c - 1].next) {
		size_t len = (size_t)pt->chunks[c - 1].n * pt->rec;
		if (!read_at(pt, o, len, pt->chunks[c - 1].off)) {
			pt->failed = true;
			return false;
		}
		o += len;
	}
	return true;
}
