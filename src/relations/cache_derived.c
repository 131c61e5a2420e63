/* The relations cache of derived relations (cache_derived.h): one file per analysis,
 * named by its first relation (CACHE.derived-Network, CACHE.derived-Violation, ...), so
 * that writing one analysis never reads or rewrites another's. A file:
 *
 *   header     magic, version, endian, the file's size, the body's checksum (32 bytes)
 *   body       the key; the count of texts and every text, laid out as in a relation's
 *              file of the relations cache (cache_internal.h: [u64 length][bytes, NUL,
 *              padding to 8]; a value names a text by the file offset of its bytes, 0
 *              being NULL); the analysis's error (0: built); its relations, each its
 *              schema, counts and columns (from, to and open of intervals, per attribute
 *              its NULL flags if any and its values: numbers as they are, a text its
 *              offset, an entity {id, gen | image << 32, name offset})
 *
 * All words are 8 bytes of this machine; the body's checksum is vgc_checksum's, summed
 * in pieces on threads (the writer's as it streams, vgc_sums_threads; the reader's with
 * vgc_columns_ok), and checked whole before any of it is used. Every word and column is
 * 8-byte aligned in the file.
 *
 * Read mapped, privately, as a relation's file of the relations cache is: the texts are
 * the pool's where they lie (vgc_texts_adopt); the relations' time, number and NULL-flag
 * columns point into the mapping; the text and entity columns of the attributes the
 * query names are made pointers (vgc_texts_column, vgc_refs_column; turning them in
 * place would copy each page on a write fault, measured slower) and the pages of their
 * offsets let go; the others stay unusable (NULL), as a relation's file's do. The file
 * itself is never written. The mappings live until the database is freed
 * (vgc_derived_release). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relations/cache.h"
#include "relations/cache_derived.h"
#include "relations/cache_internal.h"
#include "relations/derived.h"

#define VGD_MAGIC "VGRELD\0\1"
#define VGD_VERSION 2u
#define VGD_HEADER 32u
/* the writer's, a multiple of 32: summed on threads (vgc_sums_threads) in 4 MiB pieces */
#define PIECE ((size_t)16 << 20)
#define MAX_FILE ((size_t)1 << 38)

struct mapping {
	uint8_t *base;
	size_t len;
};

struct vgc_derived {
	uint8_t *key;
	size_t keylen;
	char base[4200]; /* the relations cache's path */
	char who[64];
	/* the attributes the query names (copies; all_attrs: every one) */
	char **attrs;
	size_t nattrs;
	bool all_attrs;
	size_t taken;         /* analyses read from their files */
	struct mapping *maps; /* of the analyses taken: their relations' columns */
	size_t nmaps;
};

/* One analysis's file, mapped and checked. */
struct file {
	char path[4300];
	uint8_t *bytes; /* the mapping */
	size_t len;
	struct vgc_texts tx; /* adopted into the database's pool */
	size_t body_at;      /* after the texts */
};

/* ---- the key: the relations cache's and the recording's model files ---- */

static void key_add(struct vgc_derived *d, const void *p, size_t n)
{
	d->key = vgq_xrealloc(d->key, d->keylen + n, 1);
	memcpy(d->key + d->keylen, p, n);
	d->keylen += n;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.vgm files beside the images (the model ModelEvent is made of), by name and
 * identity, in name order. */
static void key_models(struct vgc_derived *d, const struct vgt_trace *t)
{
	char *dir = t ? vgt_recording_dir(t) : NULL;
	if (!dir)
		return;
	DIR *dh = opendir(dir);
	char **names = NULL;
	size_t n = 0;
	for (struct dirent *e; dh && (e = readdir(dh));) {
		size_t len = strlen(e->d_name);
		if (len > 4 && !strcmp(e->d_name + len - 4, ".vgm")) {
			names = vgq_xrealloc(names, n + 1, sizeof *names);
			names[n++] = strdup(e->d_name);
		}
	}
	if (dh)
		closedir(dh);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		char path[4200];
		struct stat st;
		int64_t w[6] = {-1};
		snprintf(path, sizeof path, "%s/%s", dir, names[i] ? names[i] : "");
		if (names[i] && stat(path, &st) == 0) {
			int64_t v[6] = {(int64_t)st.st_size,         (int64_t)st.st_mtim.tv_sec,
			                (int64_t)st.st_mtim.tv_nsec, (int64_t)st.st_ctim.tv_sec,
			                (int64_t)st.st_ctim.tv_nsec, (int64_t)st.st_ino};
			memcpy(w, v, sizeof w);
		}
		/* the name, not the path: the folder is the trace's, however it was named */
		key_add(d, names[i] ? names[i] : "", strlen(names[i] ? names[i] : "") + 1);
		key_add(d, w, sizeof w);
		free(names[i]);
	}
	free(names);
	free(dir);
}

