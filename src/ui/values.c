/* Tuples and events as JSON: values written as vigil query --format json writes them
 * (numbers, strings, entities by name), an event with every field of its type. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "query/output.h"
#include "trace/source.h"
#include "ui/ui.h"

/* JSON strings must be UTF-8: a string that is not is given with U+FFFD for bad bytes. */
static json_t *text_json(const char *s, size_t len)
{
	json_t *j = json_stringn(s, len);
	if (j)
		return j;
	char *buf = malloc(len * 3 + 1);
	if (!buf)
		return json_null();
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = vgb_utf8_len(s + i, len - i);
		if (n && s[i]) {
			memcpy(buf + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	j = json_stringn(buf, o);
	free(buf);
	return j ? j : json_null();
}

static json_t *u64_json(uint64_t u)
{
	if (u <= INT64_MAX)
		return json_integer((json_int_t)u);
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRIu64, u);
	return json_string(buf);
}

json_t *vgu_value_json(const struct vgq_relation *r, size_t a, size_t t)
{
	if (vgq_value_missing(r, a, t))
		return json_null();
	switch (r->attrs[a].type) {
	case VGQ_INT:
		return json_integer(r->cols[a].i[t]);
	case VGQ_UINT:
		return u64_json(r->cols[a].u[t]);
	case VGQ_DOUBLE:
		return isfinite(r->cols[a].d[t]) ? json_real(r->cols[a].d[t]) : json_null();
	default: {
		struct vgq_text x = {0};
		json_t *j = vgq_value_text(&x, r, a, t) ? text_json(x.ptr ? x.ptr : "", x.len)
		                                        : json_null();
		vgq_text_free(&x);
		return j;
	}
	}
}

json_t *vgu_relation_head(const struct vgq_relation *r)
{
	json_t *attrs = json_array();
	for (size_t a = 0; a < r->nattrs; a++)
		json_array_append_new(
		    attrs, json_pack("{s:s,s:s}", "name", r->attrs[a].name, "type",
		                     r->attrs[a].type == VGQ_ENTITY && r->attrs[a].ref_kind
		                         ? r->attrs[a].ref_kind
		                         : vgq_type_name(r->attrs[a].type)));
	return json_pack("{s:s,s:s,s:s,s:o,s:I}", "relation", r->name, "kind",
	                 vgq_output_is_event(r) ? "event" : "interval", "rkind",
	                 vgq_rkind_name(r->kind), "attrs", attrs, "tuples", (json_int_t)r->ntuples);
}

json_t *vgu_tuple_json(const struct vgq_relation *r, size_t t, int64_t origin)
{
	json_t *o = json_pack("{s:s}", "relation", r->name);
	/* relative to the trace's first event: exact as JavaScript numbers */
	json_object_set_new(o, "rfrom", json_integer(r->from[t] - origin));
	if (!vgq_output_is_event(r))
		json_object_set_new(o, "rto", json_integer(r->to[t] - origin));
	char buf[64];
	vgt_format_time(r->from[t], buf, sizeof buf);
	if (vgq_output_is_event(r)) {
		json_object_set_new(o, "kind", json_string("event"));
		json_object_set_new(o, "at", json_integer(r->from[t]));
		json_object_set_new(o, "time", json_string(buf));
	} else {
		json_object_set_new(o, "kind", json_string("interval"));
		json_object_set_new(o, "from", json_integer(r->from[t]));
		json_object_set_new(o, "to", json_integer(r->to[t]));
		json_object_set_new(o, "time", json_string(buf));
		vgt_format_time(r->to[t], buf, sizeof buf);
		json_object_set_new(o, "time_to", json_string(buf));
		if (r->open)
			json_object_set_new(o, "open", json_boolean(r->open[t]));
	}
	json_t *v = json_object();
	for (size_t a = 0; a < r->nattrs; a++)
		json_object_set_new(v, r->attrs[a].name, vgu_value_json(r, a, t));
	json_object_set_new(o, "values", v);
	json_object_set_new(o, "index", json_integer((json_int_t)t));
	return o;
}

static json_t *field_json(const struct vgu_app *a, const struct vgt_field *fd,
                          const struct vgt_value *v)
{
	switch (v->type) {
	case VGT_INT:
		return json_integer(v->i);
	case VGT_UINT:
		return u64_json(v->u);
	case VGT_DOUBLE:
		return isfinite(v->d) ? json_real(v->d) : json_null();
	case VGT_STRING:
		return text_json(v->str.ptr, v->str.len);
	case VGT_BYTES: {
		char *hex = malloc(v->bytes.len * 2 + 1);
		if (!hex)
			return json_null();
		for (size_t i = 0; i < v->bytes.len; i++)
			snprintf(hex + 2 * i, 3, "%02x", v->bytes.ptr[i]);
		hex[v->bytes.len * 2] = 0;
		json_t *j = json_string(hex);
		free(hex);
		return j;
	}
	case VGT_REF: {
		const char *name = vgt_names_lookup(a->names, fd->ref_kind, v->ref.id, v->ref.gen);
		if (name)
			return text_json(name, strlen(name));
		char buf[96];
		snprintf(buf, sizeof buf, "%s#%" PRIu64, fd->ref_kind ? fd->ref_kind : "entity",
		         v->ref.id);
		return json_string(buf);
	}
	}
	return json_null();
}

json_t *vgu_event_json(const struct vgu_app *a, size_t index)
{
	if (index >= a->tl.nevents)
		return NULL;
	const struct vgu_event *e = &a->tl.events[index];
	/* Found again by reading its stream up to its offset. */
	struct vgt_cursor *c = vgt_cursor_open(a->trace, e->stream);
	if (!c)
		return NULL;
	const struct vgt_event *ev;
	json_t *o = NULL;
	while ((ev = vgt_cursor_next(c))) {
		if (ev->offset < e->offset)
			continue;
		if (ev->offset > e->offset)
			break;
		char buf[64];
		vgt_format_time(ev->ts, buf, sizeof buf);
		const struct vgt_event_type *t = ev->type;
		json_t *v = json_object();
		for (unsigned i = 0; i < t->nfields; i++)
			if (!t->fields[i].hidden)
				json_object_set_new(v, t->fields[i].name,
				                    field_json(a, &t->fields[i], &ev->values[i]));
		o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:o,s:s,s:I,s:I,s:I,s:s}", "event", t->name,
		              "relation", t->relation ? t->relation : t->name, "kind", "event",
		              "at", (json_int_t)ev->ts, "rfrom",
		              (json_int_t)(ev->ts - a->db->first), "time", buf, "values", v,
		              "stream", ev->stream->path, "offset", (json_int_t)ev->offset, "pid",
		              (json_int_t)ev->image->pid, "tid", (json_int_t)ev->tid, "proc",
		              ev->image->procname ? ev->image->procname : "?");
		break;
	}
	vgt_cursor_close(c);
	return o;
}

static void damage_line(void *list, const char *line)
{
	json_array_append_new(list, text_json(line, strlen(line)));
}

json_t *vgu_damage_json(const struct vgu_app *a)
{
	json_t *list = json_array();
	vgt_damage_each(a->trace, damage_line, list);
	return list;
}
