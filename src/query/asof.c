/* as of (TQuel's rollback, docs/tquel.md "as of"): a trace's transaction time is the
 * time each event was recorded, so the trace as the monitor held it at instant t is the
 * prefix of its events recorded up to t, built like the whole trace (intervals whose end
 * was not recorded yet are open, and end at the prefix's last event, its "now"). One
 * database per instant, read again from the session's trace on first use. */
#include <stdio.h>
#include <stdlib.h>

#include "query/engine_internal.h"
#include "relations/columns.h"

struct vgq_database *vgq_asof_database(struct vgq_session *s, int64_t t, char *err, size_t errsize)
{
	for (size_t i = 0; i < s->nasof; i++)
		if (s->asof[i].at == t)
			return s->asof[i].db;
	struct vgt_trace *trace = s->db && s->db->internal ? s->db->internal->trace : NULL;
	if (!trace || !s->db->internal->whole_trace) {
		snprintf(err, errsize,
		         "as of reads the recorded trace again up to that instant, and this "
		         "query has %s",
		         s->db && s->db->from_model ? "a sensor description, not a trace"
		                                    : "part of a trace only (a live or filtered "
		                                      "monitor)");
		return NULL;
	}
	struct vgq_build_options o = {.has_until = true, .until = t};
	struct vgq_database *db = vgq_database_build_opts(trace, &o);
	s->asof = vgq_xrealloc(s->asof, s->nasof + 1, sizeof *s->asof);
	s->asof[s->nasof++] = (struct vgq_asof_db){t, db};
	return db;
}

void vgq_asof_free(struct vgq_session *s)
{
	for (size_t i = 0; i < s->nasof; i++)
		vgq_database_free(s->asof[i].db);
	free(s->asof);
}
