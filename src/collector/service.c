/* vigild's service layer: what the collector's parts share and call back into (its options,
 * its log, the table of connections, so that a reconnecting subject replaces its old one).
 * The poll loop (poll_loop.c) drives it; nothing here calls the loop. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"

struct vgd_options vgd_opt;
static struct vgd_conn **conns;
static size_t nconns, cap_conns;

void vgd_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	/* Peers' strings (program names, replies, ...) go into these lines: control bytes
	 * (newlines, terminal escapes) are written as \xHH, so one line stays one line. */
	char safe[4 * sizeof line];
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)line; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			o += (size_t)snprintf(safe + o, sizeof safe - o, "\\x%02x", *p);
		else
			safe[o++] = (char)*p;
	}
	safe[o] = 0;
	fprintf(stderr, "vigild: %s\n", safe);
}

struct vgd_conn *vgd_find_subject(const char *host, uint32_t pid, uint64_t start,
                                  const struct vgd_conn *except)
{
	for (size_t i = 0; i < nconns; i++) {
		struct vgd_conn *c = conns[i];
		if (c && c != except && !c->dead && c->has_subject && c->subj.pid == pid &&
		    c->subj.start == start && !strcmp(c->subj.host, host))
			return c;
	}
	return NULL;
}

void vgd_drop_conn(struct vgd_conn *c)
{
	for (size_t i = 0; i < nconns; i++)
		if (conns[i] == c) {
			if (!vgd_opt.quiet)
				vgd_log("%s: replaced by a new connection of the subject", c->peer);
			vgd_conn_free(c, VGD_KEEP);
			conns[i] = NULL;
		}
}

size_t vgd_conn_count(void)
{
	return nconns;
}

struct vgd_conn *vgd_conn_at(size_t i)
{
	return i < nconns ? conns[i] : NULL;
}

void vgd_conn_table_add(int fd, const char *peer, int is_unix)
{
	size_t live = 0;
	for (size_t i = 0; i < nconns; i++)
		live += conns[i] != NULL;
	if (live >= vgd_opt.max_conns) {
		static uint64_t last_log;
		uint64_t now = vgd_now_ns();
		if (now - last_log > 1000000000ull) { /* one line a second at most */
			vgd_log("%s: refused: %u connections already (--max-connections)", peer,
			        vgd_opt.max_conns);
			last_log = now;
		}
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (nconns == cap_conns) {
		size_t cap = cap_conns ? cap_conns * 2 : 64;
		struct vgd_conn **p = realloc(conns, cap * sizeof *p);
		if (!p) {
			close(fd);
			return;
		}
		conns = p;
		cap_conns = cap;
	}
	struct vgd_conn *c = vgd_conn_new(fd, peer);
	if (!c) {
		close(fd);
		return;
	}
	if (!is_unix && vgd_tls_enabled() && vgd_tls_start(c) < 0) {
		vgd_log("%s: TLS: out of memory; refused", peer);
		vgd_conn_free(c, VGD_KEEP);
		return;
	}
	conns[nconns++] = c;
}

void vgd_conn_table_close(size_t i, int how)
{
	if (i < nconns && conns[i]) {
		vgd_conn_free(conns[i], how);
		conns[i] = NULL;
	}
}

void vgd_conn_table_compact(void)
{
	size_t j = 0;
	for (size_t i = 0; i < nconns; i++)
		if (conns[i])
			conns[j++] = conns[i];
	nconns = j;
}

void vgd_conn_table_free_all(void)
{
	for (size_t i = 0; i < nconns; i++)
		vgd_conn_table_close(i, VGD_KEEP);
	free(conns);
	conns = NULL;
	nconns = cap_conns = 0;
}
