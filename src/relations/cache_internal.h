/* The relations cache's file (cache.h): shared by its writer and reader.
 *
 *   header   struct vgc_header (64 bytes)
 *   texts    every interned text of the database, each [u64 length][bytes, NUL, padding
 *            to 8]; values refer to a text by the file offset of its bytes (0: NULL)
 *   blobs    byte values, each padded to 8
 *   columns  one array per time column and attribute, each aligned to 64 bytes:
 *            from/to int64, open/begin_unknown one byte per tuple, int/uint/double 8
 *            bytes, text a u64 offset, bytes {u64 offset, u64 length}, entity {u64 id,
 *            u32 gen, u32 image, u64 name offset}
 *   directory  the key, the database's counts and warnings, then each relation: its
 *            schema, counts and the {offset, size, checksum} of each column
 *
 * Numbers are the machine's (the header's `endian` word tells another machine's file
 * apart). The header and the directory carry checksums; each column its own, checked
 * when its relation is first used. */
#ifndef VIGIL_RELATIONS_CACHE_INTERNAL_H
#define VIGIL_RELATIONS_CACHE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "relations/columns.h"

#define VGC_MAGIC "VGRELC\0\1"
#define VGC_VERSION 1u
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

/* The checksum of n bytes whose whole 32-byte rows have the sums s (from zero). */
static inline uint64_t vgc_checksum_end(struct vgc_sums s, const void *p, size_t n)
{
	const unsigned char *c = p;
	static const uint64_t start[4] = {1, 2, 3, 4}; /* the lanes' first running sums */
	uint64_t tail = n;
	for (size_t i = n / 32 * 32; i < n; i++)
		tail = tail * 31 + c[i];
	uint64_t h = tail;
	for (int k = 0; k < 4; k++) {
		uint64_t a = start[k] + s.a[k], b = s.rows * start[k] + s.b[k];
		h = vgq_mix(h ^ a) + vgq_mix(b + (uint64_t)k);
	}
	return h;
}

static inline uint64_t vgc_checksum(const void *p, size_t n)
{
	return vgc_checksum_end(vgc_sums_of(p, n / 32 * 32), p, n);
}

/* cache_verify.c: do the n columns' bytes (in the mapping at base) have their written
 * checksums? Checked in pieces on up to vgt_decode_threads() threads, their pages
 * mapped on the way. */
bool vgc_columns_ok(const uint8_t *base, const struct vgc_column *const *cols, size_t n);

/* The size of one value of a column of this type in the file. */
static inline size_t vgc_value_size(enum vgq_type t)
{
	return t == VGQ_BYTES ? 16 : t == VGQ_ENTITY ? 24 : 8;
}

/* Writes the database to `path` (through a temporary file renamed over it). 0, or -1
 * with one line in err (errno kept). */
int vgc_write(const struct vgq_database *db, const void *key, size_t keylen, uint64_t stream_damage,
              const char *path, char *err, size_t errsize);

enum vgc_open_status { VGC_ABSENT, VGC_STALE, VGC_DAMAGED, VGC_OPENED };

/* Maps the cache at `path` if its key is this one: the database with its relations'
 * schemas and counts, the columns of those named in need[] checked and ready, the others
 * made ready by vgc_materialize. `open_damage`: the trace's damage found at open. On
 * VGC_DAMAGED, `why` says what is wrong. */
struct vgq_cache_request;
enum vgc_open_status vgc_open(const char *path, const void *key, size_t keylen,
                              uint64_t open_damage, const struct vgq_cache_request *rq,
                              struct vgq_database **out, char *why, size_t whysize);
/* Makes relation i (r) of a mapped database ready (vgq_database_find calls it). */
struct vgc_map;
void vgc_materialize(struct vgc_map *m, struct vgq_relation *r, size_t i);
/* Frees a mapped database's relations and unmaps it. */
void vgc_free(struct vgq_database *db);

#endif
