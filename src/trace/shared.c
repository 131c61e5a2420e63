/* The shared layout (docs/trace-format.md "Shared layout"): the process images of one
 * recording write into one directory with one metadata (env `vigil_layout = "shared"`),
 * and each packet's context names the image that wrote it (pid, ppid, process_gen,
 * parent_gen, image, procname). The reader makes one image per writer, so every reader
 * above sees images as in the one-directory-per-image layout: each of them gets its own
 * parse of the metadata text (event ids are the same in all of them), the streams whose
 * first packet it wrote, and its identity from that packet. A stream file of the pool
 * (src/runtime/stream_pool.c) holds the streams of successive threads one after the
 * other: it is first cut where the writing thread changes. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_io.h"
#include "internal.h"

static uint64_t uint_at(const struct vgt_value *v, int slot)
{
	return slot >= 0 && (v[slot].type == VGT_UINT || v[slot].type == VGT_INT) ? v[slot].u : 0;
}

enum packet_seen { NO_PACKET, HEADER_ONLY, WHOLE_PACKET };

/* The writer named by the packet at `off`: WHOLE_PACKET with *next past it; HEADER_ONLY
 * when its header is there but the packet runs past the bytes (the file's last packet:
 * still written, or the last writer's damage); NO_PACKET when no sound header is. */
static enum packet_seen packet_owner(const struct metadata *md, const struct stream *s, size_t off,
                                     struct pool_writer *o, uint64_t *discarded, size_t *next)
{
	if (!s->data || off >= s->data_end)
		return NO_PACKET;
	struct vgt_value *hv = vgt__xcalloc(md->max_fields + 1, sizeof *hv);
	struct vgt_value *cv = vgt__xcalloc(md->max_fields + 1, sizeof *cv);
	const uint8_t *base = vgt_stream_bytes_at(s, off);
	/* headers are data; a packet's unused end may be a hole past data_end */
	size_t pos = 0, avail = s->data_end - off, whole = s->size - off;
	const struct stream_class *sc = NULL;
	bool ok = vgt_layout_decode(&md->packet_header, base, &pos, avail, hv, NULL) == DEC_OK &&
	          (md->magic < 0 || hv[md->magic].u == VGT_CTF_MAGIC);
	if (ok)
		sc = vgt_metadata_stream(md, md->stream_id >= 0 ? uint_at(hv, md->stream_id) : 0);
	ok = ok && sc &&
	     vgt_layout_decode(&sc->packet_context, base, &pos, avail, cv, NULL) == DEC_OK;
	const struct layout *l = sc ? &sc->packet_context : NULL;
	int pid = l ? vgt_layout_field(l, "pid") : -1,
	    name = l ? vgt_layout_field(l, "procname") : -1;
	uint64_t psize = ok && sc->packet_size >= 0 ? uint_at(cv, sc->packet_size) / 8 : 0;
	ok = ok && pid >= 0 && psize >= pos;
	enum packet_seen seen = !ok ? NO_PACKET : psize <= whole ? WHOLE_PACKET : HEADER_ONLY;
	if (ok) {
		*o = (struct pool_writer){.pid = (int64_t)uint_at(cv, pid),
		                          .ppid = (int64_t)uint_at(cv, vgt_layout_field(l, "ppid")),
		                          .gen = uint_at(cv, vgt_layout_field(l, "process_gen")),
		                          .parent_gen =
		                              uint_at(cv, vgt_layout_field(l, "parent_gen")),
		                          .image = uint_at(cv, vgt_layout_field(l, "image")),
		                          .tid = uint_at(cv, sc->tid),
		                          .thread_gen = uint_at(cv, sc->thread_gen)};
		if (name >= 0 && cv[name].type == VGT_BYTES) {
			size_t n = strnlen((const char *)cv[name].bytes.ptr, cv[name].bytes.len);
			memcpy(o->name, cv[name].bytes.ptr, n < 16 ? n : 16);
		}
		*discarded = uint_at(cv, sc->discarded);
		*next = off + psize;
	}
	free(hv);
	free(cv);
	return seen;
}

static bool same_thread(const struct pool_writer *a, const struct pool_writer *b)
{
	return a->pid == b->pid && a->gen == b->gen && a->image == b->image && a->tid == b->tid &&
	       a->thread_gen == b->thread_gen;
}

