/* The WaitFor relation, derived from a trace's lock operations (docs/query.md, "WaitFor"):
 * one tuple per wait-for edge, WaitFor(waiter, holder, lock), valid while `waiter` waits
 * for `lock` and `holder` holds it. The lock operations are those vigil check accepts
 * (src/check: well-formed per rule 5 of docs/consistency.md), and the graph is the one
 * `vigil check --deadlocks` searches for cycles (src/check/waitfor.c): the checker's walk
 * is fed each event of the database's own pass, so no second pass over the trace. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check/check.h"
#include "check/waitfor.h"
#include "relations/build.h"

#define WAITFOR "WaitFor"

struct vgq_waits {
	const struct vgt_event_type *last_type; /* and whether the walk wants its events */
	bool last_wanted;
	struct vgc_walk *walk;
	struct vgc_summary sum;
	struct vgc_sink sink;
	struct vgc_wf *wf;
	bool failed; /* out of memory: the relation is left out (a warning says so) */
	/* Followed live (vgq_waits_new_live): the relation kept up to date, edge by edge. */
	struct vgq_relation *live;
	size_t synced;     /* edges [0, synced) were looked at */
	size_t *tuple_of;  /* per edge looked at: its tuple, or SIZE_MAX (not yet one) */
	size_t *unsettled; /* edges looked at and not final yet (open or not a tuple yet) */
	size_t nunsettled, capunsettled;
};

static void on_lock(void *ctx, const struct vgc_lock_event *e)
{
	struct vgq_waits *q = ctx;
	if (!q->failed && !vgc_wf_event(q->wf, e))
		q->failed = true;
}

static bool is_lock_op(const struct vgt_event_type *t)
{
	static const char *const lock_ops[] = {"acquire", "release", "wait_begin", "wait_end"};
	for (size_t k = 0; k < 4 && t->op > 0 && t->op < VGT_OP_COUNT; k++)
		if (!strcmp(vgt_op_names[t->op], lock_ops[k]))
			return true;
	return false;
}

/* Only a trace with lock operations (an event type with op acquire, release, wait_begin
 * or wait_end) has the relation; the others pay nothing. */
static bool has_lock_ops(const struct vgt_trace *t)
{
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		const struct vgt_image *img = vgt_image_at(t, i);
		for (size_t j = 0; j < img->ntypes; j++)
			if (is_lock_op(img->types[j]))
				return true;
	}
	return false;
}

bool vgq_waits_possible(const struct vgt_trace *t)
{
	return has_lock_ops(t);
}

/* The walk and the graph keeping its edges; a failure is kept (said at the end). */
static struct vgq_waits *waits_start(struct vgt_trace *t)
{
	struct vgq_waits *q = vgq_xcalloc(1, sizeof *q);
	q->sink = (struct vgc_sink){.ctx = q, .lock = on_lock};
	char err[256];
	if (!(q->wf = vgc_wf_new()) ||
	    !(q->walk = vgc_walk_new(t, &q->sink, &q->sum, INT64_MIN, err, sizeof err)))
		q->failed = true;
	else
		vgc_wf_keep_edges(q->wf);
	return q;
}

struct vgq_waits *vgq_waits_new(struct vgt_trace *t)
{
	return has_lock_ops(t) ? waits_start(t) : NULL;
}

/* The walk gets the lock operations and vigil's own events (the names of threads and
 * entities): what it accepts of the lock operations depends on nothing else (rule 5 is
 * per thread and lock), and the other events, most of a trace, cost nothing here. */
void vgq_waits_feed(struct vgq_waits *q, const struct vgt_event *ev)
{
	if (!q || q->failed)
		return;
	if (ev->type != q->last_type) {
		q->last_type = ev->type;
		q->last_wanted = is_lock_op(ev->type) || !strncmp(ev->type->name, "vg.", 3);
	}
	if (q->last_wanted && !vgc_walk_event(q->walk, ev))
		q->failed = true;
}

bool vgq_waits_wants(const struct vgq_waits *q, const struct vgt_event_type *t)
{
	return q && (is_lock_op(t) || !strncmp(t->name, "vg.", 3));
}

static struct vgq_ref ref_of(struct builder *b, const struct vgc_wf_node *n)
{
	return (struct vgq_ref){
	    n->id, (uint32_t)n->gen, n->image,
	    n->name && *n->name ? vgq_pool_intern(b->pool, n->name, strlen(n->name)) : NULL};
}

