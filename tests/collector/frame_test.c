/* Unit test of the collector's frame codec: every frame encodes and decodes back, and
 * every cut of a valid payload (and every extra byte) is refused with a reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

static int failures;
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: FAIL %s\n", __FILE__, __LINE__, #c);               \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static int str_eq(struct vgf_str s, const char *c)
{
	return s.n == strlen(c) && !memcmp(s.p, c, s.n);
}

/* Decodes the single frame in b, then checks every shorter and one longer payload fail. */
static void decode_one(struct vgf_buf *b, struct vgf_frame *f)
{
	uint32_t plen;
	uint8_t type;
	CHECK(!b->failed);
	CHECK(vgf_header(b->p, VGF_MAX_FRAME_DEFAULT, &plen, &type) == 0);
	CHECK(plen + VGF_HEADER == b->len);
	char err[200];
	CHECK(vgf_decode(type, b->p + VGF_HEADER, plen, f, err, sizeof err) == 0);
	for (uint32_t cut = 0; cut < plen; cut++) {
		struct vgf_frame g;
		err[0] = 0;
		if (type == VGF_BYE)
			break;
		CHECK(vgf_decode(type, b->p + VGF_HEADER, cut, &g, err, sizeof err) < 0 && err[0]);
	}
	uint8_t *longer = malloc(plen + 1);
	memcpy(longer, b->p + VGF_HEADER, plen);
	longer[plen] = 0;
	struct vgf_frame g;
	CHECK(vgf_decode(type, longer, plen + 1, &g, err, sizeof err) < 0);
	free(longer);
}