bool vgt_pool_walk(const struct metadata *md, const struct stream *s, bool growing,
                   struct pool_walk *w)
{
	for (;;) {
		struct pool_writer o;
		uint64_t discarded;
		size_t next;
		enum packet_seen seen = packet_owner(md, s, w->off, &o, &discarded, &next);
		if (seen == NO_PACKET || (seen == HEADER_ONLY && !growing))
			return false; /* the rest of the file is the last writer's: its damage */
		if (w->have && !same_thread(&w->writer, &o))
			return true;
		w->writer = o;
		w->have = true;
		if (seen == HEADER_ONLY)
			return false; /* the packet its writer is filling */
		struct pool_writer after;
		uint64_t d;
		size_t n;
		if (growing && packet_owner(md, s, next, &after, &d, &n) == NO_PACKET)
			return false; /* its writer may still close it smaller (and cut the file) */
		w->discarded = discarded;
		w->off = next;
	}
}

/* One writer's packets [start, end) of a pool file, read from the file's memory. */
static struct stream *part_of(struct stream *file, size_t start, size_t end, uint64_t base)
{
	struct stream *s = vgt__xcalloc(1, sizeof *s);
	s->img = file->img;
	s->path = vgt__xstrdup(file->path);
	s->pub.path = s->path;
	s->pub.image = file->pub.image;
	s->data = file->data;
	s->held_from = file->held_from;
	s->borrowed = true;
	s->start = start;
	s->size = end;
	s->data_end = file->data_end < end ? file->data_end : end;
	s->pub.size = end - start;
	s->pub.file_size = file->pub.file_size;
	s->discarded_base = base;
	s->file = file;
	file->readers++;
	return s;
}

/* A stream file as the streams of its successive writers (stream_pool.c hands a file from
 * one thread to the next): appends them to *out. A file of one writer stays as it is. */
static void split_file(const struct metadata *md, struct stream *file, struct stream ***out,
                       size_t *n)
{
	size_t *cut = NULL, ncuts = 0;
	uint64_t *bases = NULL;
	struct pool_walk w = {0};
	bool more = !file->open_error;
	while (more) {
		size_t at = w.off;
		uint64_t base = w.have ? w.discarded : 0;
		w.have = false; /* the next writer: the thread of the packet at `at` */
		more = vgt_pool_walk(md, file, false, &w);
		if (!w.have)
			break;
		cut = vgt__xrealloc(cut, ncuts + 1, sizeof *cut);
		bases = vgt__xrealloc(bases, ncuts + 1, sizeof *bases);
		bases[ncuts] = base;
		cut[ncuts++] = at;
	}
	*out = vgt__xrealloc(*out, *n + (ncuts ? ncuts : 1) + 1, sizeof **out);
	if (ncuts <= 1) {
		(*out)[(*n)++] = file;
	} else {
		for (size_t i = 0; i < ncuts; i++)
			(*out)[(*n)++] = part_of(file, cut[i],
			                         i + 1 < ncuts ? cut[i + 1] : file->size, bases[i]);
	}
	free(cut);
	free(bases);
}

/* The writer named by the stream's first packet; false when it has none (growing: its
 * header is enough, the packet may still be written). */
static bool first_owner(const struct metadata *md, const struct stream *s, bool growing,
                        struct pool_writer *o)
{
	uint64_t discarded;
	size_t next;
	enum packet_seen seen = packet_owner(md, s, s->start, o, &discarded, &next);
	return seen == WHOLE_PACKET || (growing && seen == HEADER_ONLY);
}

static bool same_owner(const struct pool_writer *a, const struct pool_writer *b)
{
	return a->pid == b->pid && a->gen == b->gen && a->image == b->image;
}

/* The name of a writer's image in the directory (its path below it). */
static char *owner_name(const struct pool_writer *o)
{
	return vgt__xprintf("%s-%" PRId64 "-%" PRIu64 "-%" PRIu64, o->name[0] ? o->name : "?",
	                    o->pid, o->gen, o->image);
}

/* A new image of the shared directory for one writer: its own metadata parse. */
static struct image *writer_image(const struct image *dir, const char *text, size_t len,
                                  const struct pool_writer *o)
{
	struct image *img = vgt__xcalloc(1, sizeof *img);
	char *name = owner_name(o);
	img->path = vgt__xprintf("%s/%s", dir->path, name);
	free(name);
	img->metadata_path = vgt__xstrdup(dir->metadata_path);
	struct damage_list quiet = {0}; /* said once, by the directory's parse */
	img->md = vgt_metadata_parse(text, len, img->metadata_path, &quiet);
	vgt_damage_clear(&quiet);
	if (!img->md) { /* it parsed once: only memory could make it fail */
		vgt_image_free(img);
		return NULL;
	}
	img->md->cut = false; /* recover repairs the file once, through the first image */
	vgt_image_describe(img);
	img->pub.path = img->path;
	memcpy(img->procname, o->name, sizeof img->procname);
	img->pub.procname = img->procname;
	img->pub.pid = o->pid;
	img->pub.ppid = o->ppid;
	img->pub.process_gen = o->gen;
	img->pub.exec_index = o->image;
	return img;
}

