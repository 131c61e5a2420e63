/* Writes relations to the relations cache's files (cache_internal.h), on threads: the
 * texts each file's values name collected first (its text columns in parts), then each
 * file's layout is laid out (its texts in order, every column's place known), then
 * every column is cut into pieces that the threads convert to the file's form, sum and
 * write where the layout puts them; the directory and header go last, and the temporary
 * file is renamed over the relation's, so a reader sees the old file or the whole new
 * one. A relation left unmerged by its build (unmerged.h) has each part of each column
 * gathered from its pieces into the thread's buffer here, just before it is written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pool.h"
#include "relations/cache_internal.h"
#include "relations/unmerged.h"

#define PIECE_TUPLES ((size_t)1 << 17)     /* times any value size: whole 32-byte rows */
#define TEXT_PART_TUPLES ((size_t)1 << 18) /* a text column's share, its texts collected */
/* a thread's buffer: a piece's values in the file's form (an entity's 3 words a value), a
 * text part's values (an unmerged relation's gathered) */
#define BUF_WORDS (3 * PIECE_TUPLES)
_Static_assert(BUF_WORDS >= TEXT_PART_TUPLES, "a text part's values fit the buffer");

/* ---- the file offset of each text a relation names, by its pointer ---- */

struct textmap {
	uintptr_t *keys;
	uint64_t *offs;
	size_t cap, n; /* cap: a power of two */
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
	if (!s || !m->cap)
		return 0;
	size_t i = slot_of(m, s);
	return m->keys[i] ? m->offs[i] : 0;
}

/* Adds a text (its offset to be set); true if it was new. */
static bool text_add(struct textmap *m, const char *s)
{
	if (2 * (m->n + 1) > m->cap) {
		struct textmap g = {.cap = m->cap ? 2 * m->cap : 64, .n = m->n};
		g.keys = vgq_xcalloc(g.cap, sizeof *g.keys);
		g.offs = vgq_xcalloc(g.cap, sizeof *g.offs);
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i]) {
				size_t j = slot_of(&g, (const char *)m->keys[i]);
				g.keys[j] = m->keys[i];
				g.offs[j] = m->offs[i];
			}
		free(m->keys);
		free(m->offs);
		*m = g;
	}
	size_t i = slot_of(m, s);
	if (m->keys[i])
		return false;
	m->keys[i] = (uintptr_t)s;
	m->n++;
	return true;
}

/* The texts a column repeats, remembered by address (direct-mapped): most values are
 * then found without a probe of the map (a text column is a lookup a value, twice: when
 * its texts are gathered, and when its values are made offsets). */
struct text_memo {
	const char *key[256];
	uint64_t off[256];
};

static size_t memo_slot(const char *s)
{
	return (size_t)(vgq_mix((uintptr_t)s) >> 56);
}

static uint64_t memo_offset(struct text_memo *m, const struct textmap *map, const char *s)
{
	size_t h = memo_slot(s);
	if (m->key[h] != s) {
		m->key[h] = s;
		m->off[h] = text_offset(map, s);
	}
	return m->off[h];
}

/* ---- one file being written ---- */

enum colkind { C_FROM, C_TO, C_OPEN, C_BEGIN_UNKNOWN, C_ATTR };

struct fcol {
	enum colkind kind;
	size_t attr;
	bool present;
	uint64_t offset, size;
	size_t vsize;
	uint64_t *bytes_form; /* a bytes attribute: its column made in the layout */
	uint64_t blobs_at, blobs_sum;
	uint64_t sum;      /* once its pieces are summed */
	size_t parts_left; /* its pieces not written yet (atomic) */
};

struct piece {
	struct fjob *f;
	size_t col;
	size_t t0, t1;
	struct vgc_sums sums;
	uint8_t tail[32]; /* the last piece: the column's bytes after its whole rows */
};

/* Tuples [t0, t1) of text (or entity) attribute `attr`: the texts they name, each once,
 * in the order first met. */
struct tpart {
	struct fjob *f;
	size_t attr, t0, t1;
	const char **texts;
	size_t n;
};

