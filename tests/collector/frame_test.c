/* Unit test of the collector's frame codec: every frame encodes and decodes back, and
 * every cut of a valid payload (and every extra byte) is refused with a reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/frame.h"

static int failures;
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: FAIL %s\n", __FILE__, __LINE__, #c);               \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static int str_eq(struct vgw_str s, const char *c)
{
	return s.n == strlen(c) && !memcmp(s.p, c, s.n);
}

/* Decodes the single frame in b, then checks every shorter and one longer payload fail. */
static void decode_one(struct vgw_buf *b, struct vgw_frame *f)
{
	uint32_t plen;
	uint8_t type;
	CHECK(!b->failed);
	CHECK(vgw_header(b->p, VGW_MAX_FRAME_DEFAULT, &plen, &type) == 0);
	CHECK(plen + VGW_HEADER == b->len);
	char err[200];
	CHECK(vgw_decode(type, b->p + VGW_HEADER, plen, f, err, sizeof err) == 0);
	for (uint32_t cut = 0; cut < plen; cut++) {
		struct vgw_frame g;
		err[0] = 0;
		if (type == VGW_BYE)
			break;
		CHECK(vgw_decode(type, b->p + VGW_HEADER, cut, &g, err, sizeof err) < 0 && err[0]);
	}
	uint8_t *longer = malloc(plen + 1);
	memcpy(longer, b->p + VGW_HEADER, plen);
	longer[plen] = 0;
	struct vgw_frame g;
	CHECK(vgw_decode(type, longer, plen + 1, &g, err, sizeof err) < 0);
	free(longer);
}

