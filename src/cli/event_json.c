/* One event as a JSON object: what `vigil dump --json` prints per line and what the
 * Python module's events() yields (python/vigil). JSON strings must be UTF-8: invalid
 * bytes become U+FFFD. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "cli/event_json.h"

json_t *vg_json_text(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t n = vgb_utf8_len(s + i, len - i);
		if (!n)
			break;
		i += n;
	}
	if (i == len)
		return json_stringn(s, len);
	char *buf = malloc(len * 3 + 1);
	if (!buf)
		return json_null();
	size_t o = 0;
	for (i = 0; i < len;) {
		size_t n = vgb_utf8_len(s + i, len - i);
		if (n) {
			memcpy(buf + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	json_t *j = json_stringn(buf, o);
	free(buf);
	return j;
}

json_t *vg_value_json(const struct vgt_value *v)
{
	switch (v->type) {
	case VGT_INT:
		return json_integer(v->i);
	case VGT_UINT: {
		if (v->u <= INT64_MAX)
			return json_integer((json_int_t)v->u);
		/* Beyond what JSON parsers hold exactly: the digits, as a string. */
		char buf[24];
		snprintf(buf, sizeof buf, "%" PRIu64, v->u);
		return json_string(buf);
	}
	case VGT_DOUBLE:
		return isfinite(v->d) ? json_real(v->d) : json_null();
	case VGT_STRING:
		return vg_json_text(v->str.ptr, v->str.len);
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
	case VGT_REF:
		break;
	}
	return NULL;
}

static json_t *json_value(const struct vgt_names *names, const struct vgt_field *fd,
                          const struct vgt_value *v)
{
	if (v->type != VGT_REF)
		return vg_value_json(v);
	const char *name = vgt_names_lookup(names, fd->ref_kind, v->ref.id, v->ref.gen);
	json_t *o = json_object();
	json_object_set_new(o, "kind", fd->ref_kind ? json_string(fd->ref_kind) : json_null());
	json_object_set_new(o, "id",
	                    v->ref.id <= INT64_MAX ? json_integer((json_int_t)v->ref.id)
	                                           : json_real((double)v->ref.id));
	json_object_set_new(o, "gen", json_integer(v->ref.gen));
	json_object_set_new(o, "name", name ? vg_json_text(name, strlen(name)) : json_null());
	return o;
}

static json_t *json_opt_text(const char *s)
{
	return s ? vg_json_text(s, strlen(s)) : json_null();
}

json_t *vg_event_json(const struct vgt_event *ev, const struct vgt_names *names)
{
	char time[64];
	vgt_format_time(ev->ts, time, sizeof time);
	json_t *o = json_object();
	json_object_set_new(o, "ts", json_integer(ev->ts));
	json_object_set_new(o, "clock", json_integer((json_int_t)ev->clock_value));
	json_object_set_new(o, "time", json_string(time));
	json_object_set_new(o, "host", json_opt_text(ev->image->hostname));
	json_object_set_new(o, "pid",
	                    ev->image->pid >= 0 ? json_integer(ev->image->pid) : json_null());
	json_object_set_new(o, "proc", json_opt_text(ev->image->procname));
	json_object_set_new(o, "tid", json_integer(ev->tid));
	json_object_set_new(o, "name", json_opt_text(ev->type->name));
	json_t *fields = json_object();
	for (unsigned i = 0; i < ev->type->nfields; i++) {
		const struct vgt_field *fd = &ev->type->fields[i];
		if (!fd->hidden)
			json_object_set_new(fields, fd->name,
			                    json_value(names, fd, &ev->values[i]));
	}
	json_object_set_new(o, "fields", fields);
	return o;
}