struct fjob {
	struct vgc_out *out;
	const struct vgq_relation *r;
	int fd;
	char tmp[4200];
	bool failed;
	int err;
	struct textmap texts;
	const char **text_order; /* in the order written */
	size_t ntexts;
	uint64_t texts_at, texts_size, texts_sum;
	uint8_t *head; /* texts and blobs, written by the layout */
	size_t nhead, caphead;
	struct fcol *cols;
	size_t ncols;
	uint64_t end; /* after the last column */
	struct piece *pieces;
	size_t npieces;
	const struct tpart *tparts; /* its text parts (the writer's), collected before the layout */
	size_t ntparts;
};

static void fail(struct fjob *f, int err)
{
	if (!f->failed) {
		f->failed = true;
		f->err = err ? err : EIO;
	}
}

static void write_at(struct fjob *f, const void *p, size_t n, uint64_t at)
{
	const uint8_t *c = p;
	while (n && !f->failed) {
		ssize_t w = pwrite(f->fd, c, n, (off_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fail(f, w < 0 ? errno : ENOSPC);
			return;
		}
		c += w, n -= (size_t)w, at += (uint64_t)w;
	}
}

static void head_put(struct fjob *f, const void *p, size_t n)
{
	size_t padded = (n + 7) & ~(size_t)7;
	if (f->nhead + padded > f->caphead) {
		f->caphead = (f->nhead + padded) * 2 + 4096;
		f->head = vgq_xrealloc(f->head, f->caphead, 1);
	}
	memcpy(f->head + f->nhead, p, n);
	memset(f->head + f->nhead + n, 0, padded - n);
	f->nhead += padded;
}

/* Adds s to the map and, if it was new, to the list. */
static void text_note(struct textmap *m, const char ***list, size_t *n, size_t *cap, const char *s)
{
	if (!text_add(m, s))
		return;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*list = vgq_xrealloc(*list, *cap, sizeof **list);
	}
	(*list)[(*n)++] = s;
}

/* File f's text columns cut into parts, added to `parts`, whose texts the threads
 * collect; f->ntparts of them. */
static void plan_text_parts(struct fjob *f, struct tpart **parts, size_t *n, size_t *cap)
{
	const struct vgq_relation *r = f->r;
	for (size_t a = 0; a < r->nattrs; a++) {
		enum vgq_type t = r->attrs[a].type;
		if (t != VGQ_STRING && t != VGQ_ENTITY)
			continue;
		for (size_t t0 = 0; t0 < r->ntuples; t0 += TEXT_PART_TUPLES) {
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 8;
				*parts = vgq_xrealloc(*parts, *cap, sizeof **parts);
			}
			size_t t1 =
			    r->ntuples - t0 > TEXT_PART_TUPLES ? t0 + TEXT_PART_TUPLES : r->ntuples;
			(*parts)[(*n)++] = (struct tpart){.f = f, .attr = a, .t0 = t0, .t1 = t1};
			f->ntparts++;
		}
	}
}

/* buf: room for a part's values (an unmerged relation's are gathered there). */
static void collect_texts(struct tpart *tp, uint64_t *buf)
{
	const struct vgq_relation *r = tp->f->r;
	bool entity = r->attrs[tp->attr].type == VGQ_ENTITY;
	const struct vgq_ref *refs = entity ? r->cols[tp->attr].r : NULL; /* never unmerged */
	const char *const *texts =
	    entity ? NULL : vgq_column_values(r, (long)tp->attr, tp->t0, tp->t1, buf);
	struct textmap m = {0};
	const char *seen[256] = {0}; /* noted already, by memo_slot */
	size_t cap = 0;
	for (size_t i = tp->t0; i < tp->t1; i++) {
		const char *s = entity ? refs[i].name : texts[i - tp->t0];
		if (!s || seen[memo_slot(s)] == s)
			continue;
		seen[memo_slot(s)] = s;
		text_note(&m, &tp->texts, &tp->n, &cap, s);
	}
	free(m.keys);
	free(m.offs);
}

/* The texts the relation's values name, each once, in the order first met: its parts'
 * (collect_texts), in their order. */
