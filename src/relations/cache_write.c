/* Writes a database to the relations cache's file (cache_internal.h): texts,
 * blobs and columns in one pass, the directory last, then the header; into a temporary
 * file renamed over the cache, so a reader sees the old file or the whole new one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relations/cache_internal.h"

/* ---- the file offset of each interned text, by its pointer ---- */

struct textmap {
	uintptr_t *keys;
	uint64_t *offs;
	size_t cap; /* a power of two */
};

static size_t slot_of(const struct textmap *m, const char *s)
{
	size_t mask = m->cap - 1;
	for (size_t i = vgq_mix((uintptr_t)s) & mask;; i = (i + 1) & mask)
		if (!m->keys[i] || m->keys[i] == (uintptr_t)s)
			return i;
}

static uint64_t text_offset(const struct textmap *m, const char *s)
{
	if (!s)
		return 0;
	size_t i = slot_of(m, s);
	return m->keys[i] ? m->offs[i] : 0;
}

/* ---- the writer ---- */

struct writer {
	FILE *f;
	uint64_t pos;
	bool failed;
	struct textmap texts;
	uint64_t texts_sum; /* of every text, in the order written */
	/* the directory, built in memory */
	uint8_t *dir;
	size_t ndir, capdir;
};

static void put(struct writer *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n)
		w->failed = true;
	w->pos += n;
}

static void pad(struct writer *w, size_t align)
{
	static const char zeros[VGC_ALIGN];
	size_t r = w->pos % align;
	if (r)
		put(w, zeros, align - r);
}

static void dir_raw(struct writer *w, const void *p, size_t n)
{
	size_t padded = (n + 7) & ~(size_t)7;
	if (w->ndir + padded > w->capdir) {
		w->capdir = (w->ndir + padded) * 2 + 256;
		w->dir = vgq_xrealloc(w->dir, w->capdir, 1);
	}
	memcpy(w->dir + w->ndir, p, n);
	memset(w->dir + w->ndir + n, 0, padded - n);
	w->ndir += padded;
}

static void dir_u64(struct writer *w, uint64_t v)
{
	dir_raw(w, &v, sizeof v);
}

/* A text of the directory: an interned one by its offset (odd word), another inline
 * (its length times two, then its bytes and NUL). */
static void dir_text(struct writer *w, const char *s)
{
	if (!s) {
		dir_u64(w, VGC_NULL_TEXT);
		return;
	}
	uint64_t off = text_offset(&w->texts, s);
	if (off) {
		dir_u64(w, off << 1 | 1);
		return;
	}
	size_t len = strlen(s);
	dir_u64(w, (uint64_t)len << 1);
	dir_raw(w, s, len + 1);
}

static void write_text(void *arg, const char *s, size_t len)
{
	struct writer *w = arg;
	uint64_t n = len;
	put(w, &n, sizeof n);
	size_t i = slot_of(&w->texts, s);
	w->texts.keys[i] = (uintptr_t)s;
	w->texts.offs[i] = w->pos;
	w->texts_sum = w->texts_sum * 0x100000001B3ull + vgc_checksum(s, len + 1);
	put(w, s, len + 1);
	pad(w, 8);
}

/* Writes one column (already in the file's form) and notes it in the directory. */
static void column(struct writer *w, const void *data, size_t size)
{
	if (!data) {
		dir_u64(w, 0), dir_u64(w, 0), dir_u64(w, 0);
		return;
	}
	pad(w, VGC_ALIGN);
	dir_u64(w, w->pos);
	dir_u64(w, size);
	dir_u64(w, vgc_checksum(data, size));
	put(w, data, size);
}

/* An attribute column in the file's form: numbers as they are; texts, bytes and entity
 * names as offsets (bytes are written to the file here, before the column). */
static void attr_column(struct writer *w, const struct vgq_relation *r, size_t a)
{
	size_t n = r->ntuples;
	enum vgq_type t = r->attrs[a].type;
	const union vgq_column *c = &r->cols[a];
	if (t == VGQ_INT || t == VGQ_UINT || t == VGQ_DOUBLE) {
		column(w, n ? (const void *)c->i : "", n * 8);
		return;
	}
	uint64_t *out = vgq_xcalloc(n ? n : 1, vgc_value_size(t));
	uint64_t blobs_at = w->pos, blobs_sum = 0; /* bytes: the values, before the column */
	for (size_t i = 0; i < n; i++) {
		if (t == VGQ_STRING) {
			out[i] = text_offset(&w->texts, c->s[i]);
		} else if (t == VGQ_BYTES) {
			out[2 * i + 1] = c->b[i].len;
			if (c->b[i].len) {
				out[2 * i] = w->pos;
				blobs_sum = blobs_sum * 0x100000001B3ull +
				            vgc_checksum(c->b[i].ptr, c->b[i].len);
				put(w, c->b[i].ptr, c->b[i].len);
				pad(w, 8);
			}
		} else {
			const struct vgq_ref *ref = &c->r[i];
			out[3 * i] = ref->id;
			out[3 * i + 1] = (uint64_t)ref->gen | (uint64_t)ref->image << 32;
			out[3 * i + 2] = text_offset(&w->texts, ref->name);
		}
	}
	column(w, out, n * vgc_value_size(t));
	if (t == VGQ_BYTES) {
		dir_u64(w, blobs_at);
		dir_u64(w, blobs_sum);
	}
	free(out);
}

