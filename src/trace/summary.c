/* Packet summaries (internal.h, struct stream_summary): what a whole read of a stream
 * found in each packet, kept in a side file so that a later reader passes over the
 * packets holding none of the events it reads (and, with positions, summary_positions.c,
 * visits only the events it reads in the others). A summary is used only for the file it
 * was made of (size, modification time, inode) and only when its checksum and its
 * entries hold together; a packet is passed over only where the stream's packet header,
 * read as always, starts and ends where its entry says, and only when its events were
 * read without damage. A file that cannot be a summary is said once and made again. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cache_dir.h"
#include "base/file_io.h"
#include "internal.h"

/* Streams (or a writer's part of a pool file) under this many bytes get no summary. */
#define SUM_MIN_BYTES ((size_t)64 << 10)

#define MAGIC 0x314d55534b504756ull  /* "VGPKSUM1": the first format, no positions */
#define MAGIC2 0x324d55534b504756ull /* "VGPKSUM2": 16-byte positions, read, never used */
#define MAGIC3 0x334d55534b504756ull /* "VGPKSUM3": positions grouped by id, varints */
/* H_NPOS: the positions' words in the second format, their bytes in the third (to a whole
 * word with zero bytes), 0 in the first */
enum { H_MAGIC, H_SIZE, H_MTIME, H_INO, H_COUNT, H_WORDS, H_SUM, H_NPOS, H_LEN = 8 };
#define MAX_FILE (1ull << 30) /* bounds what is read of a summary file */

void vgt_packet_summaries(struct vgt_trace *t, bool on)
{
	t->summaries = on;
}

static uint64_t checksum(uint64_t h, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ v[i]) * 1099511628211ull;
	return h;
}
#define CHECKSUM_START 1469598103934665603ull

/* Are positions made and used (VIGIL_SUMMARY_POSITIONS=off: summaries of the first
 * format, as a reader without positions writes them, and positions not used)? */
static bool positions_on(void)
{
	const char *e = getenv("VIGIL_SUMMARY_POSITIONS");
	return !e || strcmp(e, "off");
}

static size_t entry_len(const struct stream_summary *sum)
{
	return SUM_FIXED + sum->words;
}

void vgt_summary_free(struct stream_summary *sum)
{
	if (!sum)
		return;
	if (sum->block)
		munmap(sum->block, sum->block_len);
	else
		free(sum->v);
	if (sum->pos_own)
		free(sum->pos);
	free(sum->scratch);
	free(sum->counts);
	free(sum->from);
	free(sum);
}

int vgt_summary_parse(const uint8_t *buf, size_t len, const struct stream_summary *of,
                      struct stream_summary *sum, char *why, size_t whylen)
{
	*sum = (struct stream_summary){0};
	uint64_t h[H_LEN];
	if (len < sizeof h || len % 8) {
		snprintf(why, whylen, "%zu bytes, not a summary", len);
		return -1;
	}
	memcpy(h, buf, sizeof h);
	unsigned format = h[H_MAGIC] == MAGIC    ? 1
	                  : h[H_MAGIC] == MAGIC2 ? 2
	                  : h[H_MAGIC] == MAGIC3 ? 3
	                                         : 0;
	if (!format || (format == 1 && h[H_NPOS])) {
		snprintf(why, whylen, "no summary's magic number, or a reserved word set");
		return -1;
	}
	if (h[H_WORDS] > SUM_MAX_WORDS) {
		snprintf(why, whylen, "%llu bitmap words (at most %d)",
		         (unsigned long long)h[H_WORDS], SUM_MAX_WORDS);
		return -1;
	}
	uint64_t words = (len - sizeof h) / 8, per = SUM_FIXED + h[H_WORDS];
	/* the positions' whole words */
	uint64_t npos = format == 3 ? h[H_NPOS] / 8 + (h[H_NPOS] % 8 != 0) : h[H_NPOS];
	if (npos > words || h[H_COUNT] > (words - npos) / per || h[H_COUNT] * per + npos != words) {
		snprintf(why, whylen, "%llu packets and %llu position words do not fill %zu bytes",
		         (unsigned long long)h[H_COUNT], (unsigned long long)npos, len);
		return -1;
	}
	const uint8_t *pad = buf + sizeof h + h[H_COUNT] * per * 8;
	for (uint64_t b = format == 3 ? h[H_NPOS] : npos * 8; b < npos * 8; b++)
		if (pad[b]) {
			snprintf(why, whylen, "a byte after the positions set");
			return -1;
		}
	/* the entries and positions where they lie in buf (read, never written: no copy of a
	 * summary of megabytes, nor the pages it would take) */
	uint64_t *v = (uint64_t *)(uintptr_t)(buf + sizeof h);
	if (checksum(CHECKSUM_START, v, words) != h[H_SUM]) {
		snprintf(why, whylen, "its checksum does not hold");
		return -1;
	}
	if (h[H_SIZE] != of->file_size || (int64_t)h[H_MTIME] != of->mtime_ns ||
	    h[H_INO] != of->ino) {
		return 0; /* made of an earlier state of the stream */
	}
	uint64_t prev_end = 0;
	for (uint64_t i = 0; i < h[H_COUNT]; i++) {
		const uint64_t *e = v + i * per;
		const char *bad = e[SUM_START] < prev_end      ? "overlaps the one before"
		                  : e[SUM_END] <= e[SUM_START] ? "ends before it starts"
		                  : e[SUM_END] > of->file_size ? "ends past the file"
		                  : e[SUM_EVENTS] > e[SUM_END] - e[SUM_START]
		                      ? "holds more events than bytes"
		                  : e[SUM_EVENTS] && (int64_t)e[SUM_LAST] < (int64_t)e[SUM_FIRST]
		                      ? "ends before its first event"
		                      : NULL;
		if (bad) {
			snprintf(why, whylen, "packet %llu %s", (unsigned long long)i, bad);
			return -1;
		}
		prev_end = e[SUM_END];
	}
	*sum = (struct stream_summary){.v = v,
	                               .n = h[H_COUNT],
	                               .cap = h[H_COUNT],
	                               .words = h[H_WORDS],
	                               .pos = format > 1 ? (uint8_t *)(v + h[H_COUNT] * per) : NULL,
	                               .npos = format == 3 ? h[H_NPOS] : npos * 8,
	                               .format = format,
	                               .positions = format == 3,
	                               .file_size = of->file_size,
	                               .ino = of->ino,
	                               .mtime_ns = of->mtime_ns};
	if (vgt_positions_check(sum, why, whylen)) {
		*sum = (struct stream_summary){0};
		return -1;
	}
	return 1;
}