static void gather_texts(struct fjob *f)
{
	size_t cap = 0;
	for (size_t i = 0; i < f->ntparts; i++)
		for (size_t k = 0; k < f->tparts[i].n; k++)
			text_note(&f->texts, &f->text_order, &f->ntexts, &cap,
			          f->tparts[i].texts[k]);
	f->texts_at = sizeof(struct vgc_header);
	for (size_t i = 0; i < f->ntexts; i++) {
		const char *s = f->text_order[i];
		uint64_t len = strlen(s);
		head_put(f, &len, sizeof len);
		f->texts.offs[slot_of(&f->texts, s)] = f->texts_at + f->nhead;
		f->texts_sum = f->texts_sum * 0x100000001B3ull + vgc_checksum(s, len + 1);
		head_put(f, s, len + 1);
	}
	f->texts_size = f->nhead;
}

static void add_col(struct fjob *f, enum colkind kind, size_t attr, bool present, size_t vsize)
{
	f->cols[f->ncols++] =
	    (struct fcol){.kind = kind, .attr = attr, .present = present, .vsize = vsize};
}

/* Every column's place, after the head: the texts, then each bytes attribute's values
 * (each padded to 8), so that they lie before their column as the reader requires. */
static void lay_out(struct fjob *f, uint64_t *buf)
{
	const struct vgq_relation *r = f->r;
	size_t n = r->ntuples;
	bool interval = r->kind != VGQ_REL_EVENT;
	f->cols = vgq_xcalloc(4 + r->nattrs, sizeof *f->cols);
	add_col(f, C_FROM, 0, true, 8);
	/* an interval relation without tuples may have no arrays yet: its columns are there,
	 * empty (the reader requires them of every interval relation) */
	add_col(f, C_TO, 0, interval, 8);
	add_col(f, C_OPEN, 0, interval, 1);
	add_col(f, C_BEGIN_UNKNOWN, 0, r->begin_unknown != NULL, 1);
	for (size_t a = 0; a < r->nattrs; a++)
		add_col(f, C_ATTR, a, true, vgc_value_size(r->attrs[a].type));
	for (size_t c = 0; c < f->ncols; c++) {
		struct fcol *fc = &f->cols[c];
		if (fc->kind != C_ATTR || r->attrs[fc->attr].type != VGQ_BYTES)
			continue;
		fc->bytes_form = vgq_xcalloc(n ? 2 * n : 1, sizeof *fc->bytes_form);
		fc->blobs_at = f->texts_at + f->nhead;
		size_t part = BUF_WORDS * sizeof *buf / sizeof(struct vgq_bytes);
		for (size_t t0 = 0; t0 < n; t0 += part) {
			size_t t1 = n - t0 > part ? t0 + part : n;
			const struct vgq_bytes *b =
			    vgq_column_values(r, (long)fc->attr, t0, t1, buf);
			for (size_t i = t0; i < t1; i++) {
				const struct vgq_bytes *v = &b[i - t0];
				fc->bytes_form[2 * i + 1] = v->len;
				if (!v->len)
					continue;
				fc->bytes_form[2 * i] = f->texts_at + f->nhead;
				fc->blobs_sum =
				    fc->blobs_sum * 0x100000001B3ull + vgc_checksum(v->ptr, v->len);
				head_put(f, v->ptr, v->len);
			}
		}
	}
	uint64_t pos = f->texts_at + f->nhead;
	for (size_t c = 0; c < f->ncols; c++) {
		struct fcol *fc = &f->cols[c];
		if (!fc->present)
			continue;
		pos = (pos + VGC_ALIGN - 1) / VGC_ALIGN * VGC_ALIGN;
		fc->offset = pos;
		fc->size = n * fc->vsize;
		pos += fc->size;
	}
	f->end = pos;
	size_t np = 0;
	for (size_t c = 0; c < f->ncols; c++)
		if (f->cols[c].present && n)
			np += (n + PIECE_TUPLES - 1) / PIECE_TUPLES;
	f->pieces = vgq_xcalloc(np ? np : 1, sizeof *f->pieces);
	for (size_t c = 0; c < f->ncols; c++)
		for (size_t t = 0; f->cols[c].present && t < n;
		     t += PIECE_TUPLES, f->cols[c].parts_left++)
			f->pieces[f->npieces++] =
			    (struct piece){.f = f,
			                   .col = c,
			                   .t0 = t,
			                   .t1 = n - t < PIECE_TUPLES ? n : t + PIECE_TUPLES};
}

