/* Frames of the collector protocol (docs/protocol.md): encoding and strictly bounded
 * decoding. No dependency but libc: the collector, the runtime's sender (compiled into
 * libvigil, hidden), the CLI and tests share it. Decoded strings point into the payload
 * (not NUL terminated). */
#ifndef VIGIL_WIRE_FRAME_H
#define VIGIL_WIRE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define VGW_VERSION 2                     /* 2: HELLO and WELCOME carry the session's secret */
#define VGW_SECRET_LEN 32                 /* bytes of the secret a collector issues */
#define VGW_HEADER 5                      /* uint32 length + uint8 type */
#define VGW_MAX_FRAME_DEFAULT (16u << 20) /* bytes after the length */

enum vgw_type {
	VGW_HELLO = 1,
	VGW_WELCOME,
	VGW_METADATA,
	VGW_PACKET,
	VGW_SCHEMA,
	VGW_RECORDS,
	VGW_ACK,
	VGW_CONTROL,
	VGW_REPLY,
	VGW_NOTE,
	VGW_BYE,
};
/* Who speaks: the C runtime, a generated writer (Python, Java, Perl), or a control peer. */
enum vgw_kind { VGW_KIND_C, VGW_KIND_PYTHON, VGW_KIND_JAVA, VGW_KIND_CONTROL, VGW_KIND_PERL };

struct vgw_str {
	const char *p;
	uint32_t n;
};

struct vgw_field {
	struct vgw_str name;
	uint8_t type; /* enum vg_field_type */
	struct vgw_str entity_kind;
};

struct vgw_record {
	uint16_t id;
	uint64_t time_ns;
	uint32_t tid;
	struct vgw_str data; /* the fields, record encoding (docs/encoding.md) */
};

/* Walks the validated schema fields or records of a decoded frame. */
struct vgw_iter {
	const uint8_t *p, *end;
	uint32_t left;
};

struct vgw_frame {
	uint8_t type;
	union {
		struct {
			uint16_t version;
			struct vgw_str token, host;
			uint32_t pid;
			uint64_t start;
			struct vgw_str program;
			uint8_t kind;
			struct vgw_str secret; /* version 2: empty on a first HELLO */
		} hello;
		struct {
			uint64_t session, acked;
			struct vgw_str secret; /* answering a version 2 HELLO */
		} welcome;
		struct {
			uint32_t image;
			struct vgw_str dir, tsdl;
		} metadata;
		struct {
			uint32_t image;
			struct vgw_str stream;
			uint64_t seq;
			struct vgw_str packet;
		} packet;
		struct {
			uint16_t id;
			struct vgw_str event, relation;
			uint8_t kind, placement, strategy;
			uint16_t n;
			struct vgw_iter fields;
		} schema;
		struct {
			uint64_t seq;
			uint32_t n;
			struct vgw_iter records;
		} records;
		struct {
			uint64_t seq;
		} ack;
		struct {
			struct vgw_str line; /* CONTROL, REPLY, NOTE */
		} line;
	} u;
};

/* Decodes one payload of the given type, checking every bound; trailing bytes are an
 * error. 0, or -1 with a one-line reason in err. */
int vgw_decode(uint8_t type, const uint8_t *payload, size_t len, struct vgw_frame *f, char *err,
               size_t errsize);
/* Next schema field / record of a decoded frame: 1, or 0 at the end. */
int vgw_next_field(struct vgw_iter *it, struct vgw_field *out);
int vgw_next_record(struct vgw_iter *it, struct vgw_record *out);
const char *vgw_type_name(uint8_t type);

/* Reads the 5-byte header: the payload length (bytes after the type) and the type. -1
 * when the length is below 1 or above max. */
int vgw_header(const uint8_t hdr[VGW_HEADER], uint32_t max, uint32_t *payload_len, uint8_t *type);

/* ---- encoding: a growable buffer; on allocation failure `failed` is set ---- */
struct vgw_buf {
	uint8_t *p;
	size_t len, cap;
	int failed;
	size_t frame_start;
};
void vgw_buf_free(struct vgw_buf *b);
void vgw_begin(struct vgw_buf *b, uint8_t type); /* starts a frame (length filled by end) */
void vgw_end(struct vgw_buf *b);
void vgw_u8(struct vgw_buf *b, uint8_t v);
void vgw_u16(struct vgw_buf *b, uint16_t v);
void vgw_u32(struct vgw_buf *b, uint32_t v);
void vgw_u64(struct vgw_buf *b, uint64_t v);
void vgw_bytes(struct vgw_buf *b, const void *p, size_t n); /* uint32 n, then n bytes */
void vgw_cstr(struct vgw_buf *b, const char *s);
void vgw_raw(struct vgw_buf *b, const void *p, size_t n);

/* Whole frames. */
/* Version 2, with the secret of the session resumed (NULL, 0: none yet). */
void vgw_put_hello(struct vgw_buf *b, const char *token, const char *host, uint32_t pid,
                   uint64_t start, const char *program, uint8_t kind, const uint8_t *secret,
                   size_t secret_len);
/* secret NULL: the version 1 WELCOME (no secret field). */
void vgw_put_welcome(struct vgw_buf *b, uint64_t session, uint64_t acked, const uint8_t *secret,
                     size_t secret_len);
void vgw_put_ack(struct vgw_buf *b, uint64_t seq);
void vgw_put_line(struct vgw_buf *b, uint8_t type, const char *line);
void vgw_put_bye(struct vgw_buf *b);

#endif
