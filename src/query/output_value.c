/* The text of values, shared by every output format, and the buffered sink. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "query/output_internal.h"

enum { SINK_CHUNK = 1 << 16 };

static void reserve(struct vgq_text *t, size_t n)
{
	if (t->cap - t->len > n)
		return;
	size_t cap = t->cap ? t->cap : 256;
	while (cap - t->len <= n)
		cap *= 2;
	char *p = realloc(t->ptr, cap);
	if (!p) {
		fputs("vigil: out of memory\n", stderr);
		abort();
	}
	t->ptr = p;
	t->cap = cap;
}

void vgq_text_put(struct vgq_text *t, const void *p, size_t n)
{
	reserve(t, n);
	memcpy(t->ptr + t->len, p, n);
	t->len += n;
	t->ptr[t->len] = '\0';
}

void vgq_text_putc(struct vgq_text *t, char c)
{
	reserve(t, 1);
	t->ptr[t->len++] = c;
	t->ptr[t->len] = '\0';
}

void vgq_text_free(struct vgq_text *t)
{
	free(t->ptr);
	*t = (struct vgq_text){0};
}

bool vgq_output_is_event(const struct vgq_relation *r)
{
	return r->kind == VGQ_REL_EVENT;
}

bool vgq_value_missing(const struct vgq_relation *r, size_t a, size_t tuple)
{
	if (r->nulls && r->nulls[a] && r->nulls[a][tuple])
		return true;
	return (r->attrs[a].type == VGQ_STRING && !r->cols[a].s[tuple]);
}

/* Writes the digits of v and a NUL at buf (room for 21 bytes). */
static size_t digits(char *buf, uint64_t v)
{
	char tmp[VGQ_INT_TEXT_SIZE];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return n;
}

size_t vgq_u64_text(char buf[VGQ_INT_TEXT_SIZE], uint64_t v)
{
	return digits(buf, v);
}

size_t vgq_i64_text(char buf[VGQ_INT_TEXT_SIZE], int64_t v)
{
	if (v >= 0)
		return digits(buf, (uint64_t)v);
	buf[0] = '-';
	return 1 + digits(buf + 1, -(uint64_t)v); /* -(uint64_t) is exact for INT64_MIN */
}

size_t vgq_seconds_text(char buf[VGQ_SECONDS_TEXT_SIZE], int64_t t, int64_t origin)
{
	/* The difference of two int64 values always fits a uint64 magnitude. */
	bool neg = t < origin;
	uint64_t d = neg ? (uint64_t)origin - (uint64_t)t : (uint64_t)t - (uint64_t)origin;
	size_t n = 0;
	if (neg)
		buf[n++] = '-';
	n += digits(buf + n, d / 1000000000u);
	buf[n++] = '.';
	uint64_t frac = d % 1000000000u;
	for (int i = 8; i >= 0; i--) {
		buf[n + (size_t)i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	n += 9;
	buf[n] = '\0';
	return n;
}

size_t vgq_double_text(char buf[VGQ_DOUBLE_TEXT_SIZE], double d)
{
	if (!isfinite(d)) {
		const char *s = isnan(d) ? "nan" : d < 0 ? "-inf" : "inf";
		strcpy(buf, s);
		return strlen(s);
	}
	if (fabs(d) < 1e15 && d == (double)(int64_t)d && !(d == 0 && signbit(d))) {
		/* Integral: its digits are exact and shortest (the common case, made fast). */
		size_t n = vgq_i64_text(buf, (int64_t)d);
		memcpy(buf + n, ".0", 3);
		return n + 2;
	}
	int n = 0;
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(buf, VGQ_DOUBLE_TEXT_SIZE, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (!strpbrk(buf, ".e")) {
		buf[n++] = '.';
		buf[n++] = '0';
		buf[n] = '\0';
	}
	return (size_t)n;
}

static const char HEX[] = "0123456789abcdef";

bool vgq_value_text(struct vgq_text *t, const struct vgq_relation *r, size_t a, size_t tuple)
{
	const union vgq_column *c = &r->cols[a];
	if (r->nulls && r->nulls[a] && r->nulls[a][tuple])
		return false;
	char num[VGQ_DOUBLE_TEXT_SIZE > VGQ_INT_TEXT_SIZE ? VGQ_DOUBLE_TEXT_SIZE
	                                                  : VGQ_INT_TEXT_SIZE];
	switch (r->attrs[a].type) {
	case VGQ_INT:
		vgq_text_put(t, num, vgq_i64_text(num, c->i[tuple]));
		return true;
	case VGQ_UINT:
		vgq_text_put(t, num, vgq_u64_text(num, c->u[tuple]));
		return true;
	case VGQ_DOUBLE:
		vgq_text_put(t, num, vgq_double_text(num, c->d[tuple]));
		return true;
	case VGQ_STRING:
		if (!c->s[tuple])
			return false;
		vgq_text_put(t, c->s[tuple], strlen(c->s[tuple]));
		return true;
	case VGQ_BYTES: {
		const struct vgq_bytes *b = &c->b[tuple];
		reserve(t, 2 * b->len);
		for (size_t i = 0; i < b->len; i++) {
			t->ptr[t->len++] = HEX[b->ptr[i] >> 4];
			t->ptr[t->len++] = HEX[b->ptr[i] & 15];
		}
		t->ptr[t->len] = '\0';
		return true;
	}
	case VGQ_ENTITY: {
		const struct vgq_ref *ref = &c->r[tuple];
		if (ref->name) {
			vgq_text_put(t, ref->name, strlen(ref->name));
			return true;
		}
		const char *kind = r->attrs[a].ref_kind ? r->attrs[a].ref_kind : "entity";
		vgq_text_put(t, kind, strlen(kind));
		vgq_text_putc(t, '#');
		vgq_text_put(t, num, vgq_u64_text(num, ref->id));
		return true;
	}
	}
	return false;
}

size_t vgq_utf8_seq(const unsigned char *p, size_t n)
{
	return vgb_utf8_len(p, n);
}

void vgq_sink_init(struct vgq_sink *s, FILE *out)
{
	*s = (struct vgq_sink){.out = out};
}

static void sink_write(struct vgq_sink *s)
{
	errno = 0;
	if (!s->err && s->buf.len && fwrite(s->buf.ptr, 1, s->buf.len, s->out) != s->buf.len)
		s->err = errno ? errno : EIO;
	s->buf.len = 0;
}

void vgq_sink_maybe_flush(struct vgq_sink *s)
{
	if (s->buf.len >= SINK_CHUNK)
		sink_write(s);
}

int vgq_sink_finish(struct vgq_sink *s)
{
	sink_write(s);
	errno = 0;
	if (!s->err && fflush(s->out) != 0)
		s->err = errno ? errno : EIO;
	vgq_text_free(&s->buf);
	if (s->err) {
		errno = s->err;
		return -1;
	}
	return 0;
}
