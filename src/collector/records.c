/* Subjects in other languages (Python, Java): their SCHEMA frames become the TSDL
 * metadata of one process image (the same layout src/runtime/metadata.c writes), their
 * RECORDS become CTF packets, one stream per tid, so every vigil command and
 * babeltrace2 read them like C processes. Times are CLOCK_REALTIME ns: the image's clock
 * has offset 0 and a uuid of its own (not a boot id), so readers place it by wall time.
 *
 * Schemas are kept in DIR/.vigild/<host>/<pid>-<start>.schemas (each SCHEMA payload,
 * length first), so a collector restarted while the subject runs still knows them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "metrics.h"
#include "vigil/vigil.h"
#include "vigild.h"
#include "wire/tsdl_header.h"

#define PACKET_HEADER 80
#define REALTIME_CLOCK_UUID "76696769-6c2d-7265-616c-74696d650000" /* "vigil-realtime" */

static const char *const tsdl_types[] = {
    [VG_INT8] = "int8_t",     [VG_INT16] = "int16_t",   [VG_INT32] = "int32_t",
    [VG_INT64] = "int64_t",   [VG_UINT8] = "uint8_t",   [VG_UINT16] = "uint16_t",
    [VG_UINT32] = "uint32_t", [VG_UINT64] = "uint64_t", [VG_DOUBLE] = "double",
    [VG_STRING] = "string",   [VG_BYTES] = "uint8_t",   [VG_ENTITY] = "struct vg_ref",
};
static const int fixed_size[] = {
    [VG_INT8] = 1,   [VG_INT16] = 2,  [VG_INT32] = 4,  [VG_INT64] = 8,
    [VG_UINT8] = 1,  [VG_UINT16] = 2, [VG_UINT32] = 4, [VG_UINT64] = 8,
    [VG_DOUBLE] = 8, [VG_STRING] = 0, [VG_BYTES] = 0,  [VG_ENTITY] = 12};
static const char *const kind_names[] = {"event", "begin", "end", "state", "create", "reclaim"};
static const char *const flag_names[] = {"sensor", "performer", "initiator", "target"};
static const char *const strategy_names[] = {"traced", "sampled", "once"};

static int is_ident(const struct vgw_str *s)
{
	if (s->n == 0 || s->n > 128 || (s->p[0] >= '0' && s->p[0] <= '9'))
		return 0;
	for (uint32_t i = 0; i < s->n; i++) {
		char c = s->p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return 0;
	}
	return 1;
}

/* Event, relation and entity kind names go into TSDL strings and the `;`-separated
 * model.emf.uri: dotted identifiers only. */
static int is_name(const struct vgw_str *s, int empty_ok)
{
	if (s->n == 0)
		return empty_ok;
	if (s->n > 256)
		return 0;
	for (uint32_t i = 0; i < s->n; i++) {
		char c = s->p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-' || c == ':'))
			return 0;
	}
	return 1;
}

static int fail(char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return -1;
}

static int schema_check(const struct vgw_frame *f, char *err, size_t errsize)
{
	if (!is_name(&f->u.schema.event, 0))
		return fail(err, errsize, "SCHEMA %u: event name is not a dotted name",
		            f->u.schema.id);
	if (!is_name(&f->u.schema.relation, 1))
		return fail(err, errsize, "SCHEMA %u: relation is not a name", f->u.schema.id);
	if (f->u.schema.kind > VG_KIND_RECLAIM || f->u.schema.placement > VG_FLAG_TARGET ||
	    f->u.schema.strategy > 2)
		return fail(err, errsize, "SCHEMA %u: kind, placement or strategy out of range",
		            f->u.schema.id);
	if (f->u.schema.id == 0xFFFF)
		return fail(err, errsize, "SCHEMA: id 65535 is reserved");
	struct vgw_iter it = f->u.schema.fields;
	struct vgw_field fd;
	while (vgw_next_field(&it, &fd)) {
		if (!is_ident(&fd.name))
			return fail(err, errsize, "SCHEMA %u: field name is not an identifier",
			            f->u.schema.id);
		if (fd.type > VG_ENTITY)
			return fail(err, errsize, "SCHEMA %u: unknown field type %u",
			            f->u.schema.id, fd.type);
		if (fd.type == VG_ENTITY && !is_name(&fd.entity_kind, 0))
			return fail(err, errsize, "SCHEMA %u: entity kind is not a name",
			            f->u.schema.id);
	}
	return 0;
}

