/* Packet summary files of the third format (VGPKSUM3, trace/internal.h struct
 * stream_summary) read and written by the tests on their own, as the format is written
 * down: a header of 8 words (magic, file size, modification time, inode, packets, bitmap
 * words, checksum, position bytes), per packet 8 words and its bitmap words, then the
 * positions: per packet that has any, groups of varints (id, count, length in bytes,
 * then count records of offset and zigzag clock deltas), zero bytes to a whole word.
 * The checksum is FNV-1a's over the words after the header. So a test changes what a
 * summary says (a position moved, removed, a group dropped) and writes it back whole.
 * Static inline functions, included by the tests that use them. */
#ifndef VIGIL_TESTS_QUERY_SUMMARY_FILE_H
#define VIGIL_TESTS_QUERY_SUMMARY_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_io.h"
#include "reader_tracegen.h"

#define SF_MAGIC3 0x334d55534b504756ull
#define SF_MAX_GROUPS 64

struct sf_group {
	uint64_t id, count;
	uint64_t *off, *clock;
};
struct sf_file {
	uint64_t head[8];
	size_t count, per; /* packets, words of an entry */
	uint64_t *entries;
	size_t *ngroups;                     /* by packet */
	struct sf_group (*g)[SF_MAX_GROUPS]; /* by packet */
};

static inline uint64_t sf_varint(const uint8_t **p)
{
	uint64_t x = 0;
	for (unsigned s = 0;; s += 7) {
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return x;
	}
}

static inline void sf_put(uint8_t **p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*(*p)++ = (uint8_t)(v | 0x80);
	*(*p)++ = (uint8_t)v;
}

static inline void sf_free(struct sf_file *f)
{
	for (size_t p = 0; f && p < f->count; p++)
		for (size_t k = 0; k < f->ngroups[p]; k++) {
			free(f->g[p][k].off);
			free(f->g[p][k].clock);
		}
	if (f) {
		free(f->entries);
		free(f->ngroups);
		free(f->g);
		free(f);
	}
}

/* The summary at path (NULL when it is not one of the third format). */
static inline struct sf_file *sf_read(const char *path)
{
	size_t len;
	uint8_t *b = (uint8_t *)vgb_read_file(path, 1 << 28, 0, &len);
	if (!b || len < 64) {
		free(b);
		return NULL;
	}
	struct sf_file *f = calloc(1, sizeof *f);
	memcpy(f->head, b, 64);
	if (f->head[0] != SF_MAGIC3) {
		free(b);
		free(f);
		return NULL;
	}
	f->count = (size_t)f->head[4];
	f->per = 8 + (size_t)f->head[5];
	f->entries = malloc(f->count * f->per * 8 + 8);
	memcpy(f->entries, b + 64, f->count * f->per * 8);
	f->ngroups = calloc(f->count + 1, sizeof *f->ngroups);
	f->g = calloc(f->count + 1, sizeof *f->g);
	const uint8_t *pos = b + 64 + f->count * f->per * 8;
	for (size_t p = 0; p < f->count; p++) {
		const uint8_t *c = pos + f->entries[p * f->per + 7],
		              *end = pos + (p + 1 < f->count ? f->entries[(p + 1) * f->per + 7]
		                                             : f->head[7]);
		while (c < end && f->ngroups[p] < SF_MAX_GROUPS) {
			struct sf_group *g = &f->g[p][f->ngroups[p]++];
			g->id = sf_varint(&c);
			g->count = sf_varint(&c);
			sf_varint(&c); /* the length */
			g->off = malloc((g->count + 1) * 8);
			g->clock = malloc((g->count + 1) * 8);
			uint64_t off = 0, clock = 0;
			for (uint64_t j = 0; j < g->count; j++) {
				off += sf_varint(&c);
				uint64_t z = sf_varint(&c);
				clock += z >> 1 ^ (0 - (z & 1));
				g->off[j] = off;
				g->clock[j] = clock;
			}
		}
	}
	free(b);
	return f;
}

/* f written at path, its positions encoded again, its checksum made to hold. */
static inline void sf_write(const char *path, struct sf_file *f)
{
	size_t cap = 64;
	for (size_t p = 0; p < f->count; p++)
		for (size_t k = 0; k < f->ngroups[p]; k++)
			cap += 30 + 20 * f->g[p][k].count;
	uint8_t *pos = calloc(1, cap), *at = pos;
	for (size_t p = 0; p < f->count; p++) {
		f->entries[p * f->per + 7] = (uint64_t)(at - pos);
		for (size_t k = 0; k < f->ngroups[p]; k++) {
			struct sf_group *g = &f->g[p][k];
			uint8_t *rec = malloc(20 * g->count + 1), *r = rec;
			uint64_t off = 0, clock = 0;
			for (uint64_t j = 0; j < g->count; j++) {
				sf_put(&r, g->off[j] - off);
				uint64_t d = g->clock[j] - clock;
				sf_put(&r, d << 1 ^ (uint64_t)((int64_t)d >> 63));
				off = g->off[j];
				clock = g->clock[j];
			}
			sf_put(&at, g->id);
			sf_put(&at, g->count);
			sf_put(&at, (uint64_t)(r - rec));
			memcpy(at, rec, (size_t)(r - rec));
			at += r - rec;
			free(rec);
		}
	}
	size_t npos = (size_t)(at - pos), posw = (npos + 7) / 8, words = f->count * f->per;
	uint64_t *v = calloc(8 + words + posw, 8);
	f->head[7] = npos;
	memcpy(v + 8, f->entries, words * 8);
	memcpy(v + 8 + words, pos, npos);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 8; i < 8 + words + posw; i++)
		h = (h ^ v[i]) * 1099511628211ull;
	f->head[6] = h;
	memcpy(v, f->head, 64);
	tg_write_file(path, v, (8 + words + posw) * 8);
	free(v);
	free(pos);
}

/* Packet p's group of event id `id` (NULL: none). */
static inline struct sf_group *sf_group_of(struct sf_file *f, size_t p, uint64_t id)
{
	for (size_t k = 0; p < f->count && k < f->ngroups[p]; k++)
		if (f->g[p][k].id == id)
			return &f->g[p][k];
	return NULL;
}

/* Packet p's group of event id `id` dropped (false: none). */
static inline bool sf_drop_group(struct sf_file *f, size_t p, uint64_t id)
{
	struct sf_group *g = sf_group_of(f, p, id);
	if (!g)
		return false;
	free(g->off);
	free(g->clock);
	size_t k = (size_t)(g - f->g[p]);
	memmove(g, g + 1, (f->ngroups[p] - k - 1) * sizeof *g);
	f->ngroups[p]--;
	return true;
}

#endif
