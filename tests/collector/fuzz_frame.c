/* libFuzzer target of the collector's frame decoder (src/wire/frame.c): the first
 * byte is the frame type, the rest its payload. Any bytes decode or fail with a reason,
 * never read out of bounds; what decodes walks its fields and records to the end, and a
 * decoded HELLO encodes back to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t hdr[VGW_HEADER];
	uint32_t plen;
	uint8_t type;
	memset(hdr, 0, sizeof hdr);
	memcpy(hdr, data, size < VGW_HEADER ? size : VGW_HEADER);
	(void)vgw_header(hdr, VGW_MAX_FRAME_DEFAULT, &plen, &type);
	/* An exact-size copy, so that ASan sees any read past the payload. */
	uint8_t *p = malloc(size - 1 ? size - 1 : 1);
	memcpy(p, data + 1, size - 1);
	struct vgw_frame f;
	char err[256];
	if (vgw_decode(data[0], p, size - 1, &f, err, sizeof err) == 0) {
		if (f.type == VGW_SCHEMA) {
			struct vgw_field fd;
			unsigned n = 0;
			while (vgw_next_field(&f.u.schema.fields, &fd))
				n++;
			if (n != f.u.schema.n)
				abort();
		} else if (f.type == VGW_RECORDS) {
			struct vgw_record r;
			uint32_t n = 0;
			while (vgw_next_record(&f.u.records.records, &r))
				n++;
			if (n != f.u.records.n)
				abort();
		} else if (f.type == VGW_HELLO && f.u.hello.token.n == 0) {
			/* Strings without NUL round-trip through the encoder. */
			char host[512], prog[512];
			if (f.u.hello.host.n < sizeof host && f.u.hello.program.n < sizeof prog &&
			    f.u.hello.version == VGW_VERSION) {
				memcpy(host, f.u.hello.host.p, f.u.hello.host.n);
				host[f.u.hello.host.n] = 0;
				memcpy(prog, f.u.hello.program.p, f.u.hello.program.n);
				prog[f.u.hello.program.n] = 0;
				struct vgw_buf b = {0};
				vgw_put_hello(&b, "", host, f.u.hello.pid, f.u.hello.start, prog,
				              f.u.hello.kind, (const uint8_t *)f.u.hello.secret.p,
				              f.u.hello.secret.n);
				if (!b.failed &&
				    (b.len != size + 4 || memcmp(b.p + VGW_HEADER, p, size - 1)))
					abort();
				vgw_buf_free(&b);
			}
		}
	} else if (!err[0]) {
		abort(); /* a failure always says why */
	}
	free(p);
	return 0;
}
