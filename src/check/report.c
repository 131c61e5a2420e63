/* Violation messages: entities, positions, and the record sent to the sink. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *vgc_path_label(const char *path)
{
	const char *end = path + strlen(path);
	while (end > path && end[-1] == '/')
		end--;
	int slashes = 0;
	for (const char *p = end; p > path; p--)
		if (p[-1] == '/' && ++slashes == 2)
			return p;
	return path;
}

const char *vgc_describe(struct vgc *c, const struct vgc_key *k, uint64_t gen)
{
	char *buf = c->desc[c->ndesc++ % 4];
	const char *kind = vgc_kind_display(&c->kinds, k->kind);
	const char *name = NULL;
	if (k->kind != VGC_KIND_PROCESS && c->names)
		name = vgt_names_lookup(c->names, kind, k->id, (uint32_t)gen);
	size_t size = sizeof c->desc[0];
	int n;
	if (k->kind == VGC_KIND_PROCESS || k->kind == VGC_KIND_THREAD)
		n = snprintf(buf, size, "%s %" PRIu64, kind, k->id);
	else
		n = snprintf(buf, size, "%s 0x%" PRIx64, kind, k->id);
	if (name && *name && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " '%.64s'", name);
	if (n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " gen %" PRIu64, gen);
	if (c->ninvolved < 2) {
		struct vgc_entity_ref *r = &c->ents_involved[c->ninvolved++];
		r->kind = kind;
		r->id = k->id;
		r->gen = gen;
		r->name = name;
	}
	return buf;
}

const char *vgc_pos_text(struct vgc *c, uint64_t pos)
{
	char *buf = c->pos_text[c->npos++ % 2];
	size_t stream = (size_t)(pos >> 40);
	const char *label = stream < c->nthreads ? c->threads[stream].label : "?";
	snprintf(buf, sizeof c->pos_text[0], "%s@%" PRIu64, label,
	         (uint64_t)(pos & ((1ull << 40) - 1)));
	return buf;
}

void vgc_violate(struct vgc *c, int rule, const char *fmt, ...)
{
	c->sum->violations++;
	c->sum->per_rule[rule]++;
	if (c->sink->violation) {
		char msg[1024];
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		if (c->synth && n > 0 && (size_t)n < sizeof msg)
			snprintf(msg + n, sizeof msg - (size_t)n,
			         " [synthesized event, valid at t=%.9f]",
			         (double)(c->synth_at - c->first_ts) / 1e9);
		/* One line whatever the trace's strings hold. */
		for (char *p = msg; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		struct vgc_violation v = {
		    .rule = rule,
		    .event = c->ev,
		    .file = c->threads[c->ev->stream->index].label,
		    .t = (double)(c->ev->ts - c->first_ts) / 1e9,
		    .synthesized = c->synth,
		    .valid_ts = c->synth ? c->synth_at : c->ev->ts,
		    .message = msg,
		    .nentities = c->ninvolved,
		};
		memcpy(v.entities, c->ents_involved, sizeof v.entities);
		c->sink->violation(c->sink->ctx, &v);
	}
	c->ninvolved = 0;
}
