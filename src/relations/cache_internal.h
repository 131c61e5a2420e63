/* The relations cache's files (cache.h): shared by their writers and readers. A cache is
 * a manifest, PATH (TRACE/.vigil-cache, or CACHEDIR/relations-HASH.vgc), and one file per
 * relation built, PATH.rel-NAME, each written whole through a temporary file renamed into
 * place, so that queries naming other relations add files without rewriting any, and two
 * queries writing at once leave one whole file or the other.
 *
 * The manifest: header (struct vgc_header), then its directory: the key, the database's
 * counts (events, first, last, stream damage), the warnings of its pass, and the schema
 * of every relation of the trace (name, kind, attributes; entity relations included).
 *
 * A relation's file:
 *   header   struct vgc_header (64 bytes)
 *   texts    the texts its values name, each [u64 length][bytes, NUL, padding to 8];
 *            values refer to a text by the file offset of its bytes (0: NULL)
 *   blobs    byte values, each padded to 8 (before the column that holds them)
 *   columns  one array per time column and attribute, each aligned to 64 bytes:
 *            from/to int64, open/begin_unknown one byte per tuple, int/uint/double 8
 *            bytes, text a u64 offset, bytes {u64 offset, u64 length}, entity {u64 id,
 *            u32 gen, u32 image, u64 name offset}
 *   directory  the key, the relation's warnings (WaitFor's: said when it is named), the
 *            texts' place and checksum, its schema, counts and the {offset, size,
 *            checksum} of each column
 *
 * Every file carries the key, so a file of an older trace is never taken for this one's
 * (and, once a manifest of a new key is written, it is removed: cache_clean.c).
 * Numbers are the machine's (the header's `endian` word tells another machine's file
 * apart). The header and the directory carry checksums; each column its own, checked
 * before its relation is used. */
#ifndef VIGIL_RELATIONS_CACHE_INTERNAL_H
#define VIGIL_RELATIONS_CACHE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "relations/columns.h"

#define VGC_MAGIC "VGRELC\0\1"     /* the manifest */
#define VGC_MAGIC_REL "VGRELR\0\1" /* a relation's file */
#define VGC_VERSION 2u
#define VGC_ENDIAN 0x01020304u
#define VGC_ALIGN 64u
#define VGC_NULL_TEXT UINT64_MAX /* a directory text that is NULL */

struct vgc_header {
	char magic[8];
	uint32_t version, endian;
	uint64_t file_size, dir_offset, dir_size, dir_sum;
	uint64_t reserved[2];
	uint64_t head_sum; /* of the bytes before it */
};

/* A column in the file: offset 0 means none. */
struct vgc_column {
	uint64_t offset, size, sum;
};

/* A checksum of n bytes (n a multiple of 8 or not): four lanes of running sums of 64-bit
 * words and of those sums (Fletcher's, widened), so a changed, lost or moved word shows.
 * It can be computed in pieces (vgc_sums_of, on several threads) and the pieces' sums
 * combined in order (vgc_sums_then): a lane's running sum a and sum of sums b after m
 * more words with sum S and sum of prefix sums T are a + S and b + m a + T. */
struct vgc_sums {
	uint64_t a[4], b[4];
	uint64_t rows; /* 32-byte rows summed: each lane's word count */
};

/* The sums of n bytes (a multiple of 32) from zero. Lanes in scalars so that the
 * compiler keeps them in registers. */
static inline struct vgc_sums vgc_sums_of(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
	for (size_t i = 0; i + 32 <= n; i += 32) {
		uint64_t w[4];
		memcpy(w, c + i, sizeof w);
		a0 += w[0];
		a1 += w[1];
		a2 += w[2];
		a3 += w[3];
		b0 += a0;
		b1 += a1;
		b2 += a2;
		b3 += a3;
	}
	return (struct vgc_sums){{a0, a1, a2, a3}, {b0, b1, b2, b3}, n / 32};
}

/* The sums of x's bytes followed by y's. */
static inline struct vgc_sums vgc_sums_then(struct vgc_sums x, const struct vgc_sums *y)
{
	for (int k = 0; k < 4; k++) {
		x.b[k] += y->rows * x.a[k] + y->b[k];
		x.a[k] += y->a[k];
	}
	x.rows += y->rows;
	return x;
}

/* The checksum of n bytes whose whole 32-byte rows have the sums s (from zero) and
 * whose last n % 32 bytes are at `tail`. */
static inline uint64_t vgc_checksum_tail(struct vgc_sums s, const void *tail_bytes, size_t n)
{
	const unsigned char *c = tail_bytes;
	static const uint64_t start[4] = {1, 2, 3, 4}; /* the lanes' first running sums */
	uint64_t tail = n;
	for (size_t i = 0; i < n % 32; i++)
		tail = tail * 31 + c[i];
	uint64_t h = tail;
	for (int k = 0; k < 4; k++) {
		uint64_t a = start[k] + s.a[k], b = s.rows * start[k] + s.b[k];
		h = vgq_mix(h ^ a) + vgq_mix(b + (uint64_t)k);
	}
	return h;
}

