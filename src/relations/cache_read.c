/* Reads the relations cache's files (cache_internal.h): the manifest made a database of
 * relations without tuples; each relation's file mapped with its header, directory and
 * texts checked at open, its columns checked before they are used (vgc_rfile_check), and
 * then put in the database's place (vgc_adopt), so that nothing of a damaged file is ever
 * used. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/huge.h"
#include "base/search.h"
#include "relations/cache.h"
#include "relations/cache_internal.h"

/* A bytes column's values lie in [blobs_at, offset), with their own checksum. */
struct acolumn {
	struct vgc_column c;
	uint64_t blobs_at, blobs_sum;
};

struct rinfo {
	struct vgc_column from, to, open, begin_unknown;
	struct acolumn *attrs;
	bool *checked; /* per attribute: its column was checked (and is to be made) */
	bool *made;    /* per attribute: its column was made (a pointer column to free) */
};

/* One mapped file: a relation's, or a manifest while it is read. */
struct vgc_rfile {
	const uint8_t *base;
	size_t size;
	struct vgc_texts tx; /* its texts (base: the mapping) */
	struct vgq_relation *rel;
	struct rinfo ri;
	const char **warnings; /* in the mapping */
	size_t nwarnings;
	char path[4096];
	struct stat st; /* the file as opened: its identity for cache_checked.c */
	size_t row0;    /* its relation's first tuple's row in the file (a time slice) */
	bool sliced;    /* its relation is the rows within the query's time bound */
	int fd;         /* the file, open while its columns may be copied; or -1 */
	/* Columns read into memory of their own (cache_copy.c): copied[i] is column
	 * copied_col[i]'s bytes, in the block `copy`. */
	struct vgb_huge_block copy;
	const uint8_t **copied;
	struct vgc_column *copied_col;
	size_t ncopied;
};

/* The relations of a database that are mapped, by their place in db->relations. */
struct vgc_map {
	struct vgc_rfile **files;
	size_t n;
};

/* ---- reading the directory, every read bounded ---- */

struct cursor {
	const struct vgc_rfile *m;
	const uint8_t *p;
	size_t n, at;
	const char *bad; /* what was wrong, or NULL */
};

static uint64_t get_u64(struct cursor *c)
{
	uint64_t v = 0;
	if (c->bad || c->n - c->at < 8) {
		c->bad = c->bad ? c->bad : "the directory ends early";
		return 0;
	}
	memcpy(&v, c->p + c->at, 8);
	c->at += 8;
	return v;
}

static const void *get_raw(struct cursor *c, uint64_t n)
{
	uint64_t padded = (n + 7) & ~(uint64_t)7;
	if (c->bad || n > c->n || padded > c->n - c->at) {
		c->bad = c->bad ? c->bad : "the directory ends early";
		return NULL;
	}
	const void *p = c->p + c->at;
	c->at += padded;
	return p;
}

const char *vgc_text_at(const struct vgc_texts *t, uint64_t off)
{
	if (off < t->texts_at + 8 || off >= t->texts_end || off % 8)
		return NULL;
	uint64_t len;
	memcpy(&len, t->base + off - 8, 8);
	if (len >= t->texts_end - off || t->base[off + len])
		return NULL;
	return (const char *)t->base + off;
}

static const char *get_text(struct cursor *c)
{
	uint64_t w = get_u64(c);
	if (c->bad || w == VGC_NULL_TEXT)
		return NULL;
	if (w & 1) {
		const char *s = vgc_text_at(&c->m->tx, w >> 1);
		if (!s)
			c->bad = "a text of the directory is out of place";
		return s;
	}
	const char *s = get_raw(c, (w >> 1) + 1);
	if (s && s[w >> 1])
		c->bad = "a text of the directory is not terminated";
	return c->bad ? NULL : s;
}

/* A column's place; it must lie among the columns and hold n values of `size` bytes. */
static struct vgc_column get_column(struct cursor *c, uint64_t n, size_t size, uint64_t dir_at)
{
	struct vgc_column col = {get_u64(c), get_u64(c), get_u64(c)};
	if (c->bad || !col.offset)
		return col;
	if (col.offset % 8 || col.offset > dir_at || col.size > dir_at - col.offset ||
	    col.size != n * size || (n && col.size / n != size))
		c->bad = "a column is out of place";
	return col;
}

