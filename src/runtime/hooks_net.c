/* Connections and messages of unmodified programs (docs/net.md, "Unmodified programs"):
 * libc's socket, pipe and I/O calls, interposed like hooks.c's and forwarded to the real
 * ones found with dlsym(RTLD_NEXT) on first use.
 *
 * The I/O path costs, for a descriptor that is not followed (a regular file), one load
 * of the recording flag, one of the fd table and one of the fd's word. A followed fd
 * also reads the clock before the call (a send is dated when it was made, so that it
 * precedes its receive) and records after it. Calls made by libvigil itself (its
 * control socket, warnings on stderr, trace files) are recognised by their return
 * address and never recorded. No call's result or errno is changed. */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* __read_chk and friends are defined here */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "logcap.h"
#include "net_hooks.h"

/* ---- calls made by libvigil itself ---- */

uintptr_t vg__self_lo, vg__self_hi; /* libvigil's executable segments */

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t anchor = (uintptr_t)data, lo = UINTPTR_MAX, hi = 0;
	int mine = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (anchor >= a && anchor < b)
			mine = 1;
		if (ph->p_flags & PF_X) {
			lo = a < lo ? a : lo;
			hi = b > hi ? b : hi;
		}
	}
	if (!mine)
		return 0;
	vg__self_lo = lo;
	vg__self_hi = hi;
	return 1;
}

void vg__net_hooks_init(void)
{
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&find_self);
}

/* ---- bytes out ---- */

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*iov_fn)(int, const struct iovec *, int);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);

/* Lines written to fd 2 are log messages (docs/logcapture.md): captured, and handed on
 * when they pass the threshold; a write not handed on reports everything written. */
static int log_write_passes(void *ret, int fd, const void *buf, size_t n)
{
	if (!vg__lc.on || vg__lc_guard || !buf ||
	    ((uintptr_t)ret >= vg__self_lo && (uintptr_t)ret < vg__self_hi))
		return 1;
	if (fd != STDERR_FILENO && !vg__lc_is_log_fd(fd))
		return 1;
	int saved = errno;
	int pass = vg__lc_capture_lines(ret, buf, n);
	errno = saved;
	return pass;
}

static int log_writev_passes(void *ret, int fd, const struct iovec *iov, int n)
{
	if (!vg__lc.on || vg__lc_guard || !iov || n <= 0 ||
	    ((uintptr_t)ret >= vg__self_lo && (uintptr_t)ret < vg__self_hi))
		return 1;
	if (fd != STDERR_FILENO && !vg__lc_is_log_fd(fd))
		return 1;
	char buf[8192]; /* the first 8 KiB of the write are looked at */
	size_t len = 0;
	for (int i = 0; i < n && len < sizeof buf; i++) {
		size_t k = iov[i].iov_len < sizeof buf - len ? iov[i].iov_len : sizeof buf - len;
		if (k && iov[i].iov_base)
			memcpy(buf + len, iov[i].iov_base, k);
		len += iov[i].iov_base ? k : 0;
	}
	return log_write_passes(ret, fd, buf, len);
}

static ssize_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;
	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return (ssize_t)t;
}

VG_API ssize_t write(int fd, const void *buf, size_t n)
{
	write_fn f = REAL(write_fn, "write");
	uint32_t c;
	if (__builtin_expect(fd == STDERR_FILENO || vg__lc_files_on, 0) &&
	    !log_write_passes(RET, fd, buf, n))
		return (ssize_t)n;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n);
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	ssize_t r = f(fd, buf, n);
	vg__sent(fd, c, r, &at);
	return r;
}

VG_API ssize_t writev(int fd, const struct iovec *iov, int n)
{
	iov_fn f = REAL(iov_fn, "writev");
	uint32_t c;
	if (__builtin_expect(fd == STDERR_FILENO || vg__lc_files_on, 0) &&
	    !log_writev_passes(RET, fd, iov, n))
		return iov_total(iov, n);
	if (!vg__follow(fd, RET, &c))
		return f(fd, iov, n);
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	ssize_t r = f(fd, iov, n);
	vg__sent(fd, c, r, &at);
	return r;
}

VG_API ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	send_fn f = REAL(send_fn, "send");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n, flags);
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	ssize_t r = f(fd, buf, n, flags);
	vg__sent(fd, c, r, &at);
	return r;
}