/* The checksum of the n bytes at p whose whole 32-byte rows have the sums s. */
static inline uint64_t vgc_checksum_end(struct vgc_sums s, const void *p, size_t n)
{
	return vgc_checksum_tail(s, (const unsigned char *)p + n / 32 * 32, n);
}

static inline uint64_t vgc_checksum(const void *p, size_t n)
{
	return vgc_checksum_end(vgc_sums_of(p, n / 32 * 32), p, n);
}

/* cache_verify.c: do the n columns' bytes (in the mapping at base) have their written
 * checksums? Checked in pieces on up to vgt_decode_threads() threads, their pages
 * mapped on the way. */
bool vgc_columns_ok(const uint8_t *base, const struct vgc_column *const *cols, size_t n);
/* The sums of the n bytes at p (a multiple of 32), summed in pieces on up to
 * vgt_decode_threads() threads: vgc_sums_of's. */
struct vgc_sums vgc_sums_threads(const void *p, size_t n);
/* The same columns' pages mapped, not summed (columns checked by an earlier query: a
 * query reading a few values of a column spread over it would fault page by page). */
void vgc_columns_map(const uint8_t *base, const struct vgc_column *const *cols, size_t n);
/* cache_copy.c: the n columns of the file open at fd (mapped at base) read into a new
 * huge-page block (at[c]: where column c is, 64-byte aligned), on up to
 * vgt_decode_threads() threads. False (nothing made) when they are too small to be worth
 * it, too large for half the build's memory budget, when a mapped page's first load is
 * cheap on this machine (measured once; VIGIL_CACHE_COPY=on|off decides instead), or a
 * read fails: the caller then uses the mapping. */
struct vgb_huge_block;
bool vgc_columns_copy(int fd, const uint8_t *base, const struct vgc_column *const *cols, size_t n,
                      struct vgb_huge_block *blk, const uint8_t **at);

/* Whether copying pays (cache_copy.c; seams for tests/query/cache_copy_unit.c): the
 * setting VIGIL_CACHE_COPY (1 "on", 0 "off", -1 none: measured). Measured once per
 * process on the first column of at least VGC_COPY_STRETCHES * VGC_COPY_STRETCH_PAGES
 * pages (more than a page over, for alignment; none: true): those pages mapped with
 * MADV_POPULATE_READ (as vgc_columns_map maps them), then one load a page timed in each
 * stretch, and dear (copy) when even the cheapest stretch took more than 1 us a page:
 * a preemption or an interrupt makes one stretch dearer, never one cheaper. */
#define VGC_COPY_STRETCHES 8
#define VGC_COPY_STRETCH_PAGES 32
int vgc_copy_setting(void);
bool vgc_copy_pays(const uint8_t *base, const struct vgc_column *const *cols, size_t n);
/* The nanoseconds a page the loads of each stretch of the page-aligned pages at p took,
 * timed by clock_ns (the monotonic clock; a test's fake). */
void vgc_copy_sample(const uint8_t *p, size_t page, uint64_t (*clock_ns)(void),
                     uint64_t ns_a_page[VGC_COPY_STRETCHES]);
/* Whether loads of those costs (n stretches) are dear: the cheapest decides. */
bool vgc_copy_dear(const uint64_t *ns_a_page, size_t n);

/* The size of one value of a column of this type in the file. */
static inline size_t vgc_value_size(enum vgq_type t)
{
	return t == VGQ_BYTES ? 16 : t == VGQ_ENTITY ? 24 : 8;
}

enum vgc_open_status { VGC_ABSENT, VGC_STALE, VGC_DAMAGED, VGC_OPENED };

/* ---- texts of a mapped file (cache_read.c): a relation's file and a derived one ---- */

/* The texts of a file mapped at `base`: [texts_at, texts_end) holds each [u64 length]
 * [bytes, NUL, padding to 8]; a value names a text by the file offset of its bytes (0:
 * NULL). Texts the database's pool held already at another address are remapped. */
struct vgc_texts {
	const uint8_t *base;
	uint64_t texts_at, texts_end;
	uint64_t *remap_off; /* sorted */
	const char **remap_to;
	size_t nremap;
};

/* The text at file offset `off` as it lies in the mapping, or NULL if none starts there. */
const char *vgc_text_at(const struct vgc_texts *t, uint64_t off);
/* The database's copy of the text at `off` (after vgc_texts_adopt), or NULL if none. */
const char *vgc_text_of(const struct vgc_texts *t, uint64_t off);
/* Every text into the pool, where it lies (the mapping must outlive the pool): those the
 * pool held already are remapped. False, the pool unchanged, if one is not as laid out. */
bool vgc_texts_adopt(struct vgc_texts *t, struct vgq_pool *pool);
/* Turns a column of n values as written into the relation's: texts (u64 offsets) into
 * pointers, entities ({u64 id, u32 gen, u32 image, u64 name offset}) into references.
 * False if an offset names no text. */
bool vgc_texts_column(const struct vgc_texts *t, const uint64_t *in, size_t n, const char **out);
bool vgc_refs_column(const struct vgc_texts *t, const uint64_t *in, size_t n, struct vgq_ref *out);
void vgc_texts_free(struct vgc_texts *t);

