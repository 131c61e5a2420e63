/* Model files (docs/model.md): everything the process captured so far, as
 * <trace>/logmodel-<image>-<n>.vgm (n counts the writes; the last one holds it all). Written
 * under a temporary name and renamed, so a process killed while writing leaves no half file. Called
 * with the capture lock held: the buffer and the bitmap are static. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/sketch_index.h"
#include "internal.h"
#include "logcap.h"

struct out {
	int fd;
	int err;
	size_t len;
	uint64_t written;
	char buf[1 << 16];
};
static struct out out;
static uint8_t referenced[LC_MAX_EVENTS / 8];

static void flush(struct out *o)
{
	/* Past RLIMIT_FSIZE a write raises SIGXFSZ, which would kill the subject. */
	if (o->len && !o->err && !vg__fsize_allows(o->written + o->len))
		o->err = EFBIG;
	if (o->len && !o->err && vg__write_all(o->fd, o->buf, o->len) < 0)
		o->err = errno ? errno : EIO;
	o->written += o->len;
	o->len = 0;
}

static void put(struct out *o, const char *s, size_t n)
{
	while (n) {
		if (o->len == sizeof o->buf)
			flush(o);
		size_t k = sizeof o->buf - o->len < n ? sizeof o->buf - o->len : n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* A JSON string literal; bytes that are not UTF-8 become U+FFFD. */
static void put_json(struct out *o, const char *text)
{
	put(o, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)text; *p;) {
		if (*p == '"' || *p == '\\') {
			char e[2] = {'\\', (char)*p};
			put(o, e, 2);
			p++;
		} else if (*p == '\n') {
			put(o, "\\n", 2), p++;
		} else if (*p == '\t') {
			put(o, "\\t", 2), p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			putf(o, "\\u%04x", *p), p++;
		} else if (*p < 0x80) {
			put(o, (const char *)p, 1), p++;
		} else {
			size_t n = vg__lc_utf8_len(p, 4); /* a NUL ends it early */
			if (n) {
				put(o, (const char *)p, n);
				p += n;
			} else {
				put(o, "\\ufffd", 6);
				p++;
			}
		}
	}
	put(o, "\"", 1);
}

static uint64_t ld(const _Atomic uint64_t *p)
{
	return atomic_load_explicit((_Atomic uint64_t *)p, memory_order_relaxed);
}

static void write_transition(struct out *o, const struct lc_table *cur, const struct lc_trans *e)
{
	putf(o, "transition %u %u %" PRIu64 " %" PRIu64, e->key >> 16, e->key & 0xffff,
	     ld(&e->count), ld(&e->sum_ns));
	for (uint32_t oct = 0; oct < LC_OCTAVES; oct++) {
		const _Atomic uint64_t *c = vg__lc_octave(cur, e, oct);
		if (!c)
			continue;
		for (uint32_t j = 0; j < VG_SKETCH_SUB; j++) {
			uint64_t n = ld(&c[j]);
			if (n)
				putf(o, " %u:%" PRIu64, oct * VG_SKETCH_SUB + j, n);
		}
	}
	put(o, "\n", 1);
}

int vg__lc_write_model(const struct lc_table *cur, unsigned n)
{
	/* In the trace's root, not the image directory: CTF readers (babeltrace2, vigil dump)
	 * take every file of an image directory for a stream. Named after the image
	 * (an exec'd image keeps its pid but has a directory of its own). */
	const char *image = vg__rt.shared ? vg__rt.label : vg__image_name();
	char path[PATH_MAX + 64], tmp[PATH_MAX + 64];
	snprintf(path, sizeof path, "logmodel-%s-%u.vgm", image, n);
	snprintf(tmp, sizeof tmp, ".logmodel-%s-%u.tmp", image, n);
	/* Through the root's descriptor: the subject may have chrooted since (files.c). */
	int root = vg__out_fd();
	if (root < 0)
		return -1;
	struct out *o = &out;
	o->fd = openat(root, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (o->fd < 0)
		return -1;
	o->err = 0;
	o->len = 0;
	o->written = 0;
	uint32_t nev = vg__lc_event_count();
	put(o, "vigil-model 1\n", 14);
	putf(o, "source process %s pid %d write %u image %s\n", vg__rt.procname, (int)vg__rt.pid, n,
	     vg__rt.dir);
	putf(o, "# libvigil %s; times of about 1 in %u transitions; pass-through %d\n", VG_VERSION,
	     vg__lc.timing_every, vg__lc.pass);
	uint64_t le = ld(&cur->lost_events), lt = ld(&cur->lost_trans), lm = ld(&cur->lost_times);
	if (le || lt || lm)
		putf(o,
		     "# not captured: %" PRIu64 " calls, %" PRIu64 " transitions, %" PRIu64
		     " times\n",
		     le, lt, lm);

	/* Events: those counted, and those the transitions name (a thread past its exit
	 * merge counts events without transitions, never the reverse; kept for safety). */
	memset(referenced, 0, sizeof referenced);
	uint32_t nt = atomic_load_explicit(&((struct lc_table *)cur)->nused, memory_order_acquire);
	for (uint32_t i = 0; i < nt; i++) {
		const struct lc_trans *e = &cur->trans[cur->used[i]];
		if (!ld(&e->count))
			continue;
		referenced[(e->key >> 16) / 8] |= (uint8_t)(1u << ((e->key >> 16) % 8));
		referenced[(e->key & 0xffff) / 8] |= (uint8_t)(1u << ((e->key & 0xffff) % 8));
	}
	for (uint32_t id = 1; id <= nev && id < LC_MAX_EVENTS; id++) {
		uint64_t c = ld(&cur->counts[id]);
		if (!c && !(referenced[id / 8] & (1u << (id % 8))))
			continue;
		const struct lc_event *ev = vg__lc_event(id);
		putf(o, "event %u %" PRIu64 " %s ", id, c, ev->site);
		put_json(o, ev->fmt);
		put(o, "\n", 1);
		if (ev->tag) {
			putf(o, "name %u ", id);
			put_json(o, ev->tag);
			put(o, "\n", 1);
		}
	}
	for (uint32_t i = 0; i < nt; i++) {
		const struct lc_trans *e = &cur->trans[cur->used[i]];
		if (ld(&e->count))
			write_transition(o, cur, e);
	}
	flush(o);
	int err = o->err;
	if (close(o->fd) < 0 && !err)
		err = errno;
	if (!err && renameat(root, tmp, root, path) < 0)
		err = errno;
	if (err) {
		unlinkat(root, tmp, 0);
		errno = err;
		return -1;
	}
	return 0;
}
