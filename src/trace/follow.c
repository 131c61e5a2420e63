/* Following a trace while it is written (follow.h): images, streams and declarations
 * found at each poll are appended to one trace object (a shared-layout folder's streams
 * to their writers' images); each stream is read again packet by packet from the one its
 * cursor is in (a growing packet's sizes change in place) and its cursor,
 * in follow mode, holds where the writer has not finished; a heap merges the streams'
 * next events by time, handing out those at or before the watermark. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "follow.h"
#include "internal.h"

/* A hold at something doubtful (a header or event that does not decode, an id not
 * declared) is taken as written once it has lasted this long: read as vgt_open reads it,
 * damage reported. A writer finishes a header or a declaration in microseconds. */
#define DOUBT_NS ((int64_t)2000000000)

/* A packet header is read with this much after its start (headers are ~100 bytes). */
#define HEADER_ROOM 4096

struct fstream {
	struct vgt_cursor c;
	size_t cap;                /* of the stream's buffer */
	const struct metadata *md; /* the parse its cursor's arrays were sized for */
	size_t doubt_at;           /* a doubtful hold: where, since when */
	int64_t doubt_since;
	bool doubting, in_heap;
	/* The buffer the stream's current event (in the heap) was decoded from, when the
	 * stream was read again into a larger one meanwhile: freed once that event is gone. */
	void *stale;
	/* The last part of a pool file (shared.c): walked for a writer after it. */
	struct pool_file *pool;
	/* A part another writer's packets came after: its bytes end at `limit`, final (read
	 * once more, whole: `final_read`), read as vgt_open reads them. */
	bool final, final_read;
	size_t limit;
};

/* A stream file of a shared-layout folder, which the runtime's pool (stream_pool.c) hands
 * from one thread to the next: cut into one part per writing thread as it grows, as
 * vgt_open cuts it (shared.c), each part a stream of its writer's image. */
struct pool_file {
	size_t sd;             /* its folder, in vgt_follow.shared */
	struct pool_walk walk; /* over its last part's packets */
};

/* A shared-layout folder (trace/follow.h): its streams, given to their writers' images
 * as their first packets become readable. */
struct shared_dir {
	struct image *dir;        /* not in the trace: it reads the first packets' owners */
	struct pool_file **files; /* per stream of dir: NULL until given to a writer's image */
	size_t nknown;            /* streams of dir that `files` covers */
	struct image **writers;
	size_t nwriters;
};

struct vgt_follow {
	char *root;
	struct shared_dir *shared;
	size_t nshared;
	bool root_is_image;
	struct vgt_trace *t;
	struct fstream **fs; /* by stream index */
	size_t nfs;
	size_t *heap; /* stream indexes with an event not handed out yet */
	size_t nheap;
	bool top_returned;
	int64_t until, released;
	char **tried; /* sub-directories met: opened, or without readable metadata yet */
	bool *opened;
	size_t ntried;
	struct vgt_follow_stats st;
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the merge ---- */

static const struct vgt_event *current(const struct vgt_follow *f, size_t i)
{
	return &f->fs[i]->c.ev;
}

static bool before(const struct vgt_follow *f, size_t a, size_t b)
{
	const struct vgt_event *x = current(f, a), *y = current(f, b);
	return x->ts < y->ts || (x->ts == y->ts && a < b);
}

static void swap(size_t *h, size_t i, size_t j)
{
	size_t t = h[i];
	h[i] = h[j];
	h[j] = t;
}

static void sift_down(struct vgt_follow *f, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;
		if (l < f->nheap && before(f, f->heap[l], f->heap[min]))
			min = l;
		if (r < f->nheap && before(f, f->heap[r], f->heap[min]))
			min = r;
		if (min == i)
			return;
		swap(f->heap, i, min);
		i = min;
	}
}

static void push(struct vgt_follow *f, size_t i)
{
	size_t k = f->nheap++;
	f->heap[k] = i;
	f->fs[i]->in_heap = true;
	while (k > 0 && before(f, f->heap[k], f->heap[(k - 1) / 2])) {
		swap(f->heap, k, (k - 1) / 2);
		k = (k - 1) / 2;
	}
}

