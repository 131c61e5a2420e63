/* A trace: every process image found under the given paths, and all their streams. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_DEPTH 16

struct found {
	char **dirs;
	char **only; /* one writer's image of a shared-layout directory (its name), or NULL */
	dev_t *devs;
	ino_t *inos;
	size_t n, cap;
	size_t seen; /* image directories met, named twice or not */
};

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_image_dir(struct found *f, const char *dir, const struct stat *st, const char *only)
{
	f->seen++;
	for (size_t i = 0; i < f->n; i++) {
		if (f->devs[i] != st->st_dev || f->inos[i] != st->st_ino)
			continue;
		if (!f->only[i] || (only && !strcmp(only, f->only[i])))
			return; /* named twice (e.g. TRACE and TRACE/image) */
		if (!only) {    /* the whole directory, then */
			free(f->only[i]);
			f->only[i] = NULL;
			return;
		}
	}
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 16;
		f->dirs = vgt__xrealloc(f->dirs, f->cap, sizeof *f->dirs);
		f->only = vgt__xrealloc(f->only, f->cap, sizeof *f->only);
		f->devs = vgt__xrealloc(f->devs, f->cap, sizeof *f->devs);
		f->inos = vgt__xrealloc(f->inos, f->cap, sizeof *f->inos);
	}
	f->dirs[f->n] = vgt__xstrdup(dir);
	f->only[f->n] = only ? vgt__xstrdup(only) : NULL;
	f->devs[f->n] = st->st_dev;
	f->inos[f->n] = st->st_ino;
	f->n++;
}

/* Every directory holding a `metadata` file, depth first, children by name. Symbolic
 * links below the given path are not followed (no cycles). */
static void walk(struct found *f, const char *dir, const struct stat *dst, int depth)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	struct stat st;
	if (fstatat(dfd, "metadata", &st, 0) == 0 && S_ISREG(st.st_mode))
		add_image_dir(f, dir, dst, NULL);
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "metadata"))
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			names = vgt__xrealloc(names, cap, sizeof *names);
		}
		names[n++] = vgt__xstrdup(e->d_name);
	}
	if (n)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		if (depth < MAX_DEPTH &&
		    fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode)) {
			size_t len = strlen(dir);
			char *child = vgt__xprintf("%s%s%s", dir,
			                           len && dir[len - 1] == '/' ? "" : "/", names[i]);
			walk(f, child, &st, depth + 1);
			free(child);
		}
		free(names[i]);
	}
	free(names);
	closedir(d);
}

/* Processes of one boot share their clock (same uuid): one offset for all of them makes
 * their events merge exactly, whatever jitter each measured at its start. */
void vgt_trace_share_clock(struct vgt_trace *t, size_t i)
{
	struct image *img = t->images[i];
	if (!img->clock || !img->clock->has_uuid)
		return;
	for (size_t j = 0; j < i; j++) {
		const struct image *first = t->images[j];
		if (first->clock && first->clock->has_uuid &&
		    !memcmp(first->clock->uuid, img->clock->uuid, 16)) {
			img->pub.clock_offset_ns = first->pub.clock_offset_ns;
			return;
		}
	}
}

static void share_clocks(struct vgt_trace *t)
{
	for (size_t i = 0; i < t->nimages; i++)
		vgt_trace_share_clock(t, i);
}

static void found_free(struct found *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->dirs[i]);
		free(f->only[i]);
	}
	free(f->dirs);
	free(f->only);
	free(f->devs);
	free(f->inos);
}

/* Numbers every event type of the trace (trace/source.h: the readers' class index). */
static void number_classes(struct vgt_trace *t)
{
	for (size_t i = 0; i < t->nimages; i++)
		t->nclasses += t->images[i]->pub.ntypes;
	t->classes = vgt__xcalloc(t->nclasses + 1, sizeof *t->classes);
	size_t k = 0;
	for (size_t i = 0; i < t->nimages; i++) {
		const struct vgt_image *img = &t->images[i]->pub;
		for (size_t j = 0; j < img->ntypes; j++) {
			((struct vgt_event_type *)img->types[j])->class_id = (uint32_t)k;
			t->classes[k++] = img->types[j];
		}
	}
}

/* DIR/NAME where DIR is a shared-layout directory and NAME one of its writers' images, as
 * the reader names them (shared.c): that image alone. */
static bool writer_image(struct found *f, const char *path)
{
	char *dir = vgt__xstrdup(path), *slash = strrchr(dir, '/');
	struct stat st;
	bool ok = false;
	if (slash && slash != dir && slash[1]) {
		*slash = 0;
		char *md = vgt__xprintf("%s/metadata", dir);
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(md, F_OK) == 0) {
			add_image_dir(f, dir, &st, slash + 1);
			ok = true;
		}
		free(md);
	}
	free(dir);
	return ok;
}

