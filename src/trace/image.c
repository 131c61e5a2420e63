/* A process image: one directory with a `metadata` file and its stream files. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_io.h"
#include "internal.h"

#define MAX_METADATA ((size_t)64 << 20)

static char *path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	return vgt__xprintf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

/* Reads a whole file of at most `max` bytes; NULL with errno set otherwise. */
static char *read_file(const char *path, size_t max, size_t *len)
{
	char *buf = vgb_read_file(path, max, VGB_READ_REGULAR, len);
	if (!buf && errno == EISDIR)
		errno = EINVAL; /* not a regular file, as for a FIFO */
	return buf;
}

static int64_t clamp_i64(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

int64_t vgt_image_abs_ns(const struct image *img, uint64_t clock_value)
{
	__int128 ns = img->ns_num == img->ns_den
	                  ? (__int128)clock_value
	                  : (__int128)clock_value * img->ns_num / img->ns_den;
	return clamp_i64(img->pub.clock_offset_ns + ns);
}

/* The clock of an image's events: its first stream's that has one. */
static const struct clock_class *events_clock(const struct metadata *md)
{
	const struct clock_class *c = NULL;
	for (size_t i = 0; i < md->nstreams && !c; i++)
		c = md->streams[i]->clock;
	return c;
}

static int64_t clock_offset_ns(const struct clock_class *c)
{
	uint64_t num = c->freq != 1000000000 ? 1000000000 : 1, den = num == 1 ? 1 : c->freq;
	return clamp_i64((__int128)c->offset_s * 1000000000 + (__int128)c->offset * num / den);
}

static void set_clock(struct image *img)
{
	const struct clock_class *c = events_clock(img->md);
	img->clock = c;
	img->ns_num = img->ns_den = 1;
	if (!c)
		return;
	if (c->freq != 1000000000) {
		img->ns_num = 1000000000;
		img->ns_den = c->freq;
	}
	img->own_offset_ns = img->pub.clock_offset_ns = clock_offset_ns(c);
}

int vgt_metadata_clock(const char *text, size_t len, int64_t *offset_ns, uint64_t *freq)
{
	struct damage_list diag = {0};
	struct metadata *md = vgt_metadata_parse(text, len, "metadata", &diag);
	const struct clock_class *c = md ? events_clock(md) : NULL;
	if (c) {
		*offset_ns = clock_offset_ns(c);
		*freq = c->freq;
	}
	vgt_metadata_free(md);
	vgt_damage_clear(&diag);
	return c ? 0 : -1;
}

static int64_t env_int(const struct metadata *md, const char *key, int64_t dflt)
{
	const char *s = vgt_metadata_env(md, key);
	char *end;
	if (!s)
		return dflt;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	return *end || errno ? dflt : v;
}

void vgt_image_describe(struct image *img)
{
	const struct metadata *md = img->md;
	struct vgt_image *p = &img->pub;
	p->readable = true;
	p->hostname = vgt_metadata_env(md, "hostname");
	p->procname = vgt_metadata_env(md, "procname");
	p->pid = env_int(md, "vpid", -1);
	p->ppid = env_int(md, "vigil_ppid", -1);
	p->process_gen = (uint64_t)env_int(md, "vigil_process_gen", 0);
	p->exec_index = (uint64_t)env_int(md, "vigil_image", 0);
	p->has_uuid = md->has_uuid;
	memcpy(p->uuid, md->uuid, 16);
	const struct vgt_event_type **types =
	    vgt_arena_alloc(&img->md->arena, (md->nevents + 1) * sizeof *types);
	for (size_t i = 0; i < md->nevents; i++)
		types[i] = &md->events[i]->pub;
	p->types = types;
	p->ntypes = md->nevents;
	set_clock(img);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *odd_kind(mode_t mode)
{
	return S_ISDIR(mode)    ? "a folder, not a stream file: not read"
	       : S_ISLNK(mode)  ? "a symbolic link, not a stream file: not followed"
	       : S_ISFIFO(mode) ? "a FIFO, not a stream file: not read"
	       : S_ISSOCK(mode) ? "a socket, not a stream file: not read"
	                        : "a device, not a stream file: not read";
}

/* An entry of the image folder that cannot be a stream file: reported, never skipped in
 * silence, as something else stands where events may have been. (An empty regular file
 * is a stream whose writer committed nothing, e.g. killed as it created the file, and
 * is read as a stream without packets: nothing was lost.) */
static void not_a_stream(struct image *img, const char *name, const char *why)
{
	char *path = path_join(img->path, name);
	for (size_t i = 0; i < img->nodd; i++)
		if (!strcmp(img->odd_paths[i], path)) { /* followed: named at its first scan */
			free(path);
			return;
		}
	img->odd_paths = vgt__xrealloc(img->odd_paths, img->nodd + 1, sizeof *img->odd_paths);
	img->odd_paths[img->nodd++] = path; /* the damage names it until vgt_image_free */
	vgt_damage_add(&img->damage, VGT_DMG_NOT_A_STREAM, path, 0, 0, 0, "%s", why);
}

static void sync_damage(struct image *img)
{
	img->pub.damage = img->damage.items;
	img->pub.ndamage = img->damage.n;
}

static bool known_stream(const struct image *img, const char *name)
{
	size_t dlen = strlen(img->path);
	for (size_t i = 0; i < img->pub.nstreams; i++) {
		const char *p = img->streams[i]->path;
		if (!strncmp(p, img->path, dlen) && !strcmp(p + dlen + (p[dlen] == '/'), name))
			return true;
	}
	return false;
}

/* Stream files: every other entry but `metadata` and hidden ones, by name; when the
 * image is followed (`growing`), only those not met before, opened empty (follow.c reads
 * them). Returns how many were added. */
size_t vgt_image_scan_streams(struct image *img, bool growing)
{
	DIR *d = opendir(img->path);
	if (!d) {
		if (!growing || !img->damage.total) /* followed: said once */
			vgt_damage_add(&img->damage, VGT_DMG_IO, img->path, 0, 0, 0,
			               "cannot list: %s", strerror(errno));
		return 0;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "metadata"))
			continue;
		if (growing && known_stream(img, e->d_name))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			not_a_stream(img, e->d_name, strerror(errno));
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			not_a_stream(img, e->d_name, odd_kind(st.st_mode));
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			names = vgt__xrealloc(names, cap, sizeof *names);
		}
		names[n++] = vgt__xstrdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	img->streams = vgt__xrealloc(img->streams, img->pub.nstreams + n + 1, sizeof *img->streams);
	for (size_t i = 0; i < n; i++) {
		char *path = path_join(img->path, names[i]);
		img->streams[img->pub.nstreams++] =
		    growing ? vgt_stream_growing(img, path) : vgt_stream_open(img, path, NULL, 0);
		free(path);
		free(names[i]);
	}
	img->streams[img->pub.nstreams] = NULL;
	free(names);
	img->pub.streams = (struct vgt_stream *const *)img->streams;
	sync_damage(img);
	return n;
}

