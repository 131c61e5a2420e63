/* The TSDL metadata of a process image: a fixed header (types, trace, env, clock,
 * stream) and one `event` declaration per registered sensor, appended as sensors are
 * registered. Layout: docs/trace-format.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static int metadata_fd = -1;

/* A growable string; on allocation failure it records the failure and stops growing. */
struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static void text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(struct text *t, const char *fmt, ...)
{
	if (t->failed)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0,
		                  fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if (t->buf && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 4096;
		while (cap < t->len + (size_t)n + 1)
			cap *= 2;
		char *p = realloc(t->buf, cap);
		if (!p) {
			t->failed = 1;
			return;
		}
		t->buf = p;
		t->cap = cap;
	}
}

/* A TSDL string literal's contents: quotes, backslashes and control bytes escaped. */
static void text_quoted(struct text *t, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			text_printf(t, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			text_printf(t, "\\x%02x", *p);
		else
			text_printf(t, "%c", *p);
	}
}

static const char *const tsdl_type_names[] = {
    [VG_INT8] = "int8_t",     [VG_INT16] = "int16_t",   [VG_INT32] = "int32_t",
    [VG_INT64] = "int64_t",   [VG_UINT8] = "uint8_t",   [VG_UINT16] = "uint16_t",
    [VG_UINT32] = "uint32_t", [VG_UINT64] = "uint64_t", [VG_DOUBLE] = "double",
    [VG_STRING] = "string",   [VG_BYTES] = "uint8_t",   [VG_ENTITY] = "struct vg_ref",
};

static const char *const kind_names[] = {"event", "begin", "end", "state", "create", "reclaim"};
static const char *const flag_names[] = {"sensor", "performer", "initiator", "target"};
static const char *const op_names[VG_OP_COUNT] = {
    "activity", "create",     "load",     "reclaim", "rename", "enter",     "leave", "acquire",
    "release",  "wait_begin", "wait_end", "suspend", "resume", "reference", "move"};

int vg__metadata_type_text(const vg_type_desc *d, uint16_t id, char **out, size_t *len)
{
	struct text t = {0};
	text_printf(&t, "event {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n", d->name, id);
	text_printf(&t, "\tmodel.emf.uri = \"vigil:kind=%s;flag=%s;%s", kind_names[d->kind],
	            flag_names[d->placement],
	            d->sampled == 2 ? "once"
	            : d->sampled    ? "sampled"
	                            : "traced");
	if (d->relation)
		text_printf(&t, ";relation=%s", d->relation);
	if (d->op != VG_OP_ACTIVITY)
		text_printf(&t, ";op=%s", op_names[d->op]);
	const int roles[3] = {d->performer, d->initiator, d->target};
	const char *role_names[3] = {"performer", "initiator", "target"};
	for (int r = 0; r < 3; r++)
		if (roles[r] >= 0)
			text_printf(&t, ";%s=%s", role_names[r], d->fields[roles[r]].name);
	for (unsigned i = 0; i < d->nfields; i++)
		if (d->fields[i].type == VG_ENTITY)
			text_printf(&t, ";ref.%s=%s", d->fields[i].name, d->fields[i].entity_kind);
	text_printf(&t, "\";\n\tfields := struct {\n");
	/* The depth of the thread's real stack (docs/consistency.md), written by the runtime. */
	if (d->op == VG_OP_ENTER)
		text_printf(&t, "\t\tuint32_t vg_depth;\n");
	for (unsigned i = 0; i < d->nfields; i++) {
		const vg_field_desc *f = &d->fields[i];
		if (f->type == VG_BYTES)
			text_printf(&t, "\t\tuint32_t _%s_len;\n\t\tuint8_t %s[_%s_len];\n",
			            f->name, f->name, f->name);
		else
			text_printf(&t, "\t\t%s %s;\n", tsdl_type_names[f->type], f->name);
	}
	text_printf(&t, "\t};\n};\n\n");
	if (t.failed) {
		free(t.buf);
		return -1;
	}
	*out = t.buf;
	*len = t.len;
	return 0;
}