struct vgt_trace *vgt_open(const char *const *paths, size_t npaths, char *err, size_t errsize)
{
	struct found f = {0};
	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		size_t before = f.seen;
		if (stat(paths[i], &st) < 0 && errno == ENOENT && writer_image(&f, paths[i]))
			continue;
		if (stat(paths[i], &st) < 0) {
			snprintf(err, errsize, "cannot open '%s': %s", paths[i], strerror(errno));
			found_free(&f);
			return NULL;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(err, errsize, "'%s' is not a directory (a trace is a directory)",
			         paths[i]);
			found_free(&f);
			return NULL;
		}
		walk(&f, paths[i], &st, 0);
		if (f.seen == before) {
			snprintf(err, errsize, "'%s' is not a vigil trace: no metadata file in it",
			         paths[i]);
			found_free(&f);
			return NULL;
		}
	}
	if (!f.n) {
		snprintf(err, errsize, "no trace given");
		return NULL;
	}
	struct vgt_trace *t = vgt__xcalloc(1, sizeof *t);
	char *missing = NULL;
	size_t cap = f.n;
	t->images = vgt__xcalloc(cap, sizeof *t->images);
	for (size_t i = 0; i < f.n; i++) {
		struct image **imgs;
		size_t n = vgt_image_open_all(f.dirs[i], f.only[i], &imgs);
		if (!n && f.only[i] && !missing) /* no such writer in the shared directory */
			missing = vgt__xprintf("%s/%s", f.dirs[i], f.only[i]);
		if (t->nimages + n > cap) {
			cap = (t->nimages + n) * 2;
			t->images = vgt__xrealloc(t->images, cap, sizeof *t->images);
		}
		for (size_t j = 0; j < n; j++) {
			t->images[t->nimages++] = imgs[j];
			t->nstreams += imgs[j]->pub.nstreams;
		}
		free(imgs);
	}
	found_free(&f);
	if (missing) {
		snprintf(err, errsize, "cannot open '%s': no such image in the shared directory",
		         missing);
		free(missing);
		vgt_close(t);
		return NULL;
	}
	t->streams = vgt__xcalloc(t->nstreams + 1, sizeof *t->streams);
	size_t k = 0;
	for (size_t i = 0; i < t->nimages; i++)
		for (size_t j = 0; j < t->images[i]->pub.nstreams; j++) {
			struct stream *s = t->images[i]->streams[j];
			s->pub.index = k;
			t->streams[k++] = s;
		}
	number_classes(t);
	share_clocks(t);
	return t;
}

void vgt_close(struct vgt_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nimages; i++)
		vgt_image_free(t->images[i]);
	free(t->images);
	free(t->streams);
	free(t->classes);
	free(t);
}

size_t vgt_split_images(struct vgt_trace *t, struct vgt_trace ***out)
{
	size_t n = t->nimages;
	struct vgt_trace **one = vgt__xcalloc(n ? n : 1, sizeof *one);
	for (size_t i = 0; i < n; i++) {
		struct image *img = t->images[i];
		struct vgt_trace *u = vgt__xcalloc(1, sizeof *u);
		u->images = vgt__xcalloc(1, sizeof *u->images);
		u->images[u->nimages++] = img;
		img->pub.clock_offset_ns = img->own_offset_ns; /* alone: its own, not shared */
		u->nstreams = img->pub.nstreams;
		u->streams = vgt__xcalloc(u->nstreams + 1, sizeof *u->streams);
		for (size_t j = 0; j < u->nstreams; j++) {
			img->streams[j]->pub.index = j;
			u->streams[j] = img->streams[j];
		}
		number_classes(u);
		one[i] = u;
	}
	t->nimages = 0; /* each image is its own trace's now */
	vgt_close(t);
	*out = one;
	return n;
}

char *vgt_recording_dir(const struct vgt_trace *t)
{
	if (!t->nimages)
		return NULL;
	char *dir = vgt__xstrdup(t->images[0]->path);
	struct stat st;
	bool writer = stat(dir, &st) != 0 || !S_ISDIR(st.st_mode); /* DIR/shared/WRITER */
	for (int up = writer ? 2 : 1; up > 0; up--) {
		char *slash = strrchr(dir, '/');
		if (!slash) {
			free(dir);
			return vgt__xstrdup(".");
		}
		if (slash == dir)
			slash[1] = 0; /* the root */
		else
			*slash = 0;
	}
	return dir;
}

size_t vgt_image_count(const struct vgt_trace *t)
{
	return t->nimages;
}

const struct vgt_image *vgt_image_at(const struct vgt_trace *t, size_t i)
{
	return i < t->nimages ? &t->images[i]->pub : NULL;
}

bool vgt_any_readable(const struct vgt_trace *t)
{
	for (size_t i = 0; i < t->nimages; i++)
		if (t->images[i]->pub.readable)
			return true;
	return false;
}

size_t vgt_stream_count(const struct vgt_trace *t)
{
	return t->nstreams;
}

const struct vgt_stream *vgt_stream_at(const struct vgt_trace *t, size_t i)
{
	return i < t->nstreams ? &t->streams[i]->pub : NULL;
}

uint64_t vgt_damage_total(const struct vgt_trace *t)
{
	uint64_t n = 0;
	for (size_t i = 0; i < t->nimages; i++)
		n += t->images[i]->damage.total;
	for (size_t i = 0; i < t->nstreams; i++)
		n += t->streams[i]->damage.total;
	return n;
}