int main(void)
{
	struct vgw_buf b = {0};
	struct vgw_frame f;
	char err[200];

	const uint8_t secret[VGW_SECRET_LEN] = {1, 2, 3, [31] = 0xff};
	vgw_put_hello(&b, "tok", "host1", 42, 99, "prog", VGW_KIND_PYTHON, secret, sizeof secret);
	decode_one(&b, &f);
	CHECK(f.type == VGW_HELLO && f.u.hello.version == 2 && str_eq(f.u.hello.token, "tok") &&
	      str_eq(f.u.hello.host, "host1") && f.u.hello.pid == 42 && f.u.hello.start == 99 &&
	      str_eq(f.u.hello.program, "prog") && f.u.hello.kind == VGW_KIND_PYTHON &&
	      f.u.hello.secret.n == VGW_SECRET_LEN &&
	      !memcmp(f.u.hello.secret.p, secret, VGW_SECRET_LEN));
	/* Version 1 (the Python and Java writers): no secret field. */
	b.p[VGW_HEADER] = 1;
	CHECK(vgw_decode(VGW_HELLO, b.p + VGW_HEADER, (uint32_t)b.len - VGW_HEADER, &f, err,
	                 sizeof err) < 0); /* its secret is bytes left over */
	b.len -= 4 + VGW_SECRET_LEN;
	CHECK(vgw_decode(VGW_HELLO, b.p + VGW_HEADER, (uint32_t)b.len - VGW_HEADER, &f, err,
	                 sizeof err) == 0 &&
	      f.u.hello.version == 1 && f.u.hello.secret.n == 0);
	b.len = 0;

	vgw_put_welcome(&b, 7, 1234567890123ull, NULL, 0);
	decode_one(&b, &f);
	CHECK(f.u.welcome.session == 7 && f.u.welcome.acked == 1234567890123ull &&
	      f.u.welcome.secret.n == 0);
	b.len = 0;
	vgw_put_welcome(&b, 7, 5, secret, sizeof secret); /* cut at 16 bytes: version 1 */
	CHECK(vgw_decode(VGW_WELCOME, b.p + VGW_HEADER, (uint32_t)b.len - VGW_HEADER, &f, err,
	                 sizeof err) == 0);
	CHECK(f.u.welcome.acked == 5 && f.u.welcome.secret.n == VGW_SECRET_LEN &&
	      !memcmp(f.u.welcome.secret.p, secret, VGW_SECRET_LEN));
	b.len = 0;

	vgw_begin(&b, VGW_METADATA);
	vgw_u32(&b, 3);
	vgw_cstr(&b, "img-1-0");
	vgw_cstr(&b, "/* CTF 1.8 */");
	vgw_end(&b);
	decode_one(&b, &f);
	CHECK(f.u.metadata.image == 3 && str_eq(f.u.metadata.dir, "img-1-0"));
	b.len = 0;

	vgw_begin(&b, VGW_PACKET);
	vgw_u32(&b, 1);
	vgw_cstr(&b, "stream-1-0");
	vgw_u64(&b, 5);
	vgw_bytes(&b, "\0\1\2", 3);
	vgw_end(&b);
	decode_one(&b, &f);
	CHECK(f.u.packet.seq == 5 && f.u.packet.packet.n == 3 && f.u.packet.packet.p[2] == 2);
	b.len = 0;

	vgw_begin(&b, VGW_SCHEMA);
	vgw_u16(&b, 9);
	vgw_cstr(&b, "a.B");
	vgw_cstr(&b, "");
	vgw_u8(&b, 1);
	vgw_u8(&b, 0);
	vgw_u8(&b, 0);
	vgw_u16(&b, 2);
	vgw_cstr(&b, "x");
	vgw_u8(&b, 7);
	vgw_cstr(&b, "");
	vgw_cstr(&b, "who");
	vgw_u8(&b, 11);
	vgw_cstr(&b, "User");
	vgw_end(&b);
	decode_one(&b, &f);
	struct vgw_field fd;
	CHECK(vgw_next_field(&f.u.schema.fields, &fd) && str_eq(fd.name, "x") && fd.type == 7);
	CHECK(vgw_next_field(&f.u.schema.fields, &fd) && str_eq(fd.entity_kind, "User"));
	CHECK(!vgw_next_field(&f.u.schema.fields, &fd));
	b.len = 0;

	vgw_begin(&b, VGW_RECORDS);
	vgw_u64(&b, 11);
	vgw_u32(&b, 2);
	for (int i = 0; i < 2; i++) {
		vgw_u16(&b, 9);
		vgw_u64(&b, 1000 + (uint64_t)i);
		vgw_u32(&b, 77);
		vgw_bytes(&b, "abc", (size_t)i * 3);
	}
	vgw_end(&b);
	decode_one(&b, &f);
	struct vgw_record r;
	CHECK(f.u.records.seq == 11 && f.u.records.n == 2);
	CHECK(vgw_next_record(&f.u.records.records, &r) && r.time_ns == 1000 && r.data.n == 0);
	CHECK(vgw_next_record(&f.u.records.records, &r) && r.tid == 77 && str_eq(r.data, "abc"));
	CHECK(!vgw_next_record(&f.u.records.records, &r));
	b.len = 0;

	vgw_put_ack(&b, 12);
	decode_one(&b, &f);
	CHECK(f.u.ack.seq == 12);
	b.len = 0;
	vgw_put_line(&b, VGW_REPLY, "ok 1 2");
	decode_one(&b, &f);
	CHECK(str_eq(f.u.line.line, "ok 1 2"));
	b.len = 0;
	vgw_put_bye(&b);
	decode_one(&b, &f);
	b.len = 0;

	/* A record count that cannot fit, a NUL in a text, unknown types and kinds. */
	uint8_t many[12] = {1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
	CHECK(vgw_decode(VGW_RECORDS, many, sizeof many, &f, err, sizeof err) < 0);
	uint8_t nul[8] = {3, 0, 0, 0, 'a', 0, 'b', 0};
	CHECK(vgw_decode(VGW_NOTE, nul, 7, &f, err, sizeof err) < 0 && strstr(err, "NUL"));
	CHECK(vgw_decode(0, nul, 0, &f, err, sizeof err) < 0);
	CHECK(vgw_decode(200, nul, 0, &f, err, sizeof err) < 0);
	vgw_put_hello(&b, "", "h", 1, 1, "p", 9, NULL, 0);
	CHECK(vgw_decode(VGW_HELLO, b.p + VGW_HEADER, (uint32_t)b.len - VGW_HEADER, &f, err,
	                 sizeof err) < 0);
	b.len = 0; /* the last kind (Perl) is known, the next one is not */
	vgw_put_hello(&b, "", "h", 1, 1, "p", VGW_KIND_PERL, NULL, 0);
	CHECK(vgw_decode(VGW_HELLO, b.p + VGW_HEADER, (uint32_t)b.len - VGW_HEADER, &f, err,
	                 sizeof err) == 0 &&
	      f.u.hello.kind == VGW_KIND_PERL);
	b.len = 0;
	vgw_put_hello(&b, "", "h", 1, 1, "p", VGW_KIND_PERL + 1, NULL, 0);
	CHECK(vgw_decode(VGW_HELLO, b.p + VGW_HEADER, (uint32_t)b.len - VGW_HEADER, &f, err,
	                 sizeof err) < 0 &&
	      strstr(err, "unknown subject kind"));
	uint8_t hdr[5] = {0, 0, 0, 0, 1};
	uint32_t plen;
	uint8_t type;
	CHECK(vgw_header(hdr, 100, &plen, &type) < 0); /* length 0: no type */
	hdr[0] = 101;
	CHECK(vgw_header(hdr, 100, &plen, &type) < 0);
	hdr[0] = 100;
	CHECK(vgw_header(hdr, 100, &plen, &type) == 0 && plen == 99 && type == 1);
	vgw_buf_free(&b);
	if (failures)
		return 1;
	puts("ok");
	return 0;
}
