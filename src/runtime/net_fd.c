/* The fd and connection tables of net_fd.h: which descriptors are followed, each
 * connection's identity (kind, endpoint names) and byte offsets, and the vg.net.conn and
 * vg.net.close events. Only the first use of an fd and changes to it (connect, accept,
 * pipe, dup, close) come here; the I/O path is one load of the fd's word. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "net_fd.h"

_Atomic(_Atomic uint32_t *) vg__net_fdtab;
struct vg_conn *vg__net_conns;
_Atomic uint32_t vg__net_epoch = 1;
static _Atomic uint32_t next_serial = 1;
static _Atomic(struct vg_conn *) conns_ptr;

static void *reserve(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

_Atomic uint32_t *vg__net_fdtab_make(void)
{
	int saved = errno;
	_Atomic uint32_t *tab = reserve(VG_FD_MAX * sizeof *tab), *none = NULL;
	if (tab && !atomic_compare_exchange_strong(&vg__net_fdtab, &none, tab)) {
		munmap(tab, VG_FD_MAX * sizeof *tab);
		tab = none; /* another thread's */
	}
	errno = saved;
	return tab;
}

/* Made like the fd table: no thread ever waits for another (a signal handler may be
 * the one asking). */
static struct vg_conn *conns(void)
{
	struct vg_conn *c = atomic_load_explicit(&conns_ptr, memory_order_acquire), *none = NULL;
	if (c)
		return c;
	c = reserve((size_t)VG_CONN_MAX * sizeof *c);
	if (c && !atomic_compare_exchange_strong(&conns_ptr, &none, c)) {
		munmap(c, (size_t)VG_CONN_MAX * sizeof *c);
		c = none;
	}
	if (c)
		vg__net_conns = c;
	return c;
}

/* ---- endpoint names ---- */

static void name_of(const struct sockaddr_storage *ss, socklen_t len, char *out)
{
	char ip[INET6_ADDRSTRLEN];
	out[0] = 0;
	if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
		snprintf(out, VG_NET_NAME, "%s:%u", ip, ntohs(a->sin_port));
	} else if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		/* An IPv4 peer of a dual-stack socket is named as IPv4, as it names itself. */
		if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
			inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], ip, sizeof ip);
			snprintf(out, VG_NET_NAME, "%s:%u", ip, ntohs(a->sin6_port));
		} else {
			inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
			snprintf(out, VG_NET_NAME, "[%s]:%u", ip, ntohs(a->sin6_port));
		}
	} else if (ss->ss_family == AF_UNIX) {
		const struct sockaddr_un *a = (const struct sockaddr_un *)ss;
		size_t n = len > offsetof(struct sockaddr_un, sun_path)
		               ? len - offsetof(struct sockaddr_un, sun_path)
		               : 0;
		if (n && a->sun_path[0] == 0) /* abstract */
			snprintf(out, VG_NET_NAME, "unix:@%.*s", (int)(n - 1), a->sun_path + 1);
		else if (n)
			snprintf(out, VG_NET_NAME, "unix:%.*s", (int)strnlen(a->sun_path, n),
			         a->sun_path);
	}
}

/* The inode of the other end of a connected Unix socket, from the kernel's sock_diag
 * (module unix_diag); 0 when it cannot say. */
static uint64_t unix_peer_ino(uint64_t ino)
{
	int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s < 0)
		return 0;
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req;
	memset(&req, 0, sizeof req);
	req.nlh.nlmsg_len = sizeof req;
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = ~0u;
	req.r.udiag_ino = (uint32_t)ino;
	req.r.udiag_show = UDIAG_SHOW_PEER;
	req.r.udiag_cookie[0] = req.r.udiag_cookie[1] = ~0u;
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK};
	uint64_t peer = 0;
	union {
		char buf[4096];
		struct nlmsghdr align;
	} u;
	if (sendto(s, &req, sizeof req, 0, (struct sockaddr *)&nl, sizeof nl) == sizeof req) {
		ssize_t n = recv(s, u.buf, sizeof u.buf, 0);
		struct nlmsghdr *h = &u.align;
		if (n > 0 && NLMSG_OK(h, (size_t)n) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
			struct unix_diag_msg *m = NLMSG_DATA(h);
			int left = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
			for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, left);
			     a = RTA_NEXT(a, left))
				if (a->rta_type == UNIX_DIAG_PEER &&
				    RTA_PAYLOAD(a) >= (int)sizeof(uint32_t))
					peer = *(uint32_t *)RTA_DATA(a);
		}
	}
	close(s);
	return peer;
}

