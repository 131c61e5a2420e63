/* The runtime's background worker: one thread per process, started on first need, that
 * does slow kernel work (allocating and pre-faulting the next packet of busy streams) off
 * the recording threads. It never records events, blocks all signals, and calls no
 * allocator, so it cannot disturb the host. If it cannot be started, callers do the
 * work themselves. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static struct vg_job *queue_head, *queue_tail;
static enum { WORKER_NONE, WORKER_RUNNING, WORKER_FAILED } worker_state;

static void *worker_main(void *arg)
{
	(void)arg;
	syscall(SYS_prctl, PR_SET_NAME, "vigil-worker", 0, 0, 0); /* not through our hook */
	for (;;) {
		pthread_mutex_lock(&queue_lock);
		while (!queue_head)
			pthread_cond_wait(&queue_cond, &queue_lock);
		struct vg_job *job = queue_head;
		queue_head = job->next;
		if (!queue_head)
			queue_tail = NULL;
		pthread_mutex_unlock(&queue_lock);
		job->run(job);
	}
	return NULL;
}

/* Caller holds queue_lock. */
static int start_worker_locked(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the worker inherits a full mask */
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_t th;
	int rc = vg__real_pthread_create(&th, &attr, worker_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int vg__worker_submit(struct vg_job *job)
{
	pthread_mutex_lock(&queue_lock);
	if (worker_state == WORKER_NONE)
		worker_state = start_worker_locked() == 0 ? WORKER_RUNNING : WORKER_FAILED;
	if (worker_state != WORKER_RUNNING) {
		pthread_mutex_unlock(&queue_lock);
		return -1;
	}
	job->next = NULL;
	if (queue_tail)
		queue_tail->next = job;
	else
		queue_head = job;
	queue_tail = job;
	pthread_cond_signal(&queue_cond);
	pthread_mutex_unlock(&queue_lock);
	return 0;
}

/* The child of a fork has no worker: it starts its own when it needs one. Jobs queued
 * by the parent belong to the parent's streams, which the child has forgotten. */
void vg__worker_forget_after_fork(void)
{
	pthread_mutex_init(&queue_lock, NULL);
	pthread_cond_init(&queue_cond, NULL);
	queue_head = queue_tail = NULL;
	worker_state = WORKER_NONE;
}