/* The image of `dir`; *text (if not NULL) receives its metadata text, for the caller
 * to free. */
static struct image *image_open_text(const char *dir, char **keep_text, size_t *keep_len,
                                     bool growing)
{
	struct image *img = vgt__xcalloc(1, sizeof *img);
	img->path = vgt__xstrdup(dir);
	img->pub.path = img->path;
	img->pub.pid = img->pub.ppid = -1;
	char *mpath = path_join(dir, "metadata");
	size_t len;
	char *text = read_file(mpath, MAX_METADATA, &len);
	img->metadata_path = mpath; /* damage entries point at it */
	if (!text) {
		vgt_damage_add(&img->damage, VGT_DMG_METADATA, img->path, 0, 0, 0,
		               "cannot read metadata: %s",
		               errno == EFBIG ? "larger than 64 MiB" : strerror(errno));
	} else {
		img->md = vgt_metadata_parse(text, len, mpath, &img->damage);
		img->metadata_len = len;
		if (keep_text) {
			*keep_text = text;
			*keep_len = len;
			text = NULL;
		}
		free(text);
	}
	if (img->md) {
		vgt_image_describe(img);
		vgt_image_scan_streams(img, growing);
	}
	sync_damage(img);
	return img;
}

struct image *vgt_image_open(const char *dir)
{
	return image_open_text(dir, NULL, NULL, false);
}

struct image *vgt_image_open_growing(const char *dir)
{
	return image_open_text(dir, NULL, NULL, true);
}

size_t vgt_image_open_all(const char *dir, const char *only, struct image ***out)
{
	char *text = NULL;
	size_t len = 0;
	struct image *img = image_open_text(dir, &text, &len, false);
	size_t n = 1;
	if (text && vgt_image_is_shared(img)) {
		n = vgt_image_split_shared(img, text, len, only, out);
	} else {
		*out = vgt__xcalloc(1, sizeof **out);
		(*out)[0] = img;
	}
	free(text);
	return n;
}

void vgt_image_free(struct image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->pub.nstreams; i++)
		vgt_stream_free(img->streams[i]);
	free(img->streams);
	vgt_damage_clear(&img->damage);
	for (size_t i = 0; i < img->nodd; i++)
		free(img->odd_paths[i]);
	free(img->odd_paths);
	vgt_metadata_free(img->md);
	for (size_t i = 0; i < img->nold_md; i++)
		vgt_metadata_free(img->old_md[i]);
	free(img->old_md);
	free(img->metadata_path);
	free(img->path);
	free(img);
}

bool vgt_image_same_process(const struct vgt_image *a, const struct vgt_image *b)
{
	return a->pid == b->pid && a->process_gen == b->process_gen &&
	       !strcmp(a->hostname ? a->hostname : "", b->hostname ? b->hostname : "");
}

const char *vgt_image_env(const struct vgt_image *pub, const char *key)
{
	const struct image *img = (const struct image *)pub;
	return img->md ? vgt_metadata_env(img->md, key) : NULL;
}

