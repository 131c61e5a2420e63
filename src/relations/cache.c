/* The relations cache (cache.h): where it is kept, what it is keyed on, and the
 * choice between mapping it and building the relations from the trace. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relations/cache.h"
#include "relations/cache_derived.h"
#include "relations/cache_internal.h"

#define MIN_EVENTS_DEFAULT 200000u

/* ---- the key: the executable and every file the relations were built from ---- */

struct key {
	uint8_t *p;
	size_t n, cap;
	bool stable; /* every stream's size is the one read: nothing grew meanwhile */
};

static void key_add(struct key *k, const void *p, size_t n)
{
	if (k->n + n > k->cap) {
		k->cap = (k->n + n) * 2 + 256;
		k->p = vgq_xrealloc(k->p, k->cap, 1);
	}
	memcpy(k->p + k->n, p, n);
	k->n += n;
}

/* A file's path and identity (size, times, inode); its size, or -1 if it is gone. */
static int64_t key_file(struct key *k, const char *path)
{
	key_add(k, path, strlen(path) + 1);
	struct stat st;
	int64_t words[7] = {-1};
	if (stat(path, &st) == 0) {
		int64_t w[7] = {(int64_t)st.st_size,         (int64_t)st.st_mtim.tv_sec,
		                (int64_t)st.st_mtim.tv_nsec, (int64_t)st.st_ctim.tv_sec,
		                (int64_t)st.st_ctim.tv_nsec, (int64_t)st.st_ino,
		                (int64_t)st.st_dev};
		memcpy(words, w, sizeof words);
	}
	key_add(k, words, sizeof words);
	return words[0];
}

static void make_key(struct key *k, const struct vgt_trace *t)
{
	static const char tag[] = "vigil relations cache v1";
	key_add(k, tag, sizeof tag);
	k->stable = key_file(k, "/proc/self/exe") >= 0; /* another vigil may build otherwise */
	char path[4200];
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		snprintf(path, sizeof path, "%s/metadata", vgt_image_at(t, i)->path);
		key_file(k, path);
	}
	for (size_t i = 0; i < vgt_stream_count(t); i++) {
		const struct vgt_stream *s = vgt_stream_at(t, i);
		if (key_file(k, s->path) != (int64_t)s->file_size)
			k->stable = false;
	}
}

/* ---- where ---- */

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* TRACE/.vigil-cache: a dot file, which trace readers pass over. */
static bool beside_path(const char *trace, char *out, size_t n)
{
	return is_dir(trace) && snprintf(out, n, "%s/.vigil-cache", trace) < (int)n;
}

static int make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			int rc = mkdir(path, 0700);
			*p = '/';
			if (rc < 0 && errno != EEXIST)
				return -1;
		}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* CACHEDIR/relations-HASH.vgc, HASH of the trace's real path. */