/* The bytes of tuples [t0, t1) of a column in the file's form: the relation's own array,
 * or `buf` filled. */
static const void *file_form(const struct fjob *f, const struct fcol *fc, size_t t0, size_t t1,
                             uint64_t *buf)
{
	const struct vgq_relation *r = f->r;
	switch (fc->kind) {
	case C_FROM:
		return vgq_column_values(r, -1, t0, t1, buf);
	case C_TO:
		return r->to + t0;
	case C_OPEN:
		return r->open + t0;
	case C_BEGIN_UNKNOWN:
		return r->begin_unknown + t0;
	case C_ATTR:
		break;
	}
	const union vgq_column *c = &r->cols[fc->attr];
	switch (r->attrs[fc->attr].type) {
	case VGQ_STRING: {
		struct text_memo *memo = vgq_xcalloc(1, sizeof *memo);
		/* made offsets where they lie (an unmerged relation's gathered into buf) */
		const char *const *s = vgq_column_values(r, (long)fc->attr, t0, t1, buf);
		for (size_t i = t0; i < t1; i++) {
			const char *text = s[i - t0];
			buf[i - t0] = text ? memo_offset(memo, &f->texts, text) : 0;
		}
		free(memo);
		return buf;
	}
	case VGQ_BYTES:
		return fc->bytes_form + 2 * t0;
	case VGQ_ENTITY:
		for (size_t i = t0; i < t1; i++) {
			const struct vgq_ref *ref = &c->r[i];
			uint64_t *o = buf + 3 * (i - t0);
			o[0] = ref->id;
			o[1] = (uint64_t)ref->gen | (uint64_t)ref->image << 32;
			o[2] = text_offset(&f->texts, ref->name);
		}
		return buf;
	default:
		return vgq_column_values(r, (long)fc->attr, t0, t1, buf);
	}
}

static void write_piece(struct piece *p, uint64_t *buf)
{
	struct fjob *f = p->f;
	const struct fcol *fc = &f->cols[p->col];
	size_t bytes = (p->t1 - p->t0) * fc->vsize;
	uint64_t at = fc->offset + p->t0 * fc->vsize;
	/* the file's form made in buf (or the relation's own array), summed and written */
	const uint8_t *data = file_form(f, fc, p->t0, p->t1, buf);
	p->sums = vgc_sums_of(data, bytes / 32 * 32);
	memcpy(p->tail, data + bytes / 32 * 32, bytes % 32);
	write_at(f, data, bytes, at);
	/* an unmerged relation's column written whole: its pieces' memory is the page cache's
	 * for the next columns (the relation is then the file's, or built again) */
	struct fcol *done = &f->cols[p->col];
	if (__atomic_sub_fetch(&done->parts_left, 1, __ATOMIC_ACQ_REL) == 0 &&
	    f->out->rel->unmerged && !f->failed && (done->kind == C_FROM || done->kind == C_ATTR))
		vgq_unmerged_release(f->out->rel, done->kind == C_FROM ? -1 : (long)done->attr);
}

/* ---- the directory, then the header ---- */

struct dir {
	uint8_t *p;
	size_t n, cap;
	const struct textmap *texts;
};

static void dir_raw(struct dir *d, const void *p, size_t n)
{
	size_t padded = (n + 7) & ~(size_t)7;
	if (d->n + padded > d->cap) {
		d->cap = (d->n + padded) * 2 + 256;
		d->p = vgq_xrealloc(d->p, d->cap, 1);
	}
	memcpy(d->p + d->n, p, n);
	memset(d->p + d->n + n, 0, padded - n);
	d->n += padded;
}

static void dir_u64(struct dir *d, uint64_t v)
{
	dir_raw(d, &v, sizeof v);
}

/* A text of the directory: one of the file's texts by its offset (odd word), another
 * inline (its length times two, then its bytes and NUL). */
static void dir_text(struct dir *d, const char *s)
{
	if (!s) {
		dir_u64(d, VGC_NULL_TEXT);
		return;
	}
	uint64_t off = d->texts ? text_offset(d->texts, s) : 0;
	if (off) {
		dir_u64(d, off << 1 | 1);
		return;
	}
	size_t len = strlen(s);
	dir_u64(d, (uint64_t)len << 1);
	dir_raw(d, s, len + 1);
}

