/* Messages on TCP sockets of the loopback interface (wire.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire.h"

#define HEADER (sizeof(uint32_t) + TT_TP_LEN)

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, char *p, size_t n)
{
	while (n > 0) {
		ssize_t r = recv(fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int tt_send(int fd, struct tt_msg *m, const char *to)
{
	memset(m->tp, ' ', TT_TP_LEN);
	m->tp[TT_TP_LEN] = 0;
	TT_SENT(m, to); /* fills m->tp with the context to carry */
	char buf[HEADER + TT_MAX_PAYLOAD];
	memcpy(buf, &m->len, sizeof m->len);
	memcpy(buf + sizeof m->len, m->tp, TT_TP_LEN);
	memcpy(buf + HEADER, m->payload, m->len);
	return write_all(fd, buf, HEADER + m->len); /* one send per message */
}

int tt_recv(int fd, struct tt_msg *m)
{
	char head[HEADER];
	if (read_all(fd, head, HEADER) < 0)
		return -1;
	memcpy(&m->len, head, sizeof m->len);
	memcpy(m->tp, head + sizeof m->len, TT_TP_LEN);
	m->tp[TT_TP_LEN] = 0;
	if (m->len >= TT_MAX_PAYLOAD || read_all(fd, m->payload, m->len) < 0)
		return -1;
	m->payload[m->len] = 0;
	TT_RECEIVED(m); /* this thread joins the message's interaction */
	return 0;
}

int tt_listen(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons((uint16_t)*port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

int tt_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons((uint16_t)port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	int one = 1; /* small request/reply messages: no Nagle delay */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}