uint8_t *vgt_summary_bytes(const struct stream_summary *sum, size_t *len)
{
	/* the second format only as it was read (the fuzz target writes back what it read) */
	unsigned format = sum->format == 2 ? 2 : sum->positions ? 3 : 1;
	size_t words = sum->n * entry_len(sum), npos = format > 1 ? sum->npos : 0,
	       posw = (npos + 7) / 8;
	*len = H_LEN * 8 + (words + posw) * 8;
	uint8_t *b = vgt__xcalloc(1, *len);
	uint64_t *body = (uint64_t *)(b + H_LEN * 8);
	if (words)
		memcpy(body, sum->v, words * 8);
	if (npos)
		memcpy(body + words, sum->pos, npos);
	uint64_t h[H_LEN] = {[H_MAGIC] = format == 3   ? MAGIC3
	                                 : format == 2 ? MAGIC2
	                                               : MAGIC,
	                     [H_SIZE] = sum->file_size,
	                     [H_MTIME] = (uint64_t)sum->mtime_ns,
	                     [H_INO] = sum->ino,
	                     [H_COUNT] = sum->n,
	                     [H_WORDS] = sum->words,
	                     [H_SUM] = checksum(CHECKSUM_START, body, words + posw),
	                     [H_NPOS] = format == 3 ? npos : posw};
	memcpy(b, h, sizeof h);
	return b;
}

/* ---- where ---- */

/* DIR/.NAME.packets beside the stream (i 0), or CACHE/packets-HASH.vgpk (i 1); a writer's
 * part of a shared-layout pool file, from byte START: DIR/.NAME.START.packets. */
static bool side_path(const struct stream *s, int i, char *out, size_t n)
{
	char part[32] = "";
	if (s->file)
		snprintf(part, sizeof part, ".%zu", s->start);
	if (i == 0) {
		char *d = vgt__xstrdup(s->path), *b = vgt__xstrdup(s->path);
		bool ok =
		    snprintf(out, n, "%s/.%s%s.packets", dirname(d), basename(b), part) < (int)n;
		free(d);
		free(b);
		return ok;
	}
	char dir[4096];
	char *real = realpath(s->path, NULL);
	if (!real || !vgb_cache_dir(dir, sizeof dir)) {
		free(real);
		return false;
	}
	uint64_t h = 1469598103934665603ull;
	for (const char *c = real; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	free(real);
	return snprintf(out, n, "%s/packets-%016llx%s.vgpk", dir, (unsigned long long)h, part) <
	       (int)n;
}

/* A stream read whole from a file (or a writer's part of a pool file): what a summary
 * can describe. */
static bool summarizable(const struct vgt_cursor *c)
{
	const struct stream *s = c->s;
	return c->md && !c->follow && s->path && !s->open_error;
}

static int max_words(const struct metadata *md)
{
	uint64_t max = 0;
	for (size_t i = 0; i < md->nevents; i++)
		if (md->events[i]->pub.id > max)
			max = md->events[i]->pub.id;
	return max / 64 + 1 > SUM_MAX_WORDS ? -1 : (int)(max / 64 + 1);
}

/* A summary file mapped (read only, private; a file of 0 bytes: a static empty buffer):
 * a build reading one relation touches only the pages of its positions and their groups'
 * heads, not the megabytes of the others' (summary_positions.c). Summaries are replaced
 * by a rename, never rewritten in place. NULL: none there, or not a regular file. */
static uint8_t *map_file(const char *path, size_t *len)
{
	static uint64_t empty;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *m = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= MAX_FILE) {
		*len = (size_t)st.st_size;
		m = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)&empty;
		if (m == MAP_FAILED)
			m = NULL;
	}
	close(fd);
	return m;
}

