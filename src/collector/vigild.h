/* vigild internals: subjects, their images and stream files, connections. */
#ifndef VIGIL_COLLECTOR_VIGILD_H
#define VIGIL_COLLECTOR_VIGILD_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/frame.h"

#define VGD_NAME_MAX 200      /* a host, image directory or stream name */
#define VGD_MAX_STREAMS 65536 /* per image: what one peer may make the collector keep */
#define VGD_MAX_IMAGES 1024   /* per subject */

struct vgd_options {
	const char *out;
	const char *listen;        /* HOST:PORT */
	const char *socket;        /* Unix socket path; "" = none */
	const char *token;         /* NULL: any */
	const char *control_token; /* probes (HELLO kind 3) need this one; NULL: `token` */
	const char *ready;         /* file written once listening (JSON: port, socket) */
	const char *store;         /* --store postgresql://...: completed images also go there */
	uint32_t max_frame;
	int quiet;
	int sync; /* --sync: fsync what an ACK covers before sending it */
	/* Limits (docs/protocol.md "Limits"). */
	unsigned max_conns;         /* --max-connections: more are closed at once */
	unsigned handshake_timeout; /* s: HELLO done within this, else disconnected */
	unsigned idle_timeout;      /* s without a byte from an authenticated peer; 0 none */
	uint64_t quota;             /* --quota-per-subject: bytes of stream files; 0 none */
	/* --subject-tokens FILE: "HOST TOKEN" lines; a subject's token admits its host only */
	char **subject_hosts, **subject_tokens;
	size_t n_subject_tokens;
};
/* The longest frame before HELLO is accepted: room for a Java program name, which is its
 * whole command line. */
#define VGD_HELLO_MAX 65536u
extern struct vgd_options vgd_opt;

struct vgt_trace;

/* One stream file of an image. */
struct vgd_stream {
	struct vgd_stream *next;
	char name[VGD_NAME_MAX + 1];
	char path[PATH_MAX];
	int fd;            /* open only while written: thousands of streams hold no descriptors */
	uint64_t size;     /* bytes in the file */
	int has_last;      /* a packet is stored */
	uint64_t last_off; /* offset of the last packet */
	uint64_t last_seq; /* its packet_seq_num */
	uint64_t last_ts;  /* its timestamp_end (streams built from records) */
	/* Packets not stored (quota.c): their events, added to the events_discarded of
	 * every later packet; the last stored packet may be the stub of one (stub_seq).
	 * Read back from the stream's loss notes after a restart (subject.c). */
	uint64_t *bytes; /* its image's count of bytes */
	uint64_t lost;
	int has_stub;
	uint64_t stub_seq, stub_events;
};

struct vgd_schema {
	uint8_t *raw; /* the SCHEMA payload, as received */
	size_t len;
	struct vgw_frame f; /* decoded over raw */
};

/* A process image in the host's trace. */
struct vgd_image {
	struct vgd_image *next;
	uint32_t key; /* the subject's image number */
	char dir[VGD_NAME_MAX + 16];
	char path[PATH_MAX];
	uint8_t uuid[16]; /* images built from records */
	struct vgd_stream *streams;
	unsigned nstreams;
	uint64_t bytes;          /* of its stream files: --quota-per-subject */
	struct vgt_trace *types; /* quota.c: its event types, once a packet was not stored */
	/* Its trace clock, from its METADATA (the per-host lag of --metrics). */
	int has_clock;
	int64_t clock_offset_ns;
	uint64_t clock_freq;
};

/* A subject: (host, pid, start), with its state file. */
struct vgd_subject {
	char host[VGD_NAME_MAX + 1];
	uint32_t pid;
	uint64_t start;
	char program[256];
	uint8_t kind;
	uint64_t acked;                 /* highest sequence number stored */
	uint8_t secret[VGW_SECRET_LEN]; /* issued at its first HELLO (version 2) */
	int has_secret;
	char host_dir[PATH_MAX];
	char state_path[PATH_MAX];
	struct vgd_image *images;
	struct vgd_schema **schemas; /* by id, records subjects */
	int schemas_dirty;           /* the metadata must be written again */
	uint64_t lost_events;        /* in packets not stored (quota, full disk) */
	int loss_logged;             /* bit 0: quota, bit 1: full disk (one log line each) */
};

/* How a subject's connection ends. */
enum { VGD_VANISHED, VGD_BYE, VGD_KEEP /* replaced by a new connection, or vigild stops */ };

/* subject.c */
int vgd_subject_open(struct vgd_subject *s, const struct vgw_frame *hello, char *err,
                     size_t errsize);
void vgd_subject_close(struct vgd_subject *s, int orderly);
int vgd_subject_save(struct vgd_subject *s); /* the state file, before an ACK */
/* A HELLO may resume this subject: 1, or 0 (its session has a secret, not the one given). */
int vgd_subject_may_resume(const struct vgd_subject *s, const struct vgw_frame *hello);
int vgd_metadata(struct vgd_subject *s, const struct vgw_frame *f, char *err, size_t errsize);
int vgd_packet(struct vgd_subject *s, const struct vgw_frame *f, char *err, size_t errsize);
struct vgd_image *vgd_image_find(struct vgd_subject *s, uint32_t key);
struct vgd_image *vgd_image_add(struct vgd_subject *s, uint32_t key, const char *dir, char *err,
                                size_t errsize);
struct vgd_stream *vgd_stream_get(struct vgd_image *im, const char *name, char *err,
                                  size_t errsize);
int vgd_stream_write(struct vgd_stream *st, const uint8_t *p, size_t n, char *err, size_t errsize);
void vgd_stream_release(struct vgd_stream *st); /* closes its descriptor */
int vgd_safe_name(const char *s, size_t n);
void vgd_repair_image(struct vgd_image *im); /* cuts half-written packets off its streams */
int vgd_write_file(const char *path, const void *p, size_t n); /* tmp + rename */

/* quota.c: the events of a packet (of image im) that is not stored, counted by the
 * trace reader (at least 1 when it holds any but cannot be decoded). */
uint64_t vgd_count_events(struct vgd_image *im, const uint8_t *p, size_t n);

/* subject.c: writes a packet built from RECORDS (events records in it) at the end of its
 * stream, or, past the subject's quota or on a full disk, counts them as discarded. */
int vgd_store_records_packet(struct vgd_subject *s, struct vgd_stream *st, uint8_t *p, size_t n,
                             uint64_t events, char *err, size_t errsize);

/* records.c: subjects in other languages */
int vgd_schema(struct vgd_subject *s, const uint8_t *payload, size_t len, const struct vgw_frame *f,
               char *err, size_t errsize);
int vgd_records(struct vgd_subject *s, const struct vgw_frame *f, char *err, size_t errsize);
int vgd_records_flush_metadata(struct vgd_subject *s);
int vgd_schemas_load(struct vgd_subject *s);
void vgd_schemas_free(struct vgd_subject *s);

/* store.c: --store */
int vgd_store_available(void);
void vgd_store_image_done(const struct vgd_subject *s, int orderly);
void vgd_store_subject_back(const struct vgd_subject *s);
void vgd_store_tick(int all); /* hands what is due to the store thread */
void vgd_store_finish(void);  /* stores everything pending, then returns */

/* service.c: one line on stderr, control bytes escaped */
void vgd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