/* Names a followed fd; 0, or -1 when it is not to be followed. */
static int describe(int fd, const struct stat *st, uint64_t peer_ino, const void *addr,
                    unsigned addrlen, struct vg_conn *c)
{
	c->local[0] = c->remote[0] = 0;
	if (S_ISSOCK(st->st_mode)) {
		int domain = 0, type = 0;
		socklen_t l = sizeof domain;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0)
			return -1;
		l = sizeof type;
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
			return -1;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		if (domain == AF_INET || domain == AF_INET6) {
			if (type != SOCK_STREAM && type != SOCK_DGRAM)
				return -1;
			strcpy(c->kind, type == SOCK_STREAM ? "tcp" : "udp");
			if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
				name_of(&ss, sl, c->local);
			sl = sizeof ss;
			if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
				name_of(&ss, sl, c->remote);
			else if (addr && addrlen <= sizeof ss) { /* connect in progress */
				memcpy(&ss, addr, addrlen);
				name_of(&ss, addrlen, c->remote);
			} else if (type == SOCK_STREAM) /* listening or not connected yet */
				return -1;
			return 0;
		}
		if (domain != AF_UNIX)
			return -1;
		strcpy(c->kind, "unix");
		snprintf(c->local, VG_NET_NAME, "unix:%llu", (unsigned long long)st->st_ino);
		/* A connecting end names the path it connected to: the accepting end gets its
		 * inode only at accept, which may or may not have happened yet. */
		if (!peer_ino && !addr)
			peer_ino = unix_peer_ino(st->st_ino);
		if (peer_ino) {
			snprintf(c->remote, VG_NET_NAME, "unix:%llu", (unsigned long long)peer_ino);
		} else { /* no sock_diag: the path, where the peer has one */
			if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
				name_of(&ss, sl, c->remote);
			else if (addr && addrlen <= sizeof ss) {
				memcpy(&ss, addr, addrlen);
				name_of(&ss, addrlen, c->remote);
			}
		}
		return 0;
	}
	if (S_ISFIFO(st->st_mode)) {
		strcpy(c->kind, "pipe");
		snprintf(c->local, VG_NET_NAME, "pipe:%llu:%llu", (unsigned long long)st->st_dev,
		         (unsigned long long)st->st_ino);
		strcpy(c->remote, c->local);
		return 0;
	}
	struct termios tio;
	if (S_ISCHR(st->st_mode) && ioctl(fd, TCGETS, &tio) == 0) {
		strcpy(c->kind, "tty");
		char path[VG_NET_NAME - 8];
		if (ttyname_r(fd, path, sizeof path) != 0)
			snprintf(path, sizeof path, "%llu:%llu", (unsigned long long)st->st_dev,
			         (unsigned long long)st->st_ino);
		snprintf(c->local, VG_NET_NAME, "tty:%s", path);
		strcpy(c->remote, c->local);
		return 0;
	}
	if (fd == 0) { /* whatever else stdin is, reading it is an input */
		strcpy(c->kind, "stdin");
		snprintf(c->local, VG_NET_NAME, "stdin:%llu:%llu", (unsigned long long)st->st_dev,
		         (unsigned long long)st->st_ino);
		strcpy(c->remote, c->local);
		return 0;
	}
	return -1;
}

/* ---- connections ---- */

/* A vfork child runs in its parent's memory: it must not change the parent's tables
 * (closing its copies of the parent's descriptors before exec is the usual case). Asked
 * only when a connection would change: getpid is a system call. */
static int in_vfork_child(void)
{
	return getpid() != vg__rt.pid;
}

static void announce(int fd, uint32_t serial, struct vg_conn *c, const struct vg_net_stamp *at)
{
	atomic_store(&c->epoch, atomic_load(&vg__net_epoch));
	vg__net_emit_conn(at, fd, serial, c->kind, c->role, c->local, c->remote);
}

static void drop(int fd, uint32_t word)
{
	if (word == VG_FD_UNKNOWN || word == VG_FD_NOT || !vg__net_conns)
		return;
	struct vg_conn *c = &vg__net_conns[word];
	if (atomic_fetch_sub(&c->refs, 1) == 1 && vg__rt.recording) {
		if (atomic_load(&c->epoch) == atomic_load(&vg__net_epoch))
			vg__net_emit_close(fd, word);
	}
}