void vgt_summary_attach(struct vgt_cursor *c)
{
	struct stat st;
	const struct stream *file = c->s->file ? c->s->file : c->s;
	if (!summarizable(c) || stat(c->s->path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != file->size)
		return;
	struct stream_summary of = {.file_size = (uint64_t)st.st_size,
	                            .ino = (uint64_t)st.st_ino,
	                            .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
	                                        st.st_mtim.tv_nsec};
	char path[4200];
	bool positions = positions_on();
	for (int i = 0; i < 2; i++) {
		size_t len;
		uint8_t *buf;
		if (!side_path(c->s, i, path, sizeof path) || !(buf = map_file(path, &len)))
			continue;
		struct stream_summary *sum = vgt__xmalloc(sizeof *sum);
		char why[200];
		int rc = vgt_summary_parse(buf, len, &of, sum, why, sizeof why);
		if (rc > 0 && (sum->positions || !positions)) {
			sum->positions = positions; /* those of a summary read not used when off */
			sum->from = vgt__xstrdup(path);
			sum->block = buf;
			sum->block_len = len;
			c->sum_use = sum;
			return;
		}
		/* else the first or second format, made again with positions */
		if (len)
			munmap(buf, len);
		free(sum);
		if (rc < 0 && !c->sum_quiet)
			fprintf(stderr,
			        "vigil: warning: %s: not a packet summary (%s); ignored and made "
			        "again\n",
			        path, why);
	}
	/* A small stream is not summarized: passing over it saves little, and its side file
	 * would take a block of disk beside it (a shared layout's pool parts are many and
	 * small: their side files outweighed the trace). */
	if (c->s->size - c->s->start < SUM_MIN_BYTES)
		return;
	int words = max_words(c->md);
	if (words < 0)
		return;
	c->sum_rec = vgt__xcalloc(1, sizeof *c->sum_rec);
	*c->sum_rec = of;
	c->sum_rec->words = (size_t)words;
	c->sum_rec->positions = c->sum_rec->pos_own = positions;
	if (positions)
		c->sum_rec->counts = vgt__xcalloc((size_t)words * 64, sizeof *c->sum_rec->counts);
}

/* ---- passing over ---- */

static const uint64_t *entry_at(const struct stream_summary *sum, size_t i)
{
	return sum->v + i * entry_len(sum);
}

/* The entry of the packet starting at off: the next one mostly. */
static const uint64_t *find(struct vgt_cursor *c, size_t off)
{
	const struct stream_summary *sum = c->sum_use;
	if (c->sum_at < sum->n && entry_at(sum, c->sum_at)[SUM_START] == off)
		return entry_at(sum, c->sum_at++);
	size_t lo = 0, hi = sum->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (entry_at(sum, mid)[SUM_START] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < sum->n && entry_at(sum, lo)[SUM_START] == off) {
		c->sum_at = lo + 1;
		return entry_at(sum, lo);
	}
	return NULL;
}

bool vgt_summary_passed_over(const struct vgt_cursor *c, uint64_t id, int64_t first, int64_t last)
{
	const struct event_class *ec = vgt_stream_class_event(c->sc, id);
	if (!ec || !ec->usable)
		return false;
	uint32_t k = ec->pub.class_id;
	if (c->skip && c->skip[k])
		return true;
	const struct vgt_class_window *win = c->windows ? &c->windows[k] : NULL;
	return win && win->active && !win->keeps_next && (last < win->lo || first > win->hi);
}

/* Would every event of the entry be passed over (its class skipped, or outside its
 * class's window, which the packet's times lie wholly outside of)? */
static bool all_passed_over(const struct vgt_cursor *c, const uint64_t *e, size_t words)
{
	int64_t first = (int64_t)e[SUM_FIRST], last = (int64_t)e[SUM_LAST];
	for (size_t w = 0; w < words; w++)
		for (uint64_t bits = e[SUM_FIXED + w]; bits; bits &= bits - 1)
			if (!vgt_summary_passed_over(c, w * 64 + (uint64_t)__builtin_ctzll(bits),
			                             first, last))
				return false;
	return true;
}

bool vgt_summary_skip(struct vgt_cursor *c)
{
	if (c->sum_rec) {
		c->sum_in = true;
		c->sum_damage = c->s->damage.total;
		struct stream_summary *r = c->sum_rec;
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 64;
			r->v = vgt__xrealloc(r->v, r->cap * entry_len(r), sizeof *r->v);
		}
		uint64_t *e = r->v + r->n * entry_len(r);
		memset(e, 0, entry_len(r) * sizeof *e);
		e[SUM_START] = c->pkt.start;
		e[SUM_END] = c->pkt.end;
		vgt_positions_forget(r);
		return false;
	}
	c->jumping = false;
	if (!c->sum_use || c->keep_next)
		return false;
	const uint64_t *e = find(c, c->pkt.start);
	if (!e || e[SUM_END] != c->pkt.end || !(e[SUM_FLAGS] & SUM_CLEAN))
		return false;
	if (!all_passed_over(c, e, c->sum_use->words)) {
		if (c->sum_use->positions)
			vgt_positions_plan(c, (size_t)(e - c->sum_use->v) / entry_len(c->sum_use),
			                   e);
		return false;
	}
	struct vgt_stream_stats *st = &c->s->pub.stats;
	if (e[SUM_EVENTS]) {
		if (!st->events)
			st->first_ts = (int64_t)e[SUM_FIRST];
		st->events += e[SUM_EVENTS];
		st->last_ts = (int64_t)e[SUM_LAST];
		c->have_ts = true;
		c->last_ts = (int64_t)e[SUM_LAST];
		c->clock = e[SUM_CLOCK];
	}
	st->packets_skipped++;
	st->events_skipped += e[SUM_EVENTS];
	c->in_packet = false;
	return true;
}

