/* Test-only trace writer (see reader_tracegen.h). The metadata text follows the one the
 * runtime writes (src/runtime/metadata.c), as documented in docs/trace-format.md. */
#define _GNU_SOURCE
#include "reader_tracegen.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(99);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("realloc");
	return p;
}

struct text {
	char *buf;
	size_t len;
};

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		die("vasprintf");
	va_end(ap);
	size_t n = strlen(s);
	t->buf = xrealloc(t->buf, t->len + n + 1);
	memcpy(t->buf + t->len, s, n + 1);
	t->len += n;
	free(s);
}

struct tg_image {
	char *dir;
	struct tg_image_opts o;
	uint8_t uuid[16];
	char uuid_text[40];
	struct text events;
};

struct tg_stream {
	struct tg_image *img;
	uint32_t tid, gen;
	uint8_t *buf;
	size_t len, cap;
	size_t packet; /* start of the open packet */
	uint64_t seq, last_ts;
	char path[4096];
};

static const char default_uuid[] = "6ea6f2b4-1d1c-4c6c-9c3d-5a2b8e7f0011";
static const char default_clock_uuid[] = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";

static void parse_uuid(const char *s, uint8_t out[16])
{
	for (int n = 0; n < 16; s++) {
		if (*s == '-')
			continue;
		unsigned v;
		sscanf(s, "%2x", &v);
		out[n++] = (uint8_t)v;
		s++;
	}
}

struct tg_image *tg_image_new(const char *root, const char *name, const struct tg_image_opts *o)
{
	struct tg_image *img = calloc(1, sizeof *img);
	if (!img)
		die("calloc");
	if (o)
		img->o = *o;
	if (!img->o.procname)
		img->o.procname = "app";
	if (!img->o.hostname)
		img->o.hostname = "host";
	if (!img->o.pid)
		img->o.pid = 42;
	if (!img->o.offset_s && !img->o.offset)
		img->o.offset_s = 1700000000;
	if (!img->o.clock_uuid)
		img->o.clock_uuid = default_clock_uuid;
	if (!img->o.trace_uuid)
		img->o.trace_uuid = default_uuid;
	/* Each image is its own CTF trace: by default its uuid ends with its pid. */
	snprintf(img->uuid_text, sizeof img->uuid_text, "%s", img->o.trace_uuid);
	if (!o || !o->trace_uuid)
		snprintf(img->uuid_text + 24, sizeof img->uuid_text - 24, "%012x",
		         (unsigned)img->o.pid);
	parse_uuid(img->uuid_text, img->uuid);
	if (asprintf(&img->dir, "%s/%s", root, name) < 0)
		die("asprintf");
	if (mkdir(img->dir, 0777) < 0)
		die(img->dir);
	tg_declare(img, "all_types", TG_ALL_TYPES,
	           "vigil:kind=event;flag=sensor;traced;target=who;ref.who=Mailbox",
	           "int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16; "
	           "uint32_t u32; uint64_t u64; double d; string s; uint32_t _blob_len; "
	           "uint8_t blob[_blob_len]; struct vg_ref who;");
	tg_declare(img, "tick", TG_TICK, "vigil:kind=event;flag=sensor;traced", "uint32_t n;");
	tg_declare_builtin(img, "vg.entity.create", TG_ENTITY_CREATE);
	tg_declare_builtin(img, "vg.thread.begin", TG_THREAD_BEGIN);
	tg_declare(img, "empty", TG_EMPTY, "vigil:kind=event;flag=sensor;sampled", "");
	tg_write_metadata(img);
	return img;
}

void tg_declare(struct tg_image *img, const char *name, unsigned id, const char *uri,
                const char *fields)
{
	text_add(&img->events,
	         "event {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n"
	         "\tmodel.emf.uri = \"%s\";\n\tfields := struct {\n\t\t%s\n\t};\n};\n\n",
	         name, id, uri, fields);
}

void tg_declare_builtin(struct tg_image *img, const char *name, unsigned id)
{
	static const struct {
		const char *name, *kind, *fields;
	} builtins[] = {
	    {"vg.entity.create", "create", "string kind; uint64_t id; uint32_t gen; string name;"},
	    {"vg.entity.name", "state", "string kind; uint64_t id; uint32_t gen; string name;"},
	    {"vg.entity.load", "state", "string kind; uint64_t id; uint32_t gen;"},
	    {"vg.entity.reclaim", "reclaim", "string kind; uint64_t id; uint32_t gen;"},
	    {"vg.thread.begin", "create", "uint32_t tid; uint32_t gen; string name;"},
	    {"vg.thread.end", "reclaim", "uint32_t tid; uint32_t gen;"},
	    {"vg.process.begin", "create",
	     "uint32_t pid; uint64_t gen; uint32_t ppid; string name; string exe;"},
	    {"vg.process.end", "reclaim", "uint32_t pid; uint64_t gen; int32_t status;"},
	    {"vg.report.synth", "event", "uint64_t at;"},
	};
	for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++) {
		if (strcmp(builtins[i].name, name))
			continue;
		char uri[64];
		snprintf(uri, sizeof uri, "vigil:kind=%s;flag=sensor;traced", builtins[i].kind);
		tg_declare(img, name, id, uri, builtins[i].fields);
		return;
	}
	fprintf(stderr, "tg_declare_builtin: no built-in event %s\n", name);
	exit(99);
}

