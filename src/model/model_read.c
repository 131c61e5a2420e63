/* The model file reader (docs/model.md): strict, one error line "FILE:LINE: what" for
 * the first problem, never a crash on any input (fuzzed: tests/fuzz/model_fuzz.c). A
 * file is read into a model of its own and merged into the caller's only when it is
 * whole, so a damaged file adds nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_io.h"
#include "base/utf8.h"
#include "common/sketch_index.h"
#include "model/jstr.h"
#include "model/model.h"

struct reader {
	const char *name;
	unsigned line;
	const char *line_start;
	char *err;
	size_t errsize;
	struct vgm_model *m;
	/* file id -> event index + 1, open addressing */
	uint64_t *ids;
	uint32_t *idx;
	size_t nslots, nids;
};

static int fail(struct reader *r, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errsize, "%s:%u: %s", r->name, r->line, msg);
	return -1;
}

static size_t id_slot(const struct reader *r, uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;
	size_t k = (size_t)(h ^ h >> 31) & (r->nslots - 1);
	while (r->idx[k] && r->ids[k] != id)
		k = (k + 1) & (r->nslots - 1);
	return k;
}

/* The event index of file id `id`, or -1. */
static long id_find(const struct reader *r, uint64_t id)
{
	if (!r->nslots)
		return -1;
	size_t k = id_slot(r, id);
	return r->idx[k] ? (long)r->idx[k] - 1 : -1;
}

static int id_add(struct reader *r, uint64_t id, uint32_t index)
{
	if ((r->nids + 1) * 2 > r->nslots) {
		size_t ns = r->nslots ? r->nslots * 2 : 64;
		uint64_t *ids = calloc(ns, sizeof *ids);
		uint32_t *idx = calloc(ns, sizeof *idx);
		if (!ids || !idx) {
			free(ids);
			free(idx);
			return -1;
		}
		uint64_t *old_ids = r->ids;
		uint32_t *old_idx = r->idx;
		size_t old_n = r->nslots;
		r->ids = ids, r->idx = idx, r->nslots = ns;
		for (size_t i = 0; i < old_n; i++)
			if (old_idx[i]) {
				size_t k = id_slot(r, old_ids[i]);
				r->ids[k] = old_ids[i];
				r->idx[k] = old_idx[i];
			}
		free(old_ids);
		free(old_idx);
	}
	size_t k = id_slot(r, id);
	r->ids[k] = id;
	r->idx[k] = index + 1;
	r->nids++;
	return 0;
}

/* A field: the bytes up to the next space or the end of the line. */
struct cur {
	const char *p, *end;
};

static int next_field(struct reader *r, struct cur *c, const char *what, const char **s, size_t *n)
{
	if (c->p >= c->end)
		return fail(r, "%s missing", what);
	if (*c->p != ' ')
		return fail(r, "expected a space before the %s", what);
	c->p++;
	const char *q = c->p;
	while (q < c->end && *q != ' ')
		q++;
	if (q == c->p)
		return fail(r, "%s missing (fields are separated by one space)", what);
	*s = c->p;
	*n = (size_t)(q - c->p);
	c->p = q;
	return 0;
}

