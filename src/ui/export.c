/* vigil ui --export DIR: the page and the data it shows, opened from disk with no server.
 * DIR/data.js sets window.VIGIL_DATA to what the API would answer: relations, rows, every
 * item of every row, and the tuple of each (events found again in their streams, one
 * pass per stream). The page answers its API calls from it (ui/src/api.js); queries need
 * the engine, so the workbench says they are not available in a static copy.
 * With --display, data.js also holds the display's changes and the instants of its frames
 * (vgd_frames: where what a scene holds can change), and DIR/scenes/NNNNN.js the scene at
 * each frame, EXPORT_CHUNK to a file, loaded by the page when the movie reaches them. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "display/display.h"
#include "ui/ui.h"

#define EXPORT_MAX_ITEMS 2000000 /* beyond it, a static copy is too heavy for a page */
#define EXPORT_MAX_SCENES 20000  /* scenes of a display; beyond, frames are sampled */
#define EXPORT_CHUNK 100         /* scenes per file */

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

/* One file of scenes: window.VIGIL_SCENES[chunk] = [scene, ...]. */
static int write_chunk(const struct vgu_app *a, const char *dir, size_t chunk, const int64_t *at,
                       size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/scenes/%05zu.js", dir, chunk);
	FILE *f = fopen(path, "wx");
	if (!f) {
		fprintf(stderr, "vigil ui: --export: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "window.VIGIL_SCENES = window.VIGIL_SCENES || {};\nwindow.VIGIL_SCENES[%zu] = [",
	        chunk);
	for (size_t i = 0; i < n; i++) {
		char *scene = vgd_scene_json(a->vgd, at[i]);
		if (!scene) {
			fclose(f);
			fprintf(stderr, "vigil ui: --export: out of memory\n");
			return -1;
		}
		fprintf(f, "%s%s", i ? ",\n" : "", scene);
		free(scene);
	}
	fputs("];\n", f);
	if (fclose(f)) {
		fprintf(stderr, "vigil ui: --export: writing %s failed\n", path);
		return -1;
	}
	return 0;
}

/* The display's data into `data` ("display") and its scenes into DIR/scenes. */
static int export_display(const struct vgu_app *a, const char *dir, json_t *data, size_t *nscenes)
{
	int64_t first, last;
	vgd_span(a->vgd, &first, &last);
	size_t n, nc;
	int64_t *frames = vgd_frames(a->vgd, &n);
	bool sampled = n > EXPORT_MAX_SCENES;
	if (sampled) { /* evenly, keeping the first */
		size_t m = 0;
		for (size_t i = 0; i < EXPORT_MAX_SCENES; i++)
			frames[m++] = frames[i * n / EXPORT_MAX_SCENES];
		n = m;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/scenes", dir);
	if (mkdir(path, 0777)) {
		fprintf(stderr, "vigil ui: --export: %s: %s\n", path, strerror(errno));
		free(frames);
		return -1;
	}
	for (size_t c = 0; c * EXPORT_CHUNK < n; c++) {
		size_t k =
		    n - c * EXPORT_CHUNK < EXPORT_CHUNK ? n - c * EXPORT_CHUNK : EXPORT_CHUNK;
		if (write_chunk(a, dir, c, frames + c * EXPORT_CHUNK, k) < 0) {
			free(frames);
			return -1;
		}
	}
	const int64_t *changes = vgd_changes(a->vgd, &nc);
	json_t *cl = json_array(), *fl = json_array();
	for (size_t i = 0; i < nc; i++)
		json_array_append_new(cl, json_integer((json_int_t)(changes[i] - first)));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(fl, json_integer((json_int_t)(frames[i] - first)));
	free(frames);
	json_object_set_new(data, "display",
	                    json_pack("{s:s,s:I,s:I,s:I,s:o,s:o,s:i,s:b}", "file", a->display,
	                              "first", (json_int_t)first, "last", (json_int_t)last, "span",
	                              (json_int_t)(last - first), "changes", cl, "frames", fl,
	                              "chunk", EXPORT_CHUNK, "sampled", sampled));
	*nscenes = n;
	if (sampled)
		fprintf(stderr,
		        "vigil ui: --export: the display changes at more instants than %d: its "
		        "scenes are sampled evenly (serve it for every one)\n",
		        EXPORT_MAX_SCENES);
	return 0;
}

int vgu_export(struct vgu_app *a, const char *dir, const char *const *queries, size_t nq)
{
	if (a->display && !a->vgd) {
		fprintf(stderr, "vigil ui: --export: nothing written: %s has errors (above)\n",
		        a->display);
		return 2;
	}
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
	json_t *info =
	    json_pack("{s:o,s:o,s:I,s:I,s:I,s:o,s:b,s:b}", "relations", relations, "traces", paths,
	              "first", (json_int_t)a->db->first, "last", (json_int_t)a->db->last, "events",
	              (json_int_t)a->db->events, "damage", vgu_damage_json(a), "display",
	              a->vgd != NULL, "static", 1);
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
	size_t nscenes = 0;
	if (a->vgd && export_display(a, dir, data, &nscenes) < 0) {
		json_decref(data);
		return 2;
	}
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
	fprintf(stderr, "vigil ui: exported %zu rows, %zu items%s into %s (open %s/index.html)\n",
	        a->tl.nrows, items, nscenes ? " and the display's scenes" : "", dir, dir);
	return 0;
}
