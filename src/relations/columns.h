/* Making relations: the database's memory (interned strings, byte copies), column
 * storage, and the identity-keyed table used to pair tuples. The builder uses it, and so
 * do the rooms that make relations of their own: the engine (results, `retrieve into`)
 * and the update network of live queries (its relation copies). */
#ifndef VIGIL_RELATIONS_COLUMNS_H
#define VIGIL_RELATIONS_COLUMNS_H

#include "relations/relation.h"

/* What a database owns besides its relations. */
struct vgq_db_internal {
	struct vgq_pool *pool;
	struct vgq_relation **clocks; /* made by vgq_database_clock */
	int64_t *clock_ticks;         /* the base tick of each */
	size_t nclocks;
	bool has_clock_origin; /* vgq_database_set_clock_origin */
	int64_t clock_origin;
	struct vgc_map *cache; /* a database mapped from the relations cache, or NULL */
	/* Derived relations (derived.c): the trace they are read from (NULL: none,
	 * or the database holds part of it), what is built, and the providers tried. */
	struct vgt_trace *trace;
	bool whole_trace;
	struct vgq_relation **derived;
	size_t nderived;
	struct vgq_derived_try *tried;
	size_t ntried;
	struct vgc_derived *derived_cache; /* where they are cached (cache_derived.c), or NULL */
	/* A database built from a trace (build.c) or from the relations cache's manifest: per
	 * relation, whether it is built only when a query names it (its event types' relation;
	 * vgq_build_options.need), and how many of the warnings are the pass's (the rest:
	 * the derived WaitFor's). NULL / 0 otherwise. */
	bool *by_need;
	size_t nwarnings_pass;
};

/* Mixes all bits of h into all bits (splitmix64's finalizer): tables index by low bits. */
static inline uint64_t vgq_mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/* Frees the derived relations (derived.c). */
void vgq_derived_free(struct vgq_database *db);

/* ---- memory: pool.c ---- */
struct vgq_pool;
struct vgq_pool *vgq_pool_new(void);
void vgq_pool_free(struct vgq_pool *p);
/* The one copy of this text in the pool (NUL-terminated; len excludes the NUL). */
const char *vgq_pool_intern(struct vgq_pool *p, const char *s, size_t len);
/* The interned copy of this text, or NULL. */
const char *vgq_pool_find(const struct vgq_pool *p, const char *s, size_t len);
const uint8_t *vgq_pool_bytes(struct vgq_pool *p, const uint8_t *b, size_t len);
/* Adds a text that lives elsewhere (NUL-terminated, as long as the pool) without copying
 * it; a text already in the pool keeps its first copy. */
void vgq_pool_adopt(struct vgq_pool *p, const char *s, size_t len);
/* Moves every text and byte copy of `from` into p and frees `from`: its texts stay
 * where they are; those p already held keep p's copy. Returns how many texts that was
 * (values pointing at them must be looked up again with vgq_pool_find). */
size_t vgq_pool_absorb(struct vgq_pool *p, struct vgq_pool *from);
/* Calls fn on every interned text, and their count. */
void vgq_pool_each(const struct vgq_pool *p, void (*fn)(void *arg, const char *s, size_t len),
                   void *arg);
size_t vgq_pool_count(const struct vgq_pool *p);

#include "base/alloc.h" /* checked allocation: the base room's */
#define vgq_xcalloc vgb_xcalloc
#define vgq_xrealloc vgb_xrealloc

/* ---- relations: store.c ---- */
struct vgq_relation *vgq_relation_new(const char *name, enum vgq_rkind kind);
void vgq_relation_free(struct vgq_relation *r);
/* Adds an attribute (only before the first tuple); returns its index. */
int vgq_relation_add_attr(struct vgq_relation *r, const char *name, enum vgq_type type,
                          const char *ref_kind);
/* The bytes of one value of this type in a column. */
size_t vgq_value_size(enum vgq_type t);
/* Appends a tuple with all attributes zero (NULL strings): returns its index. */
size_t vgq_relation_append(struct vgq_relation *r, int64_t from);
/* Makes a relation hold n tuples, all zero (closed, NULL strings, no begin_unknown), to be
 * filled in place; only the n tuples are cleared, not the capacity past them. */
void vgq_relation_resize(struct vgq_relation *r, size_t n);
/* The same, but the attributes' values are left unset: the caller writes every one of
 * the n tuples' (a result's store: the columns are then written once, by its workers). */
void vgq_relation_resize_unset(struct vgq_relation *r, size_t n);
/* Makes an event (or interval) relation hold n tuples (n at least its tuples): its values
 * kept, those past them left for the caller to write, every one (`to` and `open` too;
 * nothing is zeroed: the columns' pages are first touched by the caller's writes). */
void vgq_relation_reserve(struct vgq_relation *r, size_t n);
/* vgq_relation_reserve in two steps, for columns filled one by one on threads, each
 * column's pages taken only when it is filled (the memory of columns filled before, given
 * back, serves the next): `from` (c = -1) and each attribute c made to hold n tuples by
 * vgq_relation_reserve_column (calls for one relation must not run at once), then the
 * other columns and the count by vgq_relation_reserve_rest. */
void vgq_relation_reserve_column(struct vgq_relation *r, long c, size_t n);
void vgq_relation_reserve_rest(struct vgq_relation *r, size_t n);
/* Gives the columns (and tuples) of event (or interval, no begin_unknown) relation `from`
 * to `to`, of the same schema, whose own are freed; `from` is left with none. */
void vgq_relation_take_columns(struct vgq_relation *to, struct vgq_relation *from);
/* Frees column c of r (-1: `from`, else attribute c) once its values were copied
 * elsewhere (a piece merged column by column); r is then only to be freed. Calls for one
 * relation must not run at once. */
void vgq_relation_drop_column(struct vgq_relation *r, long c);
/* Flags tuple t (< ntuples) of an interval relation as begin_unknown, making the column
 * on first use. */
void vgq_relation_set_begin_unknown(struct vgq_relation *r, size_t t);
/* Gives every open tuple `to` = end, and computes the time span. */
void vgq_relation_finish(struct vgq_relation *r, int64_t end);

/* ---- identity table: keys.c ---- */
/* Maps a key of four words to a tuple index. */
struct vgq_key {
	uintptr_t rel;
	uint64_t image, id, gen;
};
struct vgq_keymap;
struct vgq_keymap *vgq_keymap_new(void);
void vgq_keymap_free(struct vgq_keymap *m);
/* The slot of the key's value (SIZE_MAX when absent: store into it to add). */
size_t *vgq_keymap_slot(struct vgq_keymap *m, const struct vgq_key *k);

#endif