static void dir_column(struct dir *d, const struct fcol *fc)
{
	if (!fc->present) {
		dir_u64(d, 0), dir_u64(d, 0), dir_u64(d, 0);
		return;
	}
	dir_u64(d, fc->offset);
	dir_u64(d, fc->size);
	dir_u64(d, fc->sum);
}

static void directory(struct dir *d, const struct fjob *f, const void *key, size_t keylen)
{
	const struct vgq_relation *r = f->r;
	dir_u64(d, keylen);
	dir_raw(d, key, keylen);
	dir_u64(d, f->out->nwarnings);
	for (size_t i = 0; i < f->out->nwarnings; i++)
		dir_text(d, f->out->warnings[i]);
	dir_u64(d, f->texts_at);
	dir_u64(d, f->texts_size);
	dir_u64(d, f->texts_sum);
	dir_text(d, r->name);
	dir_u64(d, (uint64_t)r->kind);
	dir_u64(d, r->nattrs);
	for (size_t a = 0; a < r->nattrs; a++) {
		dir_text(d, r->attrs[a].name);
		dir_u64(d, (uint64_t)r->attrs[a].type);
		dir_text(d, r->attrs[a].ref_kind);
	}
	uint64_t counts[] = {r->ntuples, (uint64_t)r->first, (uint64_t)r->last, r->unmatched_ends,
	                     r->open_at_end};
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
		dir_u64(d, counts[i]);
	for (size_t c = 0; c < f->ncols; c++) {
		dir_column(d, &f->cols[c]);
		if (f->cols[c].kind == C_ATTR && r->attrs[f->cols[c].attr].type == VGQ_BYTES) {
			dir_u64(d, f->cols[c].blobs_at);
			dir_u64(d, f->cols[c].blobs_sum);
		}
	}
}

/* The columns' checksums from their pieces, the directory and header written, the file
 * renamed into place. */
static void finish_file(struct fjob *f, const void *key, size_t keylen)
{
	for (size_t c = 0, i = 0; c < f->ncols; c++) {
		struct fcol *fc = &f->cols[c];
		struct vgc_sums s = {{0}, {0}, 0};
		const uint8_t *tail = NULL;
		for (; i < f->npieces && f->pieces[i].col == c; i++) {
			s = vgc_sums_then(s, &f->pieces[i].sums);
			tail = f->pieces[i].tail;
		}
		fc->sum = vgc_checksum_tail(s, tail ? tail : (const uint8_t *)"", fc->size);
	}
	struct dir d = {.texts = &f->texts};
	directory(&d, f, key, keylen);
	uint64_t dir_at = (f->end + 7) & ~(uint64_t)7;
	struct vgc_header h = {.version = VGC_VERSION, .endian = VGC_ENDIAN};
	memcpy(h.magic, VGC_MAGIC_REL, sizeof h.magic);
	h.dir_offset = dir_at;
	h.dir_size = d.n;
	h.dir_sum = vgc_checksum(d.p, d.n);
	h.file_size = dir_at + d.n;
	h.head_sum = vgc_checksum(&h, offsetof(struct vgc_header, head_sum));
	write_at(f, d.p, d.n, dir_at);
	write_at(f, &h, sizeof h, 0);
	free(d.p);
	if (close(f->fd) != 0)
		fail(f, errno);
	f->fd = -1;
	if (!f->failed && rename(f->tmp, f->out->path) != 0)
		fail(f, errno);
	if (f->failed)
		unlink(f->tmp);
	f->out->written = !f->failed;
}

/* ---- the threads ---- */

struct wjob {
	struct fjob *files;
	size_t nfiles;
	struct piece **pieces; /* every file's, largest files first */
	size_t npieces;
	struct tpart *tparts; /* every file's, file after file */
	size_t ntparts;
	size_t next; /* atomic: the next text part, then file to lay out, then piece */
	enum { COLLECTING, LAYING_OUT, WRITING } phase;
	const void *key;
	size_t keylen;
};