static bool dir_path(const char *trace, bool create, char *out, size_t n)
{
	char dir[4096];
	const char *env = getenv("VIGIL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (env && *env)
		snprintf(dir, sizeof dir, "%s", env);
	else if (xdg && *xdg)
		snprintf(dir, sizeof dir, "%s/vigil", xdg);
	else if (home && *home)
		snprintf(dir, sizeof dir, "%s/.cache/vigil", home);
	else
		return false;
	char *real = realpath(trace, NULL);
	if (!real)
		return false;
	uint64_t h = 1469598103934665603ull;
	for (const char *c = real; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	free(real);
	if (create && make_dirs(dir) < 0)
		return false;
	return snprintf(out, n, "%s/relations-%016llx.vgc", dir, (unsigned long long)h) < (int)n;
}

static uint64_t min_events(void)
{
	const char *e = getenv("VIGIL_CACHE_MIN_EVENTS");
	char *end;
	if (!e || !*e)
		return MIN_EVENTS_DEFAULT;
	unsigned long long v = strtoull(e, &end, 10);
	return *end ? MIN_EVENTS_DEFAULT : v;
}

/* Writes beside the trace, else (that directory cannot be written) in the cache
 * directory. */
static bool save(const struct vgq_database *db, const struct key *k, uint64_t stream_damage,
                 const char *trace, struct vgq_cache_result *res)
{
	char err[512], path[4096];
	if (beside_path(trace, path, sizeof path)) {
		if (vgc_write(db, k->p, k->n, stream_damage, path, err, sizeof err) == 0) {
			snprintf(res->path, sizeof res->path, "%s", path);
			return true;
		}
		if (errno != EACCES && errno != EROFS && errno != EPERM)
			return false;
	}
	if (dir_path(trace, true, path, sizeof path) &&
	    vgc_write(db, k->p, k->n, stream_damage, path, err, sizeof err) == 0) {
		snprintf(res->path, sizeof res->path, "%s", path);
		return true;
	}
	return false;
}

struct vgq_database *vgq_database_cached(struct vgt_trace *t, const struct vgq_cache_request *rq,
                                         struct vgq_cache_result *res)
{
	struct vgq_cache_result ignored;
	res = res ? res : &ignored;
	*res = (struct vgq_cache_result){.outcome = VGQ_CACHE_OFF};
	const char *env = getenv("VIGIL_CACHE");
	if (env && !strcmp(env, "off")) { /* nothing to keep: only what the query ranges over */
		struct vgq_build_options o = {.need = rq->need,
		                              .nneed = rq->nneed,
		                              .bounds = rq->bounds,
		                              .nbounds = rq->nbounds,
		                              .keys = rq->keys,
		                              .nkeys = rq->nkeys};
		return vgq_database_build_opts(t, rq->need || rq->bounds || rq->keys ? &o : NULL);
	}
	struct key k = {0};
	make_key(&k, t);
	uint64_t open_damage = vgt_damage_total(t);
	char paths[2][4096];
	size_t npaths = 0;
	if (beside_path(rq->trace_path, paths[npaths], sizeof paths[npaths]))
		npaths++;
	if (dir_path(rq->trace_path, false, paths[npaths], sizeof paths[npaths]))
		npaths++;
	bool rebuilt = false;
	for (size_t i = 0; i < npaths; i++) {
		struct vgq_database *db;
		char why[256];
		switch (vgc_open(paths[i], k.p, k.n, open_damage, rq, &db, why, sizeof why)) {
		case VGC_OPENED:
			/* the cache holds relations of the whole trace: derived relations
			 * (derived.c) are read from the same trace when a query names one */
			db->internal->trace = t;
			db->internal->whole_trace = true;
			res->outcome = VGQ_CACHE_WARM;
			snprintf(res->path, sizeof res->path, "%s", paths[i]);
			vgc_derived_place(db, k.p, k.n, paths[i], rq->who);
			free(k.p);
			return db;
		case VGC_DAMAGED:
			fprintf(stderr,
			        "%s: the relations cache %s is damaged (%s): rebuilt from the "
			        "trace\n",
			        rq->who, paths[i], why);
			unlink(paths[i]);
			rebuilt = true;
			break;
		case VGC_ABSENT:
		case VGC_STALE:
			break;
		}
	}
	struct vgq_database *db = vgq_database_build(t);
	res->outcome = rebuilt ? VGQ_CACHE_REBUILT : VGQ_CACHE_COLD;
	/* a damaged trace is cached with its damage, so it answers with the same report */
	uint64_t stream_damage = vgt_damage_total(t) - open_damage;
	if (k.stable && db->events >= min_events())
		res->written = save(db, &k, stream_damage, rq->trace_path, res);
	if (res->written) /* derived relations beside it, when a query names one */
		vgc_derived_place(db, k.p, k.n, res->path, rq->who);
	free(k.p);
	return db;
}

const char *vgq_cache_outcome_name(enum vgq_cache_outcome o)
{
	static const char *const names[] = {"off", "warm", "cold", "rebuilt"};
	return (unsigned)o < 4 ? names[o] : "?";
}
