/* Scenes built by several threads at once (as vigil ui's server does) equal the same
 * scenes built one after another. usage: scene_threads TRACE FILE.vgd */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "display/display.h"
#include "relations/relation.h"
#include "trace/trace.h"

#define THREADS 4
#define SCENES 64

static const struct vgd_display *display;
static int64_t instants[SCENES];
static char *expected[SCENES];
static int mismatches;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg)
{
	size_t start = (size_t)(uintptr_t)arg;
	for (int round = 0; round < 4; round++)
		for (size_t k = 0; k < SCENES; k++) {
			size_t i = (k + start * 7) % SCENES;
			char *json = vgd_scene_json(display, instants[i]);
			if (!json || strcmp(json, expected[i])) {
				pthread_mutex_lock(&lock);
				mismatches++;
				pthread_mutex_unlock(&lock);
			}
			free(json);
		}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: scene_threads TRACE FILE.vgd\n");
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
	struct vgd_display *d = vgd_load(argv[2], db, stderr);
	if (!d) {
		fprintf(stderr, "FAIL: %s not loaded\n", argv[2]);
		return 1;
	}
	display = d;
	size_t n;
	const int64_t *changes = vgd_changes(d, &n);
	if (n < 2) {
		fprintf(stderr, "FAIL: %zu changes\n", n);
		return 1;
	}
	for (size_t i = 0; i < SCENES; i++) {
		instants[i] = changes[i * n / SCENES];
		expected[i] = vgd_scene_json(d, instants[i]);
	}
	pthread_t th[THREADS];
	for (size_t i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, work, (void *)(uintptr_t)i);
	for (size_t i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (size_t i = 0; i < SCENES; i++)
		free(expected[i]);
	vgd_free(d);
	vgq_database_free(db);
	vgt_close(t);
	if (mismatches) {
		printf("FAIL: %d of %d scenes built concurrently differ\n", mismatches,
		       THREADS * 4 * SCENES);
		return 1;
	}
	printf("ok: %d scenes built by %d threads at once, equal to those built in turn\n",
	       THREADS * 4 * SCENES, THREADS);
	return 0;
}
