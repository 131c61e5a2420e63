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

static struct vgw_str get_str(struct rd *r)
{
	struct vgw_str s = {NULL, 0};
	uint32_t n = get_u32(r);
	if (!need(r, n))
		return s;
	s.p = (const char *)r->p;
	s.n = n;
	r->p += n;
	return s;
}

/* Text strings (names, hosts, TSDL, lines) must not contain NUL. */
static struct vgw_str get_text(struct rd *r)
{
	struct vgw_str s = get_str(r);
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

const char *vgw_type_name(uint8_t type)
{
	static const char *const names[] = {"?",       "HELLO",  "WELCOME", "METADATA",
	                                    "PACKET",  "SCHEMA", "RECORDS", "ACK",
	                                    "CONTROL", "REPLY",  "NOTE",    "BYE"};
	return type <= VGW_BYE ? names[type] : "unknown";
}

int vgw_header(const uint8_t hdr[VGW_HEADER], uint32_t max, uint32_t *payload_len, uint8_t *type)
{
	uint32_t len = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
	               (uint32_t)hdr[3] << 24;
	if (len < 1 || len > max)
		return -1;
	*payload_len = len - 1;
	*type = hdr[4];
	return 0;
}

int vgw_next_field(struct vgw_iter *it, struct vgw_field *out)
{
	if (!it->left)
		return 0;
	struct rd r = {it->p, it->end, 0};
	out->name = get_text(&r);
	out->type = get_u8(&r);
	out->entity_kind = get_text(&r);
	if (r.bad)
		return 0; /* validated by vgw_decode: cannot happen */
	it->p = r.p;
	it->left--;
	return 1;
}

int vgw_next_record(struct vgw_iter *it, struct vgw_record *out)
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

int vgw_decode(uint8_t type, const uint8_t *payload, size_t len, struct vgw_frame *f, char *err,
               size_t errsize)
{
	struct rd r = {payload, payload + len, 0};
	memset(f, 0, sizeof *f);
	f->type = type;
	switch (type) {
	case VGW_HELLO:
		f->u.hello.version = get_u16(&r);
		f->u.hello.token = get_str(&r);
		f->u.hello.host = get_text(&r);
		f->u.hello.pid = get_u32(&r);
		f->u.hello.start = get_u64(&r);
		f->u.hello.program = get_text(&r);
		f->u.hello.kind = get_u8(&r);
		if (f->u.hello.version >= 2)
			f->u.hello.secret = get_str(&r);
		if (!r.bad && f->u.hello.kind > VGW_KIND_PERL)
			return fail(err, errsize, "HELLO: unknown subject kind %u",
			            f->u.hello.kind);
		break;
	case VGW_WELCOME:
		f->u.welcome.session = get_u64(&r);
		f->u.welcome.acked = get_u64(&r);
		if (r.p < r.end)
			f->u.welcome.secret = get_str(&r);
		break;
	case VGW_METADATA:
		f->u.metadata.image = get_u32(&r);
		f->u.metadata.dir = get_text(&r);
		f->u.metadata.tsdl = get_text(&r);
		break;
	case VGW_PACKET:
		f->u.packet.image = get_u32(&r);
		f->u.packet.stream = get_text(&r);
		f->u.packet.seq = get_u64(&r);
		f->u.packet.packet = get_str(&r);
		break;
	case VGW_SCHEMA: {
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
	case VGW_RECORDS: {
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
	case VGW_ACK:
		f->u.ack.seq = get_u64(&r);
		break;
	case VGW_CONTROL:
	case VGW_REPLY:
	case VGW_NOTE:
		f->u.line.line = get_text(&r);
		break;
	case VGW_BYE:
		break;
	default:
		return fail(err, errsize, "unknown frame type %u", type);
	}
	if (r.bad == 2)
		return fail(err, errsize, "%s: a string holds a NUL byte", vgw_type_name(type));
	if (r.bad)
		return fail(err, errsize, "%s: payload cut short (%zu bytes)", vgw_type_name(type),
		            len);
	if (r.p != r.end)
		return fail(err, errsize, "%s: %zu bytes after the payload", vgw_type_name(type),
		            (size_t)(r.end - r.p));
	return 0;
}

/* ---- encoding ---- */

static int grow(struct vgw_buf *b, size_t n)
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

void vgw_buf_free(struct vgw_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

void vgw_raw(struct vgw_buf *b, const void *p, size_t n)
{
	if (grow(b, n) < 0)
		return;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_le(struct vgw_buf *b, uint64_t v, int n)
{
	uint8_t tmp[8];
	for (int i = 0; i < n; i++)
		tmp[i] = (uint8_t)(v >> (8 * i));
	vgw_raw(b, tmp, (size_t)n);
}
void vgw_u8(struct vgw_buf *b, uint8_t v)
{
	put_le(b, v, 1);
}
void vgw_u16(struct vgw_buf *b, uint16_t v)
{
	put_le(b, v, 2);
}
void vgw_u32(struct vgw_buf *b, uint32_t v)
{
	put_le(b, v, 4);
}
void vgw_u64(struct vgw_buf *b, uint64_t v)
{
	put_le(b, v, 8);
}

void vgw_bytes(struct vgw_buf *b, const void *p, size_t n)
{
	vgw_u32(b, (uint32_t)n);
	vgw_raw(b, p, n);
}

void vgw_cstr(struct vgw_buf *b, const char *s)
{
	vgw_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

void vgw_begin(struct vgw_buf *b, uint8_t type)
{
	b->frame_start = b->len;
	vgw_u32(b, 0);
	vgw_u8(b, type);
}

void vgw_end(struct vgw_buf *b)
{
	if (b->failed)
		return;
	uint32_t n = (uint32_t)(b->len - b->frame_start - 4);
	for (int i = 0; i < 4; i++)
		b->p[b->frame_start + (size_t)i] = (uint8_t)(n >> (8 * i));
}

void vgw_put_hello(struct vgw_buf *b, const char *token, const char *host, uint32_t pid,
                   uint64_t start, const char *program, uint8_t kind, const uint8_t *secret,
                   size_t secret_len)
{
	vgw_begin(b, VGW_HELLO);
	vgw_u16(b, VGW_VERSION);
	vgw_cstr(b, token);
	vgw_cstr(b, host);
	vgw_u32(b, pid);
	vgw_u64(b, start);
	vgw_cstr(b, program);
	vgw_u8(b, kind);
	vgw_bytes(b, secret, secret_len);
	vgw_end(b);
}

void vgw_put_welcome(struct vgw_buf *b, uint64_t session, uint64_t acked, const uint8_t *secret,
                     size_t secret_len)
{
	vgw_begin(b, VGW_WELCOME);
	vgw_u64(b, session);
	vgw_u64(b, acked);
	if (secret)
		vgw_bytes(b, secret, secret_len);
	vgw_end(b);
}

void vgw_put_ack(struct vgw_buf *b, uint64_t seq)
{
	vgw_begin(b, VGW_ACK);
	vgw_u64(b, seq);
	vgw_end(b);
}

void vgw_put_line(struct vgw_buf *b, uint8_t type, const char *line)
{
	vgw_begin(b, type);
	vgw_cstr(b, line);
	vgw_end(b);
}

void vgw_put_bye(struct vgw_buf *b)
{
	vgw_begin(b, VGW_BYE);
	vgw_end(b);
}
