/* The registry of derived relations and their lazy building (relations/derived.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "relations/cache_derived.h"
#include "relations/columns.h"
#include "relations/derived.h"

#define MAX_PROVIDERS 16

static const struct vgq_derived_provider *providers[MAX_PROVIDERS];
static size_t nproviders;
static size_t analyses; /* vgq_derived_analyses */

/* One provider tried by a database: built, or failed with this line (said again on
 * every later request, so that each query gets the same answer). */
struct vgq_derived_try {
	const struct vgq_derived_provider *p;
	char *error; /* NULL: built */
};

struct vgq_derived_ctx {
	struct vgq_database *db;
	bool schema_only;
	struct vgq_relation **made;
	size_t nmade;
};

void vgq_derived_register(const struct vgq_derived_provider *p)
{
	for (size_t i = 0; i < nproviders; i++)
		if (providers[i] == p)
			return;
	if (nproviders < MAX_PROVIDERS)
		providers[nproviders++] = p;
}

static const struct vgq_derived_provider *provider_of(const char *name, const char **exact)
{
	for (size_t i = 0; i < nproviders; i++)
		for (const char *const *n = providers[i]->names; *n; n++)
			if (!strcasecmp(*n, name)) {
				if (exact)
					*exact = *n;
				return providers[i];
			}
	return NULL;
}

const char *vgq_derived_source(const char *name)
{
	const struct vgq_derived_provider *p = provider_of(name, NULL);
	return p ? p->source : NULL;
}

const char *vgq_derived_registered(size_t i)
{
	for (size_t p = 0; p < nproviders; p++)
		for (const char *const *n = providers[p]->names; *n; n++)
			if (i-- == 0)
				return *n;
	return NULL;
}

static bool applies(const struct vgq_database *db, const struct vgq_derived_provider *p)
{
	const struct vgt_trace *t = db->internal->trace;
	return t && (!p->applies || p->applies(t));
}

size_t vgq_derived_names(const struct vgq_database *db, const char ***names)
{
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < nproviders; i++)
		for (const char *const *nm = providers[i]->names; *nm; nm++)
			cap++;
	*names = calloc(cap + 1, sizeof **names);
	if (!*names)
		return 0;
	for (size_t i = 0; i < nproviders; i++) {
		if (!applies(db, providers[i]))
			continue;
		for (const char *const *nm = providers[i]->names; *nm; nm++)
			if (!vgq_database_find(db, *nm))
				(*names)[n++] = *nm;
	}
	return n;
}

/* Tuples in the order they start (equal starts: the order made): a stable sort of a
 * permutation, then every column permuted. */