/* ---- the database ---- */

/* A relation's name, kind and attributes (the texts in the mapping). */
static void read_schema(struct cursor *c, struct vgq_relation *r)
{
	r->name = get_text(c);
	uint64_t kind = get_u64(c), nattrs = get_u64(c);
	if (!c->bad && (!r->name || kind > VGQ_REL_ENTITY || nattrs > 100000)) {
		c->bad = "a relation's schema is not one";
		return;
	}
	r->kind = (enum vgq_rkind)kind;
	struct vgq_attr *attrs = vgq_xcalloc(nattrs ? nattrs : 1, sizeof *attrs);
	r->attrs = attrs;
	r->cols = vgq_xcalloc(nattrs ? nattrs : 1, sizeof *r->cols);
	r->nattrs = nattrs;
	for (size_t a = 0; a < nattrs && !c->bad; a++) {
		attrs[a].name = get_text(c);
		uint64_t type = get_u64(c);
		attrs[a].ref_kind = get_text(c);
		if (!c->bad && (!attrs[a].name || type > VGQ_ENTITY))
			c->bad = "an attribute's schema is not one";
		attrs[a].type = (enum vgq_type)type;
	}
}

static void read_relation(struct cursor *c, struct vgq_relation *r, struct rinfo *ri,
                          uint64_t dir_at)
{
	read_schema(c, r);
	if (c->bad)
		return;
	const struct vgq_attr *attrs = r->attrs;
	size_t nattrs = r->nattrs;
	ri->attrs = vgq_xcalloc(nattrs ? nattrs : 1, sizeof *ri->attrs);
	ri->checked = vgq_xcalloc(nattrs ? nattrs : 1, sizeof *ri->checked);
	ri->made = vgq_xcalloc(nattrs ? nattrs : 1, sizeof *ri->made);
	r->ntuples = get_u64(c);
	r->first = (int64_t)get_u64(c);
	r->last = (int64_t)get_u64(c);
	r->unmatched_ends = get_u64(c);
	r->open_at_end = get_u64(c);
	if (!c->bad && r->ntuples > c->m->size)
		c->bad = "a relation's count is not one";
	uint64_t n = c->bad ? 0 : r->ntuples;
	ri->from = get_column(c, n, 8, dir_at);
	ri->to = get_column(c, n, 8, dir_at);
	ri->open = get_column(c, n, 1, dir_at);
	ri->begin_unknown = get_column(c, n, 1, dir_at);
	if (!c->bad && (!ri->from.offset || (r->kind == VGQ_REL_EVENT) != !ri->to.offset ||
	                !ri->to.offset != !ri->open.offset))
		c->bad = "a relation's time columns are missing";
	for (size_t a = 0; a < nattrs && !c->bad; a++) {
		ri->attrs[a].c = get_column(c, n, vgc_value_size(attrs[a].type), dir_at);
		if (!c->bad && !ri->attrs[a].c.offset)
			c->bad = "an attribute column is missing";
		if (attrs[a].type == VGQ_BYTES) {
			ri->attrs[a].blobs_at = get_u64(c);
			ri->attrs[a].blobs_sum = get_u64(c);
			if (!c->bad && ri->attrs[a].blobs_at > ri->attrs[a].c.offset)
				c->bad = "a column's bytes are out of place";
		}
	}
}

/* ---- opening a file: the header and directory checked ---- */

static const char *check_header(const struct vgc_rfile *m, const char *magic, struct vgc_header *h)
{
	if (m->size < sizeof *h)
		return "shorter than its header";
	memcpy(h, m->base, sizeof *h);
	if (memcmp(h->magic, magic, sizeof h->magic))
		return "not a relations cache";
	if (h->head_sum != vgc_checksum(h, offsetof(struct vgc_header, head_sum)))
		return "its header's checksum differs";
	if (h->version != VGC_VERSION || h->endian != VGC_ENDIAN)
		return NULL; /* another vigil's: stale, not damaged */
	if (h->file_size != m->size)
		return "its size is not the one written";
	if (h->dir_offset > m->size || h->dir_size > m->size - h->dir_offset)
		return "its directory is out of place";
	if (vgc_checksum(m->base + h->dir_offset, h->dir_size) != h->dir_sum)
		return "its directory's checksum differs";
	return NULL;
}

