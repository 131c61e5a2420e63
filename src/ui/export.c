/* vigil ui --export DIR: the page and the data it shows, opened from disk with no server.
 * DIR/data.js sets window.VIGIL_DATA to what the API would answer: relations, rows, every
 * item of every row, and the tuple of each (events found again in their streams, one
 * pass per stream). The page answers its API calls from it (ui/src/api.js); queries need
 * the engine, so the workbench says they are not available in a static copy. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ui/ui.h"

#define EXPORT_MAX_ITEMS 2000000 /* beyond it, a static copy is too heavy for a page */

static int copy_file(const char *from_dir, const char *to_dir, const char *name)
{
	char a[4096], b[4096];
	snprintf(a, sizeof a, "%s/%s", from_dir, name);
	snprintf(b, sizeof b, "%s/%s", to_dir, name);
	FILE *in = fopen(a, "rb");
	if (!in) {
		fprintf(stderr, "vigil ui: %s: %s (make build makes the page)\n", a,
		        strerror(errno));
		return -1;
	}
	FILE *out = fopen(b, "wbx");
	if (!out) {
		fprintf(stderr, "vigil ui: %s: %s\n", b, strerror(errno));
		fclose(in);
		return -1;
	}
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return fclose(out) ? -1 : 0;
}

/* The events' tuples, one pass per stream: index -> JSON. */
static json_t *event_details(struct vgu_app *a)
{
	json_t *all = json_array();
	for (size_t i = 0; i < a->tl.nevents; i++)
		json_array_append_new(all, json_null());
	for (size_t i = 0; i < a->tl.nevents; i++) {
		if (!json_is_null(json_array_get(all, i)))
			continue;
		json_t *o = vgu_event_json(a, i);
		json_array_set_new(all, i, o ? o : json_null());
	}
	return all;
}

static json_t *row_tuples(const struct vgu_app *a)
{
	json_t *rows = json_array();
	for (size_t ri = 0; ri < a->tl.nrows; ri++) {
		const struct vgu_row *r = &a->tl.rows[ri];
		json_t *t = json_object();
		if (r->rel)
			for (size_t k = 0; k < r->n; k++) {
				char key[32];
				snprintf(key, sizeof key, "%llu", (unsigned long long)r->ref[k]);
				json_object_set_new(
				    t, key, vgu_tuple_json(r->rel, r->ref[k], a->db->first));
			}
		json_array_append_new(rows, t);
	}
	return rows;
}

int vgu_export(struct vgu_app *a, const char *dir, const char *const *queries, size_t nq)
{
	(void)queries;
	(void)nq;
	size_t items = 0;
	for (size_t i = 0; i < a->tl.nrows; i++)
		items += a->tl.rows[i].n;
	if (items > EXPORT_MAX_ITEMS) {
		fprintf(stderr,
		        "vigil ui: --export: %zu items is more than a static page holds (%d); "
		        "serve it with vigil ui instead\n",
		        items, EXPORT_MAX_ITEMS);
		return 2;
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "vigil ui: --export: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "vigil ui: --export: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	struct dirent *e;
	bool empty = true;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	if (!empty) {
		fprintf(stderr, "vigil ui: --export: %s is not empty (give a new folder)\n", dir);
		return 2;
	}
	static const char *const files[] = {"index.html", "app.js", "style.css"};
	for (size_t i = 0; i < 3; i++)
		if (copy_file(a->assets, dir, files[i]) < 0)
			return 2;
	json_t *relations = json_array();
	for (size_t i = 0; i < a->db->nrelations; i++)
		json_array_append_new(relations, vgu_relation_head(a->db->relations[i]));
	json_t *paths = json_array();
	for (size_t i = 0; i < a->npaths; i++)
		json_array_append_new(paths, json_string(a->paths[i]));
	json_t *info = json_pack("{s:o,s:o,s:I,s:I,s:I,s:o,s:b,s:b}", "relations", relations,
	                         "traces", paths, "first", (json_int_t)a->db->first, "last",
	                         (json_int_t)a->db->last, "events", (json_int_t)a->db->events,
	                         "damage", vgu_damage_json(a), "display", 0, "static", 1);
	/* every item of every row: the window of the whole trace with room for all */
	json_t *all = json_array();
	for (size_t ri = 0; ri < a->tl.nrows; ri++) {
		const struct vgu_row *r = &a->tl.rows[ri];
		size_t len;
		char *text = vgu_window_json(a, INT64_MIN / 2, INT64_MAX / 2,
		                             r->n ? (unsigned)r->n : 1, ri, 1, &len);
		json_t *w = json_loadb(text ? text : "", len, 0, NULL);
		free(text);
		json_array_append(all, json_array_get(json_object_get(w, "rows"), 0));
		json_decref(w);
	}
	json_t *data = json_pack("{s:o,s:o,s:o,s:o,s:o}", "info", info, "rows", vgu_rows_json(a),
	                         "items", all, "events", event_details(a), "tuples", row_tuples(a));
	char path[4096];
	snprintf(path, sizeof path, "%s/data.js", dir);
	FILE *f = fopen(path, "wx");
	if (!f) {
		fprintf(stderr, "vigil ui: --export: %s: %s\n", path, strerror(errno));
		json_decref(data);
		return 2;
	}
	fputs("window.VIGIL_DATA = ", f);
	int bad = json_dumpf(data, f, JSON_COMPACT) < 0;
	fputs(";\n", f);
	bad |= fclose(f) != 0;
	json_decref(data);
	if (bad) {
		fprintf(stderr, "vigil ui: --export: writing %s failed\n", path);
		return 2;
	}
	fprintf(stderr, "vigil ui: exported %zu rows, %zu items into %s (open %s/index.html)\n",
	        a->tl.nrows, items, dir, dir);
	return 0;
}