static const char key_tag[] = "derived relations v1";

void vgc_derived_place(struct vgq_database *db, const void *key, size_t keylen,
                       const char *cache_path, const struct vgq_cache_request *rq)
{
	struct vgc_derived *d = vgq_xcalloc(1, sizeof *d);
	key_add(d, key_tag, sizeof key_tag);
	key_add(d, key, keylen);
	key_models(d, db->internal->trace);
	snprintf(d->base, sizeof d->base, "%s", cache_path);
	snprintf(d->who, sizeof d->who, "%s", rq->who ? rq->who : "vigil");
	d->all_attrs = !rq->need || rq->all_attrs; /* as cache.c checks a relation's file */
	d->attrs = vgq_xcalloc(rq->nattrs + 1, sizeof *d->attrs);
	for (size_t i = 0; i < rq->nattrs && !d->all_attrs; i++)
		d->attrs[d->nattrs++] = strdup(rq->attrs[i]);
	vgc_derived_free(db);
	db->internal->derived_cache = d;
}

size_t vgq_derived_cached(const struct vgq_database *db)
{
	const struct vgc_derived *d = db->internal->derived_cache;
	return d ? d->taken : 0;
}

/* Whether p points into one of the mappings. */
static bool mapped(const struct vgc_derived *d, const void *p)
{
	for (size_t i = 0; p && i < d->nmaps; i++)
		if ((const uint8_t *)p >= d->maps[i].base &&
		    (const uint8_t *)p <= d->maps[i].base + d->maps[i].len)
			return true;
	return false;
}

void vgc_derived_release(struct vgq_database *db, struct vgq_relation *r)
{
	const struct vgc_derived *d = db->internal->derived_cache;
	if (!d || !d->nmaps)
		return;
	void **cols[] = {(void **)&r->from, (void **)&r->to, (void **)&r->open,
	                 (void **)&r->begin_unknown};
	for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
		if (mapped(d, *cols[k]))
			*cols[k] = NULL;
	for (size_t a = 0; a < r->nattrs; a++) {
		if (mapped(d, r->cols[a].i))
			r->cols[a].i = NULL;
		if (r->nulls && mapped(d, r->nulls[a]))
			r->nulls[a] = NULL;
	}
}

void vgc_derived_free(struct vgq_database *db)
{
	struct vgc_derived *d = db->internal->derived_cache;
	if (!d)
		return;
	for (size_t i = 0; i < d->nmaps; i++)
		munmap(d->maps[i].base, d->maps[i].len);
	free(d->maps);
	free(d->key);
	for (size_t i = 0; i < d->nattrs; i++)
		free(d->attrs[i]);
	free(d->attrs);
	free(d);
	db->internal->derived_cache = NULL;
}