static void unmap(struct vgc_rfile *m)
{
	if (m->base)
		munmap((void *)m->base, m->size);
	if (m->fd >= 0)
		close(m->fd);
	if (m->copy.base)
		vgb_huge_unmap(&m->copy);
	free(m->copied);
	free(m->copied_col);
	free(m);
}

static enum vgc_open_status damaged(char *why, size_t whysize, const char *what)
{
	snprintf(why, whysize, "%s", what);
	return VGC_DAMAGED;
}

/* Maps the file at `path` and checks its header and key: the cursor is then at the
 * directory's first word after the key. */
static enum vgc_open_status map_file(const char *path, const char *magic, const void *key,
                                     size_t keylen, struct vgc_rfile **out, struct cursor *c,
                                     char *why, size_t whysize)
{
	*out = NULL;
	/* O_NONBLOCK: a FIFO in the cache's place cannot hold the query up */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return VGC_ABSENT;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return VGC_ABSENT;
	}
	struct vgc_rfile *m = vgq_xcalloc(1, sizeof *m);
	m->fd = -1;
	snprintf(m->path, sizeof m->path, "%s", path);
	m->size = (size_t)st.st_size;
	m->st = st;
	void *base = mmap(NULL, m->size, PROT_READ, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		close(fd);
		free(m);
		return VGC_ABSENT;
	}
	m->fd = fd;
	m->base = base;
	struct vgc_header h;
	const char *bad = check_header(m, magic, &h);
	if (bad) {
		unmap(m);
		return damaged(why, whysize, bad);
	}
	if (h.version != VGC_VERSION || h.endian != VGC_ENDIAN) {
		unmap(m);
		return VGC_STALE;
	}
	*c = (struct cursor){.m = m, .p = m->base + h.dir_offset, .n = h.dir_size};
	uint64_t klen = get_u64(c);
	const void *k = get_raw(c, klen);
	if (!c->bad && (klen != keylen || memcmp(k, key, keylen))) {
		unmap(m);
		return VGC_STALE;
	}
	*out = m;
	return VGC_OPENED;
}

enum vgc_open_status vgc_probe_relation(const char *path, const void *key, size_t keylen)
{
	struct vgc_rfile *m;
	struct cursor c;
	char why[128];
	enum vgc_open_status st =
	    map_file(path, VGC_MAGIC_REL, key, keylen, &m, &c, why, sizeof why);
	if (st == VGC_OPENED)
		unmap(m);
	return st;
}

/* ---- the manifest ---- */

enum vgc_open_status vgc_open_manifest(const char *path, const void *key, size_t keylen,
                                       struct vgc_manifest *out, char *why, size_t whysize)
{
	struct vgc_rfile *m;
	struct cursor c;
	enum vgc_open_status st = map_file(path, VGC_MAGIC, key, keylen, &m, &c, why, whysize);
	if (st != VGC_OPENED)
		return st;
	struct vgq_database *db = vgq_xcalloc(1, sizeof *db);
	db->internal = vgq_xcalloc(1, sizeof *db->internal);
	struct vgq_pool *pool = db->internal->pool = vgq_pool_new();
	db->events = get_u64(&c);
	db->first = (int64_t)get_u64(&c);
	db->last = (int64_t)get_u64(&c);
	out->stream_damage = get_u64(&c);
	uint64_t nwarnings = get_u64(&c);
	if (!c.bad && nwarnings > c.n)
		c.bad = "its warnings are not counted right";
	db->warnings = vgq_xcalloc(c.bad ? 1 : nwarnings + 1, sizeof *db->warnings);
	for (size_t i = 0; i < nwarnings && !c.bad; i++) {
		const char *w = get_text(&c);
		db->warnings[db->nwarnings++] = strdup(w ? w : "");
	}
	db->internal->nwarnings_pass = db->nwarnings;
	uint64_t nrel = get_u64(&c);
	if (!c.bad && nrel > c.n)
		c.bad = "its relations are not counted right";
	nrel = c.bad ? 0 : nrel;
	struct vgq_relation **rels = vgq_xcalloc(nrel ? nrel : 1, sizeof *rels);
	db->relations = rels;
	db->internal->by_need = vgq_xcalloc(nrel ? nrel : 1, sizeof *db->internal->by_need);
	for (size_t i = 0; i < nrel && !c.bad; i++) {
		struct vgq_relation r = {0};
		read_schema(&c, &r);
		db->internal->by_need[i] = get_u64(&c) != 0;
		if (!c.bad) { /* a relation without tuples, its texts the database's own */
			const char *name = vgq_pool_intern(pool, r.name, strlen(r.name));
			rels[i] = vgq_relation_new(name, r.kind);
			db->nrelations = i + 1;
			for (size_t a = 0; a < r.nattrs; a++) {
				const struct vgq_attr *at = &r.attrs[a];
				const char *kind =
				    at->ref_kind
				        ? vgq_pool_intern(pool, at->ref_kind, strlen(at->ref_kind))
				        : NULL;
				vgq_relation_add_attr(
				    rels[i], vgq_pool_intern(pool, at->name, strlen(at->name)),
				    at->type, kind);
			}
		}
		free(r.cols);
		free((void *)r.attrs);
	}
	unmap(m);
	if (c.bad) {
		vgq_database_free(db);
		return damaged(why, whysize, c.bad);
	}
	out->db = db;
	return VGC_OPENED;
}