static int schema_keep(struct vgd_subject *s, const uint8_t *payload, size_t len)
{
	if (!s->schemas && !(s->schemas = calloc(65536, sizeof *s->schemas)))
		return -1;
	struct vgd_schema *sc = calloc(1, sizeof *sc);
	if (!sc || !(sc->raw = malloc(len ? len : 1))) {
		free(sc);
		return -1;
	}
	memcpy(sc->raw, payload, len);
	sc->len = len;
	char err[128];
	if (vgw_decode(VGW_SCHEMA, sc->raw, len, &sc->f, err, sizeof err) < 0) {
		free(sc->raw);
		free(sc);
		return -1;
	}
	uint16_t id = sc->f.u.schema.id;
	if (s->schemas[id]) {
		free(s->schemas[id]->raw);
		free(s->schemas[id]);
	}
	s->schemas[id] = sc;
	s->schemas_dirty = 1;
	return 0;
}

static void schemas_path(const struct vgd_subject *s, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s.schemas", (int)(strlen(s->state_path) - 6), s->state_path);
}

int vgd_schemas_load(struct vgd_subject *s)
{
	char path[PATH_MAX + 16];
	schemas_path(s, path, sizeof path);
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	uint8_t lenb[4];
	int rc = 0;
	while (fread(lenb, 1, 4, f) == 4) {
		uint32_t len = (uint32_t)lenb[0] | (uint32_t)lenb[1] << 8 |
		               (uint32_t)lenb[2] << 16 | (uint32_t)lenb[3] << 24;
		uint8_t *buf = len <= (1u << 24) ? malloc(len ? len : 1) : NULL;
		if (!buf || fread(buf, 1, len, f) != len) {
			free(buf);
			break; /* a cut tail: what was whole is kept */
		}
		if (schema_keep(s, buf, len) < 0)
			rc = -1;
		free(buf);
	}
	fclose(f);
	s->schemas_dirty = 0; /* the metadata on disk holds them */
	return rc;
}

void vgd_schemas_free(struct vgd_subject *s)
{
	if (!s->schemas)
		return;
	for (unsigned i = 0; i < 65536; i++)
		if (s->schemas[i]) {
			free(s->schemas[i]->raw);
			free(s->schemas[i]);
		}
	free(s->schemas);
	s->schemas = NULL;
}