static int by_from(const void *x, const void *y)
{
	const struct vgc_wf_edge *a = *(const struct vgc_wf_edge *const *)x;
	const struct vgc_wf_edge *c = *(const struct vgc_wf_edge *const *)y;
	return a->from < c->from ? -1 : a->from > c->from ? 1 : (a < c ? -1 : a > c);
}

/* The lock attribute's entity kind: the locks' kind if they share one, else none. */
static const char *lock_kind(struct builder *b, const struct vgc_wf *wf)
{
	const char *kind = NULL;
	for (size_t i = 0; i < vgc_wf_nlocks(wf); i++) {
		const char *k = vgc_wf_lock(wf, i)->kind;
		if (kind && strcasecmp(kind, k))
			return NULL;
		kind = k;
	}
	return kind ? vgq_pool_intern(b->pool, kind, strlen(kind)) : NULL;
}

/* The lock kind declared by the lock operations' target fields: theirs if they share
 * one, else none (what the relation's schema says before any lock is seen). */
static const char *declared_lock_kind(struct builder *b, const struct vgt_event_type *const *types,
                                      size_t n)
{
	const char *kind = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct vgt_event_type *t = types[i];
		if (!is_lock_op(t) || t->target < 0 || (unsigned)t->target >= t->nfields)
			continue;
		const char *k = t->fields[t->target].ref_kind;
		if (!k || (kind && strcasecmp(kind, k)))
			return NULL;
		kind = k;
	}
	return kind ? vgq_pool_intern(b->pool, kind, strlen(kind)) : NULL;
}

/* waiter, holder (OSThread: joins it) and the lock, of kind lock_kind. */
static void add_attrs(struct builder *b, struct vgq_relation *r, const char *lock_kind)
{
	const char *thread = vgq_pool_intern(b->pool, "OSThread", 8);
	vgq_relation_add_attr(r, vgq_pool_intern(b->pool, "waiter", 6), VGQ_ENTITY, thread);
	vgq_relation_add_attr(r, vgq_pool_intern(b->pool, "holder", 6), VGQ_ENTITY, thread);
	vgq_relation_add_attr(r, vgq_pool_intern(b->pool, "lock", 4), VGQ_ENTITY, lock_kind);
}

void vgq_waits_schema(struct builder *b, const struct vgt_event_type *const *types, size_t n)
{
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = is_lock_op(types[i]);
	for (size_t i = 0; any && i < b->nslots; i++)
		if (!strcasecmp(b->slots[i]->rel->name, WAITFOR))
			return; /* a relation of that name is declared: it wins, as in a trace */
	if (any)
		add_attrs(b, vgq_build_relation(b, WAITFOR, VGQ_REL_INTERVAL)->rel,
		          declared_lock_kind(b, types, n));
}

static void make_relation(struct vgq_waits *q, struct builder *b)
{
	for (size_t i = 0; i < b->nslots; i++)
		if (!strcasecmp(b->slots[i]->rel->name, WAITFOR)) {
			vgq_build_warn(b,
			               "the trace has its own relation '%s': the wait-for relation "
			               "derived from its lock operations is left out",
			               b->slots[i]->rel->name);
			return;
		}
	const struct vgc_wf_edge *edges;
	size_t n = vgc_wf_edges(q->wf, &edges);
	const struct vgc_wf_edge **sorted = vgq_xcalloc(n ? n : 1, sizeof *sorted);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (edges[i].open || edges[i].to > edges[i].from) /* held for some time */
			sorted[m++] = &edges[i];
	qsort(sorted, m, sizeof *sorted, by_from);
	struct vgq_relation *r = vgq_build_relation(b, WAITFOR, VGQ_REL_INTERVAL)->rel;
	add_attrs(b, r, lock_kind(b, q->wf));
	for (size_t i = 0; i < m; i++) {
		const struct vgc_wf_edge *e = sorted[i];
		size_t t = vgq_relation_append(r, e->from);
		r->to[t] = e->to;
		r->open[t] = e->open;
		r->cols[0].r[t] = ref_of(b, vgc_wf_thread(q->wf, e->waiter));
		r->cols[1].r[t] = ref_of(b, vgc_wf_thread(q->wf, e->holder));
		r->cols[2].r[t] = ref_of(b, vgc_wf_lock(q->wf, e->lock));
	}
	free(sorted);
}