/* ---- a relation's file ---- */

static void free_rfile(struct vgc_rfile *f)
{
	struct vgq_relation *r = f->rel;
	if (r) {
		for (size_t a = 0; a < r->nattrs; a++) {
			enum vgq_type t = r->attrs[a].type;
			if (f->ri.made && f->ri.made[a] &&
			    (t == VGQ_STRING || t == VGQ_BYTES || t == VGQ_ENTITY))
				free(r->cols[a].s);
		}
		free(r->cols);
		free((void *)r->attrs);
		free(r);
	}
	free(f->ri.attrs);
	free(f->ri.checked);
	free(f->ri.made);
	free(f->warnings);
	vgc_texts_free(&f->tx);
	unmap(f);
}

void vgc_rfile_close(struct vgc_rfile *f)
{
	if (f)
		free_rfile(f);
}

enum vgc_open_status vgc_open_relation(const char *path, const char *name, const void *key,
                                       size_t keylen, struct vgc_rfile **out, char *why,
                                       size_t whysize)
{
	struct vgc_rfile *m;
	struct cursor c;
	enum vgc_open_status st = map_file(path, VGC_MAGIC_REL, key, keylen, &m, &c, why, whysize);
	*out = NULL;
	if (st != VGC_OPENED)
		return st;
	struct vgc_header h;
	memcpy(&h, m->base, sizeof h);
	uint64_t nwarnings = get_u64(&c);
	if (!c.bad && nwarnings > c.n)
		c.bad = "its warnings are not counted right";
	m->warnings = vgq_xcalloc(c.bad ? 1 : nwarnings + 1, sizeof *m->warnings);
	for (size_t i = 0; i < nwarnings && !c.bad; i++) {
		const char *w = get_text(&c);
		m->warnings[m->nwarnings++] = w ? w : "";
	}
	m->tx.base = m->base;
	m->tx.texts_at = get_u64(&c);
	uint64_t texts_size = get_u64(&c), texts_sum = get_u64(&c);
	if (!c.bad && (m->tx.texts_at != sizeof h || texts_size > h.dir_offset - m->tx.texts_at))
		c.bad = "its texts are out of place";
	m->tx.texts_end = c.bad ? 0 : m->tx.texts_at + texts_size;
	uint64_t sum = 0;
	for (uint64_t at = m->tx.texts_at; !c.bad && at < m->tx.texts_end;) {
		const char *s = vgc_text_at(&m->tx, at + 8);
		if (!s) {
			c.bad = "its texts are not as written";
			break;
		}
		size_t len = strlen(s);
		sum = sum * 0x100000001B3ull + vgc_checksum(s, len + 1);
		at += 8 + ((len + 1 + 7) & ~(size_t)7);
	}
	if (!c.bad && sum != texts_sum)
		c.bad = "its texts' checksum differs";
	m->rel = vgq_xcalloc(1, sizeof *m->rel);
	if (!c.bad)
		read_relation(&c, m->rel, &m->ri, h.dir_offset);
	if (c.bad) {
		free_rfile(m);
		return damaged(why, whysize, c.bad);
	}
	if (strcmp(m->rel->name, name)) { /* another relation's, by a name's escaping */
		free_rfile(m);
		return VGC_STALE;
	}
	*out = m;
	return VGC_OPENED;
}