/* After the cursor's advance: a doubtful hold is timed from when it was first met. */
static void note_hold(struct fstream *s, int64_t now)
{
	bool doubt = s->c.paused && !s->c.held_clean;
	if (doubt && (!s->doubting || s->c.held_at != s->doubt_at)) {
		s->doubt_at = s->c.held_at;
		s->doubt_since = now;
	}
	s->doubting = doubt;
}

/* The top's event was handed out: its stream's next, or the stream leaves the heap until
 * more is read. */
static void settle_top(struct vgt_follow *f)
{
	if (!f->top_returned)
		return;
	f->top_returned = false;
	struct fstream *s = f->fs[f->heap[0]];
	bool got = vgt_cursor_advance(&s->c);
	free(s->stale); /* the event handed out was the last one in it */
	s->stale = NULL;
	if (got) {
		sift_down(f, 0);
		return;
	}
	note_hold(s, mono_ns());
	s->in_heap = false;
	f->heap[0] = f->heap[--f->nheap];
	sift_down(f, 0);
}

/* ---- the trace growing ---- */

static void add_classes(struct vgt_follow *f, const struct image *img, size_t from)
{
	struct vgt_trace *t = f->t;
	size_t n = img->pub.ntypes - from;
	t->classes = vgt__xrealloc(t->classes, t->nclasses + n + 1, sizeof *t->classes);
	for (size_t j = from; j < img->pub.ntypes; j++) {
		struct vgt_event_type *et = (struct vgt_event_type *)img->pub.types[j];
		et->class_id = (uint32_t)t->nclasses;
		t->classes[t->nclasses++] = et;
	}
	t->classes[t->nclasses] = NULL;
}

static void add_streams(struct vgt_follow *f, struct image *img, size_t from)
{
	struct vgt_trace *t = f->t;
	size_t n = img->pub.nstreams - from;
	t->streams = vgt__xrealloc(t->streams, t->nstreams + n + 1, sizeof *t->streams);
	f->fs = vgt__xrealloc(f->fs, t->nstreams + n + 1, sizeof *f->fs);
	f->heap = vgt__xrealloc(f->heap, t->nstreams + n + 1, sizeof *f->heap);
	for (size_t j = from; j < img->pub.nstreams; j++) {
		struct stream *s = img->streams[j];
		s->pub.index = t->nstreams;
		t->streams[t->nstreams] = s;
		struct fstream *fs = vgt__xcalloc(1, sizeof *fs);
		vgt_cursor_init(&fs->c, s);
		fs->c.done = !img->md;
		fs->md = img->md;
		f->fs[t->nstreams++] = fs;
	}
	t->streams[t->nstreams] = NULL;
	f->nfs = t->nstreams;
	f->st.streams = t->nstreams;
}

static void add_image(struct vgt_follow *f, struct image *img)
{
	struct vgt_trace *t = f->t;
	t->images = vgt__xrealloc(t->images, t->nimages + 2, sizeof *t->images);
	t->images[t->nimages++] = img;
	vgt_trace_share_clock(t, t->nimages - 1);
	add_classes(f, img, 0);
	add_streams(f, img, 0);
	f->st.images = t->nimages;
}

/* An image directory met for the first time: opened once its metadata parses (a process
 * writes it as it starts), or at the end whatever it holds (its damage is reported). */
static bool try_image(struct vgt_follow *f, const char *dir, bool end)
{
	struct image *img = vgt_image_open_growing(dir);
	if (!img->md && !end) {
		vgt_image_free(img);
		return false;
	}
	if (vgt_image_is_shared(img)) { /* one directory for every process */
		f->shared = vgt__xrealloc(f->shared, f->nshared + 1, sizeof *f->shared);
		f->shared[f->nshared++] = (struct shared_dir){.dir = img};
		return true;
	}
	add_image(f, img);
	return true;
}

