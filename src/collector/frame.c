/* Frames of the collector protocol: see frame.h and docs/protocol.md. */
#include "frame.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- decoding ---- */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static int need(struct rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	return 1;
}

static uint64_t get_le(struct rd *r, int n)
{
	if (!need(r, (size_t)n))
		return 0;
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | r->p[i];
	r->p += n;
	return v;
}
#define get_u8(r) ((uint8_t)get_le((r), 1))
#define get_u16(r) ((uint16_t)get_le(r, 2))
#define get_u32(r) ((uint32_t)get_le(r, 4))
#define get_u64(r) (get_le(r, 8))

static struct vgf_str get_str(struct rd *r)
{
	struct vgf_str s = {NULL, 0};
	uint32_t n = get_u32(r);
	if (!need(r, n))
		return s;
	s.p = (const char *)r->p;
	s.n = n;
	r->p += n;
	return s;
}

/* Text strings (names, hosts, TSDL, lines) must not contain NUL. */
static struct vgf_str get_text(struct rd *r)
{
	struct vgf_str s = get_str(r);
	if (!r->bad && s.n && memchr(s.p, 0, s.n))
		r->bad = 2;
	return s;
}

static int fail(char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errsize, const char *fmt, ...)
{
	if (err && errsize) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return -1;
}

const char *vgf_type_name(uint8_t type)
{
	static const char *const names[] = {"?",       "HELLO",  "WELCOME", "METADATA",
	                                    "PACKET",  "SCHEMA", "RECORDS", "ACK",
	                                    "CONTROL", "REPLY",  "NOTE",    "BYE"};
	return type <= VGF_BYE ? names[type] : "unknown";
}

int vgf_header(const uint8_t hdr[VGF_HEADER], uint32_t max, uint32_t *payload_len, uint8_t *type)
{
	uint32_t len = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
	               (uint32_t)hdr[3] << 24;
	if (len < 1 || len > max)
		return -1;
	*payload_len = len - 1;
	*type = hdr[4];
	return 0;
}

int vgf_next_field(struct vgf_iter *it, struct vgf_field *out)
{
	if (!it->left)
		return 0;
	struct rd r = {it->p, it->end, 0};
	out->name = get_text(&r);
	out->type = get_u8(&r);
	out->entity_kind = get_text(&r);
	if (r.bad)
		return 0; /* validated by vgf_decode: cannot happen */
	it->p = r.p;
	it->left--;
	return 1;
}

int vgf_next_record(struct vgf_iter *it, struct vgf_record *out)
{
	if (!it->left)
		return 0;
	struct rd r = {it->p, it->end, 0};
	out->id = get_u16(&r);
	out->time_ns = get_u64(&r);
	out->tid = get_u32(&r);
	out->data = get_str(&r);
	if (r.bad)
		return 0;
	it->p = r.p;
	it->left--;
	return 1;
}

int vgf_decode(uint8_t type, const uint8_t *payload, size_t len, struct vgf_frame *f, char *err,
               size_t errsize)
{
	struct rd r = {payload, payload + len, 0};
	memset(f, 0, sizeof *f);
	f->type = type;
	switch (type) {
	case VGF_HELLO:
		f->u.hello.version = get_u16(&r);
		f->u.hello.token = get_str(&r);
		f->u.hello.host = get_text(&r);
		f->u.hello.pid = get_u32(&r);
		f->u.hello.start = get_u64(&r);
		f->u.hello.program = get_text(&r);
		f->u.hello.kind = get_u8(&r);
		if (f->u.hello.version >= 2)
			f->u.hello.secret = get_str(&r);
		if (!r.bad && f->u.hello.kind > VGF_KIND_PERL)
			return fail(err, errsize, "HELLO: unknown subject kind %u",
			            f->u.hello.kind);
		break;
	case VGF_WELCOME:
		f->u.welcome.session = get_u64(&r);
		f->u.welcome.acked = get_u64(&r);
		if (r.p < r.end)
			f->u.welcome.secret = get_str(&r);
		break;
	case VGF_METADATA:
		f->u.metadata.image = get_u32(&r);
		f->u.metadata.dir = get_text(&r);
		f->u.metadata.tsdl = get_text(&r);
		break;
	case VGF_PACKET:
		f->u.packet.image = get_u32(&r);
		f->u.packet.stream = get_text(&r);
		f->u.packet.seq = get_u64(&r);
		f->u.packet.packet = get_str(&r);
		break;
	case VGF_SCHEMA: {
		f->u.schema.id = get_u16(&r);
		f->u.schema.event = get_text(&r);
		f->u.schema.relation = get_text(&r);
		f->u.schema.kind = get_u8(&r);
		f->u.schema.placement = get_u8(&r);
		f->u.schema.strategy = get_u8(&r);
		f->u.schema.n = get_u16(&r);
		f->u.schema.fields.p = r.p;
		for (unsigned i = 0; i < f->u.schema.n && !r.bad; i++) {
			(void)get_text(&r);
			(void)get_u8(&r);
			(void)get_text(&r);
		}
		f->u.schema.fields.end = r.p;
		f->u.schema.fields.left = f->u.schema.n;
		break;
	}
	case VGF_RECORDS: {
		f->u.records.seq = get_u64(&r);
		f->u.records.n = get_u32(&r);
		f->u.records.records.p = r.p;
		/* Each record takes at least 18 bytes: a count cannot promise more than fit. */
		if (!r.bad && f->u.records.n > (size_t)(r.end - r.p) / 18)
			return fail(err, errsize, "RECORDS: %u records cannot fit in %zu bytes",
			            f->u.records.n, (size_t)(r.end - r.p));
		for (uint32_t i = 0; i < f->u.records.n && !r.bad; i++) {
			(void)get_u16(&r);
			(void)get_u64(&r);
			(void)get_u32(&r);
			(void)get_str(&r);
		}
		f->u.records.records.end = r.p;
		f->u.records.records.left = f->u.records.n;
		break;
	}
	case VGF_ACK:
		f->u.ack.seq = get_u64(&r);
		break;
	case VGF_CONTROL:
	case VGF_REPLY:
	case VGF_NOTE:
		f->u.line.line = get_text(&r);
		break;
	case VGF_BYE:
		break;
	default:
		return fail(err, errsize, "unknown frame type %u", type);
	}
	if (r.bad == 2)
		return fail(err, errsize, "%s: a string holds a NUL byte", vgf_type_name(type));
	if (r.bad)
		return fail(err, errsize, "%s: payload cut short (%zu bytes)", vgf_type_name(type),
		            len);
	if (r.p != r.end)
		return fail(err, errsize, "%s: %zu bytes after the payload", vgf_type_name(type),
		            (size_t)(r.end - r.p));
	return 0;
}

