/* The relations cache (docs/query.md "The relations cache"): the columns of a trace's
 * relations, once built, are written beside the trace (TRACE/.vigil-cache, the manifest,
 * and TRACE/.vigil-cache.rel-NAME, one file per relation), or in a cache directory when
 * the trace's directory cannot be written, and later queries over the same trace map
 * them instead of reading the trace again. A query builds (and caches) only the relations
 * it ranges over and those built whatever is named (entity relations); a later query
 * naming others builds those and adds their files.
 *
 * A cache is used only when its key equals the trace's: the vigil executable, every
 * image's metadata and every stream file (path, size, modification and change time,
 * inode); every file carries it. Their directories and the columns of the relations a
 * query ranges over are checked against checksums before anything of them is used; a
 * file that fails is said in one line and rebuilt from the trace. Damage counts are kept
 * as read, so a damaged trace answers from its cache with the same damage report.
 *
 * Columns of numbers and times are mapped (the page cache holds them, not the heap);
 * texts, byte strings and entity references are turned into pointers at open, for the
 * attributes the query names: a query pays for the relations and columns it reads.
 *
 * Environment: VIGIL_CACHE=off (no cache: only the relations the query ranges over are
 * built, from the trace), VIGIL_CACHE_DIR (the cache directory; default
 * $XDG_CACHE_HOME/vigil, else ~/.cache/vigil), VIGIL_CACHE_MIN_EVENTS (traces with fewer
 * events are not cached: building them costs less than a file; default 200000). */
#ifndef VIGIL_RELATIONS_CACHE_H
#define VIGIL_RELATIONS_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "relations/relation.h"

struct vgq_cache_request {
	const char *trace_path; /* the one trace directory the user named */
	/* The relations the statements range over: their columns are checked at open, and
	 * of those only the attributes named here (case-insensitively; all when all_attrs),
	 * so that a query pays for the columns it reads. The others stay unusable. */
	const char *const *need;
	size_t nneed;
	const char *const *attrs;
	size_t nattrs;
	bool all_attrs;
	const char *who; /* prefix of the line said about a damaged cache: "vigil query" */
	/* Time bounds of the statements' selections (vgq_build_options.bounds): used by a
	 * build without a cache (VIGIL_CACHE=off), which keeps nothing for later queries. */
	const struct vgq_time_bound *bounds;
	size_t nbounds;
	const struct vgq_key_cond *keys; /* and key selections (vgq_build_options.keys) */
	size_t nkeys;
};

enum vgq_cache_outcome {
	VGQ_CACHE_OFF,     /* VIGIL_CACHE=off, or no place to keep one */
	VGQ_CACHE_WARM,    /* mapped from a cache */
	VGQ_CACHE_COLD,    /* built from the trace (and written when large enough) */
	VGQ_CACHE_REBUILT, /* a damaged cache was found: built from the trace */
	VGQ_CACHE_ADDED    /* the relations cached mapped, the others built and added */
};

struct vgq_cache_result {
	enum vgq_cache_outcome outcome;
	bool written;      /* the cache was (re)written */
	char path[4096];   /* the cache file used or written ("" if none) */
	uint64_t write_ns; /* of it, writing the cache (monotonic ns; 0: nothing written) */
};

/* The database of trace `t` (opened from rq->trace_path), from its cache when one fits,
 * else built (and the cache written). Never NULL; `res` may be NULL. */
/* The cache directory: VIGIL_CACHE_DIR, else $XDG_CACHE_HOME/vigil, else ~/.cache/vigil;
 * false when none is set (or it does not fit in n). The build's spill file goes there too. */
bool vgq_cache_dir(char *out, size_t n);

struct vgq_database *vgq_database_cached(struct vgt_trace *t, const struct vgq_cache_request *rq,
                                         struct vgq_cache_result *res);

/* Key this process's caches by the build id of the program at path instead of its own
 * object's, so that programs built from the same sources in the same build read and
 * write one cache: the `vigil` front end's. False (and ignored) if path has no build id. */
bool vgq_cache_key_program(const char *path);
/* vgq_cache_key_program of the first of `places` (NULL-terminated paths relative to the
 * folder of the object holding this code: the program, or libvigilquery.so) that has a
 * build id: vigil-full names "vigil" (src/cli/front_end.c); libvigilquery.so "vigil"
 * (a build's bin/) and the way from its installed folder to the installed vigil
 * (src/querylib). False if none has one: the object's own build id keys its caches. */
bool vgq_cache_key_beside(const char *const *places);

/* Bytes of cached columns this process summed against their checksums (the columns an
 * earlier query checked in the same file are not summed again: cache_checked.c). */
uint64_t vgq_cache_checked_bytes(void);
/* Bytes of cached columns this process read into memory of its own instead of using them
 * mapped (cache_copy.c). */
uint64_t vgq_cache_copied_bytes(void);

const char *vgq_cache_outcome_name(enum vgq_cache_outcome o); /* "off", "warm", ... */

#endif