int main(void)
{
	struct vgf_buf b = {0};
	struct vgf_frame f;
	char err[200];

	const uint8_t secret[VGF_SECRET_LEN] = {1, 2, 3, [31] = 0xff};
	vgf_put_hello(&b, "tok", "host1", 42, 99, "prog", VGF_KIND_PYTHON, secret, sizeof secret);
	decode_one(&b, &f);
	CHECK(f.type == VGF_HELLO && f.u.hello.version == 2 && str_eq(f.u.hello.token, "tok") &&
	      str_eq(f.u.hello.host, "host1") && f.u.hello.pid == 42 && f.u.hello.start == 99 &&
	      str_eq(f.u.hello.program, "prog") && f.u.hello.kind == VGF_KIND_PYTHON &&
	      f.u.hello.secret.n == VGF_SECRET_LEN &&
	      !memcmp(f.u.hello.secret.p, secret, VGF_SECRET_LEN));
	/* Version 1 (the Python and Java writers): no secret field. */
	b.p[VGF_HEADER] = 1;
	CHECK(vgf_decode(VGF_HELLO, b.p + VGF_HEADER, (uint32_t)b.len - VGF_HEADER, &f, err,
	                 sizeof err) < 0); /* its secret is bytes left over */
	b.len -= 4 + VGF_SECRET_LEN;
	CHECK(vgf_decode(VGF_HELLO, b.p + VGF_HEADER, (uint32_t)b.len - VGF_HEADER, &f, err,
	                 sizeof err) == 0 &&
	      f.u.hello.version == 1 && f.u.hello.secret.n == 0);
	b.len = 0;

	vgf_put_welcome(&b, 7, 1234567890123ull, NULL, 0);
	decode_one(&b, &f);
	CHECK(f.u.welcome.session == 7 && f.u.welcome.acked == 1234567890123ull &&
	      f.u.welcome.secret.n == 0);
	b.len = 0;
	vgf_put_welcome(&b, 7, 5, secret, sizeof secret); /* cut at 16 bytes: version 1 */
	CHECK(vgf_decode(VGF_WELCOME, b.p + VGF_HEADER, (uint32_t)b.len - VGF_HEADER, &f, err,
	                 sizeof err) == 0);
	CHECK(f.u.welcome.acked == 5 && f.u.welcome.secret.n == VGF_SECRET_LEN &&
	      !memcmp(f.u.welcome.secret.p, secret, VGF_SECRET_LEN));
	b.len = 0;

	vgf_begin(&b, VGF_METADATA);
	vgf_u32(&b, 3);
	vgf_cstr(&b, "img-1-0");
	vgf_cstr(&b, "/* CTF 1.8 */");
	vgf_end(&b);
	decode_one(&b, &f);
	CHECK(f.u.metadata.image == 3 && str_eq(f.u.metadata.dir, "img-1-0"));
	b.len = 0;

	vgf_begin(&b, VGF_PACKET);
	vgf_u32(&b, 1);
	vgf_cstr(&b, "stream-1-0");
	vgf_u64(&b, 5);
	vgf_bytes(&b, "\0\1\2", 3);
	vgf_end(&b);
	decode_one(&b, &f);
	CHECK(f.u.packet.seq == 5 && f.u.packet.packet.n == 3 && f.u.packet.packet.p[2] == 2);
	b.len = 0;

	vgf_begin(&b, VGF_SCHEMA);
	vgf_u16(&b, 9);
	vgf_cstr(&b, "a.B");
	vgf_cstr(&b, "");
	vgf_u8(&b, 1);
	vgf_u8(&b, 0);
	vgf_u8(&b, 0);
	vgf_u16(&b, 2);
	vgf_cstr(&b, "x");
	vgf_u8(&b, 7);
	vgf_cstr(&b, "");
	vgf_cstr(&b, "who");
	vgf_u8(&b, 11);
	vgf_cstr(&b, "User");
	vgf_end(&b);
	decode_one(&b, &f);
	struct vgf_field fd;
	CHECK(vgf_next_field(&f.u.schema.fields, &fd) && str_eq(fd.name, "x") && fd.type == 7);
	CHECK(vgf_next_field(&f.u.schema.fields, &fd) && str_eq(fd.entity_kind, "User"));
	CHECK(!vgf_next_field(&f.u.schema.fields, &fd));
	b.len = 0;

	vgf_begin(&b, VGF_RECORDS);
	vgf_u64(&b, 11);
	vgf_u32(&b, 2);
	for (int i = 0; i < 2; i++) {
		vgf_u16(&b, 9);
		vgf_u64(&b, 1000 + (uint64_t)i);
		vgf_u32(&b, 77);
		vgf_bytes(&b, "abc", (size_t)i * 3);
	}
	vgf_end(&b);
	decode_one(&b, &f);
	struct vgf_record r;
	CHECK(f.u.records.seq == 11 && f.u.records.n == 2);
	CHECK(vgf_next_record(&f.u.records.records, &r) && r.time_ns == 1000 && r.data.n == 0);
	CHECK(vgf_next_record(&f.u.records.records, &r) && r.tid == 77 && str_eq(r.data, "abc"));
	CHECK(!vgf_next_record(&f.u.records.records, &r));
	b.len = 0;

	vgf_put_ack(&b, 12);
	decode_one(&b, &f);
	CHECK(f.u.ack.seq == 12);
	b.len = 0;
	vgf_put_line(&b, VGF_REPLY, "ok 1 2");
	decode_one(&b, &f);
	CHECK(str_eq(f.u.line.line, "ok 1 2"));
	b.len = 0;
	vgf_put_bye(&b);
	decode_one(&b, &f);
	b.len = 0;

	/* A record count that cannot fit, a NUL in a text, unknown types and kinds. */
	uint8_t many[12] = {1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
	CHECK(vgf_decode(VGF_RECORDS, many, sizeof many, &f, err, sizeof err) < 0);
	uint8_t nul[8] = {3, 0, 0, 0, 'a', 0, 'b', 0};
	CHECK(vgf_decode(VGF_NOTE, nul, 7, &f, err, sizeof err) < 0 && strstr(err, "NUL"));
	CHECK(vgf_decode(0, nul, 0, &f, err, sizeof err) < 0);
	CHECK(vgf_decode(200, nul, 0, &f, err, sizeof err) < 0);
	vgf_put_hello(&b, "", "h", 1, 1, "p", 9, NULL, 0);
	CHECK(vgf_decode(VGF_HELLO, b.p + VGF_HEADER, (uint32_t)b.len - VGF_HEADER, &f, err,
	                 sizeof err) < 0);
	b.len = 0; /* the last kind (Perl) is known, the next one is not */
	vgf_put_hello(&b, "", "h", 1, 1, "p", VGF_KIND_PERL, NULL, 0);
	CHECK(vgf_decode(VGF_HELLO, b.p + VGF_HEADER, (uint32_t)b.len - VGF_HEADER, &f, err,
	                 sizeof err) == 0 &&
	      f.u.hello.kind == VGF_KIND_PERL);
	b.len = 0;
	vgf_put_hello(&b, "", "h", 1, 1, "p", VGF_KIND_PERL + 1, NULL, 0);
	CHECK(vgf_decode(VGF_HELLO, b.p + VGF_HEADER, (uint32_t)b.len - VGF_HEADER, &f, err,
	                 sizeof err) < 0 &&
	      strstr(err, "unknown subject kind"));
	uint8_t hdr[5] = {0, 0, 0, 0, 1};
	uint32_t plen;
	uint8_t type;
	CHECK(vgf_header(hdr, 100, &plen, &type) < 0); /* length 0: no type */
	hdr[0] = 101;
	CHECK(vgf_header(hdr, 100, &plen, &type) < 0);
	hdr[0] = 100;
	CHECK(vgf_header(hdr, 100, &plen, &type) == 0 && plen == 99 && type == 1);
	vgf_buf_free(&b);
	if (failures)
		return 1;
	puts("ok");
	return 0;
}
