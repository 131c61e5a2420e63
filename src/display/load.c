/* Loading a display: read the `.vgd` file, parse it, run its derive statements with the
 * TQuel engine (their results become relations the file can show), check it, and list
 * the instants at which what it shows changes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file_io.h"
#include "common/caret.h"
#include "display/internal.h"
#include "query/engine.h"
#include "tquel/tquel.h"

#define MAX_FILE (16u << 20)

/* The whole file, NUL-terminated; NULL with "why" in err. */
static char *read_file(const char *path, size_t *len, char *err, size_t errsize)
{
	char *buf = vgb_read_file(path, MAX_FILE, 0, len);
	if (!buf) {
		if (errno == EISDIR)
			snprintf(err, errsize, "is a directory");
		else if (errno == EFBIG)
			snprintf(err, errsize, "larger than %u MiB", MAX_FILE >> 20);
		else
			snprintf(err, errsize, "%s", strerror(errno));
	}
	return buf;
}

static int collect(void *ctx, const struct vgq_relation *r)
{
	struct vgd_display *d = ctx;
	const struct vgq_relation **n = realloc(d->derived, (d->nderived + 1) * sizeof *n);
	if (!n)
		abort();
	d->derived = n;
	d->derived[d->nderived++] = r;
	return 0;
}

/* TQuel's messages about a derive block, each with the .vgd's own source line under it
 * (the engine saw the file blanked outside the block): a message is a header
 * "SOURCE:LINE:COL: error: ...", then the line and a caret, which are shown again from
 * the real text. */
static void relay(const struct vgd_display *d, const char *msgs, FILE *out)
{
	size_t n = strlen(d->f->source);
	int skip = 0;
	for (const char *p = msgs; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		unsigned line, col;
		int used = 0;
		if (skip) {
			skip--;
		} else if (!strncmp(p, d->f->source, n) &&
		           sscanf(p + n, ":%u:%u: error: %n", &line, &col, &used) == 2 && used &&
		           line >= 1 && col >= 1) {
			fprintf(out, "%.*s\n", (int)len, p);
			const char *t = d->text, *end = d->text + d->f->len;
			for (unsigned k = 1; k < line && t < end; k++) {
				const char *nl = memchr(t, '\n', (size_t)(end - t));
				t = nl ? nl + 1 : end;
			}
			const char *nl = memchr(t, '\n', (size_t)(end - t));
			vg_show_caret(out, t, nl ? (size_t)(nl - t) : (size_t)(end - t), col - 1);
			skip = 2;
		} else {
			fprintf(out, "%.*s\n", (int)len, p);
		}
		p += len + (eol ? 1 : 0);
	}
}

/* Parses and runs one derive statement; the number of errors (reported). */
static size_t derive(struct vgd_display *d, const struct vgd_derive *dv, const char *dir,
                     FILE *errors)
{
	struct tquel_query *q;
	if (dv->file) {
		char *path = NULL;
		if (dv->file[0] == '/' || !dir || !dir[0])
			path = strdup(dv->file);
		else if (asprintf(&path, "%s/%s", dir, dv->file) < 0)
			path = NULL;
		if (!path)
			abort();
		char why[256];
		size_t len;
		char *text = read_file(path, &len, why, sizeof why);
		if (!text) {
			vgd_error(d->f, dv->file_loc, "cannot read %s: %s", path, why);
			free(path);
			return 1;
		}
		q = tquel_parse(path, text, len);
		free(text);
		free(path);
	} else {
		/* The file with everything but the block blanked: the engine's messages then
		 * cite this file's lines and columns. */
		char *blank = malloc(d->f->len + 1);
		if (!blank)
			abort();
		for (size_t i = 0; i < d->f->len; i++)
			blank[i] = i >= dv->off && i < dv->off + dv->len ? d->text[i]
			           : d->text[i] == '\n'                  ? '\n'
			                                                 : ' ';
		q = tquel_parse(d->f->source, blank, d->f->len);
		free(blank);
	}
	/* a block's messages pass through relay(); a file's cite the file */
	char *msgs = NULL;
	size_t msglen = 0;
	FILE *out = dv->file ? errors : open_memstream(&msgs, &msglen);
	if (!out)
		abort();
	size_t n = q->nerrors;
	if (n) {
		tquel_print_errors(q, out);
		tquel_free(q);
	} else {
		struct tquel_query **nq = realloc(d->queries, (d->nqueries + 1) * sizeof *nq);
		if (!nq)
			abort();
		d->queries = nq;
		d->queries[d->nqueries++] = q;
		n = vgq_run(d->session, q, collect, d, out);
	}
	if (!dv->file) {
		if (fclose(out))
			abort();
		relay(d, msgs, errors);
		free(msgs);
	}
	return n;
}

