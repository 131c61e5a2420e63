/* What a query reads of a trace's relations, for the relations cache (relations/cache.h):
 * the relations its range statements name, and the attribute names written after a dot
 * anywhere in its text (every attribute when one is `all`, as in V.all). A superset of
 * what binding will look up: a word after a dot that is no attribute only costs a column. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/query_need.h"
#include "tquel/arena.h"
#include "tquel/lex.h"

void vg_query_need(const struct tquel_query *q, struct vg_query_need *n)
{
	memset(n, 0, sizeof *n);
	n->arena = tquel_arena_new();
	n->relations = tquel_alloc(n->arena, (q->nstmts + 1) * sizeof *n->relations);
	for (size_t i = 0; i < q->nstmts; i++)
		if (q->stmts[i].kind == TQ_RANGE && !q->stmts[i].u.range.clock_period)
			n->relations[n->nrelations++] = q->stmts[i].u.range.relation;
	struct tquel_tokens t;
	tquel_lex(n->arena, q->text, q->len, &t);
	n->attrs = tquel_alloc(n->arena, (t.n + 1) * sizeof *n->attrs);
	for (size_t i = 0; i + 1 < t.n; i++) {
		if (t.v[i].kind != TT_DOT || t.v[i + 1].kind != TT_WORD)
			continue;
		const struct tquel_token *w = &t.v[i + 1];
		if (w->len == 3 && !strncasecmp(w->start, "all", 3))
			n->all_attrs = true;
		n->attrs[n->nattrs++] = tquel_strndup(n->arena, w->start, w->len);
	}
	tquel_tokens_free(&t);
	vgq_query_selections(q, n->arena, &n->sel);
}

void vg_query_need_request(const struct vg_query_need *n, const char *path, const char *who,
                           struct vgq_cache_request *rq)
{
	*rq = (struct vgq_cache_request){.trace_path = path,
	                                 .who = who,
	                                 .need = n->relations,
	                                 .nneed = n->nrelations,
	                                 .attrs = n->attrs,
	                                 .nattrs = n->nattrs,
	                                 .all_attrs = n->all_attrs,
	                                 .bounds = n->sel.bounds,
	                                 .nbounds = n->sel.nbounds,
	                                 .keys = n->sel.keys,
	                                 .nkeys = n->sel.nkeys};
}

void vg_query_need_free(struct vg_query_need *n)
{
	tquel_arena_free(n->arena);
	memset(n, 0, sizeof *n);
}
