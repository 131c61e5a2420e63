/* libvigilquery.so (vigilquery.h): traces opened, relations built and TQuel answered by
 * the same code as the CLI's `vigil relations`, `vigil query` and `vigil dump`. */
#define _GNU_SOURCE
#include "querylib/vigilquery.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/event_json.h"
#include "cli/query_need.h"
#ifdef VIGIL_HAVE_DERIVED
#include "derived/derived.h"
#endif
#include "query/engine.h"
#include "query/output.h"
#include "query/selections.h"
#include "relations/cache.h"
#include "relations/relation.h"
#include "tquel/arena.h"
#include "tquel/tquel.h"
#include "trace/source.h"
#include "vigil/vigil.h"

#define EXPORT __attribute__((visibility("default")))

/* A growing text: an open_memstream. */
struct text {
	FILE *f;
	char *buf;
	size_t len;
};

static int text_open(struct text *t)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
	return t->f ? 0 : -1;
}

/* Closes the stream; the text (NULL when empty). */
static char *text_take(struct text *t)
{
	if (t->f)
		fclose(t->f);
	t->f = NULL;
	if (t->buf && !t->len) {
		free(t->buf);
		t->buf = NULL;
	}
	return t->buf;
}

static void set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(char **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}

/* Opens the traces; NULL with *err set. */
static struct vgt_trace *open_traces(const char *const *traces, size_t n, char **err)
{
	char why[512];
	if (!traces || !n) {
		set_err(err, "no trace given");
		return NULL;
	}
	struct vgt_trace *t = vgt_open_readable(traces, n, why, sizeof why);
	if (!t)
		set_err(err, "%s", why);
	return t;
}

static void damage_note(const struct vgq_database *db, const char *trace, FILE *w)
{
	if (db->partial)
		fprintf(w,
		        "%s: %" PRIu64 " damaged place%s; answered from what was readable (vigil "
		        "dump lists the places)\n",
		        trace, db->damage, db->damage == 1 ? "" : "s");
}

/* The object `vigil relations --json` prints for r. */
static void relation_json(const struct vgq_relation *r, FILE *out)
{
	json_t *attrs = json_array();
	for (size_t a = 0; a < r->nattrs; a++) {
		const struct vgq_attr *at = &r->attrs[a];
		json_t *o =
		    json_pack("{s:s, s:s}", "name", at->name, "type", vgq_type_name(at->type));
		if (at->type == VGQ_ENTITY)
			json_object_set_new(o, "entity",
			                    at->ref_kind ? json_string(at->ref_kind) : json_null());
		json_array_append_new(attrs, o);
	}
	json_t *o = json_pack("{s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I}", "name", r->name, "kind",
	                      vgq_rkind_name(r->kind), "attributes", attrs, "tuples",
	                      (json_int_t)r->ntuples, "open", (json_int_t)r->open_at_end,
	                      "unmatched_ends", (json_int_t)r->unmatched_ends, "from",
	                      (json_int_t)r->first, "to", (json_int_t)r->last);
	json_dumpf(o, out, JSON_COMPACT);
	fputc('\n', out);
	json_decref(o);
}

EXPORT int vigil_ql_relations(const char *const *traces, size_t ntraces, char **out,
                              char **warnings, char **err)
{
	*out = *warnings = *err = NULL;
	struct vgt_trace *t = open_traces(traces, ntraces, err);
	if (!t)
		return -1;
	struct text o, w;
	if (text_open(&o) || text_open(&w)) {
		free(text_take(&o));
		vgt_close(t);
		set_err(err, "out of memory");
		return -1;
	}
	struct vgq_database *db = vgq_database_build(t);
	vgq_database_print_warnings(db, "vigil", w.f);
	for (size_t i = 0; i < db->nrelations; i++)
		relation_json(db->relations[i], o.f);
	char why[512];
	const struct vgq_relation *clock = vgq_database_clock(db, 1000000000, 1, why, sizeof why);
	int rc = 0;
	if (clock)
		relation_json(clock, o.f);
	else
		rc = -1, set_err(err, "%s", why);
	damage_note(db, traces[0], w.f);
	vgq_database_free(db);
	vgt_close(t);
	*out = text_take(&o);
	*warnings = text_take(&w);
	if (rc) {
		free(*out);
		*out = NULL;
	} else if (!*out) {
		*out = strdup("");
	}
	return rc;
}