const struct vgt_event_type *vgt_image_type(const struct vgt_image *pub, const char *name)
{
	for (size_t i = 0; i < pub->ntypes; i++)
		if (!strcmp(pub->types[i]->name, name))
			return pub->types[i];
	return NULL;
}

/* The end of the file's last data extent: what follows is a hole, read as zeros, which a
 * reader need not touch (a stream preallocated sparse and cut short holds gigabytes of
 * it). The whole size where the file system cannot tell. */
static size_t data_end(int fd, size_t size)
{
	off_t end = 0, at = 0;
	for (;;) {
		off_t d = lseek(fd, at, SEEK_DATA);
		if (d < 0)
			return errno == ENXIO ? (size_t)end : size;
		off_t h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			return size;
		end = h;
		at = h;
		if ((size_t)h >= size)
			return size;
	}
}

static atomic_bool copy_streams;

void vgt_set_copy_streams(bool copy)
{
	atomic_store(&copy_streams, copy);
}

/* Reads the stream's data (up to its data end) into memory: a file that shrinks meanwhile
 * gives fewer bytes, never a fault. */
static void copy_stream(struct stream *s, int fd)
{
	size_t want = s->data_end, got = 0;
	uint8_t *buf = malloc(want ? want : 1);
	if (!buf) {
		s->open_error = vgt__xprintf("cannot read: %s", strerror(ENOMEM));
		s->size = s->data_end = 0;
		return;
	}
	while (got < want) {
		ssize_t n = pread(fd, buf + got, want - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	s->data = buf;
	s->size = s->data_end = got;
	s->pub.size = got;
}

struct stream *vgt_stream_open(struct image *img, const char *path, const uint8_t *data,
                               size_t size)
{
	struct stream *s = vgt__xcalloc(1, sizeof *s);
	s->img = img;
	s->path = vgt__xstrdup(path);
	s->pub.path = s->path;
	s->pub.image = &img->pub;
	if (data) {
		s->borrowed = true;
		s->data = data;
		s->size = size;
		s->data_end = size;
		s->pub.size = s->pub.file_size = size;
		return s;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		s->open_error = vgt__xprintf("cannot open: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return s;
	}
	s->size = (size_t)st.st_size;
	s->pub.size = s->pub.file_size = s->size;
	s->data_end = data_end(fd, s->size);
	if (s->size && atomic_load_explicit(&copy_streams, memory_order_relaxed)) {
		copy_stream(s, fd);
	} else if (s->size) {
		void *m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			s->data = m;
			s->mapped = true;
			madvise(m, s->size, MADV_SEQUENTIAL);
		} else {
			size_t n;
			close(fd);
			fd = -1;
			s->data = (const uint8_t *)read_file(path, SIZE_MAX, &n);
			if (!s->data)
				s->open_error = vgt__xprintf("cannot read: %s", strerror(errno));
			s->size = s->data ? n : 0;
			s->data_end = s->size;
		}
	}
	if (fd >= 0)
		close(fd);
	return s;
}

struct stream *vgt_stream_growing(struct image *img, const char *path)
{
	struct stream *s = vgt__xcalloc(1, sizeof *s);
	s->img = img;
	s->path = vgt__xstrdup(path);
	s->pub.path = s->path;
	s->pub.image = &img->pub;
	return s;
}

/* The mapped pages from *dropped to off leave the process once they are `step` bytes;
 * `whole`: the page holding off too (a cursor's end: a page shared with the next range
 * or stream part that is still read is only read in again, from the page cache). */
static void drop_pages(const struct stream *s, size_t *dropped, size_t off, size_t step, bool whole)
{
	const struct stream *owner = s->file ? s->file : s; /* a pool file's part: its memory */
	if (!owner->mapped || off < *dropped + step || off > s->size)
		return;
	/* whole pages only: the mapping starts on one, so the first is still in it */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)s->data + *dropped) & ~(page - 1);
	uintptr_t to = ((uintptr_t)s->data + off + (whole ? page - 1 : 0)) & ~(page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
	*dropped = off;
}

void vgt_stream_drop_behind(const struct stream *s, size_t *dropped, size_t off)
{
	drop_pages(s, dropped, off, 1 << 20, false);
}

void vgt_stream_drop_rest(const struct stream *s, size_t *dropped)
{
	drop_pages(s, dropped, s->size, 1, true);
}

void vgt_stream_free(struct stream *s)
{
	if (!s)
		return;
	struct stream *file = s->file;
	if (file) { /* one writer's part of a pool file: the file goes with its last part */
		s->file = NULL;
		vgt_stream_free(s);
		if (--file->readers == 0)
			vgt_stream_free(file);
		return;
	}
	if (s->mapped)
		munmap((void *)s->data, s->size);
	else if (!s->borrowed)
		free((void *)s->data);
	vgt_damage_clear(&s->damage);
	free(s->open_error);
	free(s->path);
	free(s);
}