static void lay_out_file(struct fjob *f, uint64_t *buf)
{
	f->fd = vgc_create_tmp(f->out->path, f->tmp, sizeof f->tmp);
	if (f->fd < 0) {
		fail(f, errno);
		return;
	}
	gather_texts(f);
	lay_out(f, buf);
	/* The file's blocks taken first (a full disk fails here, not halfway), then its
	 * pieces written by pwrite, each from the thread's buffer. Written into a shared
	 * mapping instead (its pages populated first), the page cache's pages were zeroed
	 * before the copy and a 108 MB file took 2x as long (1 thread 68-117 ms against 31-42,
	 * 2 threads 41-82 against 24-31, 5M events: docs/query.md); the file's lock, which
	 * pwrites into one file share, costs less than that. */
	int rc = f->end ? posix_fallocate(f->fd, 0, (off_t)f->end) : EINVAL;
	if (rc != 0 && rc != EINVAL && rc != EOPNOTSUPP) {
		fail(f, rc);
		return;
	}
	/* the head (texts and blobs) now; the columns after it as their pieces come */
	write_at(f, f->head, f->nhead, f->texts_at);
}

static void work(void *arg, unsigned worker)
{
	(void)worker;
	struct wjob *j = arg;
	uint64_t *buf = vgq_xcalloc(BUF_WORDS, sizeof *buf);
	for (;;) {
		size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (j->phase == COLLECTING) {
			if (i >= j->ntparts)
				break;
			collect_texts(&j->tparts[i], buf);
		} else if (j->phase == LAYING_OUT) {
			if (i >= j->nfiles)
				break;
			lay_out_file(&j->files[i], buf);
		} else {
			if (i >= j->npieces)
				break;
			if (!j->pieces[i]->f->failed)
				write_piece(j->pieces[i], buf);
		}
	}
	free(buf);
}

static void run(struct wjob *j, unsigned threads, size_t ntasks)
{
	j->next = 0;
	vg_threads_run(threads, ntasks, work, j);
}

static int by_size(const void *a, const void *b)
{
	const struct fjob *x = a, *y = b;
	return x->r->ntuples < y->r->ntuples ? 1 : x->r->ntuples > y->r->ntuples ? -1 : 0;
}

int vgc_write_relations(struct vgc_out *outs, size_t n, const void *key, size_t keylen,
                        unsigned threads)
{
	struct wjob j = {.files = vgq_xcalloc(n ? n : 1, sizeof *j.files),
	                 .nfiles = n,
	                 .key = key,
	                 .keylen = keylen};
	for (size_t i = 0; i < n; i++) {
		outs[i].written = false;
		j.files[i] = (struct fjob){.out = &outs[i], .r = outs[i].rel, .fd = -1};
	}
	qsort(j.files, n, sizeof *j.files, by_size); /* the largest laid out first */
	size_t captparts = 0;
	for (size_t i = 0; i < n; i++)
		plan_text_parts(&j.files[i], &j.tparts, &j.ntparts, &captparts);
	for (size_t i = 0, at = 0; i < n; at += j.files[i++].ntparts)
		j.files[i].tparts = j.tparts + at;
	j.phase = COLLECTING;
	run(&j, threads, j.ntparts);
	j.phase = LAYING_OUT;
	run(&j, threads, n);
	for (size_t i = 0; i < n; i++)
		j.npieces += j.files[i].npieces;
	j.pieces = vgq_xcalloc(j.npieces ? j.npieces : 1, sizeof *j.pieces);
	j.npieces = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < j.files[i].npieces; k++)
			j.pieces[j.npieces++] = &j.files[i].pieces[k];
	j.phase = WRITING;
	run(&j, threads, j.npieces);
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		struct fjob *f = &j.files[i];
		if (f->fd >= 0)
			finish_file(f, key, keylen);
		if (f->failed && !err)
			err = f->err;
		free(f->texts.keys);
		free(f->texts.offs);
		free(f->text_order);
		free(f->head);
		for (size_t c = 0; c < f->ncols; c++)
			free(f->cols[c].bytes_form);
		free(f->cols);
		free(f->pieces);
	}
	for (size_t k = 0; k < j.ntparts; k++)
		free(j.tparts[k].texts);
	free(j.pieces);
	free(j.tparts);
	free(j.files);
	errno = err;
	return err ? -1 : 0;
}