void vgq_waits_finish(struct vgq_waits *q, struct builder *b)
{
	if (!q)
		return;
	char err[256];
	if (q->walk && vgc_walk_end(q->walk, err, sizeof err) < 0)
		q->failed = true;
	if (q->failed)
		vgq_build_warn(b, "out of memory building the wait-for relation: '%s' is left out",
		               WAITFOR);
	else
		make_relation(q, b);
	vgc_wf_free(q->wf);
	free(q);
}

/* ---- followed live (src/live: the update network) ---- */

struct vgq_waits *vgq_waits_new_live(struct vgt_trace *t)
{
	return waits_start(t);
}

/* Every lock-operation type of the trace so far (to declare the lock's kind). */
static const char *trace_lock_kind(struct builder *b, const struct vgt_trace *t)
{
	size_t n = vgt_class_count(t);
	const struct vgt_event_type **types = vgq_xcalloc(n ? n : 1, sizeof *types);
	for (size_t i = 0; i < n; i++)
		types[i] = vgt_class_at(t, i);
	const char *kind = declared_lock_kind(b, types, n);
	free(types);
	return kind;
}

static void unsettle(struct vgq_waits *q, size_t e)
{
	if (q->nunsettled == q->capunsettled) {
		q->capunsettled = q->capunsettled ? 2 * q->capunsettled : 64;
		q->unsettled = vgq_xrealloc(q->unsettled, q->capunsettled, sizeof *q->unsettled);
	}
	q->unsettled[q->nunsettled++] = e;
}

/* Edge e as its tuple says it now: appended once it is sure to hold for some time (it
 * closed later than it opened, or it is still open after a later event: it can only
 * close later still; at the end, every open edge), closed in place when it closes. An
 * edge that closed at the instant it opened never becomes a tuple, as at the end of a
 * stored trace's build (make_relation). False: not final yet. */
static bool settle(struct vgq_waits *q, struct builder *b, size_t e, int64_t last, bool final)
{
	const struct vgc_wf_edge *edges;
	vgc_wf_edges(q->wf, &edges);
	const struct vgc_wf_edge *x = &edges[e];
	struct vgq_relation *r = q->live;
	size_t t = q->tuple_of[e];
	if (t == SIZE_MAX) {
		if (!x->open && x->to <= x->from)
			return true; /* held for no time: never a tuple */
		if (x->open && x->from >= last && !final)
			return false; /* may still close at the instant it opened */
		t = q->tuple_of[e] = vgq_relation_append(r, x->from);
		r->to[t] = x->from;
		r->open[t] = true;
		r->cols[0].r[t] = ref_of(b, vgc_wf_thread(q->wf, x->waiter));
		r->cols[1].r[t] = ref_of(b, vgc_wf_thread(q->wf, x->holder));
		r->cols[2].r[t] = ref_of(b, vgc_wf_lock(q->wf, x->lock));
	}
	if (x->open)
		return false;
	r->to[t] = x->to;
	r->open[t] = false;
	return true;
}

struct vgq_relation *vgq_waits_sync(struct vgq_waits *q, struct builder *b, int64_t last,
                                    bool final)
{
	if (!q || q->failed)
		return NULL;
	if (!q->live) {
		if (!has_lock_ops(b->trace))
			return NULL; /* no lock operation declared yet: no relation yet */
		q->live = vgq_relation_new(vgq_pool_intern(b->pool, WAITFOR, strlen(WAITFOR)),
		                           VGQ_REL_INTERVAL);
		add_attrs(b, q->live, trace_lock_kind(b, b->trace));
	}
	const struct vgc_wf_edge *edges;
	size_t n = vgc_wf_edges(q->wf, &edges);
	q->tuple_of = vgq_xrealloc(q->tuple_of, n ? n : 1, sizeof *q->tuple_of);
	for (size_t e = q->synced; e < n; e++) {
		q->tuple_of[e] = SIZE_MAX;
		unsettle(q, e);
	}
	q->synced = n;
	size_t kept = 0; /* refilled in place, in order */
	for (size_t i = 0; i < q->nunsettled; i++)
		if (!settle(q, b, q->unsettled[i], last, final))
			q->unsettled[kept++] = q->unsettled[i];
	q->nunsettled = kept;
	return q->live;
}

bool vgq_waits_failed(const struct vgq_waits *q)
{
	return q && q->failed;
}

void vgq_waits_free_live(struct vgq_waits *q)
{
	if (!q)
		return;
	if (q->walk) {
		char err[256];
		vgc_walk_end(q->walk, err, sizeof err);
	}
	vgc_wf_free(q->wf);
	vgq_relation_free(q->live);
	free(q->tuple_of);
	free(q->unsettled);
	free(q);
}