size_t vgc_rfile_warnings(const struct vgc_rfile *f, const char *const **warnings)
{
	*warnings = f->warnings;
	return f->nwarnings;
}

/* Columns checked by an earlier query: read into memory of the file's own when that pays
 * (cache_copy.c), else their pages mapped. */
static void copy_or_map(struct vgc_rfile *f, const struct vgc_column *const *cols, size_t n)
{
	f->copied = vgq_xcalloc(n, sizeof *f->copied);
	if (!vgc_columns_copy(f->fd, f->base, cols, n, &f->copy, f->copied)) {
		vgc_columns_map(f->base, cols, n);
		return;
	}
	f->copied_col = vgq_xcalloc(n, sizeof *f->copied_col);
	for (size_t i = 0; i < n; i++)
		f->copied_col[i] = *cols[i];
	f->ncopied = n;
}

/* Where column c's bytes are read: its copy, or the mapping. */
static const uint8_t *column_bytes(const struct vgc_rfile *m, const struct vgc_column *c)
{
	for (size_t i = 0; i < m->ncopied; i++)
		if (!memcmp(&m->copied_col[i], c, sizeof *c))
			return m->copied[i];
	return m->base + c->offset;
}

static bool wanted(const struct vgq_cache_request *rq, const char *attr)
{
	if (!rq || rq->all_attrs)
		return true;
	for (size_t i = 0; i < rq->nattrs; i++)
		if (!strcasecmp(rq->attrs[i], attr))
			return true;
	return false;
}

/* An event relation under a time bound of the query (rq->bounds, relations/cache.h: a
 * superset of what every statement can use, as a bounded build takes it) is the rows of
 * its file within the bound, found by halving: its tuples are in time order, as the
 * merged build makes them, which is checked first (a damaged stream's times may go
 * backwards: then it stays whole). The columns are then pointers into the mapping at the
 * slice's first row; not with a byte-string attribute named (their checksum is over all
 * the tuples' values). */
static void slice(struct vgc_rfile *f, const struct vgq_cache_request *rq)
{
	struct vgq_relation *r = f->rel;
	int64_t lo = 0, hi = 0;
	bool bounded = false;
	for (size_t i = 0; rq && i < rq->nbounds; i++) {
		const struct vgq_time_bound *b = &rq->bounds[i];
		if (strcasecmp(b->relation, r->name))
			continue;
		lo = bounded && lo < b->lo ? lo : b->lo;
		hi = bounded && hi > b->hi ? hi : b->hi;
		bounded = true;
	}
	if (!bounded || r->kind != VGQ_REL_EVENT || !f->ri.from.offset ||
	    f->ri.from.size < r->ntuples * sizeof(int64_t))
		return;
	for (size_t a = 0; a < r->nattrs; a++)
		if (f->ri.checked[a] && r->attrs[a].type == VGQ_BYTES)
			return;
	const int64_t *from = (const int64_t *)column_bytes(f, &f->ri.from);
	size_t n = r->ntuples;
	for (size_t i = 1; i < n; i++)
		if (from[i] < from[i - 1])
			return;
	size_t a = vgb_first_at_least(from, n, lo);            /* first row at or after lo */
	size_t end = a + vgb_first_after(from + a, n - a, hi); /* first row after hi */
	f->row0 = a;
	r->ntuples = end - a;
	f->sliced = true;
}

bool vgc_rfile_check(struct vgc_rfile *f, const struct vgq_cache_request *rq)
{
	struct vgq_relation *r = f->rel;
	struct rinfo *ri = &f->ri;
	const struct vgc_column *check[4 + r->nattrs];
	const struct vgc_column *times[] = {&ri->from, &ri->to, &ri->open, &ri->begin_unknown};
	size_t ncheck = 0;
	for (size_t k = 0; k < 4; k++)
		if (times[k]->offset)
			check[ncheck++] = times[k];
	for (size_t a = 0; a < r->nattrs; a++)
		if ((ri->checked[a] = wanted(rq, r->attrs[a].name)))
			check[ncheck++] = &ri->attrs[a].c;
	/* those an earlier query checked in this very file are not summed again */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct vgc_column done[4 + r->nattrs];
	size_t ndone = vgc_checked_read(f->path, &f->st, done, 4 + r->nattrs), nleft = 0, nseen = 0;
	const struct vgc_column *left[4 + r->nattrs], *seen[4 + r->nattrs];
	for (size_t i = 0; i < ncheck; i++) {
		bool was = false;
		for (size_t j = 0; j < ndone && !was; j++)
			was = !memcmp(&done[j], check[i], sizeof done[j]);
		if (was)
			seen[nseen++] = check[i];
		else
			left[nleft++] = check[i];
	}
	if (nseen)
		copy_or_map(f, seen, nseen);
	if (nleft) {
		if (!vgc_columns_ok(f->base, left, nleft))
			return false;
		for (size_t i = 0; i < nleft; i++)
			done[ndone++] = *left[i];
		vgc_checked_write(f->path, &f->st, done, ndone,
		                  (int64_t)now.tv_sec * 1000000000ll + now.tv_nsec);
	}
	slice(f, rq);
	return true;
}

