/* Maps the relations cache's file (cache_internal.h): the header and directory
 * are checked at open, each relation's columns when it is first used (those a query
 * ranges over at open), so that nothing of a damaged file is ever used. */
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
#include "relations/cache_internal.h"

/* A bytes column's values lie in [blobs_at, offset), with their own checksum. */
struct acolumn {
	struct vgc_column c;
	uint64_t blobs_at, blobs_sum;
};

struct rinfo {
	struct vgc_column from, to, open, begin_unknown;
	struct acolumn *attrs;
	bool ready;
	bool *made; /* per attribute: its column was made (a pointer column to free) */
};

struct vgc_map {
	const uint8_t *base;
	size_t size;
	uint64_t texts_at, texts_end;
	struct rinfo *rels; /* in the order of db->relations */
	char path[4096];
};

/* ---- reading the directory, every read bounded ---- */

struct cursor {
	const struct vgc_map *m;
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

/* An interned text of the file by the offset of its bytes, or NULL if it is none. */
static const char *text_at(const struct vgc_map *m, uint64_t off)
{
	if (off < m->texts_at + 8 || off >= m->texts_end || off % 8)
		return NULL;
	uint64_t len;
	memcpy(&len, m->base + off - 8, 8);
	if (len >= m->texts_end - off || m->base[off + len])
		return NULL;
	return (const char *)m->base + off;
}

static const char *get_text(struct cursor *c)
{
	uint64_t w = get_u64(c);
	if (c->bad || w == VGC_NULL_TEXT)
		return NULL;
	if (w & 1) {
		const char *s = text_at(c->m, w >> 1);
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

static void read_relation(struct cursor *c, struct vgq_relation *r, struct rinfo *ri,
                          uint64_t dir_at)
{
	r->name = get_text(c);
	uint64_t kind = get_u64(c), nattrs = get_u64(c);
	if (!c->bad && (!r->name || kind > VGQ_REL_ENTITY || nattrs > 100000)) {
		c->bad = "a relation's schema is not one";
		return;
	}
	r->kind = (enum vgq_rkind)kind;
	struct vgq_attr *attrs = vgq_xcalloc(nattrs, sizeof *attrs);
	r->attrs = attrs;
	r->cols = vgq_xcalloc(nattrs, sizeof *r->cols);
	ri->attrs = vgq_xcalloc(nattrs, sizeof *ri->attrs);
	r->nattrs = nattrs;
	for (size_t a = 0; a < nattrs && !c->bad; a++) {
		attrs[a].name = get_text(c);
		uint64_t type = get_u64(c);
		attrs[a].ref_kind = get_text(c);
		if (!c->bad && (!attrs[a].name || type > VGQ_ENTITY))
			c->bad = "an attribute's schema is not one";
		attrs[a].type = (enum vgq_type)type;
	}
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

static void free_relation(struct vgq_relation *r, const struct rinfo *ri)
{
	for (size_t a = 0; a < r->nattrs; a++) {
		enum vgq_type t = r->attrs[a].type;
		if (ri->made && ri->made[a] &&
		    (t == VGQ_STRING || t == VGQ_BYTES || t == VGQ_ENTITY))
			free(r->cols[a].s);
	}
	free(r->cols);
	free((void *)r->attrs);
	free(ri->attrs);
	free(ri->made);
	free(r);
}

static void unmap(struct vgc_map *m)
{
	if (m->base)
		munmap((void *)m->base, m->size);
	free(m->rels);
	free(m);
}

void vgc_free(struct vgq_database *db)
{
	struct vgc_map *m = db->internal->cache;
	for (size_t i = 0; i < db->nrelations; i++)
		free_relation(db->relations[i], &m->rels[i]);
	unmap(m);
}

/* ---- columns: checked, then mapped or turned into pointers ---- */

static const void *column_data(const struct vgc_map *m, const struct vgc_column *c)
{
	if (!c->offset)
		return NULL;
	return m->base + c->offset; /* its pages mapped when it was checked */
}

/* Texts, bytes and entities as the relation's pointers; false if an offset is wrong. */
static bool fix_column(const struct vgc_map *m, struct vgq_relation *r, size_t a,
                       const struct acolumn *ac)
{
	const uint64_t *in = column_data(m, &ac->c);
	size_t n = r->ntuples;
	union vgq_column *col = &r->cols[a];
	switch (r->attrs[a].type) {
	case VGQ_STRING: {
		col->s = vgq_xcalloc(n ? n : 1, sizeof *col->s);
		uint64_t last = 0; /* texts repeat: the last one found is kept */
		const char *text = NULL;
		for (size_t i = 0; i < n; i++) {
			if (in[i] && in[i] != last && !(text = text_at(m, last = in[i])))
				return false;
			col->s[i] = in[i] ? text : NULL;
		}
		return true;
	}
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
		for (size_t i = 0; i < n; i++) {
			const uint64_t *v = in + 3 * i;
			const char *name = v[2] ? text_at(m, v[2]) : NULL;
			if (v[2] && !name)
				return false;
			col->r[i] =
			    (struct vgq_ref){v[0], (uint32_t)v[1], (uint32_t)(v[1] >> 32), name};
		}
		return true;
	default:
		col->i = (int64_t *)in;
		return true;
	}
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

/* Relation i ready to use, its attributes those `rq` names (all if rq is NULL); false
 * (the relation left with no tuples) if its columns are not as written. */
static bool materialize(struct vgc_map *m, struct vgq_relation *r, size_t i,
                        const struct vgq_cache_request *rq)
{
	struct rinfo *ri = &m->rels[i];
	if (ri->ready)
		return true;
	ri->ready = true;
	ri->made = vgq_xcalloc(r->nattrs, sizeof *ri->made);
	const struct vgc_column *check[4 + r->nattrs];
	const struct vgc_column *times[] = {&ri->from, &ri->to, &ri->open, &ri->begin_unknown};
	size_t ncheck = 0;
	for (size_t k = 0; k < 4; k++)
		if (times[k]->offset)
			check[ncheck++] = times[k];
	for (size_t a = 0; a < r->nattrs; a++)
		if (wanted(rq, r->attrs[a].name) && ri->attrs[a].c.offset)
			check[ncheck++] = &ri->attrs[a].c;
	bool ok = vgc_columns_ok(m->base, check, ncheck);
	r->from = (int64_t *)column_data(m, &ri->from);
	r->to = (int64_t *)column_data(m, &ri->to);
	r->open = (bool *)column_data(m, &ri->open);
	r->begin_unknown = (bool *)column_data(m, &ri->begin_unknown);
	for (size_t a = 0; ok && a < r->nattrs; a++)
		if (wanted(rq, r->attrs[a].name)) {
			ri->made[a] = true;
			ok = fix_column(m, r, a, &ri->attrs[a]);
		}
	if (!ok)
		r->ntuples = 0;
	return ok;
}

void vgc_materialize(struct vgc_map *m, struct vgq_relation *r, size_t i)
{
	if (materialize(m, r, i, NULL))
		return;
	/* Only a relation no statement ranged over gets here (those are checked at open):
	 * its answer would be wrong, so none is given. */
	fprintf(stderr,
	        "vigil: the relations cache %s is damaged (relation %s): removed; run the "
	        "command again to rebuild it\n",
	        m->path, r->name);
	unlink(m->path);
	exit(2);
}

static enum vgc_open_status damaged(char *why, size_t whysize, const char *what)
{
	snprintf(why, whysize, "%s", what);
	return VGC_DAMAGED;
}

static const char *check_header(const struct vgc_map *m, struct vgc_header *h)
{
	if (m->size < sizeof *h)
		return "shorter than its header";
	memcpy(h, m->base, sizeof *h);
	if (memcmp(h->magic, VGC_MAGIC, sizeof h->magic))
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

static bool is_needed(const char *name, const struct vgq_cache_request *rq)
{
	for (size_t i = 0; i < rq->nneed; i++)
		if (!strcasecmp(rq->need[i], name))
			return true;
	return false;
}

enum vgc_open_status vgc_open(const char *path, const void *key, size_t keylen,
                              uint64_t open_damage, const struct vgq_cache_request *rq,
                              struct vgq_database **out, char *why, size_t whysize)
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
	struct vgc_map *m = vgq_xcalloc(1, sizeof *m);
	snprintf(m->path, sizeof m->path, "%s", path);
	m->size = (size_t)st.st_size;
	void *base = mmap(NULL, m->size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		free(m);
		return VGC_ABSENT;
	}
	m->base = base;
	struct vgc_header h;
	const char *bad = check_header(m, &h);
	if (bad) {
		unmap(m);
		return damaged(why, whysize, bad);
	}
	if (h.version != VGC_VERSION || h.endian != VGC_ENDIAN) {
		unmap(m);
		return VGC_STALE;
	}
	struct cursor c = {.m = m, .p = m->base + h.dir_offset, .n = h.dir_size};
	uint64_t klen = get_u64(&c);
	const void *k = get_raw(&c, klen);
	if (!c.bad && (klen != keylen || memcmp(k, key, keylen))) {
		unmap(m);
		return VGC_STALE;
	}
	struct vgq_database *db = vgq_xcalloc(1, sizeof *db);
	db->internal = vgq_xcalloc(1, sizeof *db->internal);
	db->internal->pool = vgq_pool_new();
	db->internal->cache = m;
	db->events = get_u64(&c);
	db->first = (int64_t)get_u64(&c);
	db->last = (int64_t)get_u64(&c);
	db->damage = open_damage + get_u64(&c);
	db->partial = db->damage > 0;
	m->texts_at = get_u64(&c);
	uint64_t texts_size = get_u64(&c);
	if (!c.bad && (m->texts_at != sizeof h || texts_size > h.dir_offset - m->texts_at))
		c.bad = "its texts are out of place";
	m->texts_end = c.bad ? 0 : m->texts_at + texts_size;
	uint64_t texts_sum = get_u64(&c), sum = 0;
	uint64_t nwarnings = get_u64(&c);
	if (!c.bad && nwarnings > h.dir_size)
		c.bad = "its warnings are not counted right";
	db->warnings = vgq_xcalloc(c.bad ? 1 : nwarnings, sizeof *db->warnings);
	for (size_t i = 0; i < nwarnings && !c.bad; i++) {
		const char *w = get_text(&c);
		db->warnings[db->nwarnings++] = w ? strdup(w) : strdup("");
	}
	/* every interned text, so that equal texts keep one pointer */
	for (uint64_t at = m->texts_at; !c.bad && at < m->texts_end;) {
		const char *s = text_at(m, at + 8);
		if (!s) {
			c.bad = "its texts are not as written";
			break;
		}
		size_t len = strlen(s);
		vgq_pool_adopt(db->internal->pool, s, len);
		sum = sum * 0x100000001B3ull + vgc_checksum(s, len + 1);
		at += 8 + ((len + 1 + 7) & ~(size_t)7);
	}
	if (!c.bad && sum != texts_sum)
		c.bad = "its texts' checksum differs";
	uint64_t nrel = get_u64(&c);
	if (!c.bad && nrel > h.dir_size)
		c.bad = "its relations are not counted right";
	nrel = c.bad ? 0 : nrel;
	struct vgq_relation **rels = vgq_xcalloc(nrel ? nrel : 1, sizeof *rels);
	m->rels = vgq_xcalloc(nrel ? nrel : 1, sizeof *m->rels);
	db->relations = rels;
	for (size_t i = 0; i < nrel && !c.bad; i++) {
		rels[i] = vgq_xcalloc(1, sizeof *rels[i]);
		db->nrelations = i + 1;
		read_relation(&c, rels[i], &m->rels[i], h.dir_offset);
	}
	for (size_t i = 0; i < db->nrelations && !c.bad; i++)
		if (is_needed(rels[i]->name, rq) && !materialize(m, rels[i], i, rq))
			c.bad = "a column's checksum differs";
	if (c.bad) {
		vgq_database_free(db);
		return damaged(why, whysize, c.bad);
	}
	*out = db;
	return VGC_OPENED;
}
