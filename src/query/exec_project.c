/* Projection: π (the target list) and πT (the valid clause). Bindings pass through them
 * unchanged: the statement's driver (engine.c) keeps the bindings leaving πT and, once
 * the statement is known to stay within its limit, hands them to result.c, which
 * evaluates the targets and the valid time of each into the result relation. */
#include "query/engine_internal.h"
#include "query/exec_node.h"

static size_t project_next(struct xnode *n, uint32_t *out)
{
	return vgq_node_next(n->l, out);
}

static void project_explain(const struct xnode *n, const struct xexplain *e)
{
	(void)n;
	const struct bstmt *b = e->b;
	fputs("π[", e->out);
	for (size_t i = 0; i < b->ntargets; i++) {
		fprintf(e->out, "%s%s = ", i ? ", " : "", b->targets[i].name);
		vgq_explain_bx(e, b->targets[i].value, 0);
	}
	fputs("]", e->out);
}

static void tproject_explain(const struct xnode *n, const struct xexplain *e)
{
	(void)n;
	const struct bstmt *b = e->b;
	FILE *out = e->out;
	fputs("πT[", out);
	if (b->valid == TQ_VALID_AT) {
		fputs("at ", out);
		vgq_explain_tx(e, b->valid_at, false);
	} else if (b->valid == TQ_VALID_FROM_TO) {
		fputs("from ", out);
		vgq_explain_tx(e, b->valid_from, false);
		fputs(" to ", out);
		vgq_explain_tx(e, b->valid_to, false);
	} else {
		fputs("overlap of ", out);
		for (size_t i = 0; i < b->nvars; i++)
			fprintf(out, "%s%s", i ? ", " : "", b->vars[i].name);
	}
	fprintf(out, "]  -> %s relation %s%s", b->result_event ? "event" : "interval", b->label,
	        b->unique && !b->result_event ? ", coalesced (unique)" : "");
}

const struct xops vgq_project_ops = {
    .name = "project", .next = project_next, .explain = project_explain, .streams = true};
const struct xops vgq_tproject_ops = {
    .name = "temporal project", .next = project_next, .explain = tproject_explain, .streams = true};
