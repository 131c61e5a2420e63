/* The three tiers: a client (threads sending requests), a front server (a thread per
 * client connection, calling the back end 1 or 2 times per request) and a back-end server
 * (a pool of workers, each serving one front connection at a time). */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire.h"

/* Servers run until SIGTERM or SIGINT: every thread blocks them, main waits for one. */
static void block_stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int wait_stop(const sigset_t *set)
{
	int sig;
	sigwait(set, &sig);
	return 0;
}

static int accept_one(int l)
{
	for (;;) {
		int fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			return fd;
		}
		if (errno != EINTR && errno != ECONNABORTED)
			return -1;
	}
}

static void start_detached(void *(*fn)(void *), void *arg)
{
	pthread_t th;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &a, fn, arg) != 0) {
		perror("three_tier: pthread_create");
		exit(1);
	}
	pthread_attr_destroy(&a);
}

/* ---- back end: an acceptor hands connections to a pool ---- */

#define QUEUE 256
static struct {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	int fds[QUEUE];
	unsigned head, tail;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0};
static int work_us;

static void *back_worker(void *arg)
{
	(void)arg;
	struct tt_msg m, r;
	for (;;) {
		pthread_mutex_lock(&queue.lock);
		while (queue.head == queue.tail)
			pthread_cond_wait(&queue.ready, &queue.lock);
		int fd = queue.fds[queue.head++ % QUEUE];
		pthread_mutex_unlock(&queue.lock);
		while (tt_recv(fd, &m) == 0) {
			usleep((useconds_t)work_us); /* the work */
			r.len =
			    (uint32_t)snprintf(r.payload, sizeof r.payload, "done %s", m.payload);
			if (tt_send(fd, &r, "front") < 0)
				break;
		}
		close(fd);
	}
	return NULL;
}

static void *back_acceptor(void *arg)
{
	int l = *(int *)arg;
	for (;;) {
		int fd = accept_one(l);
		if (fd < 0)
			return NULL;
		pthread_mutex_lock(&queue.lock);
		if (queue.tail - queue.head < QUEUE)
			queue.fds[queue.tail++ % QUEUE] = fd;
		else
			close(fd);
		pthread_cond_signal(&queue.ready);
		pthread_mutex_unlock(&queue.lock);
	}
}

int tt_back(const struct tt_options *o)
{
	sigset_t stop;
	block_stop_signals(&stop);
	int port = o->port;
	static int l;
	if ((l = tt_listen(&port)) < 0) {
		perror("three_tier back: listen");
		return 1;
	}
	work_us = o->work_us;
	for (int i = 0; i < o->pool; i++)
		start_detached(back_worker, NULL);
	start_detached(back_acceptor, &l);
	printf("back %d\n", port);
	fflush(stdout);
	return wait_stop(&stop);
}

/* ---- front: a thread per client connection, its own connection to the back end ---- */

static int back_port;

static void *front_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	int back = tt_connect(back_port);
	struct tt_msg m, b, r;
	if (back < 0) {
		perror("three_tier front: connect to back end");
		close(fd);
		return NULL;
	}
	while (tt_recv(fd, &m) == 0) {
		int t = 0, i = 0;
		sscanf(m.payload, "req %d %d", &t, &i);
		int calls = 1 + i % 2; /* 1 or 2 back-end calls */
		for (int k = 0; k < calls; k++) {
			b.len = (uint32_t)snprintf(b.payload, sizeof b.payload, "call %d.%d.%d", t,
			                           i, k);
			if (tt_send(back, &b, "back") < 0 || tt_recv(back, &b) < 0)
				goto out;
		}
		r.len = (uint32_t)snprintf(r.payload, sizeof r.payload, "reply %d.%d calls=%d", t,
		                           i, calls);
		if (tt_send(fd, &r, "client") < 0)
			break;
	}
out:
	close(back);
	close(fd);
	return NULL;
}

static void *front_acceptor(void *arg)
{
	int l = *(int *)arg;
	for (;;) {
		int fd = accept_one(l);
		if (fd < 0)
			return NULL;
		start_detached(front_conn, (void *)(intptr_t)fd);
	}
}

int tt_front(const struct tt_options *o)
{
	sigset_t stop;
	block_stop_signals(&stop);
	int port = o->port;
	static int l;
	if ((l = tt_listen(&port)) < 0) {
		perror("three_tier front: listen");
		return 1;
	}
	back_port = o->back_port;
	start_detached(front_acceptor, &l);
	printf("front %d\n", port);
	fflush(stdout);
	return wait_stop(&stop);
}

/* ---- client: threads, each with its own connection, one request at a time ---- */

struct client_thread {
	pthread_t th;
	int index, requests, port, failed, calls;
};

static void *client_main(void *arg)
{
	struct client_thread *c = arg;
	int fd = tt_connect(c->port);
	if (fd < 0) {
		c->failed = 1;
		return NULL;
	}
	struct tt_msg m, r;
	for (int i = 0; i < c->requests; i++) {
		TT_BEGIN("request"); /* a user's request: a new interaction */
		m.len = (uint32_t)snprintf(m.payload, sizeof m.payload, "req %d %d", c->index, i);
		int calls = 0;
		if (tt_send(fd, &m, "front") < 0 || tt_recv(fd, &r) < 0 ||
		    sscanf(r.payload, "reply %*d.%*d calls=%d", &calls) != 1) {
			c->failed = 1;
			break;
		}
		c->calls += calls;
	}
	close(fd);
	return NULL;
}

int tt_client(const struct tt_options *o)
{
	struct client_thread *c = calloc((size_t)o->threads, sizeof *c);
	if (!c)
		return 1;
	for (int t = 0; t < o->threads; t++) {
		c[t] = (struct client_thread){
		    .index = t, .requests = o->requests, .port = o->front_port};
		if (pthread_create(&c[t].th, NULL, client_main, &c[t]) != 0) {
			perror("three_tier client: pthread_create");
			return 1;
		}
	}
	int failed = 0, calls = 0;
	for (int t = 0; t < o->threads; t++) {
		pthread_join(c[t].th, NULL);
		failed |= c[t].failed;
		calls += c[t].calls;
	}
	free(c);
	printf("{\"instrumented\": %d, \"threads\": %d, \"requests\": %d, \"backend_calls\": %d, "
	       "\"failed\": %d}\n",
	       TT_INSTRUMENTED, o->threads, o->threads * o->requests, calls, failed);
	return failed;
}