enum vgc_open_status vgc_derived_probe(const char *path, const void *key, size_t keylen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return VGC_ABSENT;
	struct stat st;
	uint8_t head[VGD_HEADER + 8];
	uint64_t size, klen;
	uint32_t version, endian;
	enum vgc_open_status status = VGC_ABSENT;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head) {
		memcpy(&version, head + 8, 4);
		memcpy(&endian, head + 12, 4);
		memcpy(&size, head + 16, 8);
		memcpy(&klen, head + VGD_HEADER, 8);
		size_t want = sizeof key_tag + keylen; /* the derived key starts with this one */
		uint8_t *k = klen >= want && want <= MAX_FILE ? vgq_xcalloc(want, 1) : NULL;
		if (memcmp(head, VGD_MAGIC, 8) || size != (uint64_t)st.st_size)
			status = VGC_DAMAGED;
		else if (version != VGD_VERSION || endian != VGC_ENDIAN || !k)
			status = VGC_STALE;
		else if (pread(fd, k, want, VGD_HEADER + 8) != (ssize_t)want)
			status = VGC_DAMAGED;
		else
			status = memcmp(k, key_tag, sizeof key_tag) ||
			                 memcmp(k + sizeof key_tag, key, keylen)
			             ? VGC_STALE
			             : VGC_OPENED;
		free(k);
	}
	close(fd);
	return status;
}

/* ---- reading, every read bounded ---- */

struct cursor {
	const uint8_t *p;
	size_t n, at;
	const char *bad;
};

static uint64_t get(struct cursor *c)
{
	uint64_t v = 0;
	if (c->bad || c->n - c->at < 8) {
		c->bad = c->bad ? c->bad : "it ends early";
		return 0;
	}
	memcpy(&v, c->p + c->at, 8);
	c->at += 8;
	return v;
}

static const uint8_t *get_raw(struct cursor *c, uint64_t n)
{
	uint64_t padded = (n + 7) & ~(uint64_t)7;
	if (c->bad || n > c->n || padded > c->n - c->at) {
		c->bad = c->bad ? c->bad : "it ends early";
		return NULL;
	}
	const uint8_t *p = c->p + c->at;
	c->at += padded;
	return p;
}

static void file_free(struct file *f)
{
	if (f->bytes)
		munmap(f->bytes, f->len);
	vgc_texts_free(&f->tx);
	f->bytes = NULL;
}

static void drop(const struct vgc_derived *d, struct file *f, const char *why)
{
	fprintf(stderr, "%s: the relations cache %s is damaged (%s): analysed again\n", d->who,
	        f->path, why);
	unlink(f->path);
	file_free(f);
}

static void file_path(const struct vgc_derived *d, const char *provider, char *out, size_t size)
{
	snprintf(out, size, "%s.derived-%s", d->base, provider);
}

/* Lets the whole pages of [p, p + n) go from memory: read again from the file if used. */
static void let_go(const void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + n) & ~(page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

/* Maps the file at f->path privately (its pages read from the file until written):
 * false if there is none, it is not a regular file (a FIFO is not waited on) or it is too
 * large. An empty file is mapped as no bytes. */
static bool map_file(struct file *f)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return false;
	struct stat st;
	void *base = NULL;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= MAX_FILE;
	if (ok && st.st_size > 0) {
		base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		ok = base != MAP_FAILED;
	}
	close(fd);
	if (!ok)
		return false;
	f->bytes = base; /* its pages mapped by the threads that check it (vgc_columns_ok) */
	f->len = (size_t)st.st_size;
	return true;
}

/* Maps and checks the file of `provider`: true when its key is this one and its checksum
 * holds, its texts interned into the database's pool. */