/* The columns are left to be faulted in as the query reads them: populated here (5 ms for
 * 174 MB on 2 threads), the pages a selective scan never reads counted in its memory too
 * (396 MB at most against 240, 10M events), for 2 ms less of scan. */
void vgc_rfile_written(struct vgc_rfile *f, const struct vgq_cache_request *rq)
{
	struct vgq_relation *r = f->rel;
	for (size_t a = 0; a < r->nattrs; a++)
		f->ri.checked[a] = wanted(rq, r->attrs[a].name);
	slice(f, rq);
}

/* ---- the checked columns made the relation's ---- */

const char *vgc_text_of(const struct vgc_texts *t, uint64_t off)
{
	const char *s = vgc_text_at(t, off);
	if (!s || !t->nremap)
		return s;
	size_t lo = 0, hi = t->nremap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->remap_off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nremap && t->remap_off[lo] == off ? t->remap_to[lo] : s;
}

bool vgc_texts_adopt(struct vgc_texts *t, struct vgq_pool *pool)
{
	for (uint64_t at = t->texts_at; at < t->texts_end;) { /* all checked first */
		const char *s = vgc_text_at(t, at + 8);
		if (!s)
			return false;
		at += 8 + ((strlen(s) + 1 + 7) & ~(size_t)7);
	}
	size_t cap = 0;
	for (uint64_t at = t->texts_at; at < t->texts_end;) {
		const char *s = vgc_text_at(t, at + 8);
		size_t len = strlen(s);
		const char *have = vgq_pool_find(pool, s, len);
		if (!have) {
			vgq_pool_adopt(pool, s, len);
		} else if (have != s) {
			if (t->nremap == cap) {
				cap = cap ? 2 * cap : 64;
				t->remap_off =
				    vgq_xrealloc(t->remap_off, cap, sizeof *t->remap_off);
				t->remap_to = vgq_xrealloc(t->remap_to, cap, sizeof *t->remap_to);
			}
			t->remap_off[t->nremap] = at + 8;
			t->remap_to[t->nremap++] = have;
		}
		at += 8 + ((len + 1 + 7) & ~(size_t)7);
	}
	return true;
}

void vgc_texts_free(struct vgc_texts *t)
{
	free(t->remap_off);
	free(t->remap_to);
	t->remap_off = NULL;
	t->remap_to = NULL;
	t->nremap = 0;
}

bool vgc_texts_column(const struct vgc_texts *t, const uint64_t *in, size_t n, const char **out)
{
	uint64_t last = 0; /* texts repeat: the last one found is kept */
	const char *text = NULL;
	for (size_t i = 0; i < n; i++) {
		if (in[i] && in[i] != last && !(text = vgc_text_of(t, last = in[i])))
			return false;
		out[i] = in[i] ? text : NULL;
	}
	return true;
}

bool vgc_refs_column(const struct vgc_texts *t, const uint64_t *in, size_t n, struct vgq_ref *out)
{
	uint64_t last = 0;
	const char *name = NULL;
	for (size_t i = 0; i < n; i++) {
		const uint64_t *v = in + 3 * i; /* id, gen | image << 32, name */
		if (v[2] && v[2] != last && !(name = vgc_text_of(t, last = v[2])))
			return false;
		out[i] = (struct vgq_ref){v[0], (uint32_t)v[1], (uint32_t)(v[1] >> 32),
		                          v[2] ? name : NULL};
	}
	return true;
}

