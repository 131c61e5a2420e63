/* Derived relations (docs/tquel.md "Derived relations"): what vigil's analyses find in a
 * trace (networks and messages, consistency violations, deadlocks, log events) as
 * historical relations a query ranges over like the primitive ones.
 *
 * An analysis is a provider: the names of the relations it makes and a build function.
 * Providers are registered once at start (src/derived registers vigil's); a database
 * builds a provider's relations the first time a query names one of them (the hook is
 * vgq_database_derived: "build relation R on demand"), reading the trace again through
 * the event source, and keeps them until it is freed. Queries that name no derived
 * relation cost nothing more. */
#ifndef VIGIL_RELATIONS_DERIVED_H
#define VIGIL_RELATIONS_DERIVED_H

#include "relations/relation.h"

struct vgq_derived_ctx;
struct vgq_pool;

/* Some relations of an analysis followed as a trace is written (vigil watch; docs/watch.md
 * "Derived relations live"): a state fed every event of the merged reading in order, and
 * asked at each update for its relations with the tuples that became final appended. */
struct vgq_derived_live {
	const char *const *names; /* those that can be followed, NULL-terminated */
	void *(*start)(struct vgt_trace *t, struct vgq_pool *pool);
	void (*feed)(void *state, const struct vgt_event *ev);
	/* Relation `name` as it is now (kept by the state; NULL while the trace cannot have
	 * it yet): tuples already returned are never changed, new final ones are appended;
	 * with `final` (the trace has ended) every tuple the whole trace has. NULL with one
	 * line in err when it failed (then for good). */
	struct vgq_relation *(*sync)(void *state, const char *name, bool final, char *err,
	                             size_t errsize);
	void (*free)(void *state);
};

struct vgq_derived_provider {
	const char *const *names; /* the relations it makes, NULL-terminated */
	const char *source;       /* what it replaces, for listings: "vigil net split" */
	/* Why `vigil watch` cannot follow it live (one clause, after "cannot be followed
	 * live: "): each analysis here needs the whole trace (docs/tquel.md). */
	const char *not_live;
	/* The relations it can follow live, or NULL (then each is refused with not_live). */
	const struct vgq_derived_live *live;
	/* Whether a trace can have them, from the metadata alone (cheap). NULL: always. */
	bool (*applies)(const struct vgt_trace *t);
	/* Makes every relation of `names` (vgq_derived_new), tuples in the order they
	 * start. 0, or -1 with one line in err (nothing is kept). */
	int (*build)(struct vgq_derived_ctx *c, char *err, size_t errsize);
};

/* Registers a provider (static storage); the same provider twice is kept once. */
void vgq_derived_register(const struct vgq_derived_provider *p);

/* The derived relation `name` of the database's trace, built on first request (every
 * relation of its provider with it). NULL with err[0] == '\0' when no provider makes
 * `name` for this trace; NULL with one line in err when the analysis failed or the
 * database holds part of its trace only (a live or filtered build: the analyses need
 * the whole trace). A primitive relation of the same name wins: this is asked only
 * after vgq_database_find. */
const struct vgq_relation *vgq_database_derived(struct vgq_database *db, const char *name,
                                                char *err, size_t errsize);

/* The derived relation names this database's trace can have, in registration order,
 * leaving out those a primitive relation's name hides. `*names` is malloc'ed. */
size_t vgq_derived_names(const struct vgq_database *db, const char ***names);
/* The derived relations this database's trace can have, without their tuples (kind and
 * attributes only: each provider's build in schema mode, which reads nothing), in
 * registration order, leaving out those a primitive relation's name hides. Listings use
 * it (`vigil relations`); free with vgq_derived_schemas_free. */
size_t vgq_derived_schemas(struct vgq_database *db, struct vgq_relation ***out);
void vgq_derived_schemas_free(struct vgq_relation **rels, size_t n);
/* The i-th name of every registered provider (whatever the trace), NULL past the last:
 * the store's tables of an earlier analysis. */