static bool look(struct vgq_database *db, const struct vgc_derived *d, const char *provider,
                 struct file *f)
{
	file_path(d, provider, f->path, sizeof f->path);
	if (!map_file(f))
		return false;
	const uint8_t *b = f->bytes;
	size_t len = f->len;
	uint32_t version, endian;
	uint64_t size, sum;
	if (len < VGD_HEADER || memcmp(b, VGD_MAGIC, 8)) {
		drop(d, f, "not a cache of derived relations");
		return false;
	}
	memcpy(&version, b + 8, 4);
	memcpy(&endian, b + 12, 4);
	memcpy(&size, b + 16, 8);
	memcpy(&sum, b + 24, 8);
	if (version != VGD_VERSION || endian != VGC_ENDIAN) { /* another vigil's: stale */
		file_free(f);
		return false;
	}
	struct vgc_column body = {VGD_HEADER, len - VGD_HEADER, sum};
	const struct vgc_column *whole[] = {&body};
	if (size != len || !vgc_columns_ok(f->bytes, whole, 1)) {
		drop(d, f,
		     size != len ? "its size is not the one written" : "its checksum differs");
		return false;
	}
	struct cursor c = {f->bytes, len, VGD_HEADER, NULL};
	uint64_t klen = get(&c);
	const uint8_t *k = get_raw(&c, klen);
	if (!c.bad && (klen != d->keylen || memcmp(k, d->key, klen))) { /* another trace's */
		file_free(f);
		return false;
	}
	uint64_t n = get(&c);
	if (!c.bad && n > len / 8)
		c.bad = "its texts are not counted right";
	f->tx = (struct vgc_texts){.base = f->bytes, .texts_at = c.at};
	for (uint64_t i = 0; i < n && !c.bad; i++) {
		uint64_t tl = get(&c);
		const uint8_t *s = get_raw(&c, tl + 1);
		if (s && s[tl])
			c.bad = "a text is not terminated";
	}
	f->tx.texts_end = f->body_at = c.at;
	/* the texts the pool's where they lie: the mapping is kept from here on */
	if (!c.bad && !vgc_texts_adopt(&f->tx, db->internal->pool))
		c.bad = "its texts are not as written";
	if (c.bad)
		drop(d, f, c.bad);
	return !c.bad;
}

/* The text at file offset `off` (0: NULL); *bad says when none is there. */
static const char *get_text(struct cursor *c, const struct file *f)
{
	uint64_t off = get(c);
	const char *s = c->bad || !off ? NULL : vgc_text_of(&f->tx, off);
	if (off && !s && !c->bad)
		c->bad = "a text is out of place";
	return s;
}

static bool wanted(const struct vgc_derived *d, const char *attr)
{
	for (size_t i = 0; !d->all_attrs && i < d->nattrs; i++)
		if (!strcasecmp(d->attrs[i], attr))
			return true;
	return d->all_attrs;
}

/* A column of n values of `size` bytes, in the mapping. */
static void *get_column(struct cursor *c, uint64_t n, size_t size)
{
	if (n && size > (c->n - c->at) / n) {
		c->bad = c->bad ? c->bad : "a column ends early";
		return NULL;
	}
	return (void *)get_raw(c, n * size);
}

/* The relation at the cursor, its columns those of the mapping (the cursor's bytes);
 * NULL, or a relation to free, with c->bad set if it is not as written. */
