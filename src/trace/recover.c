/* Recovery of a trace whose subject was killed: makes it acceptable to strict CTF
 * readers (babeltrace2 rejects zero-filled space after the last packet, and a last
 * packet that claims bytes past the end of its file) without losing a completed event.
 *
 * Each stream is read in full first; the repairs are decided from what the reader saw,
 * then applied after the trace is closed (its files are mapped while open). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

enum action_kind { ACT_TRUNCATE, ACT_WRITE_UINT };

struct action {
	enum action_kind kind;
	char *path;
	uint64_t offset; /* ACT_TRUNCATE: new size; ACT_WRITE_UINT: where */
	uint64_t value;
	uint8_t len;
	bool big_endian;
	char *what;  /* "removed 4096 zero bytes ..." (past tense) */
	char *would; /* the same, for a dry run */
};

struct plan {
	struct action *actions;
	size_t n, cap;
	void (*report)(void *ctx, const char *line);
	void *ctx;
	struct vgt_recover_result *res;
};

static void say(struct plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct plan *p, const char *fmt, ...)
{
	if (!p->report)
		return;
	va_list ap;
	char *line;
	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		vgt__oom();
	va_end(ap);
	p->report(p->ctx, line);
	free(line);
}

static struct action *add(struct plan *p, enum action_kind kind, const char *path, uint64_t offset,
                          char *what, char *would)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 8;
		p->actions = vgt__xrealloc(p->actions, p->cap, sizeof *p->actions);
	}
	struct action *a = &p->actions[p->n++];
	*a = (struct action){.kind = kind,
	                     .path = vgt__xstrdup(path),
	                     .offset = offset,
	                     .what = what,
	                     .would = would};
	p->res->changes++;
	return a;
}

/* Are the n bytes at b, the tail of stream s, all zero? A hole is, unread. */
static bool all_zero(const struct stream *s, const uint8_t *b, size_t n)
{
	size_t off = s->held_from + (size_t)(b - s->data);
	if (off >= s->data_end)
		return true;
	n = s->data_end - off < n ? s->data_end - off : n;
	return b[0] == 0 && (n == 1 || !memcmp(b, b + 1, n - 1));
}

/* Can the bytes after the last packet go without losing an event? Zero-filled space,
 * or a packet header that was being written (it has no event yet). */
static const char *disposable_tail(const struct vgt_cursor *c, const uint8_t *tail, size_t n)
{
	if (all_zero(c->s, tail, n))
		return "zero bytes";
	const struct metadata *md = c->md;
	static const uint8_t magic[4] = {0xC1, 0x1F, 0xFC, 0xC1};
	if (md->magic < 0 || memcmp(tail, magic, n < 4 ? n : 4))
		return NULL;
	struct vgt_value v[64];
	size_t pos = 0;
	if (md->packet_header.nfields > 64 || md->max_fields > 64)
		return NULL;
	if (vgt_layout_decode(&md->packet_header, tail, &pos, n, v, NULL) != DEC_OK)
		return "bytes of an unfinished packet header";
	uint64_t sid = md->stream_id >= 0 ? v[md->stream_id].u : 0;
	const struct stream_class *sc = vgt_metadata_stream(md, sid);
	if (!sc && md->nstreams == 1)
		sc = md->streams[0];
	if (!sc)
		return NULL;
	if (vgt_layout_decode(&sc->packet_context, tail, &pos, n, v, NULL) != DEC_OK)
		return "bytes of an unfinished packet header";
	if (sc->content_size >= 0 && v[sc->content_size].u <= (uint64_t)pos * 8)
		return "bytes of a packet without events";
	return NULL;
}

/* Damage that recovery repairs: the end of a stream. */
static bool tail_damage(enum vgt_damage_kind k)
{
	return k == VGT_DMG_TRAILING_ZEROS || k == VGT_DMG_PACKET_PAST_EOF ||
	       k == VGT_DMG_TRUNCATED;
}