static bool is_image_dir(int dfd, const char *name)
{
	struct stat st;
	char path[4096];
	snprintf(path, sizeof path, "%s/metadata", name);
	return fstatat(dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The root's sub-directories holding a metadata file, each tried until opened. */
static void discover(struct vgt_follow *f, bool end)
{
	DIR *d = opendir(f->root);
	if (!d)
		return;
	char **names = NULL;
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		size_t k = 0;
		while (k < f->ntried && strcmp(f->tried[k], e->d_name))
			k++;
		if (k < f->ntried && f->opened[k])
			continue;
		if (!is_image_dir(dirfd(d), e->d_name))
			continue;
		if (k == f->ntried) {
			f->tried = vgt__xrealloc(f->tried, f->ntried + 1, sizeof *f->tried);
			f->opened = vgt__xrealloc(f->opened, f->ntried + 1, sizeof *f->opened);
			f->tried[k] = vgt__xstrdup(e->d_name);
			f->opened[k] = false;
			f->ntried++;
		}
		names = vgt__xrealloc(names, n + 1, sizeof *names);
		names[n++] = f->tried[k];
	}
	closedir(d);
	/* by name, as vgt_open orders a recording's images */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *x = names[j];
			names[j] = names[j - 1];
			names[j - 1] = x;
		}
	for (size_t i = 0; i < n; i++) {
		char *dir = vgt__xprintf("%s/%s", f->root, names[i]);
		bool ok = try_image(f, dir, end);
		free(dir);
		for (size_t k = 0; k < f->ntried; k++)
			if (f->tried[k] == names[i])
				f->opened[k] = ok;
	}
	free(names);
}

/* New declarations (a stream waits on an id, or the file has grown) and new streams. */
static void grow_image(struct vgt_follow *f, struct image *img)
{
	if (!img->md)
		return;
	struct stat st;
	if (stat(img->metadata_path, &st) == 0 && (size_t)st.st_size > img->metadata_len) {
		size_t before = img->pub.ntypes;
		if (vgt_image_grow_metadata(img))
			add_classes(f, img, before);
	}
	size_t before = img->pub.nstreams;
	/* a shared folder's writers get their streams from grow_shared */
	if (!vgt_image_is_shared(img) && vgt_image_scan_streams(img, true))
		add_streams(f, img, before);
}

/* A writer's part of a shared folder's stream file, given to its image by
 * vgt_image_shared_adopt: the image added to the trace when it is new (`added`). */
static void take_part(struct vgt_follow *f, struct shared_dir *sd, struct image *w, bool added,
                      struct pool_file *pf)
{
	if (added) {
		sd->writers = vgt__xrealloc(sd->writers, sd->nwriters + 1, sizeof *sd->writers);
		sd->writers[sd->nwriters++] = w;
		add_image(f, w);
	} else {
		add_streams(f, w, w->pub.nstreams - 1);
	}
	f->fs[w->streams[w->pub.nstreams - 1]->pub.index]->pool = pf;
}

/* New stream files of a shared folder, and those whose first packet names their writer
 * now: given to that writer's image (made and added to the trace at its first stream). */