static struct vgq_relation *read_relation(struct cursor *c, const struct file *d,
                                          const struct vgc_derived *dc)
{
	const char *name = get_text(c, d);
	uint64_t kind = get(c), nattrs = get(c);
	if (!c->bad && (!name || kind > VGQ_REL_ENTITY || nattrs > 10000))
		c->bad = "a relation's schema is not one";
	if (c->bad)
		return NULL;
	struct vgq_relation *r = vgq_relation_new(name, (enum vgq_rkind)kind);
	for (uint64_t a = 0; a < nattrs && !c->bad; a++) {
		const char *an = get_text(c, d);
		uint64_t type = get(c);
		const char *ref = get_text(c, d);
		if (!c->bad && (!an || type > VGQ_ENTITY || type == VGQ_BYTES))
			c->bad = "an attribute's schema is not one";
		if (!c->bad)
			vgq_relation_add_attr(r, an, (enum vgq_type)type, ref);
	}
	uint64_t n = get(c);
	if (!c->bad && n > c->n / 8)
		c->bad = "a relation's count is not one";
	if (c->bad)
		return r;
	r->ntuples = n;
	r->from = get_column(c, n, 8);
	if (r->kind != VGQ_REL_EVENT) {
		r->to = get_column(c, n, 8);
		r->open = get_column(c, n, 1);
	}
	for (size_t a = 0; a < r->nattrs && !c->bad; a++) {
		if (get(c)) {
			if (!r->nulls)
				r->nulls = vgq_xcalloc(r->nattrs, sizeof *r->nulls);
			r->nulls[a] = get_column(c, n, 1);
		}
		enum vgq_type t = r->attrs[a].type;
		const uint64_t *v = get_column(c, n, t == VGQ_ENTITY ? 24 : 8);
		if (t != VGQ_STRING && t != VGQ_ENTITY) {
			r->cols[a].u = (uint64_t *)v;
			continue;
		}
		if (v && wanted(dc, r->attrs[a].name)) { /* else left unusable, as not named */
			r->cols[a].u = vgq_xcalloc(n ? n : 1, vgq_value_size(t));
			if (!(t == VGQ_STRING ? vgc_texts_column(&d->tx, v, n, r->cols[a].s)
			                      : vgc_refs_column(&d->tx, v, n, r->cols[a].r)))
				c->bad = "a text is out of place";
		}
		if (v) /* made pointers, or not used: its pages read for the checksum let go */
			let_go(v, n * (t == VGQ_ENTITY ? 24 : 8));
	}
	return r;
}

int vgc_derived_take(struct vgq_database *db, const char *provider, struct vgq_relation ***made,
                     size_t *nmade, char **error)
{
	struct vgc_derived *d = db->internal->derived_cache;
	*made = NULL;
	*nmade = 0;
	*error = NULL;
	struct file f = {0};
	if (!d || !look(db, d, provider, &f))
		return 0;
	struct cursor c = {f.bytes, f.len, f.body_at, NULL};
	const char *err = get_text(&c, &f);
	uint64_t nrels = get(&c);
	if (!c.bad && nrels > 64)
		c.bad = "its relations are not counted right";
	for (uint64_t i = 0; i < nrels && !c.bad; i++) {
		struct vgq_relation *r = read_relation(&c, &f, d);
		if (r && !c.bad) {
			vgq_relation_finish(r, db->last); /* open tuples' ends: in the mapping */
			*made = vgq_xrealloc(*made, *nmade + 1, sizeof **made);
			(*made)[(*nmade)++] = r;
		} else if (r) {
			*made = vgq_xrealloc(*made, *nmade + 1, sizeof **made);
			(*made)[(*nmade)++] = r; /* freed below, its columns released */
		}
	}
	d->maps = vgq_xrealloc(d->maps, d->nmaps + 1, sizeof *d->maps);
	d->maps[d->nmaps++] = (struct mapping){f.bytes, f.len};
	if (!c.bad) {
		*error = err ? strdup(err) : NULL;
		d->taken++;
		f.bytes = NULL; /* kept: the relations' columns */
		file_free(&f);
		return 1;
	}
	for (size_t i = 0; i < *nmade; i++) {
		vgc_derived_release(db, (*made)[i]);
		vgq_relation_free((*made)[i]);
	}
	free(*made);
	*made = NULL;
	*nmade = 0;
	f.bytes = NULL; /* kept mapped: the pool holds its texts */
	drop(d, &f, c.bad);
	return 0;
}

/* ---- writing: streamed in pieces, the body's checksum summed over them ---- */

struct writer {
	FILE *f;
	uint8_t *piece;
	size_t n;
	struct vgc_sums sums; /* of the body's whole pieces written */
	uint64_t size;        /* the body's bytes put */
	bool failed;
	/* text pointer -> its index + 1, then (once written) the file offset of its bytes */
	uintptr_t *keys;
	uint64_t *idx;
	size_t cap, ntexts;
	const char **order;
};

