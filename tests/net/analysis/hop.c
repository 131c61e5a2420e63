/* hop: a chain of TCP servers on any addresses, for interaction networks across hosts
 * (network namespaces): the three-tier example listens on loopback only. Unmodified: no
 * vigil call. Messages are 32 bytes; each request is answered after `--calls` calls to
 * the next server (if any).
 *
 *   hop serve IP:PORT [--next IP:PORT] [--calls N]   prints the port, then serves until
 *                                                    SIGTERM (a thread per connection)
 *   hop client IP:PORT --requests N                  one connection, N requests */
#define _GNU_SOURCE
#include <arpa/inet.h>
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

#define MSG 32

static struct sockaddr_in next_addr;
static int has_next, calls = 1;

static int parse_addr(const char *s, struct sockaddr_in *a)
{
	char ip[64];
	const char *colon = strrchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof ip)
		return -1;
	memcpy(ip, s, (size_t)(colon - s));
	ip[colon - s] = 0;
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, ip, &a->sin_addr) == 1 ? 0 : -1;
}

static int full(int fd, char *buf, int out)
{
	for (size_t n = 0; n < MSG;) {
		ssize_t r =
		    out ? send(fd, buf + n, MSG - n, MSG_NOSIGNAL) : recv(fd, buf + n, MSG - n, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		n += (size_t)r;
	}
	return 0;
}

static int dial(const struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (const struct sockaddr *)a, sizeof *a) < 0) {
		perror("hop: connect");
		exit(1);
	}
	return fd;
}

static void *serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg, nfd = has_next ? dial(&next_addr) : -1;
	char buf[MSG];
	while (full(fd, buf, 0) == 0) {
		for (int i = 0; nfd >= 0 && i < calls; i++)
			if (full(nfd, buf, 1) < 0 || full(nfd, buf, 0) < 0)
				goto out;
		if (full(fd, buf, 1) < 0)
			break;
	}
out:
	if (nfd >= 0)
		close(nfd);
	close(fd);
	return NULL;
}

static void *acceptor(void *arg)
{
	int l = (int)(intptr_t)arg;
	for (;;) {
		int fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		pthread_t th;
		pthread_create(&th, NULL, serve_conn, (void *)(intptr_t)fd);
		pthread_detach(th);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "serve") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: hop serve IP:PORT [--next IP:PORT] [--calls N]\n"
		                "       hop client IP:PORT --requests N\n");
		return 2;
	}
	struct sockaddr_in a;
	if (parse_addr(argv[2], &a) < 0) {
		fprintf(stderr, "hop: bad address %s\n", argv[2]);
		return 2;
	}
	int requests = 1;
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--next")) {
			if (parse_addr(argv[i + 1], &next_addr) < 0)
				return 2;
			has_next = 1;
		} else if (!strcmp(argv[i], "--calls")) {
			calls = atoi(argv[i + 1]);
		} else if (!strcmp(argv[i], "--requests")) {
			requests = atoi(argv[i + 1]);
		}
	}
	if (!strcmp(argv[1], "client")) {
		int fd = dial(&a);
		char buf[MSG];
		for (int i = 0; i < requests; i++) {
			memset(buf, 'a' + i % 26, sizeof buf);
			if (full(fd, buf, 1) < 0 || full(fd, buf, 0) < 0) {
				fprintf(stderr, "hop: request %d failed\n", i);
				return 1;
			}
		}
		close(fd);
		printf("{\"requests\": %d}\n", requests);
		return 0;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	socklen_t len = sizeof a;
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 64) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0) {
		perror("hop: listen");
		return 1;
	}
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	pthread_t th;
	pthread_create(&th, NULL, acceptor, (void *)(intptr_t)l);
	int sig;
	sigwait(&set, &sig);
	return 0;
}