const char *vgq_derived_registered(size_t i);
/* How many analyses this database read from the relations cache instead of running
 * them (relations/cache_derived.h; `vigil query --stats`: derived_cached). */
size_t vgq_derived_cached(const struct vgq_database *db);
/* What the provider of `name` replaces ("vigil net split"), or NULL if not derived. */
const char *vgq_derived_source(const char *name);

/* The live operations that follow `name` (vigil watch), or NULL when it cannot be followed
 * (not derived, or derived from the whole trace only). */
const struct vgq_derived_live *vgq_derived_live_of(const char *name);
/* Adds to a database vigil watch binds against (made from a sensor description,
 * vgq_database_from_model, or a recording's relations for --replay) the schemas of the
 * derived relations that can be followed live (a watched process records vigil's own
 * vg.net.* events whatever its sensors), unless a relation of the same name is declared:
 * binding needs their schemas only, their tuples come from the live operations. The
 * other analyses are then refused at bind (a watch reads the trace in part), never run. */
void vgq_derived_live_schemas(struct vgq_database *db);
/* How many analyses vgq_database_derived has run or read from the relations cache in
 * this process (`vigil watch --stats`: "analyses": a watch binds without them). */
size_t vgq_derived_analyses(void);

/* ---- for providers ---- */
/* A context over a trace being followed: relations made in it use `pool` (vigil watch's
 * builder's) and the trace's images; vgq_derived_ctx_take hands them over. */
struct vgq_derived_ctx *vgq_derived_ctx_live(struct vgt_trace *t, struct vgq_pool *pool);
/* The relation `name` made in c (the caller owns it from now), or NULL; every other made
 * relation is freed with c. */
struct vgq_relation *vgq_derived_ctx_take(struct vgq_derived_ctx *c, const char *name);
void vgq_derived_ctx_free(struct vgq_derived_ctx *c);
/* The build only makes the relations and their attributes, then returns 0: it reads
 * nothing (vgq_derived_schemas). */
bool vgq_derived_schema_only(const struct vgq_derived_ctx *c);
struct vgt_trace *vgq_derived_trace(struct vgq_derived_ctx *c);
const struct vgq_database *vgq_derived_database(struct vgq_derived_ctx *c);
/* The database's one copy of s (NULL stays NULL). */
const char *vgq_derived_intern(struct vgq_derived_ctx *c, const char *s);
/* A new relation kept by the database once the build succeeds. */
struct vgq_relation *vgq_derived_new(struct vgq_derived_ctx *c, const char *name,
                                     enum vgq_rkind kind);
int vgq_derived_attr(struct vgq_derived_ctx *c, struct vgq_relation *r, const char *name,
                     enum vgq_type type, const char *ref_kind);
/* Adds attributes in order from a table: {name, type, entity kind or NULL}. */
struct vgq_derived_attrdef {
	const char *name;
	enum vgq_type type;
	const char *ref_kind;
};
void vgq_derived_attrs(struct vgq_derived_ctx *c, struct vgq_relation *r,
                       const struct vgq_derived_attrdef *defs, size_t n);
/* Appends a tuple [from, to) (to ignored for event relations): its index. */
size_t vgq_derived_append(struct vgq_relation *r, int64_t from, int64_t to);
/* Tuple t has no value of attribute a (NULL in answers). Only after the relation's last
 * vgq_derived_append. */
void vgq_derived_set_null(struct vgq_relation *r, size_t a, size_t t);
/* The index of the first image of the process (host, pid, generation) in the trace, the
 * image scoping its threads' identities as in OSThread; UINT32_MAX if none. */
uint32_t vgq_derived_process_image(struct vgq_derived_ctx *c, const char *host, int64_t pid,
                                   uint64_t gen);
/* The index of an image of the trace (threads: use the process's first image). */
uint32_t vgq_derived_image_index(struct vgq_derived_ctx *c, const struct vgt_image *img,
                                 bool process);

#endif