static void grow_shared(struct vgt_follow *f, size_t k)
{
	struct shared_dir *sd = &f->shared[k];
	struct image *dir = sd->dir;
	vgt_image_scan_streams(dir, true);
	if (dir->pub.nstreams > sd->nknown) { /* met at the folder's opening or since */
		sd->files = vgt__xrealloc(sd->files, dir->pub.nstreams, sizeof *sd->files);
		memset(sd->files + sd->nknown, 0,
		       (dir->pub.nstreams - sd->nknown) * sizeof *sd->files);
		sd->nknown = dir->pub.nstreams;
	}
	for (size_t i = 0; i < dir->pub.nstreams; i++) {
		if (sd->files[i])
			continue;
		struct stream *st = dir->streams[i];
		int fd = open(st->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		uint8_t *head = vgt__xcalloc(HEADER_ROOM, 1);
		ssize_t n = pread(fd, head, HEADER_ROOM, 0);
		close(fd);
		free((void *)st->data);
		st->data = head; /* its first packet's header: the follower reads the rest */
		st->held_from = 0;
		st->size = st->data_end = n > 0 ? (size_t)n : 0;
		bool added;
		struct image *w =
		    vgt_image_shared_adopt(dir, st, sd->writers, sd->nwriters, &added);
		if (!w)
			continue;
		sd->files[i] = vgt__xcalloc(1, sizeof *sd->files[i]);
		sd->files[i]->sd = k;
		take_part(f, sd, w, added, sd->files[i]);
	}
}

/* A pool file's last part, read again: its packets walked; at one of another thread (its
 * writer let the file go: what it wrote is final) the part ends, and the rest is the
 * next writer's part, given to its image; the walk goes on there once that part is read.
 * True when the part ended. */
static bool cut_pool(struct vgt_follow *f, struct fstream *s)
{
	struct pool_file *pf = s->pool;
	if (!pf)
		return false;
	struct shared_dir *sd = &f->shared[pf->sd];
	struct stream *st = s->c.s;
	if (!sd->dir->md || !vgt_pool_walk(sd->dir->md, st, true, &pf->walk))
		return false;
	size_t cut = pf->walk.off;
	struct stream *part = vgt_stream_growing(sd->dir, st->path);
	part->start = cut;
	part->discarded_base = pf->walk.discarded;
	part->data = st->data; /* its first header, read with the part before */
	part->held_from = st->held_from;
	part->size = part->data_end = st->size;
	bool added;
	struct image *w = vgt_image_shared_adopt(sd->dir, part, sd->writers, sd->nwriters, &added);
	part->data = NULL; /* its own bytes are read from `cut` on, into its own buffer */
	part->held_from = cut;
	part->size = part->data_end = cut;
	if (!w) { /* its metadata unreadable now: tried again at the next read */
		vgt_stream_free(part);
		return false;
	}
	s->pool = NULL;
	s->final = true;
	s->limit = cut;
	if (st->size > cut)
		st->size = st->data_end = cut;
	st->pub.size = st->size - st->start;
	pf->walk.have = false; /* the next writer's packets */
	take_part(f, sd, w, added, pf);
	return true;
}

static void shared_dir_free(struct shared_dir *sd)
{
	struct image *dir = sd->dir;
	size_t kept = 0; /* the streams given to writers are freed with their images */
	for (size_t i = 0; i < dir->pub.nstreams; i++)
		if (i >= sd->nknown || !sd->files[i])
			dir->streams[kept++] = dir->streams[i];
	dir->pub.nstreams = kept;
	vgt_image_free(dir);
	for (size_t i = 0; i < sd->nknown; i++)
		free(sd->files[i]);
	free(sd->files);
	free(sd->writers);
}

/* ---- reading a stream again ---- */

/* The cursor's arrays sized for its image's latest metadata, and its stream class the
 * latest parse's (which knows the declarations added since). */
static void take_metadata(struct fstream *s)
{
	const struct metadata *md = s->c.s->img->md;
	if (!md || s->md == md)
		return;
	size_t n = md->max_fields + 1;
	s->c.values = vgt__xrealloc(s->c.values, n, sizeof *s->c.values);
	s->c.header_values = vgt__xrealloc(s->c.header_values, n, sizeof *s->c.header_values);
	s->c.header_offsets = vgt__xrealloc(s->c.header_offsets, n, sizeof *s->c.header_offsets);
	s->c.md = md;
	if (s->c.sc)
		s->c.sc = vgt_metadata_stream(md, s->c.sc->id);
	s->md = md;
}

/* The stream's buffer holding the file's bytes up to `want`, those read so far kept. A
 * pool file's part holds its own bytes only, from its start (held_from). */
static void reserve(struct fstream *s, size_t want)
{
	struct stream *st = s->c.s;
	size_t need = want > st->start ? want - st->start : 0;
	if (need <= s->cap && st->data)
		return;
	size_t cap = s->cap ? s->cap : 4096;
	while (cap < need)
		cap *= 2;
	uint8_t *grown = vgt__xcalloc(cap, 1); /* padding never read stays zeros */
	if (st->data && st->size > st->start)
		memcpy(grown, vgt_stream_bytes_at(st, st->start), st->size - st->start);
	if (s->in_heap && !s->stale)
		s->stale = (void *)st->data; /* its current event points into it */
	else
		free((void *)st->data);
	st->data = grown;
	st->held_from = st->start;
	s->cap = cap;
}

/* Reads [from, to) of the file into the buffer; the end of what was read. */
static size_t read_range(struct vgt_follow *f, struct fstream *s, int fd, size_t from, size_t to)
{
	reserve(s, to);
	struct stream *st = s->c.s;
	size_t got = from;
	while (got < to) {
		ssize_t n =
		    pread(fd, (uint8_t *)vgt_stream_bytes_at(st, got), to - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	f->st.bytes_read += got - from;
	return got;
}

static void set_size(struct stream *st, size_t size)
{
	st->size = st->data_end = size;
	st->pub.size = size - st->start;
}

/* Reads the stream file again from where its cursor is: at the end of the run, to the
 * end of the file; else packet by packet, each one's header (its sizes change as its
 * writer commits) and content, never the padding after a content or the space the
 * writer allocated ahead (zeros, megabytes of them), nor again the events before the
 * cursor's last one. */
static void read_again(struct vgt_follow *f, struct fstream *s, bool end)
{
	struct stream *st = s->c.s;
	int fd = open(st->path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		if (fd >= 0)
			close(fd);
		return; /* read again at the next poll; vgt_open's reading reports it at the end */
	}
	size_t eof = (size_t)sb.st_size;
	if (s->final && eof > s->limit)
		eof = s->limit; /* the next writer's packets are another part's */
	struct packet_info *pk = &s->c.pkt;
	size_t at = s->c.in_packet ? pk->start : s->c.next;
	size_t kept = s->c.in_packet ? pk->last_event_end : at; /* final bytes before it */
	if (at > st->size)
		at = st->size;
	if (kept > st->size)
		kept = st->size;
	size_t size = kept > at ? kept : at; /* what is valid before reading */
	if (s->final && s->final_read) {
		close(fd);
		return; /* a part read whole since another writer came after it */
	}
	if (end || !s->c.md || s->final) {
		s->final_read = s->final;
		size = read_range(f, s, fd, at, eof > at ? eof : at);
		set_size(st, size);
		close(fd);
		return;
	}
	while (at < eof) {
		size_t head =
		    read_range(f, s, fd, at, eof - at > HEADER_ROOM ? at + HEADER_ROOM : eof);
		if (head > size)
			size = head;
		set_size(st, size);
		uint64_t pend, content;
		if (!vgt_cursor_packet_at(&s->c, at, &pend, &content))
			break; /* not written yet, or damage: the cursor tells which */
		size_t from = kept > head ? kept : head;
		size_t to = content < eof ? (size_t)content : eof;
		if (to > from) {
			size_t got = read_range(f, s, fd, from, to);
			if (got > size)
				size = got;
			set_size(st, size);
		}
		if (pend >= eof)
			break; /* the file's last packet: its writer's */
		at = (size_t)pend;
	}
	close(fd);
}

/* A stream whose next event waits in the heap: its bytes read again all the same (the
 * bytes of committed events do not change under it), so that none of what it wrote
 * since is missed while other streams' events up to the watermark are handed out. */
static void read_ahead(struct vgt_follow *f, struct fstream *s, bool end)
{
	read_again(f, s, end);
	if (cut_pool(f, s))
		read_again(f, s, end); /* the part's last packet as its writer left it */
	vgt_cursor_refresh(&s->c);
	s->c.follow = !end && !s->final;
	vgt_cursor_settle(&s->c); /* not following: a packet past the file's end is damage */
}

/* Takes the stream up again: its next event into the heap, if there is one yet. */
static void resume(struct vgt_follow *f, struct fstream *s, bool end, int64_t now)
{
	if (s->c.done && !s->c.in_packet)
		return;
	free(s->stale);
	s->stale = NULL;
	bool doubt = s->doubting && now - s->doubt_since > DOUBT_NS;
	take_metadata(s);
	read_again(f, s, end);
	if (cut_pool(f, s))
		read_again(f, s, end); /* the part's last packet as its writer left it */
	vgt_cursor_refresh(&s->c);
	s->c.wants_metadata = false;
	/* At the end, held too long at something doubtful, or a part another writer's
	 * packets came after: read as vgt_open does. */
	s->c.follow = !end && !doubt && !s->final;
	if (end || s->final)
		vgt_cursor_settle(&s->c); /* a packet past the file's end is damage */
	bool got = vgt_cursor_advance(&s->c);
	s->c.follow = !end && !s->final;
	note_hold(s, now);
	if (got)
		push(f, s->c.s->pub.index);
}

/* ---- the API ---- */

struct vgt_follow *vgt_follow_open(const char *path, char *err, size_t errsize)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		snprintf(err, errsize, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errsize, "'%s' is not a directory (a trace is a directory)", path);
		return NULL;
	}
	struct vgt_follow *f = vgt__xcalloc(1, sizeof *f);
	f->root = vgt__xstrdup(path);
	f->t = vgt__xcalloc(1, sizeof *f->t);
	f->t->classes = vgt__xcalloc(1, sizeof *f->t->classes);
	f->t->streams = vgt__xcalloc(1, sizeof *f->t->streams);
	f->released = INT64_MIN;
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	f->root_is_image = dfd >= 0 && is_image_dir(dfd, ".");
	if (dfd >= 0)
		close(dfd);
	if (f->root_is_image)
		try_image(f, path, true);
	return f;
}

void vgt_follow_close(struct vgt_follow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nfs; i++) {
		vgt_cursor_fini(&f->fs[i]->c);
		free(f->fs[i]->stale);
		free(f->fs[i]);
	}
	free(f->fs);
	free(f->heap);
	for (size_t i = 0; i < f->nshared; i++)
		shared_dir_free(&f->shared[i]);
	free(f->shared);
	for (size_t i = 0; i < f->ntried; i++)
		free(f->tried[i]);
	free(f->tried);
	free(f->opened);
	vgt_close(f->t);
	free(f->root);
	free(f);
}