static int emit(void *p, const struct vgq_relation *r)
{
	return vgq_write_relation(p, r, VGQ_FORMAT_JSON, NULL);
}

/* What the build passed over and the cache did, as `vigil query --stats` says it
 * ("events", "cache", "cache_checked_bytes", "skip"). */
static char *stats_json(const struct vgq_database *db, const struct vgq_cache_result *cache)
{
	const struct vgq_skip_stats *k = &db->skipped;
	char *s = NULL;
	if (asprintf(&s,
	             "{\"events\":%" PRIu64 ",\"cache\":\"%s\",\"cache_checked_bytes\":%" PRIu64
	             ",\"skip\":{\"keyed\":%zu,\"bounded\":%zu,"
	             "\"packets\":%" PRIu64 ",\"packets_read\":%" PRIu64 ",\"events\":%" PRIu64
	             ",\"packets_skipped\":%" PRIu64 ",\"events_skipped\":%" PRIu64
	             ",\"packets_positioned\":%" PRIu64 "}}",
	             db->events, vgq_cache_outcome_name(cache->outcome), vgq_cache_checked_bytes(),
	             k->nkeyed, k->nbounded, k->packets, k->packets_read, k->events,
	             k->packets_skipped, k->events_skipped, k->packets_positioned) < 0)
		return NULL;
	return s;
}

#ifndef VIGIL_BIN_FROM_QUERYLIB
#define VIGIL_BIN_FROM_QUERYLIB "../../bin" /* LIBDIR/vigil to BINDIR (cmake/install.cmake) */
#endif

/* The relations cache keyed as `vigil query` keys it: by the build id of the vigil beside
 * this library (a build's bin/) or installed with it, so that Python and the CLI read
 * and write one cache (relations/cache.h). */
static void share_cache(void)
{
	vgq_cache_key_beside(
	    (const char *const[]){"vigil", VIGIL_BIN_FROM_QUERYLIB "/vigil", NULL});
}

/* The database the statements need: through the relations cache for one trace, as
 * `vigil query` opens it (cli/query.c), else built with their selections. */
static struct vgq_database *open_db(struct vgt_trace *t, const char *const *traces, size_t ntraces,
                                    const struct tquel_query *q, struct vgq_cache_result *cache)
{
	*cache = (struct vgq_cache_result){.outcome = VGQ_CACHE_OFF};
	if (ntraces == 1) {
		static pthread_once_t once = PTHREAD_ONCE_INIT;
		pthread_once(&once, share_cache);
		struct vg_query_need need;
		vg_query_need(q, &need);
		struct vgq_cache_request rq;
		vg_query_need_request(&need, traces[0], "vigil", &rq);
		struct vgq_database *db = vgq_database_cached(t, &rq, cache);
		vg_query_need_free(&need);
		return db;
	}
	/* the statements' selections reach the build (query/selections.h) */
	struct tquel_arena *arena = tquel_arena_new();
	struct vgq_selections sel;
	vgq_query_selections(q, arena, &sel);
	struct vgq_build_options bo = {
	    .bounds = sel.bounds, .nbounds = sel.nbounds, .keys = sel.keys, .nkeys = sel.nkeys};
	struct vgq_database *db = vgq_database_build_opts(t, &bo);
	tquel_arena_free(arena);
	return db;
}

EXPORT int vigil_ql_query(const char *const *traces, size_t ntraces, const char *tquel, char **out,
                          char **warnings, char **err)
{
	return vigil_ql_query_stats(traces, ntraces, tquel, out, warnings, err, NULL);
}

