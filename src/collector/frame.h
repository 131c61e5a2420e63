/* Frames of the collector protocol (docs/protocol.md): encoding and strictly bounded
 * decoding. No dependency but libc: the collector, the runtime's sender (compiled into
 * libvigil, hidden), the CLI and tests share it. Decoded strings point into the payload
 * (not NUL terminated). */
#ifndef VIGIL_COLLECTOR_FRAME_H
#define VIGIL_COLLECTOR_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define VGF_VERSION 2                     /* 2: HELLO and WELCOME carry the session's secret */
#define VGF_SECRET_LEN 32                 /* bytes of the secret a collector issues */
#define VGF_HEADER 5                      /* uint32 length + uint8 type */
#define VGF_MAX_FRAME_DEFAULT (16u << 20) /* bytes after the length */

enum vgf_type {
	VGF_HELLO = 1,
	VGF_WELCOME,
	VGF_METADATA,
	VGF_PACKET,
	VGF_SCHEMA,
	VGF_RECORDS,
	VGF_ACK,
	VGF_CONTROL,
	VGF_REPLY,
	VGF_NOTE,
	VGF_BYE,
};
/* Who speaks: the C runtime, a generated writer (Python, Java, Perl), or a control peer. */
enum vgf_kind { VGF_KIND_C, VGF_KIND_PYTHON, VGF_KIND_JAVA, VGF_KIND_CONTROL, VGF_KIND_PERL };

struct vgf_str {
	const char *p;
	uint32_t n;
};

struct vgf_field {
	struct vgf_str name;
	uint8_t type; /* enum vg_field_type */
	struct vgf_str entity_kind;
};

struct vgf_record {
	uint16_t id;
	uint64_t time_ns;
	uint32_t tid;
	struct vgf_str data; /* the fields, record encoding (docs/encoding.md) */
};

/* Walks the validated schema fields or records of a decoded frame. */
struct vgf_iter {
	const uint8_t *p, *end;
	uint32_t left;
};

struct vgf_frame {
	uint8_t type;
	union {
		struct {
			uint16_t version;
			struct vgf_str token, host;
			uint32_t pid;
			uint64_t start;
			struct vgf_str program;
			uint8_t kind;
			struct vgf_str secret; /* version 2: empty on a first HELLO */
		} hello;
		struct {
			uint64_t session, acked;
			struct vgf_str secret; /* answering a version 2 HELLO */
		} welcome;
		struct {
			uint32_t image;
			struct vgf_str dir, tsdl;
		} metadata;
		struct {
			uint32_t image;
			struct vgf_str stream;
			uint64_t seq;
			struct vgf_str packet;
		} packet;
		struct {
			uint16_t id;
			struct vgf_str event, relation;
			uint8_t kind, placement, strategy;
			uint16_t n;
			struct vgf_iter fields;
		} schema;
		struct {
			uint64_t seq;
			uint32_t n;
			struct vgf_iter records;
		} records;
		struct {
			uint64_t seq;
		} ack;
		struct {
			struct vgf_str line; /* CONTROL, REPLY, NOTE */
		} line;
	} u;
};

/* Decodes one payload of the given type, checking every bound; trailing bytes are an
 * error. 0, or -1 with a one-line reason in err. */
int vgf_decode(uint8_t type, const uint8_t *payload, size_t len, struct vgf_frame *f, char *err,
               size_t errsize);
/* Next schema field / record of a decoded frame: 1, or 0 at the end. */
int vgf_next_field(struct vgf_iter *it, struct vgf_field *out);
int vgf_next_record(struct vgf_iter *it, struct vgf_record *out);
const char *vgf_type_name(uint8_t type);

/* Reads the 5-byte header: the payload length (bytes after the type) and the type. -1
 * when the length is below 1 or above max. */
int vgf_header(const uint8_t hdr[VGF_HEADER], uint32_t max, uint32_t *payload_len, uint8_t *type);

/* ---- encoding: a growable buffer; on allocation failure `failed` is set ---- */
struct vgf_buf {
	uint8_t *p;
	size_t len, cap;
	int failed;
	size_t frame_start;
};
void vgf_buf_free(struct vgf_buf *b);
void vgf_begin(struct vgf_buf *b, uint8_t type); /* starts a frame (length filled by end) */
void vgf_end(struct vgf_buf *b);
void vgf_u8(struct vgf_buf *b, uint8_t v);
void vgf_u16(struct vgf_buf *b, uint16_t v);
void vgf_u32(struct vgf_buf *b, uint32_t v);
void vgf_u64(struct vgf_buf *b, uint64_t v);
void vgf_bytes(struct vgf_buf *b, const void *p, size_t n); /* uint32 n, then n bytes */
void vgf_cstr(struct vgf_buf *b, const char *s);
void vgf_raw(struct vgf_buf *b, const void *p, size_t n);

/* Whole frames. */
/* Version 2, with the secret of the session resumed (NULL, 0: none yet). */
void vgf_put_hello(struct vgf_buf *b, const char *token, const char *host, uint32_t pid,
                   uint64_t start, const char *program, uint8_t kind, const uint8_t *secret,
                   size_t secret_len);
/* secret NULL: the version 1 WELCOME (no secret field). */
void vgf_put_welcome(struct vgf_buf *b, uint64_t session, uint64_t acked, const uint8_t *secret,
                     size_t secret_len);
void vgf_put_ack(struct vgf_buf *b, uint64_t seq);
void vgf_put_line(struct vgf_buf *b, uint8_t type, const char *line);
void vgf_put_bye(struct vgf_buf *b);

#endif