static int cmp_time(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void add_times(struct vgd_display *d, const struct vgq_relation *r, size_t *cap)
{
	for (size_t i = 0; i < r->ntuples; i++) {
		if (d->nchanges + 2 > *cap) {
			*cap = *cap ? 2 * *cap : 1024;
			int64_t *n = realloc(d->changes, *cap * sizeof *n);
			if (!n)
				abort();
			d->changes = n;
		}
		d->changes[d->nchanges++] = r->from[i];
		if (r->to && !r->open[i])
			d->changes[d->nchanges++] = r->to[i];
	}
}

static void list_changes(struct vgd_display *d)
{
	size_t cap = 0;
	for (size_t i = 0; i < d->f->nshows; i++) {
		const struct vgq_relation *r = d->f->shows[i].r;
		bool again = false;
		for (size_t j = 0; j < i; j++)
			again |= d->f->shows[j].r == r;
		if (r && !again)
			add_times(d, r, &cap);
	}
	if (!d->nchanges)
		return;
	qsort(d->changes, d->nchanges, sizeof *d->changes, cmp_time);
	size_t n = 0;
	for (size_t i = 0; i < d->nchanges; i++)
		if (!n || d->changes[n - 1] != d->changes[i])
			d->changes[n++] = d->changes[i];
	d->nchanges = n;
}

/* The time index of each show over a relation in order of start (vgd_lower). */
static void index_ends(struct vgd_display *d)
{
	d->endmax = calloc(d->f->nshows + 1, sizeof *d->endmax);
	if (!d->endmax)
		abort();
	for (size_t i = 0; i < d->f->nshows; i++) {
		const struct vgd_show *s = &d->f->shows[i];
		const struct vgq_relation *r = s->r;
		if (!r || !s->sorted || !r->ntuples)
			continue;
		int64_t *m = malloc(r->ntuples * sizeof *m);
		if (!m)
			abort();
		int64_t max = INT64_MIN;
		for (size_t k = 0; k < r->ntuples; k++) {
			/* when it stops being present (scene.c, presence) */
			int64_t end = !r->to       ? r->from[k] + d->hold
			              : r->open[k] ? INT64_MAX
			                           : r->to[k];
			max = end > max ? end : max;
			m[k] = max;
		}
		d->endmax[i] = m;
	}
}

struct vgd_display *vgd_load_text(const char *source, const char *text, size_t len, const char *dir,
                                  struct vgq_database *db, FILE *errors)
{
	struct vgd_display *d = calloc(1, sizeof *d);
	if (!d)
		abort();
	d->text = malloc(len + 1);
	if (!d->text)
		abort();
	memcpy(d->text, text, len);
	d->text[len] = 0;
	d->db = db;
	d->f = vgd_parse(source, d->text, len);
	size_t tq_errors = 0;
	if (!d->f->nerrors) {
		struct vgq_options o = {.tick_ns = 1000000000};
		d->session = vgq_session_new(db, &o);
		for (size_t i = 0; i < d->f->nderives && !d->f->nerrors && !tq_errors; i++)
			tq_errors += derive(d, &d->f->derives[i], dir, errors);
	}
	if (!d->f->nerrors && !tq_errors)
		vgd_check(d);
	if (d->f->nerrors || tq_errors) {
		vgd_print_errors(d->f, errors);
		vgd_free(d);
		return NULL;
	}
	d->first = db->first;
	d->last = db->last > db->first ? db->last : db->first;
	int64_t span = d->last - d->first;
	d->window = d->f->window               ? d->f->window
	            : d->f->time == VGD_T_AXIS ? (span > 0 ? span : 1)
	            : span / 20 > 0            ? span / 20
	                                       : 1;
	int64_t hold = d->window / (d->f->time == VGD_T_AXIS ? 50 : 4);
	d->hold = d->f->hold ? d->f->hold : hold > 0 ? hold : 1;
	list_changes(d);
	index_ends(d);
	return d;
}

struct vgd_display *vgd_load(const char *path, struct vgq_database *db, FILE *errors)
{
	char why[256];
	size_t len;
	char *text = read_file(path, &len, why, sizeof why);
	if (!text) {
		fprintf(errors, "%s: error: %s\n", path, why);
		return NULL;
	}
	char *dir = strdup(path);
	if (!dir)
		abort();
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	struct vgd_display *d = vgd_load_text(path, text, len, slash ? dir : NULL, db, errors);
	free(dir);
	free(text);
	return d;
}

void vgd_free(struct vgd_display *d)
{
	if (!d)
		return;
	if (d->endmax) /* before the file: one per show */
		for (size_t i = 0; i < d->f->nshows; i++)
			free(d->endmax[i]);
	free(d->endmax);
	vgd_file_free(d->f);
	if (d->session)
		vgq_session_free(d->session);
	for (size_t i = 0; i < d->nqueries; i++)
		tquel_free(d->queries[i]);
	free(d->queries);
	free(d->derived);
	free(d->changes);
	free(d->text);
	free(d);
}

void vgd_span(const struct vgd_display *d, int64_t *first, int64_t *last)
{
	*first = d->first;
	*last = d->last;
}

const int64_t *vgd_changes(const struct vgd_display *d, size_t *n)
{
	*n = d->nchanges;
	return d->changes;
}