EXPORT int vigil_ql_query_stats(const char *const *traces, size_t ntraces, const char *tquel,
                                char **out, char **warnings, char **err, char **stats)
{
	*out = *warnings = *err = NULL;
	if (stats)
		*stats = NULL;
	if (!tquel) {
		set_err(err, "no statements");
		return -1;
	}
	struct tquel_query *q = tquel_parse("<query>", tquel, strlen(tquel));
	struct text e, o, w;
	if (text_open(&e)) {
		tquel_free(q);
		set_err(err, "out of memory");
		return -1;
	}
	if (q->nerrors) {
		tquel_print_errors(q, e.f);
		tquel_free(q);
		*err = text_take(&e);
		return -1;
	}
	struct vgt_trace *t = open_traces(traces, ntraces, err);
	if (!t) {
		free(text_take(&e));
		tquel_free(q);
		return -1;
	}
	int rc = -1;
	if (text_open(&o) == 0 && text_open(&w) == 0) {
#ifdef VIGIL_HAVE_DERIVED
		vgd_register_all(); /* Network, Message...: built when a query names one */
#endif
		struct vgq_cache_result cache;
		struct vgq_database *db = open_db(t, traces, ntraces, q, &cache);
		vgq_database_print_warnings(db, "vigil", w.f);
		if (stats)
			*stats = stats_json(db, &cache);
		struct vgq_options opts = {.tick_ns = 1000000000};
		struct vgq_session *s = vgq_session_new(db, &opts);
		size_t errors = vgq_run(s, q, emit, o.f, e.f);
		rc = errors ? -1 : 0;
		if (ferror(o.f))
			rc = -1, fprintf(e.f, "writing the answer: %s\n", strerror(errno));
		damage_note(db, traces[0], w.f);
		vgq_session_free(s);
		vgq_database_free(db);
		*out = text_take(&o);
		*warnings = text_take(&w);
	} else {
		free(text_take(&o));
		fprintf(e.f, "out of memory\n");
	}
	vgt_close(t);
	tquel_free(q);
	char *msg = text_take(&e);
	if (rc) {
		free(*out);
		*out = NULL;
		*err = msg ? msg : strdup("the query failed");
	} else {
		free(msg);
		if (!*out)
			*out = strdup("");
	}
	return rc;
}

struct vigil_ql_events {
	struct vgt_trace *t;
	struct vgt_merge *m;
	struct vgt_names *names;
};

EXPORT struct vigil_ql_events *vigil_ql_events_open(const char *const *traces, size_t ntraces,
                                                    char **err)
{
	*err = NULL;
	struct vigil_ql_events *e = calloc(1, sizeof *e);
	if (!e) {
		set_err(err, "out of memory");
		return NULL;
	}
	if (!(e->t = open_traces(traces, ntraces, err))) {
		free(e);
		return NULL;
	}
	e->names = vgt_names_new();
	e->m = vgt_merge_open(e->t);
	return e;
}

EXPORT char *vigil_ql_events_next(struct vigil_ql_events *e)
{
	const struct vgt_event *ev = e ? vgt_merge_next(e->m) : NULL;
	if (!ev)
		return NULL;
	vgt_names_observe(e->names, ev);
	json_t *o = vg_event_json(ev, e->names);
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

EXPORT char *vigil_ql_events_close(struct vigil_ql_events *e)
{
	if (!e)
		return NULL;
	struct text w;
	char *notes = NULL;
	if (text_open(&w) == 0) {
		uint64_t damage = vgt_damage_total(e->t);
		if (damage)
			fprintf(w.f, "%" PRIu64 " damaged place%s (vigil dump lists them)\n",
			        damage, damage == 1 ? "" : "s");
		notes = text_take(&w);
	}
	vgt_merge_close(e->m);
	vgt_names_free(e->names);
	vgt_close(e->t);
	free(e);
	return notes;
}

EXPORT void vigil_ql_free(void *p)
{
	free(p);
}

EXPORT const char *vigil_ql_version(void)
{
	return VG_VERSION;
}