static void plan_stream(struct plan *p, struct stream *s)
{
	struct vgt_cursor c;
	vgt_cursor_init(&c, s);
	while (vgt_cursor_advance(&c))
		;
	const struct packet_info *pk = &c.pkt;
	size_t valid_end = 0;
	uint64_t left = 0;
	if (c.have_packet && pk->claimed_end > s->size) {
		/* The last packet claims bytes past the file: it ends where the file does. */
		valid_end = s->size;
		if (pk->packet_size_at == SIZE_MAX) {
			say(p,
			    "%s: last packet at byte %zu runs past the end of the file and has "
			    "no packet_size to correct",
			    s->path, pk->start);
			left++;
		} else {
			uint64_t bytes = s->size - pk->start;
			struct action *a = add(
			    p, ACT_WRITE_UINT, s->path, pk->packet_size_at,
			    vgt__xprintf("%s: last packet at byte %zu: packet_size %" PRIu64
			                 " -> %" PRIu64 " bytes (the file ends there)",
			                 s->path, pk->start, pk->claimed_end - pk->start, bytes),
			    vgt__xprintf(
			        "%s: last packet at byte %zu: would set packet_size %" PRIu64
			        " -> %" PRIu64 " bytes (the file ends there)",
			        s->path, pk->start, pk->claimed_end - pk->start, bytes));
			a->value = bytes * 8;
			a->len = pk->size_field_len;
			a->big_endian = pk->big_endian;
		}
		if (pk->claimed_content > s->size && pk->content_size_at != SIZE_MAX) {
			/* The event cut by the end of the file was never completed. */
			uint64_t bytes = pk->last_event_end - pk->start;
			struct action *a =
			    add(p, ACT_WRITE_UINT, s->path, pk->content_size_at,
			        vgt__xprintf("%s: last packet at byte %zu: content_size %" PRIu64
			                     " -> %" PRIu64 " bytes (its last complete event)",
			                     s->path, pk->start, pk->claimed_content - pk->start,
			                     bytes),
			        vgt__xprintf(
			            "%s: last packet at byte %zu: would set content_size %" PRIu64
			            " -> %" PRIu64 " bytes (its last complete event)",
			            s->path, pk->start, pk->claimed_content - pk->start, bytes));
			a->value = bytes * 8;
			a->len = pk->size_field_len;
			a->big_endian = pk->big_endian;
		}
	} else if (c.have_packet) {
		valid_end = pk->end;
	}
	if (valid_end < s->size) {
		size_t n = s->size - valid_end;
		const char *what = disposable_tail(&c, vgt_stream_bytes_at(s, valid_end), n);
		if (what) {
			add(p, ACT_TRUNCATE, s->path, valid_end,
			    vgt__xprintf("%s: removed %zu %s after the last packet (%zu -> %zu "
			                 "bytes)",
			                 s->path, n, what, s->size, valid_end),
			    vgt__xprintf(
			        "%s: would remove %zu %s after the last packet (%zu -> %zu "
			        "bytes)",
			        s->path, n, what, s->size, valid_end));
		} else {
			say(p,
			    "%s: %zu bytes after byte %zu are not a packet and not zero: left as "
			    "they are",
			    s->path, n, valid_end);
			left++;
		}
	}
	uint64_t inner = s->damage.total - s->damage.n; /* not stored: counted as inner */
	for (size_t i = 0; i < s->damage.n; i++) {
		const struct vgt_damage *d = &s->damage.items[i];
		if (!(tail_damage(d->kind) || d->offset >= valid_end))
			inner++;
	}
	if (inner)
		say(p,
		    "%s: %" PRIu64 " damaged place%s inside the stream left as they are "
		    "('vigil dump' lists them)",
		    s->path, inner, inner == 1 ? "" : "s");
	p->res->unrepaired += (unsigned)(left + inner);
	vgt_cursor_fini(&c);
}