/* Whether a relation's file at `path` (a regular file, never followed) is of another
 * key or another vigil's: VGC_STALE; VGC_OPENED if of this key; else VGC_ABSENT or
 * VGC_DAMAGED (cache_read.c). */
enum vgc_open_status vgc_probe_relation(const char *path, const void *key, size_t keylen);

/* Removes the files beside the manifest at `manifest` (PATH.rel-NAME, PATH.derived-NAME)
 * written under another key than `key`: called once a manifest of a new key is written,
 * so that files of relations no query names again do not stay (cache_clean.c). */
void vgc_clean_stale(const char *manifest, const void *key, size_t keylen);

/* ---- writing (cache_write.c, cache_manifest.c) ---- */

/* A relation's file: PATH.rel-NAME (NAME's bytes other than letters, digits, '_', '-'
 * and '.' as %XX; a long name shortened, with a hash of the whole). */
void vgc_relation_path(const char *manifest, const char *name, char *out, size_t n);

/* One relation to write: its file, and the warnings said when it is named. */
struct vgc_out {
	const struct vgq_relation *rel;
	const char *path;
	char *const *warnings;
	size_t nwarnings;
	bool written; /* set by vgc_write_relations */
};

/* Writes the relations' files on up to `threads` threads (their columns in pieces, each
 * converted, summed and written where the file's layout puts it), each through a
 * temporary file renamed over its path. Those that could not be written are left
 * unwritten (`written` false); 0 if all were, else -1 with errno of the first failure. */
int vgc_write_relations(struct vgc_out *outs, size_t n, const void *key, size_t keylen,
                        unsigned threads);

/* Writes the manifest of a database built from the trace: its counts, the first
 * `nwarnings` of its warnings (those of the pass) and every relation's schema. 0, or -1
 * with errno. */
int vgc_write_manifest(const struct vgq_database *db, size_t nwarnings, const void *key,
                       size_t keylen, uint64_t stream_damage, const char *path);

/* Opens `tmp` for `path` (never following or replacing what is not a regular file);
 * a descriptor, or -1 with errno. */
int vgc_create_tmp(const char *path, char *tmp, size_t tmpsize);

/* ---- reading (cache_manifest.c, cache_read.c) ---- */

/* What a manifest holds: the database's counts and its relations' schemas, as a database
 * whose relations have no tuples (names interned in its pool). */
struct vgc_manifest {
	struct vgq_database *db;
	uint64_t stream_damage;
};
enum vgc_open_status vgc_open_manifest(const char *path, const void *key, size_t keylen,
                                       struct vgc_manifest *out, char *why, size_t whysize);

/* A relation's file, mapped and checked (header, directory, key, name). */
struct vgc_rfile;
enum vgc_open_status vgc_open_relation(const char *path, const char *name, const void *key,
                                       size_t keylen, struct vgc_rfile **out, char *why,
                                       size_t whysize);
/* Its columns checked against their checksums: those of the attributes `rq` names (all
 * if rq is NULL), but those an earlier check of the same file recorded (cache_checked.c).
 * False if one differs. */
struct vgq_cache_request;
bool vgc_rfile_check(struct vgc_rfile *f, const struct vgq_cache_request *rq);
/* The same for a file this process has just written from the relation it is to replace
 * (vgc_write_relations): its columns are those bytes, so none is summed (nor populated:
 * the page cache holds them, the query faults in what it reads). */
void vgc_rfile_written(struct vgc_rfile *f, const struct vgq_cache_request *rq);

/* cache_checked.c: the columns of the relation's file at `rel` (with identity st) an
 * earlier check found whole, as {offset, size, sum}, at most max; 0 if none or no record
 * of this very file. */
struct stat;
size_t vgc_checked_read(const char *rel, const struct stat *st, struct vgc_column *cols,
                        size_t max);
/* Records the n columns checked whole, for the file as it was at st; nothing when its
 * times are within a second of started_ns (the check's start, CLOCK_REALTIME). */
void vgc_checked_write(const char *rel, const struct stat *st, const struct vgc_column *cols,
                       size_t n, int64_t started_ns);
/* Its warnings (said when the relation is named). */
size_t vgc_rfile_warnings(const struct vgc_rfile *f, const char *const **warnings);
void vgc_rfile_close(struct vgc_rfile *f);

/* Puts the checked relations of files[i] (NULL: keep db's own relation i) in db's
 * place i: their texts taken into db's pool (equal texts one pointer), their columns
 * mapped or made pointers. db then owns the files. False (the database unchanged but
 * for the relations already put) if a file's texts or values are not as written: `why`
 * names the file. */
bool vgc_adopt(struct vgq_database *db, struct vgc_rfile **files, char *why, size_t whysize);

/* Makes relation i (r) of a database ready (vgq_database_find calls it): the cache's
 * relations are made ready when adopted, so this checks nothing more. */
struct vgc_map;
void vgc_materialize(struct vgc_map *m, struct vgq_relation *r, size_t i);
/* Frees a database some of whose relations are mapped. */
void vgc_free(struct vgq_database *db);

#endif
