/* A command's connection to the collector vigild (docs/protocol.md): `vigil probes
 * --collector` and `vigil send`. */
#define _GNU_SOURCE
#include "cli/collector_link.h"
#include "cli/tls_link.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define WAIT_MS 5000

int vg_cli_check_addr(const char *addr, char *err, size_t errsize)
{
	if (!strncmp(addr, "unix:", 5)) {
		if (!addr[5] || strlen(addr + 5) >= sizeof((struct sockaddr_un *)0)->sun_path) {
			snprintf(err, errsize, "%s",
			         addr[5] ? "socket path too long" : "no socket path");
			return -1;
		}
		return 0;
	}
	const char *colon = strrchr(addr, ':');
	if (!colon || colon == addr || !colon[1]) {
		snprintf(err, errsize, "expected HOST:PORT or unix:PATH");
		return -1;
	}
	unsigned long port = 0;
	const char *p = colon + 1;
	while (*p >= '0' && *p <= '9' && port <= 65535)
		port = port * 10 + (unsigned long)(*p++ - '0');
	if (*p || port < 1 || port > 65535) {
		snprintf(err, errsize, "the port '%s' is not a number from 1 to 65535", colon + 1);
		return -1;
	}
	return 0;
}

int vg_cli_dial(const char *addr, char *err, size_t errsize)
{
	if (vg_cli_check_addr(addr, err, errsize) < 0)
		return -1;
	if (vg_tls_wanted(addr)) /* VIGIL_TO_CA: TLS 1.3 (docs/security.md) */
		return vg_tls_dial(addr, err, errsize);
	return vg_cli_dial_plain(addr, err, errsize);
}

int vg_cli_dial_plain(const char *addr, char *err, size_t errsize)
{
	if (!strncmp(addr, "unix:", 5)) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		if (strlen(addr + 5) >= sizeof sa.sun_path) {
			snprintf(err, errsize, "socket path too long");
			return -1;
		}
		strcpy(sa.sun_path, addr + 5);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
			return fd;
		snprintf(err, errsize, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	const char *colon = strrchr(addr, ':');
	char host[256];
	snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1]:7878 */
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc = getaddrinfo(host, colon + 1, &hints, &res);
	if (rc) {
		snprintf(err, errsize, "%s", gai_strerror(rc));
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
			snprintf(err, errsize, "%s", strerror(errno));
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

int vg_cli_send_all(int fd, const struct vgw_buf *b)
{
	for (size_t off = 0; off < b->len;) {
		ssize_t n = send(fd, b->p + off, b->len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

static int read_full(int fd, uint8_t *p, size_t n)
{
	while (n) {
		struct pollfd pfd = {fd, POLLIN, 0};
		if (poll(&pfd, 1, WAIT_MS) <= 0)
			return -1;
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

/* The next frame of `want` (others are skipped); its payload in *buf (malloc'd). */
int vg_cli_read_frame(int fd, uint8_t want, uint8_t **buf, uint32_t *len)
{
	for (;;) {
		uint8_t hdr[VGW_HEADER];
		uint8_t type;
		if (read_full(fd, hdr, sizeof hdr) < 0 || vgw_header(hdr, 1u << 26, len, &type) < 0)
			return -1;
		uint8_t *p = malloc(*len ? *len : 1);
		if (!p || read_full(fd, p, *len) < 0) {
			free(p);
			return -1;
		}
		if (type == want) {
			*buf = p;
			return 0;
		}
		free(p);
	}
}