static void plan_image(struct plan *p, struct image *img)
{
	p->res->images++;
	if (!img->md) {
		char line[600];
		if (img->damage.n) {
			vgt_damage_format(&img->damage.items[0], line, sizeof line);
			say(p, "%s (image not repaired)", line);
		}
		p->res->unrepaired++;
		return;
	}
	if (img->md->cut) {
		uint64_t size = 0;
		FILE *f = fopen(img->metadata_path, "rb");
		if (f && !fseek(f, 0, SEEK_END))
			size = (uint64_t)ftell(f);
		if (f)
			fclose(f);
		size_t keep = img->md->complete_len;
		add(p, ACT_TRUNCATE, img->metadata_path, keep,
		    vgt__xprintf("%s: cut after its last complete declaration (%" PRIu64
		                 " -> %zu bytes)",
		                 img->metadata_path, size, keep),
		    vgt__xprintf("%s: would cut after its last complete declaration (%" PRIu64
		                 " -> %zu bytes)",
		                 img->metadata_path, size, keep));
	}
	for (size_t i = 0; i < img->pub.nstreams; i++) {
		p->res->streams++;
		plan_stream(p, img->streams[i]);
	}
}

static int write_uint(const struct action *a)
{
	uint8_t b[8];
	for (unsigned i = 0; i < a->len; i++) {
		unsigned shift = a->big_endian ? 8 * (a->len - 1 - i) : 8 * i;
		b[i] = (uint8_t)(a->value >> shift);
	}
	int fd = open(a->path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pwrite(fd, b, a->len, (off_t)a->offset);
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)a->len ? 0 : -1;
}

/* Reads the repaired trace through as every reader does; each damage it still finds is
 * said, and the count of problems left is at least their number: recovery never says
 * "repaired" of a trace the reader still finds damaged. */
static void verify(struct plan *p, const char *path)
{
	char err[512];
	struct vgt_trace *t = vgt_open(&path, 1, err, sizeof err);
	if (!t) {
		say(p, "%s: cannot read after the repair: %s", path, err);
		p->res->unrepaired++;
		return;
	}
	for (size_t i = 0; i < t->nstreams; i++) {
		struct vgt_cursor *c = vgt_cursor_open(t, i);
		while (vgt_cursor_next(c))
			;
		vgt_cursor_close(c);
	}
	uint64_t total = vgt_damage_total(t);
	if (total > p->res->unrepaired) {
		char line[4096];
		for (size_t i = 0; i < t->nimages; i++) {
			const struct vgt_image *im = &t->images[i]->pub;
			for (size_t j = 0; j < im->ndamage; j++) {
				vgt_damage_format(&im->damage[j], line, sizeof line);
				say(p, "still damaged after the repair: %s", line);
			}
		}
		for (size_t i = 0; i < t->nstreams; i++) {
			const struct vgt_stream *st = &t->streams[i]->pub;
			for (size_t j = 0; j < st->ndamage; j++) {
				vgt_damage_format(&st->damage[j], line, sizeof line);
				say(p, "still damaged after the repair: %s", line);
			}
		}
		p->res->unrepaired = (unsigned)total;
	}
	vgt_close(t);
}

int vgt_recover_dir(const char *path, bool dry_run, void (*report)(void *ctx, const char *line),
                    void *ctx, struct vgt_recover_result *res, char *err, size_t errsize)
{
	struct vgt_recover_result local;
	if (!res)
		res = &local;
	*res = (struct vgt_recover_result){0};
	struct vgt_trace *t = vgt_open(&path, 1, err, errsize);
	if (!t)
		return -1;
	struct plan p = {.report = report, .ctx = ctx, .res = res};
	for (size_t i = 0; i < t->nimages; i++)
		plan_image(&p, t->images[i]);
	vgt_close(t); /* unmaps the streams before they change */
	for (size_t i = 0; i < p.n; i++) {
		struct action *a = &p.actions[i];
		int rc = 0;
		if (!dry_run)
			rc = a->kind == ACT_TRUNCATE ? truncate(a->path, (off_t)a->offset)
			                             : write_uint(a);
		if (rc < 0) {
			say(&p, "%s: cannot change: %s", a->path, strerror(errno));
			res->changes--;
			res->unrepaired++;
		} else {
			say(&p, "%s", dry_run ? a->would : a->what);
		}
		free(a->path);
		free(a->what);
		free(a->would);
	}
	free(p.actions);
	if (!dry_run && res->changes)
		verify(&p, path);
	return 0;
}