VG_API ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to,
                      socklen_t tolen)
{
	sendto_fn f = REAL(sendto_fn, "sendto");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n, flags, to, tolen);
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	ssize_t r = f(fd, buf, n, flags, to, tolen);
	vg__sent(fd, c, r, &at);
	return r;
}

VG_API ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	sendmsg_fn f = REAL(sendmsg_fn, "sendmsg");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, msg, flags);
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	ssize_t r = f(fd, msg, flags);
	vg__sent(fd, c, r, &at);
	return r;
}

/* ---- bytes in ---- */

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*read_chk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*recv_chk_fn)(int, void *, size_t, size_t, int);
typedef ssize_t (*recvfrom_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
typedef ssize_t (*recvfrom_chk_fn)(int, void *, size_t, size_t, int, struct sockaddr *,
                                   socklen_t *);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);

VG_API ssize_t read(int fd, void *buf, size_t n)
{
	read_fn f = REAL(read_fn, "read");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n);
	ssize_t r = f(fd, buf, n);
	vg__received(fd, c, r, 0);
	vg__tty_read(fd, c, buf, r);
	return r;
}

VG_API ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	read_chk_fn f = REAL(read_chk_fn, "__read_chk");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n, buflen);
	ssize_t r = f(fd, buf, n, buflen);
	vg__received(fd, c, r, 0);
	vg__tty_read(fd, c, buf, r);
	return r;
}

VG_API ssize_t readv(int fd, const struct iovec *iov, int n)
{
	iov_fn f = REAL(iov_fn, "readv");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, iov, n);
	ssize_t r = f(fd, iov, n);
	vg__received(fd, c, r, 0);
	return r;
}

VG_API ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	recv_fn f = REAL(recv_fn, "recv");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n, flags);
	ssize_t r = f(fd, buf, n, flags);
	vg__received(fd, c, r, flags);
	return r;
}

VG_API ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	recv_chk_fn f = REAL(recv_chk_fn, "__recv_chk");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n, buflen, flags);
	ssize_t r = f(fd, buf, n, buflen, flags);
	vg__received(fd, c, r, flags);
	return r;
}

VG_API ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from,
                        socklen_t *fromlen)
{
	recvfrom_fn f = REAL(recvfrom_fn, "recvfrom");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n, flags, from, fromlen);
	ssize_t r = f(fd, buf, n, flags, from, fromlen);
	vg__received(fd, c, r, flags);
	return r;
}

VG_API ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                              struct sockaddr *from, socklen_t *fromlen)
{
	recvfrom_chk_fn f = REAL(recvfrom_chk_fn, "__recvfrom_chk");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, buf, n, buflen, flags, from, fromlen);
	ssize_t r = f(fd, buf, n, buflen, flags, from, fromlen);
	vg__received(fd, c, r, flags);
	return r;
}

/* Descriptors passed over SCM_RIGHTS are new to this process whatever their number held
 * before (closed by a call no hook saw): each is judged on its first I/O (`inherited`,
 * named by the kernel: docs/net.md). */
static void passed_fds(const struct msghdr *msg)
{
	if (!msg || !msg->msg_control)
		return;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR((struct msghdr *)msg); cm;
	     cm = CMSG_NXTHDR((struct msghdr *)msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int pfd;
			memcpy(&pfd, CMSG_DATA(cm) + i * sizeof(int), sizeof pfd);
			vg__net_fd_closed(pfd);
		}
	}
}

VG_API ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	recvmsg_fn f = REAL(recvmsg_fn, "recvmsg");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, msg, flags);
	ssize_t r = f(fd, msg, flags);
	if (r >= 0 && msg && msg->msg_controllen)
		passed_fds(msg);
	vg__received(fd, c, r, flags);
	return r;
}

/* ---- descriptors becoming connections, copied, closed ---- */

typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);
typedef int (*accept_fn)(int, struct sockaddr *, socklen_t *);
typedef int (*accept4_fn)(int, struct sockaddr *, socklen_t *, int);
typedef int (*pipe_fn)(int[2]);
typedef int (*pipe2_fn)(int[2], int);
typedef int (*socketpair_fn)(int, int, int, int[2]);
typedef int (*socket_fn)(int, int, int);
typedef int (*close_fn)(int);
typedef int (*dup_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);

static inline int watching(const void *ret)
{
	return VG_UNLIKELY(vg__rt.recording) && !vg__from_runtime(ret);
}