struct vgt_trace *vgt_follow_trace(struct vgt_follow *f)
{
	return f->t;
}

size_t vgt_follow_poll(struct vgt_follow *f, int64_t until)
{
	bool end = until == VGT_FOLLOW_END;
	size_t classes = f->t->nclasses;
	int64_t now = mono_ns();
	f->st.polls++;
	settle_top(f);
	if (!f->root_is_image)
		discover(f, end);
	for (size_t i = 0; i < f->nshared; i++)
		grow_shared(f, i);
	for (size_t i = 0; i < f->t->nimages; i++)
		grow_image(f, f->t->images[i]);
	for (size_t i = 0; i < f->nfs; i++)
		if (f->fs[i]->in_heap)
			read_ahead(f, f->fs[i], end);
		else
			resume(f, f->fs[i], end, now);
	f->until = until;
	return f->t->nclasses - classes;
}

const struct vgt_event *vgt_follow_next(struct vgt_follow *f)
{
	settle_top(f);
	if (!f->nheap)
		return NULL;
	const struct vgt_event *ev = current(f, f->heap[0]);
	if (ev->ts > f->until)
		return NULL;
	f->top_returned = true;
	f->st.events++;
	if (ev->ts < f->released)
		f->st.late++;
	else
		f->released = ev->ts;
	return ev;
}

int64_t vgt_follow_now(const struct vgt_follow *f)
{
	for (size_t i = 0; i < f->t->nimages; i++)
		if (f->t->images[i]->clock)
			return f->t->images[i]->pub.clock_offset_ns + mono_ns();
	return INT64_MIN;
}

void vgt_follow_stats(const struct vgt_follow *f, struct vgt_follow_stats *out)
{
	*out = f->st;
}
