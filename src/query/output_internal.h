/* Pieces shared by the writers of output*.c: a buffered sink with a sticky write error,
 * UTF-8 validation, and number texts. */
#ifndef VIGIL_QUERY_OUTPUT_INTERNAL_H
#define VIGIL_QUERY_OUTPUT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "query/output.h"

/* Text is gathered in buf and written in large chunks; the first failed write is kept
 * (err = its errno) and everything after it is dropped. */
struct vgq_sink {
	FILE *out;
	struct vgq_text buf;
	int err;
};

void vgq_sink_init(struct vgq_sink *s, FILE *out);
/* Writes buf out when it holds at least a chunk (call after each line). */
void vgq_sink_maybe_flush(struct vgq_sink *s);
/* Writes what is left, flushes out, frees buf. 0, or -1 with errno set. */
int vgq_sink_finish(struct vgq_sink *s);

/* Most pieces are short and fit: copied without a call (the buffer is then not
 * NUL-terminated until the next vgq_text_put, which the sink does not need). */
static inline void vgq_sink_put(struct vgq_sink *s, const char *p, size_t n)
{
	if (s->buf.cap - s->buf.len > n) {
		memcpy(s->buf.ptr + s->buf.len, p, n);
		s->buf.len += n;
	} else {
		vgq_text_put(&s->buf, p, n);
	}
}

static inline void vgq_sink_puts(struct vgq_sink *s, const char *p)
{
	vgq_text_put(&s->buf, p, strlen(p));
}

static inline void vgq_sink_putc(struct vgq_sink *s, char c)
{
	if (s->buf.cap - s->buf.len > 1)
		s->buf.ptr[s->buf.len++] = c;
	else
		vgq_text_putc(&s->buf, c);
}

/* Length (1 to 4) of the well-formed UTF-8 sequence at p (n > 0 bytes available), or 0
 * if the byte at p does not start one (overlong forms, surrogates and code points above
 * U+10FFFF are not well formed). */
size_t vgq_utf8_seq(const unsigned char *p, size_t n);

#define VGQ_INT_TEXT_SIZE 24
size_t vgq_u64_text(char buf[VGQ_INT_TEXT_SIZE], uint64_t v);
size_t vgq_i64_text(char buf[VGQ_INT_TEXT_SIZE], int64_t v);

/* t - origin in seconds with 9 decimals ("0.001234567", "-1.500000000"), exact for any
 * two int64 values. */
#define VGQ_SECONDS_TEXT_SIZE 32
size_t vgq_seconds_text(char buf[VGQ_SECONDS_TEXT_SIZE], int64_t t, int64_t origin);

/* The writers of one format: they append to the sink, which reports write errors. */
void vgq_write_table(struct vgq_sink *s, const struct vgq_relation *r, int64_t origin);
void vgq_write_csv(struct vgq_sink *s, const struct vgq_relation *r);
void vgq_write_json(struct vgq_sink *s, const struct vgq_relation *r);

#endif