static void header_text(struct text *t)
{
	text_printf(t, "%s", VGW_TSDL_TYPES);
	text_printf(t, VGW_TSDL_TRACE_FMT, vg__rt.uuid_text);
	text_printf(t, "env {\n\thostname = \"");
	text_quoted(t, vg__rt.hostname);
	text_printf(t, "\";\n\thost = \"");
	text_quoted(t, vg__rt.hostname);
	text_printf(t, "\";\n\tdomain = \"vigil\";\n\ttracer_name = \"vigil\";\n\tvpid = %d;\n",
	            (int)vg__rt.pid);
	text_printf(t, "\tprocname = \"");
	text_quoted(t, vg__rt.procname);
	text_printf(
	    t,
	    "\";\n\tvigil_version = \"%s\";\n\tvigil_process_gen = %" PRIu64
	    ";\n\tvigil_ppid = %d;\n\tvigil_parent_gen = %" PRIu64 ";\n\tvigil_image = %u;\n};\n\n",
	    VG_VERSION, vg__rt.process_gen, (int)vg__rt.ppid, vg__rt.parent_gen, vg__rt.image);
	int64_t off = vg__rt.realtime_offset_ns;
	int64_t off_s = off / 1000000000, off_ns = off % 1000000000;
	if (off_ns < 0) {
		off_s -= 1;
		off_ns += 1000000000;
	}
	text_printf(t, VGW_TSDL_CLOCK_FMT, vg__rt.clock_uuid, "CLOCK_MONOTONIC, nanoseconds", off_s,
	            off_ns);
	text_printf(t, "%s", VGW_TSDL_STREAM);
}

static int metadata_started; /* written once: appends must reach it, or fail */
static dev_t metadata_dev;
static ino_t metadata_ino;

/* Keeps fd as metadata_fd if it can be moved high; else it is used once and closed (a
 * low number is one the subject expects its next open to return). */
static void metadata_hold(int fd)
{
	fd = vg__high_fd(fd);
	if (fd >= 512) {
		metadata_fd = fd;
		vg__own_fd_add(&metadata_fd);
	} else {
		close(fd);
	}
}

/* Appends to the metadata: through metadata_fd if it is still that file (the subject may
 * have closed it with a raw syscall, and the number may be one of its files now), else
 * reopened by name in the image directory. */
static int metadata_write(const void *buf, size_t len)
{
	struct stat s;
	int fd = metadata_fd;
	if (fstat(fd, &s) < 0 || s.st_dev != metadata_dev || s.st_ino != metadata_ino) {
		vg__own_fd_release(&metadata_fd, 1);
		fd = vg__image_open("metadata", O_WRONLY | O_APPEND, 0);
		if (fd < 0 || fstat(fd, &s) < 0 || s.st_dev != metadata_dev ||
		    s.st_ino != metadata_ino) {
			if (fd >= 0)
				close(fd);
			errno = EBADF;
			return -1;
		}
	}
	int rc = -1;
	if (vg__fsize_allows((uint64_t)s.st_size + len))
		rc = vg__write_all(fd, buf, len);
	if (fd != metadata_fd) {
		int saved = errno;
		metadata_hold(fd);
		errno = saved;
	}
	return rc;
}

/* Writes the whole metadata of this image (header and all types registered so far). */
int vg__metadata_write_all(void)
{
	vg__metadata_close();
	int fd = vg__image_open("metadata", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0666);
	struct stat s;
	if (fd < 0 || fstat(fd, &s) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	metadata_dev = s.st_dev;
	metadata_ino = s.st_ino;
	metadata_hold(fd);
	metadata_started = 1;
	struct text t = {0};
	header_text(&t);
	size_t len;
	const char *types = vg__registry_text(&len);
	int rc = t.failed ? -1 : metadata_write(t.buf, t.len);
	if (rc == 0 && len)
		rc = metadata_write(types, len);
	free(t.buf);
	return rc;
}

int vg__metadata_append_type(const char *text, size_t len)
{
	if (!metadata_started) /* not written yet: vg__metadata_write_all will include it */
		return 0;
	vg__listen_metadata_append(text, len); /* each listener's copy */
	return metadata_write(text, len);
}

void vg__metadata_close(void)
{
	vg__own_fd_release(&metadata_fd, 0);
	metadata_started = 0;
}