static void relation(struct writer *w, const struct vgq_relation *r)
{
	dir_text(w, r->name);
	dir_u64(w, (uint64_t)r->kind);
	dir_u64(w, r->nattrs);
	for (size_t a = 0; a < r->nattrs; a++) {
		dir_text(w, r->attrs[a].name);
		dir_u64(w, (uint64_t)r->attrs[a].type);
		dir_text(w, r->attrs[a].ref_kind);
	}
	uint64_t counts[] = {r->ntuples, (uint64_t)r->first, (uint64_t)r->last, r->unmatched_ends,
	                     r->open_at_end};
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
		dir_u64(w, counts[i]);
	size_t n = r->ntuples;
	/* an empty column is written as present but empty: "" stands for its data */
	column(w, n ? (const void *)r->from : "", n * sizeof *r->from);
	/* an interval relation without tuples may have no arrays yet: its columns are there,
	 * empty (the reader requires them of every interval relation) */
	bool interval = r->kind != VGQ_REL_EVENT;
	column(w, interval ? (n ? (const void *)r->to : "") : NULL, n * sizeof *r->to);
	column(w, interval ? (n ? (const void *)r->open : "") : NULL, n * sizeof *r->open);
	column(w, r->begin_unknown ? (n ? (const void *)r->begin_unknown : "") : NULL,
	       n * sizeof *r->begin_unknown);
	for (size_t a = 0; a < r->nattrs; a++)
		attr_column(w, r, a);
}

static void directory(struct writer *w, const struct vgq_database *db, const void *key,
                      size_t keylen, uint64_t stream_damage, uint64_t texts_at, uint64_t texts_size,
                      uint64_t texts_sum)
{
	dir_u64(w, keylen);
	dir_raw(w, key, keylen);
	uint64_t head[] = {db->events, (uint64_t)db->first, (uint64_t)db->last, stream_damage,
	                   texts_at,   texts_size,          texts_sum,          db->nwarnings};
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		dir_u64(w, head[i]);
	for (size_t i = 0; i < db->nwarnings; i++)
		dir_text(w, db->warnings[i]);
	dir_u64(w, db->nrelations);
}

int vgc_write(const struct vgq_database *db, const void *key, size_t keylen, uint64_t stream_damage,
              const char *path, char *err, size_t errsize)
{
	/* never renamed over what is not a regular file (a FIFO, a device, a link someone
	 * put there): the cache is then not written */
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errsize, "%s: not a regular file", path);
		errno = EEXIST;
		return -1;
	}
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	/* 0600: the relations are the trace's data, whoever may read the directory; a file
	 * left by a killed writer of the same pid is replaced, never followed */
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
	int fd = open(tmp, flags, 0600);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
		fd = open(tmp, flags, 0600);
	if (fd < 0) {
		snprintf(err, errsize, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	struct writer w = {.f = fdopen(fd, "wb")};
	if (!w.f) {
		close(fd);
		unlink(tmp);
		snprintf(err, errsize, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	size_t ntexts = vgq_pool_count(db->internal->pool);
	w.texts.cap = 16;
	while (w.texts.cap < 2 * ntexts + 2)
		w.texts.cap *= 2;
	w.texts.keys = vgq_xcalloc(w.texts.cap, sizeof *w.texts.keys);
	w.texts.offs = vgq_xcalloc(w.texts.cap, sizeof *w.texts.offs);

	struct vgc_header h = {.version = VGC_VERSION, .endian = VGC_ENDIAN};
	memcpy(h.magic, VGC_MAGIC, sizeof h.magic);
	put(&w, &h, sizeof h);
	uint64_t texts_at = w.pos;
	vgq_pool_each(db->internal->pool, write_text, &w);
	uint64_t texts_size = w.pos - texts_at;
	directory(&w, db, key, keylen, stream_damage, texts_at, texts_size, w.texts_sum);
	for (size_t i = 0; i < db->nrelations; i++)
		relation(&w, db->relations[i]);
	pad(&w, 8);
	h.dir_offset = w.pos;
	h.dir_size = w.ndir;
	h.dir_sum = vgc_checksum(w.dir, w.ndir);
	put(&w, w.dir, w.ndir);
	h.file_size = w.pos;
	h.head_sum = vgc_checksum(&h, offsetof(struct vgc_header, head_sum));
	if (fseek(w.f, 0, SEEK_SET) == 0)
		put(&w, &h, sizeof h);
	else
		w.failed = true;
	int saved = errno;
	if (fclose(w.f) != 0 || w.failed) {
		saved = errno;
		unlink(tmp);
	} else if (rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		w.failed = true;
	}
	free(w.texts.keys);
	free(w.texts.offs);
	free(w.dir);
	if (w.failed) {
		snprintf(err, errsize, "writing %s: %s", path, strerror(saved ? saved : EIO));
		errno = saved;
		return -1;
	}
	return 0;
}