/* A new connection for fd with role; its serial, or VG_FD_NOT. */
static uint32_t make_conn(int fd, const char *role, uint64_t peer_ino, const void *addr,
                          unsigned addrlen, uint32_t expect, const struct vg_net_stamp *at)
{
	_Atomic uint32_t *tab = atomic_load(&vg__net_fdtab);
	struct stat st;
	if (!tab || fstat(fd, &st) < 0)
		return VG_FD_NOT;
	struct vg_conn tmp;
	if (describe(fd, &st, peer_ino, addr, addrlen, &tmp) < 0) {
		uint32_t old = atomic_exchange(&tab[fd], VG_FD_NOT);
		drop(fd, old);
		return VG_FD_NOT;
	}
	struct vg_conn *cs = conns();
	uint32_t serial = atomic_fetch_add(&next_serial, 1);
	if (!cs || serial >= VG_CONN_MAX) { /* counted nowhere yet: too many connections */
		drop(fd, atomic_exchange(&tab[fd], VG_FD_NOT));
		return VG_FD_NOT;
	}
	struct vg_conn *c = &cs[serial];
	memcpy(c->kind, tmp.kind, sizeof c->kind);
	snprintf(c->role, sizeof c->role, "%s", role);
	memcpy(c->local, tmp.local, sizeof c->local);
	memcpy(c->remote, tmp.remote, sizeof c->remote);
	atomic_store(&c->out, 0);
	atomic_store(&c->in, 0);
	atomic_store(&c->refs, 1);
	if (expect == VG_FD_UNKNOWN) { /* first use: another thread may be classifying too */
		uint32_t e = VG_FD_UNKNOWN;
		if (!atomic_compare_exchange_strong(&tab[fd], &e, serial))
			return e;
	} else {
		drop(fd, atomic_exchange(&tab[fd], serial));
	}
	announce(fd, serial, c, at);
	return serial;
}

uint32_t vg__net_fd_classify(int fd)
{
	int saved = errno;
	uint32_t w = make_conn(fd, "inherited", 0, NULL, 0, VG_FD_UNKNOWN, NULL);
	errno = saved;
	return w;
}

void vg__net_fd_new(int fd, const char *role, uint64_t peer_ino, const void *addr, unsigned addrlen,
                    const struct vg_net_stamp *at)
{
	if (!vg__rt.recording || (unsigned)fd >= VG_FD_MAX)
		return;
	if (!atomic_load(&vg__net_fdtab) && !vg__net_fdtab_make())
		return;
	int saved = errno;
	make_conn(fd, role, peer_ino, addr, addrlen, VG_FD_NOT, at);
	errno = saved;
}

void vg__net_fd_closed(int fd)
{
	if ((unsigned)fd >= VG_FD_MAX)
		return;
	_Atomic uint32_t *tab = atomic_load(&vg__net_fdtab);
	if (!tab)
		return;
	int saved = errno;
	uint32_t w = atomic_load(&tab[fd]);
	if (w != VG_FD_UNKNOWN && (w == VG_FD_NOT || !in_vfork_child()))
		drop(fd, atomic_exchange(&tab[fd], VG_FD_UNKNOWN));
	errno = saved;
}

void vg__net_fd_dup(int from, int to)
{
	if ((unsigned)from >= VG_FD_MAX || (unsigned)to >= VG_FD_MAX || from == to)
		return;
	_Atomic uint32_t *tab = atomic_load(&vg__net_fdtab);
	if (!tab)
		return;
	int saved = errno;
	if (in_vfork_child()) {
		errno = saved;
		return;
	}
	uint32_t w = atomic_load(&tab[from]);
	if (w != VG_FD_UNKNOWN && w != VG_FD_NOT && vg__net_conns)
		atomic_fetch_add(&vg__net_conns[w].refs, 1);
	drop(to, atomic_exchange(&tab[to], w));
	errno = saved;
}

void vg__net_fd_announce(int fd, uint32_t serial)
{
	int saved = errno;
	announce(fd, serial, &vg__net_conns[serial], NULL);
	errno = saved;
}

void vg__net_fd_io(int which, int fd, uint32_t serial, uint64_t n, const struct vg_net_stamp *at)
{
	struct vg_conn *c = &vg__net_conns[serial];
	int saved = errno;
	if (VG_UNLIKELY(!vg__net_conn_current(serial))) { /* (the hooks announce it first) */
		announce(fd, serial, c, NULL);
		at = NULL;
	}
	uint64_t off = atomic_fetch_add_explicit(which == VG_B_NET_SEND ? &c->out : &c->in, n,
	                                         memory_order_relaxed);
	vg__net_emit_io(which, at, fd, serial, off, n, 0);
	errno = saved;
}

/* A fork child keeps its parent's table: the same fds hold the same connections, with
 * the offsets they had (per process: two processes writing one socket each count their
 * own bytes) and their identity (names and role: a backend forked by the server that
 * accepted its connection serves the accepted end). It announces each in its own trace
 * on first use. */
void vg__net_fd_after_fork(void)
{
	atomic_fetch_add(&vg__net_epoch, 1);
}