void tg_write_metadata(struct tg_image *img)
{
	struct text t = {0};
	static const char *const sizes[] = {"8", "16", "32", "64"};
	text_add(&t, "/* CTF 1.8 */\n\n");
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < 4; i++)
			text_add(&t,
			         "typealias integer { size = %s; align = 8; signed = %s; } := "
			         "%sint%s_t;\n",
			         sizes[i], s ? "true" : "false", s ? "" : "u", sizes[i]);
	text_add(
	    &t,
	    "typealias floating_point { exp_dig = 11; mant_dig = 53; align = 8; } := double;\n\n");
	text_add(&t,
	         "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
	         "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
	         "\t\tuint32_t stream_id;\n\t};\n};\n\n",
	         img->uuid_text);
	text_add(&t,
	         "env {\n\thostname = \"%s\";\n\tdomain = \"vigil\";\n\ttracer_name = \"vigil\";\n"
	         "\tvpid = %d;\n\tprocname = \"%s\";\n\tvigil_version = \"0.1.0\";\n"
	         "\tvigil_process_gen = %llu;\n\tvigil_ppid = 1;\n\tvigil_image = 0;\n};\n\n",
	         img->o.hostname, img->o.pid, img->o.procname,
	         (unsigned long long)img->o.process_gen);
	text_add(&t,
	         "clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n\tdescription = \"test\";\n"
	         "\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %lld;\n\toffset = %lld;\n"
	         "\tabsolute = true;\n};\n\n",
	         img->o.clock_uuid, (long long)img->o.offset_s, (long long)img->o.offset);
	text_add(&t, "typealias integer { size = 64; align = 8; signed = false; map = "
	             "clock.monotonic.value; } := uint64_clock_t;\n\n");
	text_add(&t, "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n");
	text_add(&t, "typealias integer { size = 27; align = 1; signed = false; map = "
	             "clock.monotonic.value; } := uint27_clock_t;\n\n");
	text_add(&t, "struct vg_ref {\n\tuint64_t id;\n\tuint32_t gen;\n};\n\n");
	static const char compact[] = "\t\t\tstruct { uint27_clock_t timestamp; } compact;\n",
	                  extended[] = "\t\t\tstruct { uint16_t id; uint64_clock_t timestamp; } "
	                               "extended;\n";
	if (img->o.compact)
		text_add(&t,
		         "stream {\n\tid = 0;\n\tevent.header := struct {\n"
		         "\t\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
		         "\t\tvariant <id> {\n%s%s"
		         "\t\t} v;\n\t};\n",
		         img->o.compact == 2 ? extended : compact,
		         img->o.compact == 2 ? compact : extended);
	else
		text_add(&t, "stream {\n\tid = 0;\n\tevent.header := struct {\n\t\tuint16_t id;\n"
		             "\t\tuint64_clock_t timestamp;\n\t};\n");
	text_add(&t, "\tpacket.context := struct {\n"
	             "\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
	             "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	             "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"
	             "\t\tuint32_t tid;\n\t\tuint32_t thread_gen;\n\t};\n};\n\n");
	text_add(&t, "%s", img->events.buf ? img->events.buf : "");
	char *path;
	if (asprintf(&path, "%s/metadata", img->dir) < 0)
		die("asprintf");
	tg_write_file(path, t.buf, t.len);
	free(path);
	free(t.buf);
}

const char *tg_image_dir(const struct tg_image *img)
{
	return img->dir;
}
const uint8_t *tg_image_uuid(const struct tg_image *img)
{
	return img->uuid;
}

void tg_image_free(struct tg_image *img)
{
	free(img->dir);
	free(img->events.buf);
	free(img);
}

struct tg_stream *tg_stream_new(struct tg_image *img, uint32_t tid, uint32_t gen)
{
	struct tg_stream *s = calloc(1, sizeof *s);
	if (!s)
		die("calloc");
	s->img = img;
	s->tid = tid;
	s->gen = gen;
	snprintf(s->path, sizeof s->path, "%s/stream-%u-%u", img->dir, tid, gen);
	return s;
}