int vgd_schema(struct vgd_subject *s, const uint8_t *payload, size_t len, const struct vgw_frame *f,
               char *err, size_t errsize)
{
	if (schema_check(f, err, errsize) < 0)
		return -1;
	struct vgd_schema *old = s->schemas ? s->schemas[f->u.schema.id] : NULL;
	if (old && old->len == len && !memcmp(old->raw, payload, len))
		return 0; /* sent again after a reconnection */
	if (schema_keep(s, payload, len) < 0)
		return fail(err, errsize, "out of memory");
	char path[PATH_MAX + 16];
	schemas_path(s, path, sizeof path);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	uint8_t lenb[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
	                   (uint8_t)(len >> 24)};
	int ok = fd >= 0 && write(fd, lenb, 4) == 4 && write(fd, payload, len) == (ssize_t)len;
	if (fd >= 0)
		close(fd);
	if (!ok)
		return fail(err, errsize, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* The records image: <program>-<pid>-0, created with the first schema or record. */
static struct vgd_image *records_image(struct vgd_subject *s, char *err, size_t errsize)
{
	struct vgd_image *im = vgd_image_find(s, 0);
	if (im)
		return im;
	const char *prog = s->program;
	for (const char *p = s->program; *p && *p != ' '; p++)
		if (*p == '/')
			prog = p + 1;
	char name[40];
	size_t j = 0;
	for (const char *p = prog; *p && *p != ' ' && j < 32; p++)
		name[j++] = ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		             (*p >= '0' && *p <= '9') || *p == '_' || *p == '.')
		                ? *p
		                : '_';
	name[j] = 0;
	if (!j || name[0] == '.')
		snprintf(name, sizeof name, "pid");
	char dir[80];
	snprintf(dir, sizeof dir, "%s-%" PRIu32 "-0", name, s->pid);
	im = vgd_image_add(s, 0, dir, err, errsize);
	if (!im)
		return NULL;
	if (getrandom(im->uuid, 16, 0) != 16)
		for (int i = 0; i < 16; i++)
			im->uuid[i] = (uint8_t)(rand() ^ (s->pid >> i));
	im->uuid[6] = (uint8_t)((im->uuid[6] & 0x0f) | 0x40);
	im->uuid[8] = (uint8_t)((im->uuid[8] & 0x3f) | 0x80);
	if (vgd_subject_save(s) < 0) {
		fail(err, errsize, "cannot write %s: %s", s->state_path, strerror(errno));
		return NULL;
	}
	return im;
}

static void quoted(struct vgw_buf *b, const char *s)
{
	for (; *s; s++) {
		char c[4];
		if (*s == '"' || *s == '\\') {
			c[0] = '\\';
			c[1] = *s;
			vgw_raw(b, c, 2);
		} else if ((unsigned char)*s >= 0x20) {
			vgw_raw(b, s, 1);
		}
	}
}

static void printf_buf(struct vgw_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void printf_buf(struct vgw_buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		vgw_raw(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void header_text(struct vgw_buf *b, const struct vgd_subject *s, const struct vgd_image *im)
{
	printf_buf(b, "%s", VGW_TSDL_TYPES);
	char u[37];
	const uint8_t *x = im->uuid;
	snprintf(u, sizeof u,
	         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", x[0], x[1],
	         x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14],
	         x[15]);
	printf_buf(b, VGW_TSDL_TRACE_FMT, u);
	static const char *const langs[] = {"c", "python", "java", "control", "perl"};
	printf_buf(b, "env {\n\thostname = \"");
	quoted(b, s->host);
	printf_buf(b, "\";\n\thost = \"");
	quoted(b, s->host);
	printf_buf(b, "\";\n\tdomain = \"vigil\";\n\ttracer_name = \"vigil\";\n\tvpid = %d;\n",
	           (int)s->pid);
	printf_buf(b, "\tprocname = \"");
	quoted(b, s->program);
	printf_buf(b,
	           "\";\n\tvigil_version = \"%s\";\n\tvigil_process_gen = %" PRIu64
	           ";\n\tvigil_ppid = 0;\n\tvigil_parent_gen = 0;\n\tvigil_image = 0;\n"
	           "\tvigil_lang = \"%s\";\n};\n\n",
	           VG_VERSION, s->start, langs[s->kind <= VGW_KIND_PERL ? s->kind : 0]);
	printf_buf(b, VGW_TSDL_CLOCK_FMT, REALTIME_CLOCK_UUID,
	           "CLOCK_REALTIME, nanoseconds (sent to vigild)", (int64_t)0, (int64_t)0);
	printf_buf(b, "%s", VGW_TSDL_STREAM_COMPACT); /* the event header libvigil writes */
}

static void str_copy(char *dst, size_t cap, const struct vgw_str *s)
{
	size_t n = s->n < cap - 1 ? s->n : cap - 1;
	memcpy(dst, s->p, n);
	dst[n] = 0;
}

static void event_text(struct vgw_buf *b, const struct vgw_frame *f)
{
	char name[300], rel[300];
	str_copy(name, sizeof name, &f->u.schema.event);
	str_copy(rel, sizeof rel, &f->u.schema.relation);
	printf_buf(b, "event {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n", name,
	           f->u.schema.id);
	printf_buf(b, "\tmodel.emf.uri = \"vigil:kind=%s;flag=%s;%s", kind_names[f->u.schema.kind],
	           flag_names[f->u.schema.placement], strategy_names[f->u.schema.strategy]);
	if (rel[0])
		printf_buf(b, ";relation=%s", rel);
	struct vgw_iter it = f->u.schema.fields;
	struct vgw_field fd;
	char fname[140], kind[300];
	while (vgw_next_field(&it, &fd))
		if (fd.type == VG_ENTITY) {
			str_copy(fname, sizeof fname, &fd.name);
			str_copy(kind, sizeof kind, &fd.entity_kind);
			printf_buf(b, ";ref.%s=%s", fname, kind);
		}
	printf_buf(b, "\";\n\tfields := struct {\n");
	it = f->u.schema.fields;
	while (vgw_next_field(&it, &fd)) {
		str_copy(fname, sizeof fname, &fd.name);
		if (fd.type == VG_BYTES)
			printf_buf(b, "\t\tuint32_t _%s_len;\n\t\tuint8_t %s[_%s_len];\n", fname,
			           fname, fname);
		else
			printf_buf(b, "\t\t%s %s;\n", tsdl_types[fd.type], fname);
	}
	printf_buf(b, "\t};\n};\n\n");
}

int vgd_records_flush_metadata(struct vgd_subject *s)
{
	if (!s->schemas_dirty)
		return 0;
	char err[256];
	struct vgd_image *im = records_image(s, err, sizeof err);
	if (!im)
		return -1;
	struct vgw_buf b = {0};
	header_text(&b, s, im);
	for (unsigned id = 0; id < 65536 && s->schemas; id++)
		if (s->schemas[id])
			event_text(&b, &s->schemas[id]->f);
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/metadata", im->path);
	int rc = b.failed ? -1 : vgd_write_file(path, b.p, b.len);
	vgw_buf_free(&b);
	if (rc == 0)
		s->schemas_dirty = 0;
	return rc;
}

/* Appends one record's fields as the CTF payload its schema declares: missing trailing
 * fields take their default, bytes after the known fields are skipped (docs/encoding.md
 * "Schema evolution"). */
static int encode_payload(struct vgw_buf *b, const struct vgw_frame *sc, const uint8_t *p, size_t n)
{
	static const uint8_t zeros[12];
	const uint8_t *end = p + n;
	struct vgw_iter it = sc->u.schema.fields;
	struct vgw_field fd;
	while (vgw_next_field(&it, &fd)) {
		size_t left = (size_t)(end - p);
		if (left == 0) {
			if (fd.type == VG_STRING)
				vgw_raw(b, zeros, 1);
			else if (fd.type == VG_BYTES)
				vgw_raw(b, zeros, 4);
			else
				vgw_raw(b, zeros, (size_t)fixed_size[fd.type]);
			continue;
		}
		size_t k;
		if (fd.type == VG_STRING) {
			const uint8_t *z = memchr(p, 0, left);
			if (!z)
				return -1;
			k = (size_t)(z - p) + 1;
		} else if (fd.type == VG_BYTES) {
			if (left < 4)
				return -1;
			uint32_t m = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			             (uint32_t)p[3] << 24;
			if (m > left - 4)
				return -1;
			k = 4 + (size_t)m;
		} else {
			k = (size_t)fixed_size[fd.type];
			if (left < k)
				return -1;
		}
		vgw_raw(b, p, k);
		p += k;
	}
	return 0;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}
static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Writes the packet being built in b (header reserved at its start). */
static int packet_finish(struct vgd_subject *s, struct vgd_stream *st, struct vgd_image *im,
                         struct vgw_buf *b, uint32_t tid, uint64_t begin, uint64_t end,
                         uint64_t events, char *err, size_t errsize)
{
	static const uint8_t zeros[8];
	size_t content = b->len;
	vgw_raw(b, zeros, (8 - content % 8) % 8);
	if (b->failed)
		return fail(err, errsize, "out of memory");
	uint8_t *h = b->p;
	put32(h, VGW_CTF_MAGIC);
	memcpy(h + 4, im->uuid, 16);
	put32(h + 20, 0);
	put64(h + VGW_PKT_TIMESTAMP_BEGIN, begin);
	put64(h + VGW_PKT_TIMESTAMP_END, end);
	put64(h + VGW_PKT_CONTENT_SIZE, (uint64_t)content * 8);
	put64(h + VGW_PKT_PACKET_SIZE, (uint64_t)b->len * 8);
	put64(h + VGW_PKT_SEQ_NUM, st->has_last ? st->last_seq + 1 : 0);
	put64(h + VGW_PKT_EVENTS_DISCARDED,
	      0); /* vgd_store_records_packet: what the stream lost so far */
	put32(h + VGW_PKT_TID, tid);
	put32(h + VGW_PKT_THREAD_GEN, 0);
	return vgd_store_records_packet(s, st, b->p, b->len, events, err, errsize);
}

/* The records of one tid, in frame order, as packets of its stream. */
static int records_of_tid(struct vgd_subject *s, struct vgd_image *im, const struct vgw_frame *f,
                          uint32_t tid, char *err, size_t errsize)
{
	char name[64];
	snprintf(name, sizeof name, "stream-%" PRIu32 "-0", tid);
	struct vgd_stream *st = vgd_stream_get(im, name, err, errsize);
	if (!st)
		return -1;
	struct vgw_buf b = {0};
	uint64_t begin = 0, last = st->last_ts;
	int open = 0, rc = 0;
	uint64_t events = 0; /* in the packet being built */
	struct vgw_iter it = f->u.records.records;
	struct vgw_record r;
	while (vgw_next_record(&it, &r)) {
		if (r.tid != tid)
			continue;
		uint64_t t = r.time_ns < last ? last : r.time_ns;
		if (open && b.len > (4u << 20)) {
			if ((rc = packet_finish(s, st, im, &b, tid, begin, last, events, err,
			                        errsize)) < 0)
				break;
			open = 0;
		}
		if (!open) {
			b.len = 0;
			static const uint8_t hdr[PACKET_HEADER];
			vgw_raw(&b, hdr, sizeof hdr);
			begin = last = t;
			open = 1;
			events = 0;
		}
		/* libvigil's own header writer (vigil.h): compact for ids below 31 less than
		 * 2^27 ns after the packet's previous event, else extended. */
		uint8_t eh[VG_EVENT_HEADER_MAX];
		vgw_raw(&b, eh, (size_t)(vg__header_put(eh, r.id, t, last) - eh));
		encode_payload(&b, &s->schemas[r.id]->f, (const uint8_t *)r.data.p, r.data.n);
		last = t;
		events++;
	}
	if (rc == 0 && open)
		rc = packet_finish(s, st, im, &b, tid, begin, last, events, err, errsize);
	vgd_stream_release(st);
	vgw_buf_free(&b);
	return rc;
}

int vgd_records(struct vgd_subject *s, const struct vgw_frame *f, char *err, size_t errsize)
{
	/* Everything is checked before anything is written: a bad frame stores nothing. */
	struct vgw_iter it = f->u.records.records;
	struct vgw_record r;
	struct vgw_buf scratch = {0};
	uint64_t nrecords = 0, newest = 0; /* records carry ns since the epoch */
	while (vgw_next_record(&it, &r)) {
		nrecords++;
		if (r.time_ns > newest)
			newest = r.time_ns;
		if (!s->schemas || !s->schemas[r.id]) {
			vgw_buf_free(&scratch);
			return fail(err, errsize, "RECORDS: unknown schema id %u", r.id);
		}
		scratch.len = 0;
		if (encode_payload(&scratch, &s->schemas[r.id]->f, (const uint8_t *)r.data.p,
		                   r.data.n) < 0) {
			vgw_buf_free(&scratch);
			return fail(err, errsize, "RECORDS: a record of schema %u does not parse",
			            r.id);
		}
	}
	vgw_buf_free(&scratch);
	if (f->u.records.seq <= s->acked)
		return 0; /* stored before a reconnection */
	struct vgd_image *im = records_image(s, err, errsize);
	if (!im)
		return -1;
	if (vgd_records_flush_metadata(s) < 0)
		return fail(err, errsize, "cannot write the metadata of %s: %s", im->path,
		            strerror(errno));
	/* One pass per distinct tid, in order of first appearance. */
	uint32_t *tids = NULL;
	size_t ntids = 0;
	it = f->u.records.records;
	while (vgw_next_record(&it, &r)) {
		size_t i = 0;
		while (i < ntids && tids[i] != r.tid)
			i++;
		if (i < ntids)
			continue;
		uint32_t *nt = realloc(tids, (ntids + 1) * sizeof *tids);
		if (!nt) {
			free(tids);
			return fail(err, errsize, "out of memory");
		}
		tids = nt;
		tids[ntids++] = r.tid;
	}
	int rc = 0;
	for (size_t i = 0; i < ntids && rc == 0; i++)
		rc = records_of_tid(s, im, f, tids[i], err, errsize);
	free(tids);
	if (rc == 0) {
		s->acked = f->u.records.seq;
		VGD_COUNT(records_received, nrecords);
		if (nrecords && newest <= INT64_MAX)
			vgd_metrics_host_data(s->host, (int64_t)newest);
	}
	return rc;
}
