/* Test-only trace writer: builds vigil CTF traces byte by byte (docs/trace-format.md),
 * independently of the runtime, so reader tests control every byte, damage included. */
#ifndef VIGIL_TESTS_READER_TRACEGEN_H
#define VIGIL_TESTS_READER_TRACEGEN_H

#include <stddef.h>
#include <stdint.h>

#define TG_HEADER_SIZE 80

struct tg_image_opts {
	const char *procname; /* default "app" */
	const char *hostname; /* default "host" */
	int pid;              /* default 42 */
	uint64_t process_gen;
	int64_t offset_s, offset; /* clock offset (default 1700000000 s, 0) */
	const char *clock_uuid;   /* default: a fixed uuid */
	const char *trace_uuid;   /* default: a fixed uuid */
	/* The runtime's compact event header (5-bit id and 27-bit timestamp, or the escape
	 * to a uint16 id and uint64 timestamp); default: uint16 id, uint64 timestamp. 2: the
	 * same header, its variant's options declared in the other order (readers decode it
	 * by its declaration, not as the compact header they recognize). */
	int compact;
};

struct tg_image;
struct tg_stream;

/* Creates ROOT/NAME and the image's metadata with the built-in declarations below. */
struct tg_image *tg_image_new(const char *root, const char *name, const struct tg_image_opts *o);
/* Adds an event declaration: `fields` is the body of its fields struct. */
void tg_declare(struct tg_image *img, const char *name, unsigned id, const char *uri,
                const char *fields);
/* Adds the declaration of the built-in event `name` (vg.entity.create, .name, .load,
 * .reclaim, vg.thread.begin, .end, vg.process.begin, .end, vg.report.synth) as the runtime
 * writes it, under the id given; an unknown name aborts the test. */
void tg_declare_builtin(struct tg_image *img, const char *name, unsigned id);
/* Writes (or rewrites) the metadata file. */
void tg_write_metadata(struct tg_image *img);
const char *tg_image_dir(const struct tg_image *img);
const uint8_t *tg_image_uuid(const struct tg_image *img);
void tg_image_free(struct tg_image *img);

/* Event ids declared by tg_image_new. */
enum {
	TG_ALL_TYPES = 1,     /* i8 i16 i32 i64 u8 u16 u32 u64 d s blob(bytes) who(ref Mailbox) */
	TG_TICK = 2,          /* uint32 n */
	TG_ENTITY_CREATE = 3, /* vg.entity.create: kind, id, gen, name */
	TG_THREAD_BEGIN = 4,  /* vg.thread.begin: tid, gen, name */
	TG_EMPTY = 5,         /* no fields */
};

struct tg_stream *tg_stream_new(struct tg_image *img, uint32_t tid, uint32_t gen);
void tg_packet_begin(struct tg_stream *s, uint64_t ts_begin);
/* An event header; in a compact image, compact when id < 31 and ts is less than 2^27
 * after the stream's previous event (or packet start), else extended. */
void tg_event(struct tg_stream *s, uint16_t id, uint64_t ts);
void tg_u8(struct tg_stream *s, uint8_t v);
void tg_u16(struct tg_stream *s, uint16_t v);
void tg_u32(struct tg_stream *s, uint32_t v);
void tg_u64(struct tg_stream *s, uint64_t v);
void tg_f64(struct tg_stream *s, double v);
void tg_str(struct tg_stream *s, const char *v);
void tg_bytes(struct tg_stream *s, const void *v, uint32_t len); /* with its uint32 length */
void tg_ref(struct tg_stream *s, uint64_t id, uint32_t gen);
void tg_raw(struct tg_stream *s, const void *v, size_t len);
/* Convenience: one TG_TICK event. */
void tg_tick(struct tg_stream *s, uint64_t ts, uint32_t n);
/* Ends the packet: content_size is what was written; packet_size adds `slack` zero
 * bytes. `discarded` is the packet's events_discarded. */
void tg_packet_end(struct tg_stream *s, size_t slack, uint64_t discarded);
/* The bytes so far (to corrupt them) and their count. */
uint8_t *tg_stream_bytes(struct tg_stream *s, size_t *len);
void tg_stream_truncate(struct tg_stream *s, size_t len);
/* Writes IMAGE/stream-TID-GEN and frees the stream; returns the file's path. */
const char *tg_stream_write(struct tg_stream *s);

/* Little-endian patching of a written buffer. */
void tg_put64(uint8_t *p, uint64_t v);

/* A fresh temporary directory (removed by tg_rmtree). */
char *tg_tempdir(void);
void tg_rmtree(const char *dir);

/* A test's trace root: a fresh temporary directory made by tg_setup and removed by
 * tg_teardown (cmocka's setup and teardown signatures). */
extern char *tg_root;
int tg_setup(void **state);
int tg_teardown(void **state);
/* Writes a file with given bytes. */
void tg_write_file(const char *path, const void *data, size_t len);

#endif