static void put(struct writer *w, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		size_t k = PIECE - w->n < n ? PIECE - w->n : n;
		memcpy(w->piece + w->n, b, k);
		w->n += k, b += k, n -= k, w->size += k;
		if (w->n == PIECE) {
			struct vgc_sums s = vgc_sums_threads(w->piece, PIECE);
			w->sums = vgc_sums_then(w->sums, &s);
			if (fwrite(w->piece, 1, PIECE, w->f) != PIECE)
				w->failed = true;
			w->n = 0;
		}
	}
}

static void put_u64(struct writer *w, uint64_t v)
{
	put(w, &v, 8);
}

static void put_padded(struct writer *w, const void *p, size_t n)
{
	static const uint8_t zeros[8];
	put(w, p, n);
	if (n % 8)
		put(w, zeros, 8 - n % 8);
}

static size_t slot(const struct writer *w, const char *s)
{
	for (size_t i = vgq_mix((uintptr_t)s) & (w->cap - 1);; i = (i + 1) & (w->cap - 1))
		if (!w->keys[i] || w->keys[i] == (uintptr_t)s)
			return i;
}

static void note(struct writer *w, const char *s)
{
	if (!s)
		return;
	if (2 * (w->ntexts + 1) > w->cap) {
		struct writer old = *w;
		w->cap = w->cap ? w->cap * 2 : 1024;
		w->keys = vgq_xcalloc(w->cap, sizeof *w->keys);
		w->idx = vgq_xcalloc(w->cap, sizeof *w->idx);
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i]) {
				size_t k = slot(w, (const char *)old.keys[i]);
				w->keys[k] = old.keys[i];
				w->idx[k] = old.idx[i];
			}
		free(old.keys);
		free(old.idx);
	}
	size_t k = slot(w, s);
	if (w->keys[k])
		return;
	w->keys[k] = (uintptr_t)s;
	w->idx[k] = ++w->ntexts;
	w->order = vgq_xrealloc(w->order, w->ntexts, sizeof *w->order);
	w->order[w->ntexts - 1] = s;
}

static void put_text(struct writer *w, const char *s)
{
	put_u64(w, s ? w->idx[slot(w, s)] : 0);
}

static void note_relation(struct writer *w, const struct vgq_relation *r)
{
	note(w, r->name);
	for (size_t a = 0; a < r->nattrs; a++) {
		note(w, r->attrs[a].name);
		note(w, r->attrs[a].ref_kind);
		for (size_t i = 0; i < r->ntuples; i++)
			if (r->attrs[a].type == VGQ_STRING)
				note(w, r->cols[a].s[i]);
			else if (r->attrs[a].type == VGQ_ENTITY)
				note(w, r->cols[a].r[i].name);
	}
}

static void put_relation(struct writer *w, const struct vgq_relation *r)
{
	size_t n = r->ntuples;
	put_text(w, r->name);
	put_u64(w, (uint64_t)r->kind);
	put_u64(w, r->nattrs);
	for (size_t a = 0; a < r->nattrs; a++) {
		put_text(w, r->attrs[a].name);
		put_u64(w, (uint64_t)r->attrs[a].type);
		put_text(w, r->attrs[a].ref_kind);
	}
	put_u64(w, n);
	put(w, r->from, n * 8);
	if (r->kind != VGQ_REL_EVENT) { /* no arrays yet when empty */
		put(w, r->to, n * 8);
		put_padded(w, r->open, n);
	}
	for (size_t a = 0; a < r->nattrs; a++) {
		bool nulls = r->nulls && r->nulls[a];
		put_u64(w, nulls);
		if (nulls)
			put_padded(w, r->nulls[a], n);
		enum vgq_type t = r->attrs[a].type;
		if (t == VGQ_INT || t == VGQ_UINT || t == VGQ_DOUBLE)
			put(w, r->cols[a].u, n * 8);
		for (size_t i = 0; i < n && t == VGQ_STRING; i++)
			put_text(w, r->cols[a].s[i]);
		for (size_t i = 0; i < n && t == VGQ_ENTITY; i++) {
			const struct vgq_ref *ref = &r->cols[a].r[i];
			put_u64(w, ref->id);
			put_u64(w, (uint64_t)ref->gen | (uint64_t)ref->image << 32);
			put_text(w, ref->name);
		}
	}
}

