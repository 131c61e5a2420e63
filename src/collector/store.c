/* vigild --store URL: each completed image also goes into PostgreSQL (docs/store.md),
 * through vgs_pg_store_image on a thread of its own, off the event loop. An image is
 * complete when its subject said BYE; one whose subject vanished is stored after a grace
 * period (STORE_GRACE_S) unless the subject comes back meanwhile (a reconnection). At
 * an orderly stop everything pending is stored before vigild exits. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "vigild.h"
#ifdef VIGILD_STORE
#include "store/store.h"
#endif

#define STORE_GRACE_S 10

struct pending {
	struct pending *next;
	time_t due;
	char host[VGD_NAME_MAX + 1];
	uint32_t pid;
	uint64_t start;
	char trace_dir[PATH_MAX];
	char image[VGD_NAME_MAX + 16];
};

static struct pending *waiting; /* event loop only: not due yet */
static struct pending *queue;   /* due: the store thread's, under lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int stopping, busy;
static pthread_t thread;
static int started;

int vgd_store_available(void)
{
#ifdef VIGILD_STORE
	return 1;
#else
	return 0;
#endif
}

static void *store_main(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		while (!queue && !stopping)
			pthread_cond_wait(&cond, &lock);
		struct pending *p = queue;
		if (!p) {
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		queue = p->next;
		busy = 1;
		pthread_mutex_unlock(&lock);
		char err[512] = "vigild was built without libpq";
		int rc = -1;
#ifdef VIGILD_STORE
		rc = vgs_pg_store_image(vgd_opt.store, p->trace_dir, p->image, err, sizeof err);
#endif
		if (rc < 0)
			vgd_log("store %s/%s: %s", p->host, p->image, err);
		else if (!vgd_opt.quiet)
			vgd_log("stored %s/%s", p->host, p->image);
		free(p);
		VGD_UNCOUNT(store_backlog, 1);
		pthread_mutex_lock(&lock);
		busy = 0;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	}
}

static void enqueue(struct pending *p)
{
	pthread_mutex_lock(&lock);
	struct pending **pp = &queue;
	while (*pp)
		pp = &(*pp)->next;
	p->next = NULL;
	*pp = p;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
}

void vgd_store_image_done(const struct vgd_subject *s, int orderly)
{
	if (!vgd_opt.store)
		return;
	if (!started) {
		started = pthread_create(&thread, NULL, store_main, NULL) == 0;
		if (!started) {
			vgd_log("store: cannot start the store thread");
			return;
		}
	}
	for (const struct vgd_image *im = s->images; im; im = im->next) {
		struct pending *p = calloc(1, sizeof *p);
		if (!p)
			return;
		p->due = time(NULL) + (orderly ? 0 : STORE_GRACE_S);
		snprintf(p->host, sizeof p->host, "%s", s->host);
		p->pid = s->pid;
		p->start = s->start;
		snprintf(p->trace_dir, sizeof p->trace_dir, "%s", s->host_dir);
		snprintf(p->image, sizeof p->image, "%s", im->dir);
		VGD_COUNT(store_backlog, 1);
		p->next = waiting;
		waiting = p;
	}
}

void vgd_store_subject_back(const struct vgd_subject *s)
{
	for (struct pending **pp = &waiting; *pp;) {
		struct pending *p = *pp;
		if (p->pid == s->pid && p->start == s->start && !strcmp(p->host, s->host)) {
			*pp = p->next;
			free(p);
			VGD_UNCOUNT(store_backlog, 1);
		} else {
			pp = &p->next;
		}
	}
}

void vgd_store_tick(int all)
{
	time_t now = time(NULL);
	for (struct pending **pp = &waiting; *pp;) {
		struct pending *p = *pp;
		if (all || p->due <= now) {
			*pp = p->next;
			enqueue(p);
		} else {
			pp = &p->next;
		}
	}
}

void vgd_store_finish(void)
{
	if (!started)
		return;
	vgd_store_tick(1);
	pthread_mutex_lock(&lock);
	stopping = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(thread, NULL);
}