static int parse_u64(const char *s, size_t n, uint64_t *v)
{
	if (!n || n > 20)
		return -1;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

static int number(struct reader *r, struct cur *c, const char *what, uint64_t *v)
{
	const char *s = NULL;
	size_t n = 0;
	if (next_field(r, c, what, &s, &n))
		return -1;
	if (parse_u64(s, n, v))
		return fail(r, "%s '%.*s' is not a decimal number below 2^64", what,
		            (int)(n > 40 ? 40 : n), s);
	return 0;
}

static int event_ref(struct reader *r, struct cur *c, const char *what, uint32_t *index)
{
	uint64_t id;
	if (number(r, c, what, &id))
		return -1;
	long i = id_find(r, id);
	if (i < 0)
		return fail(r, "%s %llu is not declared by an earlier `event` record", what,
		            (unsigned long long)id);
	*index = (uint32_t)i;
	return 0;
}

static int json_field(struct reader *r, struct cur *c, const char *what, char **out)
{
	if (c->p >= c->end || *c->p != ' ')
		return fail(r, "%s missing", what);
	c->p++;
	size_t used;
	const char *why;
	if (vgm_json_parse(c->p, (size_t)(c->end - c->p), &used, out, &why))
		return fail(r, "%s: %s (column %zu)", what, why,
		            (size_t)(c->p - r->line_start) + used + 1);
	c->p += used;
	if (c->p != c->end) {
		free(*out);
		*out = NULL;
		return fail(r, "unexpected text after the %s", what);
	}
	return 0;
}

static int rec_event(struct reader *r, struct cur *c)
{
	uint64_t id, count;
	if (number(r, c, "event id", &id) || number(r, c, "event count", &count))
		return -1;
	if (!id)
		return fail(r, "event id 0: ids start at 1");
	if (id_find(r, id) >= 0)
		return fail(r, "event id %llu is declared twice", (unsigned long long)id);
	/* The site runs to the space before the format's opening quote. */
	if (c->p >= c->end || *c->p != ' ')
		return fail(r, "event site missing");
	const char *site = ++c->p;
	if (site < c->end && *site == ' ')
		return fail(r, "event site missing (fields are separated by one space)");
	const char *q = site;
	while (q + 1 < c->end && !(q[0] == ' ' && q[1] == '"'))
		q++;
	if (q + 1 >= c->end)
		return fail(r, "event format missing (a JSON string after the site)");
	if (q == site)
		return fail(r, "event site missing (fields are separated by one space)");
	for (const char *p = site; p < q; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return fail(r, "control character in the event site");
	for (size_t k = 0; site + k < q;) {
		size_t n = vgb_utf8_len(site + k, (size_t)(q - site) - k);
		if (!n)
			return fail(r, "event site is not UTF-8");
		k += n;
	}
	char *site_s = strndup(site, (size_t)(q - site));
	if (!site_s)
		return fail(r, "out of memory");
	c->p = q;
	char *fmt = NULL;
	if (json_field(r, c, "event format", &fmt)) {
		free(site_s);
		return -1;
	}
	long dup = vgm_event_find(r->m, site_s, fmt);
	long e = dup >= 0 ? -1 : vgm_event_intern(r->m, site_s, fmt);
	free(site_s);
	free(fmt);
	if (dup >= 0)
		return fail(r, "event %llu has the site and format of an earlier event",
		            (unsigned long long)id);
	if (e < 0 || id_add(r, id, (uint32_t)e))
		return fail(r, "out of memory");
	r->m->events[e].count = count;
	r->m->events[e].id = id;
	return 0;
}

static int rec_name(struct reader *r, struct cur *c)
{
	uint32_t e;
	if (event_ref(r, c, "event id", &e))
		return -1;
	if (r->m->events[e].name)
		return fail(r, "event %u is named twice", e + 1);
	char *tag = NULL;
	if (json_field(r, c, "name", &tag))
		return -1;
	if (!tag[0]) {
		free(tag);
		return fail(r, "empty name");
	}
	int rc = vgm_event_set_name(r->m, e, tag);
	free(tag);
	return rc ? fail(r, "out of memory") : 0;
}

static int rec_transition(struct reader *r, struct cur *c)
{
	uint32_t from, to;
	uint64_t count, sum;
	if (event_ref(r, c, "first event", &from) || event_ref(r, c, "second event", &to) ||
	    number(r, c, "transition count", &count) || number(r, c, "sum_ns", &sum))
		return -1;
	if (vgm_trans_find(r->m, from, to))
		return fail(r, "transition repeats an earlier one with the same two events");
	struct vgm_trans *t = vgm_trans_intern(r->m, from, to);
	if (!t)
		return fail(r, "out of memory");
	t->count = count;
	t->sum_ns = sum;
	long last = -1;
	uint64_t timed = 0;
	while (c->p < c->end) {
		const char *s = NULL;
		size_t n = 0;
		if (next_field(r, c, "bucket", &s, &n))
			return -1;
		const char *colon = memchr(s, ':', n);
		uint64_t b, k;
		if (!colon || parse_u64(s, (size_t)(colon - s), &b) ||
		    parse_u64(colon + 1, n - (size_t)(colon - s) - 1, &k))
			return fail(r, "bucket '%.*s' is not BUCKET:COUNT", (int)(n > 40 ? 40 : n),
			            s);
		if (b >= VG_SKETCH_BUCKETS)
			return fail(r, "bucket %llu out of range (buckets are 0..%d)",
			            (unsigned long long)b, VG_SKETCH_BUCKETS - 1);
		if ((long)b <= last)
			return fail(r, "bucket %llu is not above the previous one (buckets ascend)",
			            (unsigned long long)b);
		if (!k)
			return fail(r, "bucket %llu has count 0", (unsigned long long)b);
		if (k > count - timed)
			return fail(r,
			            "the buckets hold more values than the transition's count %llu",
			            (unsigned long long)count);
		timed += k;
		last = (long)b;
		if (vgm_sketch_add_bucket(&t->sk, (uint32_t)b, k))
			return fail(r, "out of memory");
	}
	if (!timed && sum)
		return fail(r, "sum_ns %llu without any timed value (no buckets)",
		            (unsigned long long)sum);
	return 0;
}

static int parse_line(struct reader *r, const char *p, const char *end, bool *header)
{
	for (const char *q = p; q < end; q++)
		if (*q == '\r' || *q == 0)
			return fail(r,
			            *q ? "carriage return (lines end with \\n only)" : "NUL byte");
	if (p == end || *p == '#')
		return 0;
	const char *sp = memchr(p, ' ', (size_t)(end - p));
	size_t klen = (size_t)((sp ? sp : end) - p);
	struct cur c = {p + klen, end};
	if (!*header) {
		if (klen == 11 && !memcmp(p, "vigil-model", 11)) {
			uint64_t v;
			if (number(r, &c, "format version", &v))
				return -1;
			if (c.p != c.end)
				return fail(r, "unexpected text after the format version");
			if (v != VGM_FORMAT_VERSION)
				return fail(
				    r, "model format version %llu; this vigil reads version %d",
				    (unsigned long long)v, VGM_FORMAT_VERSION);
			*header = true;
			return 0;
		}
		return fail(r, "not a vigil model (the first record must be `vigil-model %d`)",
		            VGM_FORMAT_VERSION);
	}
#define KEY(s) (klen == sizeof(s) - 1 && !memcmp(p, s, klen))
	if (KEY("source")) {
		const char *text = c.p < c.end ? c.p + 1 : c.end;
		char *s = strndup(text, (size_t)(c.end - text));
		int rc = s ? vgm_add_source(r->m, s) : -1;
		free(s);
		return rc ? fail(r, "out of memory") : 0;
	}
	int rc;
	if (KEY("event"))
		rc = rec_event(r, &c);
	else if (KEY("name"))
		rc = rec_name(r, &c);
	else if (KEY("transition"))
		rc = rec_transition(r, &c);
	else if (KEY("vigil-model"))
		return fail(r, "`vigil-model` header repeated");
	else
		return fail(r, "unknown record '%.*s' (expected source, event, name or transition)",
		            (int)(klen > 40 ? 40 : klen), p);
#undef KEY
	if (rc)
		return -1;
	if (c.p != c.end)
		return fail(r, "unexpected text at the end of the record");
	return 0;
}

int vgm_read_buffer(struct vgm_model *m, const char *name, const char *data, size_t size, char *err,
                    size_t errsize)
{
	struct vgm_model *t = vgm_model_new();
	struct reader r = {.name = name, .err = err, .errsize = errsize, .m = t};
	if (!t) {
		snprintf(err, errsize, "%s: out of memory", name);
		return -1;
	}
	bool header = false;
	int rc = 0;
	const char *p = data, *end = data + size;
	while (p < end) {
		r.line++;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		r.line_start = p;
		if ((rc = parse_line(&r, p, le, &header)))
			break;
		p = nl ? nl + 1 : end;
	}
	if (!rc && !header) {
		r.line = r.line ? r.line : 1;
		rc = fail(&r, "empty model file (no `vigil-model %d` header)", VGM_FORMAT_VERSION);
	}
	if (!rc && vgm_model_merge(m, t, NULL, NULL)) {
		snprintf(err, errsize, "%s: out of memory", name);
		rc = -1;
	}
	if (!rc)
		vgm_model_update_out(m);
	free(r.ids);
	free(r.idx);
	vgm_model_free(t);
	return rc;
}

int vgm_read_file(struct vgm_model *m, const char *path, char *err, size_t errsize)
{
	size_t len;
	char *buf = vgb_read_file(path, SIZE_MAX, VGB_READ_REGULAR, &len);
	if (!buf) {
		if (errno == EINVAL || errno == EISDIR)
			snprintf(err, errsize, "%s: not a regular file", path);
		else
			snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = vgm_read_buffer(m, path, buf, len, err, errsize);
	free(buf);
	return rc;
}