void tg_raw(struct tg_stream *s, const void *v, size_t len)
{
	if (s->len + len > s->cap) {
		s->cap = (s->len + len) * 2 + 256;
		s->buf = xrealloc(s->buf, s->cap);
	}
	memcpy(s->buf + s->len, v, len);
	s->len += len;
}

void tg_u8(struct tg_stream *s, uint8_t v)
{
	tg_raw(s, &v, 1);
}
void tg_u16(struct tg_stream *s, uint16_t v)
{
	tg_raw(s, &v, 2);
}
void tg_u32(struct tg_stream *s, uint32_t v)
{
	tg_raw(s, &v, 4);
}
void tg_u64(struct tg_stream *s, uint64_t v)
{
	tg_raw(s, &v, 8);
}
void tg_f64(struct tg_stream *s, double v)
{
	tg_raw(s, &v, 8);
}
void tg_str(struct tg_stream *s, const char *v)
{
	tg_raw(s, v, strlen(v) + 1);
}

void tg_bytes(struct tg_stream *s, const void *v, uint32_t len)
{
	tg_u32(s, len);
	tg_raw(s, v, len);
}

void tg_ref(struct tg_stream *s, uint64_t id, uint32_t gen)
{
	tg_u64(s, id);
	tg_u32(s, gen);
}

void tg_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

void tg_packet_begin(struct tg_stream *s, uint64_t ts_begin)
{
	s->packet = s->len;
	s->last_ts = ts_begin;
	tg_u32(s, 0xC1FC1FC1);
	tg_raw(s, s->img->uuid, 16);
	tg_u32(s, 0);
	tg_u64(s, ts_begin);
	tg_u64(s, ts_begin); /* timestamp_end */
	tg_u64(s, 0);        /* content_size */
	tg_u64(s, 0);        /* packet_size */
	tg_u64(s, s->seq++);
	tg_u64(s, 0); /* events_discarded */
	tg_u32(s, s->tid);
	tg_u32(s, s->gen);
}

void tg_event(struct tg_stream *s, uint16_t id, uint64_t ts)
{
	if (!s->img->o.compact) {
		tg_u16(s, id);
		tg_u64(s, ts);
	} else if (id < 31 && ts >= s->last_ts && ts - s->last_ts < (1u << 27)) {
		tg_u32(s, id | (uint32_t)(ts << 5)); /* the low 27 bits above the id */
	} else {
		tg_u8(s, 31);
		tg_u16(s, id);
		tg_u64(s, ts);
	}
	s->last_ts = ts;
}

void tg_tick(struct tg_stream *s, uint64_t ts, uint32_t n)
{
	tg_event(s, TG_TICK, ts);
	tg_u32(s, n);
}

void tg_packet_end(struct tg_stream *s, size_t slack, uint64_t discarded)
{
	uint8_t *p = s->buf + s->packet;
	uint64_t content = s->len - s->packet;
	static const uint8_t zeros[4096];
	while (slack) {
		size_t n = slack < sizeof zeros ? slack : sizeof zeros;
		tg_raw(s, zeros, n);
		slack -= n;
	}
	p = s->buf + s->packet;
	tg_put64(p + 32, s->last_ts);
	tg_put64(p + 40, content * 8);
	tg_put64(p + 48, (s->len - s->packet) * 8);
	tg_put64(p + 64, discarded);
}

uint8_t *tg_stream_bytes(struct tg_stream *s, size_t *len)
{
	*len = s->len;
	return s->buf;
}

void tg_stream_truncate(struct tg_stream *s, size_t len)
{
	if (len < s->len)
		s->len = len;
}

const char *tg_stream_write(struct tg_stream *s)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s", s->path);
	tg_write_file(path, s->buf, s->len);
	free(s->buf);
	free(s);
	return path;
}

void tg_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		die(path);
	if (len && fwrite(data, 1, len, f) != len)
		die(path);
	if (fclose(f))
		die(path);
}

char *tg_tempdir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir;
	if (asprintf(&dir, "%s/vigil-reader-XXXXXX", base ? base : "/tmp") < 0)
		die("asprintf");
	if (!mkdtemp(dir))
		die("mkdtemp");
	return dir;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void tg_rmtree(const char *dir)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *tg_root;

int tg_setup(void **state)
{
	(void)state;
	tg_root = tg_tempdir();
	return 0;
}

int tg_teardown(void **state)
{
	(void)state;
	tg_rmtree(tg_root);
	free(tg_root);
	tg_root = NULL;
	return 0;
}