VG_API int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	connect_fn f = REAL(connect_fn, "connect");
	if (!watching(RET))
		return f(fd, addr, len);
	/* dated at the call, as a send is: the server may accept before it returns */
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	int r = f(fd, addr, len);
	if (r == 0 || errno == EINPROGRESS)
		vg__net_fd_new(fd, "connect", 0, addr, len, &at);
	vg__io_done();
	return r;
}

VG_API int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	accept_fn f = REAL(accept_fn, "accept");
	int r = f(fd, addr, len);
	if (r >= 0 && watching(RET))
		vg__net_fd_new(r, "accept", 0, NULL, 0, NULL);
	return r;
}

VG_API int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	accept4_fn f = REAL(accept4_fn, "accept4");
	int r = f(fd, addr, len, flags);
	if (r >= 0 && watching(RET))
		vg__net_fd_new(r, "accept", 0, NULL, 0, NULL);
	return r;
}

VG_API int pipe(int fds[2])
{
	pipe_fn f = REAL(pipe_fn, "pipe");
	int r = f(fds);
	if (r == 0 && watching(RET)) {
		vg__net_fd_new(fds[0], "pipe", 0, NULL, 0, NULL);
		vg__net_fd_new(fds[1], "pipe", 0, NULL, 0, NULL);
	}
	return r;
}

VG_API int pipe2(int fds[2], int flags)
{
	pipe2_fn f = REAL(pipe2_fn, "pipe2");
	int r = f(fds, flags);
	if (r == 0 && watching(RET)) {
		vg__net_fd_new(fds[0], "pipe", 0, NULL, 0, NULL);
		vg__net_fd_new(fds[1], "pipe", 0, NULL, 0, NULL);
	}
	return r;
}

VG_API int socketpair(int domain, int type, int proto, int sv[2])
{
	socketpair_fn f = REAL(socketpair_fn, "socketpair");
	int r = f(domain, type, proto, sv);
	if (r == 0 && watching(RET)) {
		int saved = errno;
		struct stat a, b;
		/* Each end names the other by inode: known here, no need to ask the kernel. */
		if (fstat(sv[0], &a) == 0 && fstat(sv[1], &b) == 0) {
			vg__net_fd_new(sv[0], "pipe", b.st_ino, NULL, 0, NULL);
			vg__net_fd_new(sv[1], "pipe", a.st_ino, NULL, 0, NULL);
		}
		errno = saved;
	}
	return r;
}

VG_API int socket(int domain, int type, int proto)
{
	socket_fn f = REAL(socket_fn, "socket");
	int r = f(domain, type, proto);
	if (r >= 0 && VG_UNLIKELY(vg__rt.recording))
		vg__net_fd_closed(r); /* a fresh descriptor: forget what an unseen close left */
	return r;
}

VG_API int close(int fd)
{
	close_fn f = REAL(close_fn, "close");
	if (VG_UNLIKELY(vg__own_fd(fd)))
		return 0; /* the runtime's (files.c): closed, as far as the subject knows */
	if (VG_UNLIKELY(vg__rt.recording))
		vg__net_fd_closed(fd); /* before: once closed, another thread may reuse fd */
	if (VG_UNLIKELY(vg__lc_files_on))
		vg__lc_fd_forget(fd);
	return f(fd);
}

VG_API int dup(int fd)
{
	dup_fn f = REAL(dup_fn, "dup");
	int r = f(fd);
	if (r >= 0 && VG_UNLIKELY(vg__rt.recording))
		vg__net_fd_dup(fd, r);
	return r;
}

VG_API int dup2(int from, int to)
{
	dup2_fn f = REAL(dup2_fn, "dup2");
	if (VG_UNLIKELY(vg__own_fd(to)) && from != to)
		vg__own_fd_evict(to);
	int r = f(from, to);
	if (r >= 0 && VG_UNLIKELY(vg__lc_files_on))
		vg__lc_fd_forget(to);
	if (r >= 0 && VG_UNLIKELY(vg__rt.recording))
		vg__net_fd_dup(from, to);
	return r;
}

VG_API int dup3(int from, int to, int flags)
{
	dup3_fn f = REAL(dup3_fn, "dup3");
	if (VG_UNLIKELY(vg__own_fd(to)) && from != to)
		vg__own_fd_evict(to);
	int r = f(from, to, flags);
	if (r >= 0 && VG_UNLIKELY(vg__lc_files_on))
		vg__lc_fd_forget(to);
	if (r >= 0 && VG_UNLIKELY(vg__rt.recording))
		vg__net_fd_dup(from, to);
	return r;
}