static const int64_t *sort_from;
static int by_from(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (sort_from[x] != sort_from[y])
		return sort_from[x] < sort_from[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void permute(void *col, size_t size, const size_t *perm, size_t n)
{
	if (!col)
		return;
	char *copy = vgq_xcalloc(n ? n : 1, size);
	for (size_t i = 0; i < n; i++)
		memcpy(copy + i * size, (char *)col + perm[i] * size, size);
	memcpy(col, copy, n * size);
	free(copy);
}

static void sort_by_start(struct vgq_relation *r)
{
	size_t n = r->ntuples;
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = r->from[i - 1] <= r->from[i];
	if (sorted)
		return;
	size_t *perm = vgq_xcalloc(n, sizeof *perm);
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	sort_from = r->from;
	qsort(perm, n, sizeof *perm, by_from);
	permute(r->from, sizeof *r->from, perm, n);
	permute(r->to, sizeof *r->to, perm, n);
	permute(r->open, sizeof *r->open, perm, n);
	for (size_t a = 0; a < r->nattrs; a++) {
		permute(r->cols[a].i, vgq_value_size(r->attrs[a].type), perm, n);
		if (r->nulls)
			permute(r->nulls[a], 1, perm, n);
	}
	free(perm);
}

static void keep_error(struct vgq_db_internal *in, const struct vgq_derived_provider *p,
                       const char *error)
{
	in->tried = vgq_xrealloc(in->tried, in->ntried + 1, sizeof *in->tried);
	in->tried[in->ntried++] = (struct vgq_derived_try){
	    p, error ? memcpy(vgq_xcalloc(strlen(error) + 1, 1), error, strlen(error)) : NULL};
}

static const struct vgq_relation *find_built(const struct vgq_db_internal *in, const char *name)
{
	for (size_t i = 0; i < in->nderived; i++)
		if (!strcasecmp(in->derived[i]->name, name))
			return in->derived[i];
	return NULL;
}

/* The provider's relations (or its error) from the relations cache (cache_derived.h):
 * true if found there, then kept as if built now. */
static bool take_cached(struct vgq_database *db, const struct vgq_derived_provider *p, char *err,
                        size_t errsize)
{
	struct vgq_db_internal *in = db->internal;
	struct vgq_relation **made;
	size_t nmade;
	char *error;
	if (!vgc_derived_take(db, p->names[0], &made, &nmade, &error))
		return false;
	if (error)
		snprintf(err, errsize, "%s", error);
	keep_error(in, p, error);
	free(error);
	in->derived = vgq_xrealloc(in->derived, in->nderived + nmade, sizeof *in->derived);
	for (size_t i = 0; i < nmade; i++)
		in->derived[in->nderived++] = made[i];
	free(made);
	return true;
}

const struct vgq_relation *vgq_database_derived(struct vgq_database *db, const char *name,
                                                char *err, size_t errsize)
{
	err[0] = '\0';
	const char *exact;
	const struct vgq_derived_provider *p = provider_of(name, &exact);
	struct vgq_db_internal *in = db->internal;
	if (p && !in->trace && db->from_model) {
		snprintf(err, errsize,
		         "%s cannot be followed live: %s (docs/tquel.md \"Derived relations\"; "
		         "vigil query over a --keep trace answers it)",
		         exact, p->not_live ? p->not_live : "it is derived from a whole trace");
		return NULL;
	}
	if (!p || !in->trace || (p->applies && !p->applies(in->trace)))
		return NULL;
	for (size_t i = 0; i < in->ntried; i++)
		if (in->tried[i].p == p) {
			if (in->tried[i].error)
				snprintf(err, errsize, "%s", in->tried[i].error);
			return find_built(in, name);
		}
	if (!in->whole_trace) {
		snprintf(err, errsize,
		         "%s is derived from the whole trace by %s: not available while the trace "
		         "is read in part (vigil watch, a sampled or filtered build; docs/tquel.md "
		         "\"Derived relations\")",
		         exact, p->source);
		return NULL;
	}
	analyses++;
	if (take_cached(db, p, err, errsize))
		return err[0] ? NULL : find_built(in, name);
	struct vgq_derived_ctx c = {.db = db};
	char why[512] = "";
	if (p->build(&c, why, sizeof why) < 0) {
		for (size_t i = 0; i < c.nmade; i++)
			vgq_relation_free(c.made[i]);
		free(c.made);
		snprintf(err, errsize, "%s (%s): %s", exact, p->source, why);
		keep_error(in, p, err);
		vgc_derived_save(db, p, err);
		return NULL;
	}
	in->derived = vgq_xrealloc(in->derived, in->nderived + c.nmade, sizeof *in->derived);
	for (size_t i = 0; i < c.nmade; i++) {
		sort_by_start(c.made[i]);
		vgq_relation_finish(c.made[i], db->last);
		in->derived[in->nderived++] = c.made[i];
	}
	free(c.made);
	keep_error(in, p, NULL);
	vgc_derived_save(db, p, NULL);
	return find_built(in, name);
}

size_t vgq_derived_schemas(struct vgq_database *db, struct vgq_relation ***out)
{
	struct vgq_derived_ctx c = {.db = db, .schema_only = true};
	for (size_t i = 0; i < nproviders; i++) {
		char err[256];
		size_t before = c.nmade;
		if (applies(db, providers[i]) && providers[i]->build(&c, err, sizeof err) < 0)
			while (c.nmade > before) /* cannot fail without reading: no such provider */
				vgq_relation_free(c.made[--c.nmade]);
	}
	size_t n = 0;
	for (size_t i = 0; i < c.nmade; i++) {
		if (vgq_database_find(db, c.made[i]->name))
			vgq_relation_free(c.made[i]); /* hidden by a primitive relation */
		else
			c.made[n++] = c.made[i];
	}
	*out = c.made;
	return n;
}

void vgq_derived_schemas_free(struct vgq_relation **rels, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vgq_relation_free(rels[i]);
	free(rels);
}

bool vgq_derived_schema_only(const struct vgq_derived_ctx *c)
{
	return c->schema_only;
}

void vgq_derived_free(struct vgq_database *db)
{
	struct vgq_db_internal *in = db->internal;
	for (size_t i = 0; i < in->nderived; i++) {
		vgc_derived_release(db, in->derived[i]); /* columns mapped from the cache */
		vgq_relation_free(in->derived[i]);
	}
	vgc_derived_free(db);
	free(in->derived);
	for (size_t i = 0; i < in->ntried; i++)
		free(in->tried[i].error);
	free(in->tried);
}

const struct vgq_derived_live *vgq_derived_live_of(const char *name)
{
	const struct vgq_derived_provider *p = provider_of(name, NULL);
	for (const char *const *n = p && p->live ? p->live->names : NULL; n && *n; n++)
		if (!strcasecmp(*n, name))
			return p->live;
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcasecmp((*(struct vgq_relation *const *)a)->name,
	                  (*(struct vgq_relation *const *)b)->name);
}

/* Adds r to the database's relations, kept sorted by name. */
static void add_relation(struct vgq_database *db, struct vgq_relation *r)
{
	struct vgq_relation **rels = vgq_xcalloc(db->nrelations + 1, sizeof *rels);
	for (size_t i = 0; i < db->nrelations; i++)
		rels[i] = db->relations[i];
	rels[db->nrelations++] = r;
	qsort(rels, db->nrelations, sizeof *rels, by_name);
	free((void *)db->relations);
	db->relations = rels;
}

size_t vgq_derived_analyses(void)
{
	return analyses;
}

void vgq_derived_live_schemas(struct vgq_database *db)
{
	/* a recording's relations bound for a watch: it reads the trace in part, so the
	 * analyses of the whole trace are refused at bind, not run (vgq_database_derived) */
	if (db->internal->trace)
		db->internal->whole_trace = false;
	for (size_t i = 0; i < nproviders; i++) {
		const struct vgq_derived_live *live = providers[i]->live;
		if (!live)
			continue;
		struct vgq_derived_ctx c = {.db = db, .schema_only = true};
		char err[256];
		if (providers[i]->build(&c, err, sizeof err) == 0)
			for (const char *const *n = live->names; *n; n++)
				for (size_t k = 0; k < c.nmade; k++)
					if (c.made[k] && !strcasecmp(c.made[k]->name, *n) &&
					    !vgq_database_find(db, *n)) {
						add_relation(db, c.made[k]);
						c.made[k] = NULL;
					}
		for (size_t k = 0; k < c.nmade; k++)
			vgq_relation_free(c.made[k]);
		free(c.made);
	}
}

/* ---- for providers ---- */

struct vgq_derived_live_ctx {
	struct vgq_derived_ctx c;
	struct vgq_database db;
	struct vgq_db_internal in;
};

struct vgq_derived_ctx *vgq_derived_ctx_live(struct vgt_trace *t, struct vgq_pool *pool)
{
	struct vgq_derived_live_ctx *l = vgq_xcalloc(1, sizeof *l);
	l->in.pool = pool;
	l->in.trace = t;
	l->db.internal = &l->in;
	l->c.db = &l->db;
	return &l->c; /* the first member: freed as the whole */
}

struct vgq_relation *vgq_derived_ctx_take(struct vgq_derived_ctx *c, const char *name)
{
	for (size_t k = 0; k < c->nmade; k++)
		if (c->made[k] && !strcasecmp(c->made[k]->name, name)) {
			struct vgq_relation *r = c->made[k];
			c->made[k] = NULL;
			return r;
		}
	return NULL;
}

void vgq_derived_ctx_free(struct vgq_derived_ctx *c)
{
	if (!c)
		return;
	for (size_t k = 0; k < c->nmade; k++)
		vgq_relation_free(c->made[k]);
	free(c->made);
	free(c);
}

struct vgt_trace *vgq_derived_trace(struct vgq_derived_ctx *c)
{
	return c->db->internal->trace;
}

const struct vgq_database *vgq_derived_database(struct vgq_derived_ctx *c)
{
	return c->db;
}

const char *vgq_derived_intern(struct vgq_derived_ctx *c, const char *s)
{
	return s ? vgq_pool_intern(c->db->internal->pool, s, strlen(s)) : NULL;
}

struct vgq_relation *vgq_derived_new(struct vgq_derived_ctx *c, const char *name,
                                     enum vgq_rkind kind)
{
	struct vgq_relation *r = vgq_relation_new(vgq_derived_intern(c, name), kind);
	c->made = vgq_xrealloc(c->made, c->nmade + 1, sizeof *c->made);
	c->made[c->nmade++] = r;
	return r;
}

int vgq_derived_attr(struct vgq_derived_ctx *c, struct vgq_relation *r, const char *name,
                     enum vgq_type type, const char *ref_kind)
{
	return vgq_relation_add_attr(r, vgq_derived_intern(c, name), type,
	                             vgq_derived_intern(c, ref_kind));
}

void vgq_derived_attrs(struct vgq_derived_ctx *c, struct vgq_relation *r,
                       const struct vgq_derived_attrdef *defs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vgq_derived_attr(c, r, defs[i].name, defs[i].type, defs[i].ref_kind);
}

size_t vgq_derived_append(struct vgq_relation *r, int64_t from, int64_t to)
{
	size_t t = vgq_relation_append(r, from);
	if (r->to) {
		r->to[t] = to;
		r->open[t] = false;
	}
	return t;
}

void vgq_derived_set_null(struct vgq_relation *r, size_t a, size_t t)
{
	if (!r->nulls)
		r->nulls = vgq_xcalloc(r->nattrs, sizeof *r->nulls);
	if (!r->nulls[a])
		r->nulls[a] = vgq_xcalloc(r->ntuples, 1);
	r->nulls[a][t] = 1;
}

uint32_t vgq_derived_process_image(struct vgq_derived_ctx *c, const char *host, int64_t pid,
                                   uint64_t gen)
{
	(void)host; /* pid and start time tell processes apart; net's host may be env `host` */
	const struct vgt_trace *t = c->db->internal->trace;
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		const struct vgt_image *img = vgt_image_at(t, i);
		if (img->pid == pid && img->process_gen == gen)
			return vgq_derived_image_index(c, img, true);
	}
	return UINT32_MAX;
}

uint32_t vgq_derived_image_index(struct vgq_derived_ctx *c, const struct vgt_image *img,
                                 bool process)
{
	const struct vgt_trace *t = c->db->internal->trace;
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		const struct vgt_image *other = vgt_image_at(t, i);
		if (other == img || (process && vgt_image_same_process(other, img)))
			return (uint32_t)i;
	}
	return UINT32_MAX;
}