/* ---- making one ---- */

void vgt_summary_event(struct vgt_cursor *c, uint64_t id, int64_t ts, size_t at)
{
	struct stream_summary *r = c->sum_rec;
	if (!r || !c->sum_in)
		return;
	uint64_t *e = r->v + r->n * entry_len(r);
	if (id / 64 >= r->words) { /* an id the metadata did not declare: never passed over */
		c->sum_in = false;
		return;
	}
	if (!e[SUM_EVENTS]++)
		e[SUM_FIRST] = (uint64_t)ts;
	e[SUM_LAST] = (uint64_t)ts;
	e[SUM_CLOCK] = c->clock;
	e[SUM_FIXED + id / 64] |= 1ull << (id % 64);
	if (r->positions)
		vgt_positions_event(r, id, at - c->pkt.start, c->clock);
}

void vgt_summary_packet_end(struct vgt_cursor *c)
{
	struct stream_summary *r = c->sum_rec;
	if (!r || !c->sum_in)
		return;
	c->sum_in = false;
	uint64_t *e = r->v + r->n * entry_len(r);
	if (c->s->damage.total != c->sum_damage || e[SUM_END] != c->pkt.end)
		return; /* damaged, or sizes changed: not kept */
	e[SUM_FLAGS] = SUM_CLEAN;
	if (r->positions)
		vgt_positions_packet_end(r, e);
	r->n++;
}

/* Writes the bytes at path through a new file renamed over it (only over a regular
 * file): 0, or -1. */
static int write_at(const char *path, const uint8_t *b, size_t len)
{
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return -1;
	char tmp[4300];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int rc = vgb_write_all(fd, b, len);
	if (close(fd) < 0)
		rc = -1;
	if (rc == 0)
		rc = rename(tmp, path);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

void vgt_summary_stream_end(struct vgt_cursor *c)
{
	struct stream_summary *r = c->sum_rec;
	if (!r)
		return;
	c->sum_rec = NULL;
	size_t len;
	uint8_t *b = vgt_summary_bytes(r, &len);
	char path[4200], dir[4096];
	if (!side_path(c->s, 0, path, sizeof path) || write_at(path, b, len) < 0) {
		if (vgb_cache_dir(dir, sizeof dir) && vgb_mkdirs(dir, 0700) == 0 &&
		    side_path(c->s, 1, path, sizeof path))
			write_at(path, b, len); /* else the next reader makes one again */
	}
	free(b);
	vgt_summary_free(r);
}

void vgt_summary_detach(struct vgt_cursor *c)
{
	vgt_summary_free(c->sum_use);
	vgt_summary_free(c->sum_rec);
	c->sum_use = c->sum_rec = NULL;
	vgt_positions_release(c);
}
