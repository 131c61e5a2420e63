/* Inputs of `vigil model`. The runtime writes a snapshot of everything a process image
 * counted so far each time it writes (at exit, on demand) into the trace's root:
 * logmodel-<image>-<n>.vgm, <image> being the image directory's name (app-1234-0) and n
 * counting the writes, so only the latest n of each image is read. */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/inputs.h"
#include "trace/trace.h"

static const char *map_site(void *ctx, const char *site)
{
	return vgm_symbolize(ctx, site);
}

static int load_file(struct vgm_model *m, const char *path, struct vgm_symbolizer *sym,
                     struct vgm_input_stats *st, char *err, size_t errsize)
{
	struct vgm_model *t = vgm_model_new();
	if (!t) {
		snprintf(err, errsize, "%s: out of memory", path);
		return -1;
	}
	int rc = vgm_read_file(t, path, err, errsize);
	if (!rc && vgm_model_merge(m, t, map_site, sym)) {
		snprintf(err, errsize, "%s: out of memory", path);
		rc = -1;
	}
	vgm_model_free(t);
	if (!rc)
		st->files++;
	return rc;
}

struct snap {
	char *path;
	size_t dirlen;   /* the directory: path[0..dirlen) */
	const char *key; /* the image it is of: name[key..key+keylen) */
	size_t keylen;
	long long n;
};

/* ".../logmodel-<image>-<n>.vgm": the image (e.g. app-1234-0) and n; false if the name
 * is not of that form. */
static bool parse_name(const char *path, struct snap *s)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	s->dirlen = (size_t)(base - path);
	size_t len = strlen(base);
	if (strncmp(base, "logmodel-", 9) || len < 9 + 6 || strcmp(base + len - 4, ".vgm"))
		return false;
	const char *end = base + len - 4, *dash = end;
	while (dash > base + 9 && dash[-1] >= '0' && dash[-1] <= '9')
		dash--;
	if (dash == end || dash[-1] != '-' || dash - 1 == base + 9 || end - dash > 9)
		return false;
	s->key = base + 9;
	s->keylen = (size_t)(dash - 1 - s->key);
	s->n = strtoll(dash, NULL, 10);
	return true;
}

static int same_image(const struct snap *x, const struct snap *y)
{
	return x->dirlen == y->dirlen && !strncmp(x->path, y->path, x->dirlen) && x->key &&
	       y->key && x->keylen == y->keylen && !strncmp(x->key, y->key, x->keylen);
}

static int cmp_snap(const void *a, const void *b)
{
	const struct snap *x = a, *y = b;
	int c = x->dirlen != y->dirlen ? (x->dirlen < y->dirlen ? -1 : 1)
	                               : strncmp(x->path, y->path, x->dirlen);
	if (c)
		return c;
	if (!x->key || !y->key) /* not snapshots: by path */
		return x->key ? 1 : y->key ? -1 : strcmp(x->path, y->path);
	size_t kl = x->keylen < y->keylen ? x->keylen : y->keylen;
	c = strncmp(x->key, y->key, kl);
	if (c || x->keylen != y->keylen)
		return c ? c : x->keylen < y->keylen ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int load_dir_models(struct vgm_model *m, const char *dir, struct vgm_symbolizer *sym,
                           struct vgm_input_stats *st, size_t *found, char *err, size_t errsize)
{
	glob_t g = {0};
	char *pat = NULL;
	int rc = 0;
	const char *forms[] = {"%s/logmodel-*.vgm", "%s/*/logmodel-*.vgm"};
	for (int i = 0; i < 2 && !rc; i++) {
		if (asprintf(&pat, forms[i], dir) < 0)
			return -1;
		int r = glob(pat, i ? GLOB_APPEND : 0, NULL, &g);
		free(pat);
		if (r && r != GLOB_NOMATCH) {
			snprintf(err, errsize, "%s: cannot list the directory", dir);
			rc = -1;
		}
	}
	struct snap *s = calloc(g.gl_pathc + 1, sizeof *s);
	if (!s) {
		globfree(&g);
		snprintf(err, errsize, "%s: out of memory", dir);
		return -1;
	}
	size_t n = g.gl_pathc;
	for (size_t i = 0; i < n; i++) {
		s[i].path = g.gl_pathv[i];
		if (!parse_name(s[i].path, &s[i])) {
			/* not a runtime snapshot: read as it is, alone in its group */
			s[i].key = NULL;
			s[i].n = 0;
		}
	}
	qsort(s, n, sizeof *s, cmp_snap);
	*found = n;
	for (size_t i = 0; i < n && !rc; i++) {
		bool superseded = i + 1 < n && same_image(&s[i + 1], &s[i]);
		if (superseded) {
			st->stale++;
			continue;
		}
		rc = load_file(m, s[i].path, sym, st, err, errsize);
	}
	free(s);
	globfree(&g);
	return rc;
}

/* The sensors (not vg.*) the trace in path declares, noted in st when it is the first
 * recording with any: its log models leave them out. */
static void note_unmodelled(const char *path, struct vgm_input_stats *st)
{
	if (st->unmodelled_sensors)
		return;
	char err[256];
	const char *paths[] = {path};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t)
		return;
	size_t n = 0;
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		const struct vgt_image *img = vgt_image_at(t, i);
		for (size_t k = 0; img->readable && k < img->ntypes; k++) {
			const char *name = img->types[k]->name;
			if (!strncmp(name, "vg.", 3))
				continue;
			if (!n++)
				snprintf(st->unmodelled_example, sizeof st->unmodelled_example,
				         "%s", name);
		}
	}
	vgt_close(t);
	if (n) {
		st->unmodelled_sensors = n;
		snprintf(st->unmodelled_path, sizeof st->unmodelled_path, "%s", path);
	}
}

int vgm_load_input(struct vgm_model *m, const char *path, bool from_trace,
                   struct vgm_symbolizer *sym, struct vgm_input_stats *st, char *err,
                   size_t errsize)
{
	struct stat sb;
	if (stat(path, &sb)) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode))
		return load_file(m, path, sym, st, err, errsize);
	size_t found = 0;
	if (!from_trace) {
		/* Log models that hold no event (a program that logged nothing) give way to
		 * the trace's events. */
		struct vgm_model *t = vgm_model_new();
		struct vgm_input_stats ts = {0};
		if (!t || load_dir_models(t, path, sym, &ts, &found, err, errsize)) {
			vgm_model_free(t);
			return -1;
		}
		int rc = 0;
		bool used = found && t->nevents;
		if (used) {
			rc = vgm_model_merge(m, t, NULL, NULL);
			if (rc)
				snprintf(err, errsize, "%s: out of memory", path);
			st->files += ts.files;
			st->stale += ts.stale;
		}
		vgm_model_free(t);
		if (!rc && used)
			note_unmodelled(path, st);
		if (rc || used)
			return rc;
	}
	uint64_t damaged = 0;
	char terr[512];
	if (vgm_from_trace(m, path, &damaged, terr, sizeof terr)) {
		if (from_trace)
			snprintf(err, errsize, "%s", terr);
		else
			snprintf(err, errsize,
			         "%s: no log models (logmodel-*.vgm) and no readable trace (%s)",
			         path, terr);
		return -1;
	}
	st->traces++;
	st->damaged += damaged;
	return 0;
}
