/* JSON lines: one object per tuple,
 *   {"relation":"R","kind":"event","at":T,"values":{"a":V,...}}
 *   {"relation":"R","kind":"interval","from":B,"to":E,"values":{"a":V,...}}
 * written by hand (results can have millions of tuples). Strings are escaped so that the
 * output is always valid JSON: a byte that is not part of well-formed UTF-8 is written as
 * \u00XX of that byte (read as Latin-1), control characters as \u00XX. A double that is
 * not finite (JSON has no NaN or infinity) is null. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/output_internal.h"

static const char HEX[] = "0123456789abcdef";

static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static void json_string(struct vgq_text *o, const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	vgq_text_putc(o, '"');
	size_t i = 0;
	while (i < n) {
		size_t run = i;
		while (run < n && plain(u[run]))
			run++;
		vgq_text_put(o, p + i, run - i);
		if ((i = run) == n)
			break;
		unsigned char c = u[i];
		size_t len = c >= 0x80 ? vgq_utf8_seq(u + i, n - i) : 0;
		if (len) {
			vgq_text_put(o, p + i, len);
			i += len;
			continue;
		}
		if (c == '"' || c == '\\') {
			char esc[] = {'\\', (char)c};
			vgq_text_put(o, esc, 2);
		} else {
			char esc[] = {'\\', 'u', '0', '0', HEX[c >> 4], HEX[c & 15]};
			vgq_text_put(o, esc, sizeof esc);
		}
		i++;
	}
	vgq_text_putc(o, '"');
}

static void json_value(struct vgq_text *o, struct vgq_text *tmp, const struct vgq_relation *r,
                       size_t a, size_t t)
{
	enum vgq_type type = r->attrs[a].type;
	if (vgq_value_missing(r, a, t)) {
		vgq_text_put(o, "null", 4);
		return;
	}
	if (type == VGQ_DOUBLE && !isfinite(r->cols[a].d[t])) {
		vgq_text_put(o, "null", 4);
		return;
	}
	if (type == VGQ_INT || type == VGQ_UINT || type == VGQ_DOUBLE) {
		vgq_value_text(o, r, a, t);
		return;
	}
	tmp->len = 0;
	if (vgq_value_text(tmp, r, a, t))
		json_string(o, tmp->ptr ? tmp->ptr : "", tmp->len);
	else
		vgq_text_put(o, "null", 4);
}

void vgq_write_json(struct vgq_sink *s, const struct vgq_relation *r)
{
	bool event = vgq_output_is_event(r);
	/* The text before each time, and each key with its colon, made once. */
	struct vgq_text head = {0}, keys = {0}, tmp = {0};
	vgq_text_put(&head, "{\"relation\":", 12);
	json_string(&head, r->name, strlen(r->name));
	const char *kind =
	    event ? ",\"kind\":\"event\",\"at\":" : ",\"kind\":\"interval\",\"from\":";
	vgq_text_put(&head, kind, strlen(kind));
	size_t *key_end = calloc(r->nattrs + 1, sizeof *key_end);
	if (!key_end) {
		fputs("vigil: out of memory\n", stderr);
		abort();
	}
	for (size_t a = 0; a < r->nattrs; a++) {
		if (a)
			vgq_text_putc(&keys, ',');
		json_string(&keys, r->attrs[a].name, strlen(r->attrs[a].name));
		vgq_text_putc(&keys, ':');
		key_end[a + 1] = keys.len;
	}
	char num[VGQ_INT_TEXT_SIZE];
	for (size_t t = 0; t < r->ntuples; t++) {
		struct vgq_text *o = &s->buf;
		vgq_text_put(o, head.ptr, head.len);
		vgq_text_put(o, num, vgq_i64_text(num, r->from[t]));
		if (!event) {
			vgq_text_put(o, ",\"to\":", 6);
			vgq_text_put(o, num, vgq_i64_text(num, r->to[t]));
		}
		vgq_text_put(o, ",\"values\":{", 11);
		for (size_t a = 0; a < r->nattrs; a++) {
			vgq_text_put(o, keys.ptr + key_end[a], key_end[a + 1] - key_end[a]);
			json_value(o, &tmp, r, a, t);
		}
		vgq_text_put(o, "}}\n", 3);
		vgq_sink_maybe_flush(s);
	}
	free(key_end);
	vgq_text_free(&head);
	vgq_text_free(&keys);
	vgq_text_free(&tmp);
}