/* A column of `width` bytes a value, from the relation's first row (row0). */
static const void *column_data(const struct vgc_rfile *m, const struct vgc_column *c, size_t width)
{
	/* its pages mapped (or it copied) when it was checked */
	return c->offset ? column_bytes(m, c) + m->row0 * width : NULL;
}

/* Texts, bytes and entities as the relation's pointers; false if an offset is wrong. */
static bool fix_column(const struct vgc_rfile *m, struct vgq_relation *r, size_t a,
                       const struct acolumn *ac)
{
	enum vgq_type type = r->attrs[a].type;
	const uint64_t *in = column_data(m, &ac->c,
	                                 8 * (type == VGQ_BYTES    ? 2
	                                      : type == VGQ_ENTITY ? 3
	                                                           : 1));
	size_t n = r->ntuples;
	union vgq_column *col = &r->cols[a];
	switch (r->attrs[a].type) {
	case VGQ_STRING:
		col->s = vgq_xcalloc(n ? n : 1, sizeof *col->s);
		return vgc_texts_column(&m->tx, in, n, col->s);
	case VGQ_BYTES: {
		col->b = vgq_xcalloc(n ? n : 1, sizeof *col->b);
		uint64_t sum = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t off = in[2 * i], len = in[2 * i + 1];
			if (len &&
			    (off < ac->blobs_at || off > ac->c.offset || len > ac->c.offset - off))
				return false;
			col->b[i] = (struct vgq_bytes){len ? m->base + off : NULL, len};
			if (len)
				sum = sum * 0x100000001B3ull + vgc_checksum(m->base + off, len);
		}
		return sum == ac->blobs_sum;
	}
	case VGQ_ENTITY:
		col->r = vgq_xcalloc(n ? n : 1, sizeof *col->r);
		return vgc_refs_column(&m->tx, in, n, col->r);
	default:
		col->i = (int64_t *)in;
		return true;
	}
}

/* The file's relation made ready: its time columns mapped, its checked attributes
 * mapped or made pointers. */
static bool make_ready(struct vgc_rfile *m)
{
	struct vgq_relation *r = m->rel;
	struct rinfo *ri = &m->ri;
	r->from = (int64_t *)column_data(m, &ri->from, sizeof *r->from);
	r->to = (int64_t *)column_data(m, &ri->to, sizeof *r->to);
	r->open = (bool *)column_data(m, &ri->open, sizeof *r->open);
	r->begin_unknown = (bool *)column_data(m, &ri->begin_unknown, sizeof *r->begin_unknown);
	for (size_t a = 0; a < r->nattrs; a++)
		if (ri->checked[a]) {
			ri->made[a] = true;
			if (!fix_column(m, r, a, &ri->attrs[a]))
				return false;
		}
	return true;
}

bool vgc_adopt(struct vgq_database *db, struct vgc_rfile **files, char *why, size_t whysize)
{
	for (size_t i = 0; i < db->nrelations; i++) {
		if (!files[i])
			continue;
		if (!vgc_texts_adopt(&files[i]->tx, db->internal->pool) || !make_ready(files[i])) {
			snprintf(why, whysize, "%s", files[i]->path);
			return false;
		}
	}
	struct vgc_map *map = db->internal->cache;
	if (!map) {
		map = db->internal->cache = vgq_xcalloc(1, sizeof *map);
		map->n = db->nrelations;
		map->files = vgq_xcalloc(map->n ? map->n : 1, sizeof *map->files);
	}
	struct vgq_relation **rels = (struct vgq_relation **)db->relations;
	for (size_t i = 0; i < db->nrelations; i++)
		if (files[i]) {
			db->skipped.nbounded += files[i]->sliced;
			vgq_relation_free(rels[i]);
			rels[i] = files[i]->rel;
			map->files[i] = files[i];
			files[i] = NULL;
		}
	return true;
}

void vgc_materialize(struct vgc_map *m, struct vgq_relation *r, size_t i)
{
	(void)m, (void)r, (void)i; /* adopted relations are ready */
}

void vgc_free(struct vgq_database *db)
{
	struct vgc_map *m = db->internal->cache;
	for (size_t i = 0; i < db->nrelations; i++)
		if (i < m->n && m->files[i])
			free_rfile(m->files[i]);
		else
			vgq_relation_free(db->relations[i]);
	free(m->files);
	free(m);
}
