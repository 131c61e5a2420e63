/* The relations cache of derived relations (cache.h, docs/query.md "The relations
 * cache"): what an analysis built for a query (derived.c) kept in a file beside the
 * relations cache (its path, ".derived-" and the analysis's first relation), so that a
 * later query naming Network or Violation reads it instead of analysing the trace
 * again.
 *
 * Keyed as the relations cache (the executable and every file of the trace) and on the
 * recording's model files (ModelEvent reads them); the whole file checksummed before any
 * of it is used, then its columns used where they lie in a private mapping. Each
 * provider tried is kept with its relations, or with the line its analysis failed with,
 * so a warm query says the same. A damaged file is said in one line, removed, and the
 * analysis run again. */
#ifndef VIGIL_RELATIONS_CACHE_DERIVED_H
#define VIGIL_RELATIONS_CACHE_DERIVED_H

#include <stdbool.h>
#include <stddef.h>

#include "relations/cache_internal.h"
#include "relations/relation.h"

/* Keeps the database's derived relations beside the relations cache at `cache_path`,
 * under `key` (copied), for request rq: its `who` prefixes the line said about a damaged
 * file, and of its relations' text and entity columns those of the attributes it names
 * are made (all when it names no relations or asks for all). */
struct vgq_cache_request;
void vgc_derived_place(struct vgq_database *db, const void *key, size_t keylen,
                       const char *cache_path, const struct vgq_cache_request *rq);

/* The relations of the provider whose first relation is `provider`, as kept: 1 with
 * *made (malloc'ed array, each relation ready and finished) or *error (malloc'ed: the
 * analysis failed with it); 0 if the file has none of it (or no file fits). */
int vgc_derived_take(struct vgq_database *db, const char *provider, struct vgq_relation ***made,
                     size_t *nmade, char **error);

/* Writes provider p's relations the database holds, or its error (NULL: built). Nothing
 * is said if it cannot be written (the next query analyses again). */
struct vgq_derived_provider;
void vgc_derived_save(struct vgq_database *db, const struct vgq_derived_provider *p,
                      const char *error);

/* Before relation r of the database is freed with vgq_relation_free: its columns that
 * lie in a mapping of the cache are let go (unmapped with the rest by vgc_derived_free). */
void vgc_derived_release(struct vgq_database *db, struct vgq_relation *r);

/* Whether the file of derived relations at `path` (a regular file, never followed) was
 * kept for a trace of another relations cache key than `key` (or by another vigil):
 * VGC_STALE; VGC_OPENED if for this key; else VGC_ABSENT or VGC_DAMAGED. Its checksum is
 * not read (vgc_clean_stale). */
enum vgc_open_status vgc_derived_probe(const char *path, const void *key, size_t keylen);

/* Unmaps what was taken: after every derived relation was released and freed. */
void vgc_derived_free(struct vgq_database *db);

#endif