static void adopt_stream(struct image *img, struct stream *s)
{
	img->streams = vgt__xrealloc(img->streams, img->pub.nstreams + 2, sizeof *img->streams);
	img->streams[img->pub.nstreams++] = s;
	img->streams[img->pub.nstreams] = NULL;
	img->pub.streams = (struct vgt_stream *const *)img->streams;
	s->img = img;
	s->pub.image = &img->pub;
}

bool vgt_image_is_shared(const struct image *img)
{
	const char *layout = img->md ? vgt_metadata_env(img->md, "vigil_layout") : NULL;
	return layout && !strcmp(layout, "shared");
}

static bool wanted(const struct pool_writer *o, const char *only)
{
	if (!only)
		return true;
	char *name = owner_name(o);
	bool yes = !strcmp(name, only);
	free(name);
	return yes;
}

size_t vgt_image_split_shared(struct image *dir, const char *text, size_t len, const char *only,
                              struct image ***out)
{
	struct image **imgs = NULL;
	struct pool_writer *owners = NULL;
	size_t n = 0;
	size_t kept = 0; /* streams without a packet stay with the directory's image */
	struct stream **parts = NULL;
	size_t nparts = 0;
	for (size_t i = 0; i < dir->pub.nstreams; i++)
		split_file(dir->md, dir->streams[i], &parts, &nparts);
	free(dir->streams);
	dir->streams = parts;
	dir->pub.nstreams = nparts;
	for (size_t i = 0; i < dir->pub.nstreams; i++) {
		struct stream *s = dir->streams[i];
		struct pool_writer o;
		if (!first_owner(dir->md, s, false, &o)) {
			dir->streams[kept++] = s;
			continue;
		}
		if (!wanted(&o, only)) {
			vgt_stream_free(s);
			continue;
		}
		size_t k = 0;
		while (k < n && !same_owner(&owners[k], &o))
			k++;
		if (k == n) {
			struct image *img = writer_image(dir, text, len, &o);
			if (!img) {
				dir->streams[kept++] = s;
				continue;
			}
			imgs = vgt__xrealloc(imgs, n + 2, sizeof *imgs);
			owners = vgt__xrealloc(owners, n + 1, sizeof *owners);
			imgs[n] = img;
			owners[n++] = o;
		}
		adopt_stream(imgs[k], s);
	}
	free(owners);
	dir->pub.nstreams = kept;
	if (dir->streams)
		dir->streams[kept] = NULL;
	dir->pub.streams = (struct vgt_stream *const *)dir->streams;
	/* The directory's image carries the metadata's damage and stray streams; without
	 * either it names no process and is left out. */
	if (!only && (kept || dir->damage.n || dir->nodd || !n)) {
		imgs = vgt__xrealloc(imgs, n + 1, sizeof *imgs);
		memmove(imgs + 1, imgs, n * sizeof *imgs);
		imgs[0] = dir;
		n++;
	} else {
		vgt_image_free(dir);
	}
	*out = imgs;
	return n;
}

struct image *vgt_image_shared_adopt(struct image *dir, struct stream *s, struct image **writers,
                                     size_t n, bool *added)
{
	struct pool_writer o;
	*added = false;
	if (!dir->md || !first_owner(dir->md, s, true, &o))
		return NULL;
	for (size_t k = 0; k < n; k++) {
		const struct vgt_image *w = &writers[k]->pub;
		if (w->pid == o.pid && w->process_gen == o.gen && w->exec_index == o.image) {
			adopt_stream(writers[k], s);
			return writers[k];
		}
	}
	size_t len = 0;
	char *text = vgb_read_file(dir->metadata_path, (size_t)64 << 20, VGB_READ_REGULAR, &len);
	struct image *img = text ? writer_image(dir, text, len, &o) : NULL;
	free(text);
	if (!img)
		return NULL;
	img->metadata_len = len;
	adopt_stream(img, s);
	*added = true;
	return img;
}