/* Whether provider p makes relation r. */
static bool of_provider(const struct vgq_relation *r, const struct vgq_derived_provider *p)
{
	for (const char *const *n = p->names; *n; n++)
		if (!strcmp(*n, r->name))
			return true;
	return false;
}

void vgc_derived_save(struct vgq_database *db, const struct vgq_derived_provider *p,
                      const char *error)
{
	struct vgc_derived *d = db->internal->derived_cache;
	const struct vgq_db_internal *in = db->internal;
	if (!d)
		return;
	for (size_t i = 0; i < in->nderived; i++)
		for (size_t a = 0; of_provider(in->derived[i], p) && a < in->derived[i]->nattrs;
		     a++)
			if (in->derived[i]->attrs[a].type == VGQ_BYTES)
				return; /* no analysis makes bytes: not kept */
	char path[4300], tmp[4400];
	file_path(d, p->names[0], path, sizeof path);
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return; /* never renamed over a FIFO, a device or a link */
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
	int fd = open(tmp, flags, 0600);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
		fd = open(tmp, flags, 0600);
	if (fd < 0)
		return;
	struct writer w = {.f = fdopen(fd, "wb"), .piece = vgq_xcalloc(PIECE, 1)};
	if (!w.f) {
		close(fd);
		unlink(tmp);
		free(w.piece);
		return;
	}
	note(&w, error);
	size_t nrels = 0;
	for (size_t i = 0; i < in->nderived; i++)
		if (!error && of_provider(in->derived[i], p)) {
			note_relation(&w, in->derived[i]);
			nrels++;
		}
	uint8_t header[VGD_HEADER] = {0};
	if (fwrite(header, 1, sizeof header, w.f) != sizeof header) /* written at the end */
		w.failed = true;
	put_u64(&w, d->keylen);
	put_padded(&w, d->key, d->keylen);
	put_u64(&w, w.ntexts);
	for (size_t i = 0; i < w.ntexts; i++) {
		size_t len = strlen(w.order[i]);
		put_u64(&w, len);
		w.idx[slot(&w, w.order[i])] = VGD_HEADER + w.size; /* values name it so */
		put_padded(&w, w.order[i], len + 1);
	}
	put_text(&w, error);
	put_u64(&w, nrels);
	for (size_t i = 0; i < in->nderived && !error; i++)
		if (of_provider(in->derived[i], p))
			put_relation(&w, in->derived[i]);
	/* the last piece: its whole rows, then the bytes after them */
	struct vgc_sums last = vgc_sums_threads(w.piece, w.n / 32 * 32);
	w.sums = vgc_sums_then(w.sums, &last);
	uint64_t sum = vgc_checksum_tail(w.sums, w.piece + w.n / 32 * 32, w.size);
	if (w.n && fwrite(w.piece, 1, w.n, w.f) != w.n)
		w.failed = true;
	uint32_t version = VGD_VERSION, endian = VGC_ENDIAN;
	uint64_t size = VGD_HEADER + w.size;
	memcpy(header, VGD_MAGIC, 8);
	memcpy(header + 8, &version, 4);
	memcpy(header + 12, &endian, 4);
	memcpy(header + 16, &size, 8);
	memcpy(header + 24, &sum, 8);
	if (fseek(w.f, 0, SEEK_SET) != 0 || fwrite(header, 1, sizeof header, w.f) != sizeof header)
		w.failed = true;
	if (fclose(w.f) != 0 || w.failed || rename(tmp, path) != 0)
		unlink(tmp);
	free(w.piece);
	free(w.keys);
	free(w.idx);
	free(w.order);
}