/* ---- encoding ---- */

static int grow(struct vgf_buf *b, size_t n)
{
	if (b->failed)
		return -1;
	if (b->len + n <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		b->failed = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void vgf_buf_free(struct vgf_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

void vgf_raw(struct vgf_buf *b, const void *p, size_t n)
{
	if (grow(b, n) < 0)
		return;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_le(struct vgf_buf *b, uint64_t v, int n)
{
	uint8_t tmp[8];
	for (int i = 0; i < n; i++)
		tmp[i] = (uint8_t)(v >> (8 * i));
	vgf_raw(b, tmp, (size_t)n);
}
void vgf_u8(struct vgf_buf *b, uint8_t v)
{
	put_le(b, v, 1);
}
void vgf_u16(struct vgf_buf *b, uint16_t v)
{
	put_le(b, v, 2);
}
void vgf_u32(struct vgf_buf *b, uint32_t v)
{
	put_le(b, v, 4);
}
void vgf_u64(struct vgf_buf *b, uint64_t v)
{
	put_le(b, v, 8);
}

void vgf_bytes(struct vgf_buf *b, const void *p, size_t n)
{
	vgf_u32(b, (uint32_t)n);
	vgf_raw(b, p, n);
}

void vgf_cstr(struct vgf_buf *b, const char *s)
{
	vgf_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

void vgf_begin(struct vgf_buf *b, uint8_t type)
{
	b->frame_start = b->len;
	vgf_u32(b, 0);
	vgf_u8(b, type);
}

void vgf_end(struct vgf_buf *b)
{
	if (b->failed)
		return;
	uint32_t n = (uint32_t)(b->len - b->frame_start - 4);
	for (int i = 0; i < 4; i++)
		b->p[b->frame_start + (size_t)i] = (uint8_t)(n >> (8 * i));
}

void vgf_put_hello(struct vgf_buf *b, const char *token, const char *host, uint32_t pid,
                   uint64_t start, const char *program, uint8_t kind, const uint8_t *secret,
                   size_t secret_len)
{
	vgf_begin(b, VGF_HELLO);
	vgf_u16(b, VGF_VERSION);
	vgf_cstr(b, token);
	vgf_cstr(b, host);
	vgf_u32(b, pid);
	vgf_u64(b, start);
	vgf_cstr(b, program);
	vgf_u8(b, kind);
	vgf_bytes(b, secret, secret_len);
	vgf_end(b);
}

void vgf_put_welcome(struct vgf_buf *b, uint64_t session, uint64_t acked, const uint8_t *secret,
                     size_t secret_len)
{
	vgf_begin(b, VGF_WELCOME);
	vgf_u64(b, session);
	vgf_u64(b, acked);
	if (secret)
		vgf_bytes(b, secret, secret_len);
	vgf_end(b);
}

void vgf_put_ack(struct vgf_buf *b, uint64_t seq)
{
	vgf_begin(b, VGF_ACK);
	vgf_u64(b, seq);
	vgf_end(b);
}

void vgf_put_line(struct vgf_buf *b, uint8_t type, const char *line)
{
	vgf_begin(b, type);
	vgf_cstr(b, line);
	vgf_end(b);
}

void vgf_put_bye(struct vgf_buf *b)
{
	vgf_begin(b, VGF_BYE);
	vgf_end(b);
}