/* ---- shared with the manifest's writer ---- */

int vgc_create_tmp(const char *path, char *tmp, size_t tmpsize)
{
	/* never renamed over what is not a regular file (a FIFO, a device, a link someone
	 * put there): the file is then not written */
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	static unsigned long counter; /* two writers of one process: two names */
	unsigned long k = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	if (snprintf(tmp, tmpsize, "%s.tmp.%ld.%lu", path, (long)getpid(), k) >= (int)tmpsize) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* 0600: the relations are the trace's data, whoever may read the directory; a file
	 * left by a killed writer of the same pid is replaced, never followed */
	int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW; /* RDWR: mapped */
	int fd = open(tmp, flags, 0600);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
		fd = open(tmp, flags, 0600);
	return fd;
}

void vgc_relation_path(const char *manifest, const char *name, char *out, size_t n)
{
	char esc[256];
	size_t k = 0;
	for (const unsigned char *c = (const unsigned char *)name; *c && k + 4 < 200; c++) {
		bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		             (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.';
		k += (size_t)snprintf(esc + k, sizeof esc - k, plain ? "%c" : "%%%02X", *c);
	}
	if (strlen(name) * 3 >= 196) { /* perhaps cut short: the whole name's hash */
		uint64_t h = 1469598103934665603ull;
		for (const char *c = name; *c; c++)
			h = (h ^ (uint8_t)*c) * 1099511628211ull;
		snprintf(esc + k, sizeof esc - k, "~%016llx", (unsigned long long)h);
	}
	snprintf(out, n, "%s.rel-%s", manifest, esc);
}

/* ---- the manifest ---- */

int vgc_write_manifest(const struct vgq_database *db, size_t nwarnings, const void *key,
                       size_t keylen, uint64_t stream_damage, const char *path)
{
	struct vgc_out out = {.path = path};
	struct fjob f = {.out = &out};
	f.fd = vgc_create_tmp(path, f.tmp, sizeof f.tmp);
	if (f.fd < 0)
		return -1;
	struct dir d = {0};
	dir_u64(&d, keylen);
	dir_raw(&d, key, keylen);
	uint64_t head[] = {db->events, (uint64_t)db->first, (uint64_t)db->last, stream_damage,
	                   nwarnings};
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		dir_u64(&d, head[i]);
	for (size_t i = 0; i < nwarnings; i++)
		dir_text(&d, db->warnings[i]);
	/* every relation but the derived WaitFor (there only when named) */
	const bool *by_need = db->internal->by_need;
	size_t n = 0;
	for (size_t i = 0; i < db->nrelations; i++)
		n += by_need[i] || db->relations[i]->kind == VGQ_REL_ENTITY;
	dir_u64(&d, n);
	for (size_t i = 0; i < db->nrelations; i++) {
		const struct vgq_relation *r = db->relations[i];
		if (!by_need[i] && r->kind != VGQ_REL_ENTITY)
			continue;
		dir_text(&d, r->name);
		dir_u64(&d, (uint64_t)r->kind);
		dir_u64(&d, r->nattrs);
		for (size_t a = 0; a < r->nattrs; a++) {
			dir_text(&d, r->attrs[a].name);
			dir_u64(&d, (uint64_t)r->attrs[a].type);
			dir_text(&d, r->attrs[a].ref_kind);
		}
		dir_u64(&d, by_need[i]);
	}
	struct vgc_header h = {.version = VGC_VERSION, .endian = VGC_ENDIAN};
	memcpy(h.magic, VGC_MAGIC, sizeof h.magic);
	h.dir_offset = sizeof h;
	h.dir_size = d.n;
	h.dir_sum = vgc_checksum(d.p, d.n);
	h.file_size = sizeof h + d.n;
	h.head_sum = vgc_checksum(&h, offsetof(struct vgc_header, head_sum));
	write_at(&f, &h, sizeof h, 0);
	write_at(&f, d.p, d.n, sizeof h);
	free(d.p);
	if (close(f.fd) != 0)
		fail(&f, errno);
	if (!f.failed && rename(f.tmp, path) != 0)
		fail(&f, errno);
	if (f.failed) {
		unlink(f.tmp);
		errno = f.err;
		return -1;
	}
	return 0;
}
