/* The time index of a display (d->endmax, vgd_lower) changes no scene: at frames of the
 * display (vgd_frames; at most about MAX_FRAMES of them, evenly), halfway to the next, and
 * just before each, the scene built
 * with the index equals the one built by scanning every tuple from the start (the index
 * taken away). A positive control: the index must skip tuples at some instant, or it
 * tested nothing. usage: scene_index TRACE FILE.vgd... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "display/internal.h"
#include "display/scene.h"
#include "trace/trace.h"

#define MAX_FRAMES 60

static int check(struct vgd_display *d, const char *name)
{
	size_t n;
	int64_t *frames = vgd_frames(d, &n);
	int bad = 0;
	uint64_t skipped = 0, scenes = 0;
	size_t stride = n / MAX_FRAMES + 1;
	for (size_t i = 0; i < n && bad < 5; i += stride)
		for (int k = 0; k < 3; k++) {
			int64_t at = k == 0 ? frames[i]
			             : k == 1
			                 ? (i + 1 < n ? frames[i] + (frames[i + 1] - frames[i]) / 2
			                              : frames[i])
			                 : frames[i] - 1;
			char *with = vgd_scene_json(d, at);
			for (size_t s = 0; s < d->f->nshows; s++)
				skipped += d->f->shows[s].r ? vgd_lower(d, &d->f->shows[s], at) : 0;
			int64_t **index = d->endmax;
			d->endmax = NULL;
			char *without = vgd_scene_json(d, at);
			d->endmax = index;
			scenes++;
			if (!with || !without || strcmp(with, without)) {
				fprintf(stderr,
				        "FAIL: %s: the scene at %lld differs with the index\n",
				        name, (long long)at);
				bad++;
			}
			free(with);
			free(without);
		}
	free(frames);
	printf("%s: %llu scenes equal; the index skipped %llu tuples in all\n", name,
	       (unsigned long long)scenes, (unsigned long long)skipped);
	if (!bad && !skipped) {
		fprintf(stderr, "FAIL: %s: the index never skipped a tuple (nothing tested)\n",
		        name);
		bad = 1;
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: scene_index TRACE FILE.vgd...\n");
		return 2;
	}
	char err[512];
	const char *path = argv[1];
	struct vgt_trace *t = vgt_open(&path, 1, err, sizeof err);
	if (!t) {
		fprintf(stderr, "FAIL: %s\n", err);
		return 1;
	}
	struct vgq_database *db = vgq_database_build(t);
	int bad = 0;
	for (int i = 2; i < argc; i++) {
		struct vgd_display *d = vgd_load(argv[i], db, stderr);
		if (!d) {
			fprintf(stderr, "FAIL: %s not loaded\n", argv[i]);
			bad = 1;
			continue;
		}
		bad |= check(d, argv[i]);
		vgd_free(d);
	}
	vgq_database_free(db);
	vgt_close(t);
	return bad ? 1 : 0;
}
