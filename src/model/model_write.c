/* The model file writer (docs/model.md): sorted, so that two models of similar runs diff
 * line by line, and so that writing what was read gives the same bytes. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/utf8.h"
#include "common/out_file.h"
#include "model/jstr.h"
#include "model/model.h"

static const struct vgm_model *sort_model; /* qsort has no context argument in C11 */

static int cmp_event(const void *a, const void *b)
{
	const struct vgm_event *x = &sort_model->events[*(const uint32_t *)a];
	const struct vgm_event *y = &sort_model->events[*(const uint32_t *)b];
	int c = strcmp(x->site, y->site);
	return c ? c : strcmp(x->fmt, y->fmt);
}

struct trow {
	uint32_t from, to; /* new ids */
	const struct vgm_trans *t;
};

static int cmp_trow(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* Free text on one line: control characters become spaces, bad UTF-8 U+FFFD. */
static void write_text(FILE *f, const char *s)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = vgb_utf8_len(s + i, len - i);
		if (c < 0x20 || c == 0x7f) {
			putc(' ', f);
			i++;
		} else if (!n) {
			fputs("\xef\xbf\xbd", f);
			i++;
		} else {
			fwrite(s + i, 1, n, f);
			i += n;
		}
	}
}

/* A site: like free text, and never ` "` (which ends a site) nor empty. */
static void write_site(FILE *f, const char *s)
{
	if (!*s) {
		putc('?', f);
		return;
	}
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = vgb_utf8_len(s + i, len - i);
		if (c < 0x20 || c == 0x7f || (c == ' ' && s[i + 1] == '"')) {
			putc('_', f);
			i++;
		} else if (!n) {
			fputs("\xef\xbf\xbd", f);
			i++;
		} else {
			fwrite(s + i, 1, n, f);
			i += n;
		}
	}
}

int vgm_write(const struct vgm_model *m, FILE *f)
{
	uint32_t *order = malloc((m->nevents + 1) * sizeof *order);
	uint32_t *newid = malloc((m->nevents + 1) * sizeof *newid);
	struct trow *rows = malloc((m->ntrans + 1) * sizeof *rows);
	if (!order || !newid || !rows) {
		free(order);
		free(newid);
		free(rows);
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t i = 0; i < m->nevents; i++)
		order[i] = i;
	sort_model = m;
	qsort(order, m->nevents, sizeof *order, cmp_event);
	for (uint32_t i = 0; i < m->nevents; i++)
		newid[order[i]] = i + 1;
	fprintf(f, "vigil-model %d\n", VGM_FORMAT_VERSION);
	for (size_t i = 0; i < m->nsources; i++) {
		fputs("source ", f);
		write_text(f, m->sources[i]);
		putc('\n', f);
	}
	for (uint32_t i = 0; i < m->nevents; i++) {
		const struct vgm_event *e = &m->events[order[i]];
		fprintf(f, "event %" PRIu32 " %" PRIu64 " ", i + 1, e->count);
		write_site(f, e->site);
		putc(' ', f);
		vgm_json_write(f, e->fmt);
		putc('\n', f);
	}
	for (uint32_t i = 0; i < m->nevents; i++) {
		const struct vgm_event *e = &m->events[order[i]];
		if (!e->name || !e->name[0])
			continue;
		fprintf(f, "name %" PRIu32 " ", i + 1);
		vgm_json_write(f, e->name);
		putc('\n', f);
	}
	for (size_t i = 0; i < m->ntrans; i++)
		rows[i] =
		    (struct trow){newid[m->trans[i].from], newid[m->trans[i].to], &m->trans[i]};
	qsort(rows, m->ntrans, sizeof *rows, cmp_trow);
	for (size_t i = 0; i < m->ntrans; i++) {
		const struct vgm_trans *t = rows[i].t;
		fprintf(f, "transition %" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64, rows[i].from,
		        rows[i].to, t->count, t->sk.total ? t->sum_ns : 0);
		for (size_t k = 0; k < t->sk.len; k++)
			fprintf(f, " %" PRIu32 ":%" PRIu64, t->sk.v[k].b, t->sk.v[k].n);
		putc('\n', f);
	}
	free(order);
	free(newid);
	free(rows);
	return ferror(f) ? -1 : 0;
}

int vgm_write_file(const struct vgm_model *m, const char *path, char *err, size_t errsize)
{
	/* Renamed into place when complete: a reader never sees half a model, and a device
	 * such as /dev/null is written, never replaced (common/out_file.h). */
	struct vg_out o;
	if (vg_out_open(&o, path, err, errsize) < 0)
		return -1;
	if (vgm_write(m, o.f) < 0) {
		int saved = errno ? errno : EIO;
		vg_out_abort(&o);
		snprintf(err, errsize, "%s: %s", path, strerror(saved));
		return -1;
	}
	return vg_out_commit(&o, err, errsize);
}
