/* Bytes moved between descriptors by the kernel, without passing through the program's
 * memory (docs/net.md, "Unmodified programs"): sendfile, splice, tee, vmsplice,
 * copy_file_range, and the batched sendmmsg/recvmmsg. Each is a receive on its source
 * and a send on its destination, for the ends that are followed: a web server sending a
 * file with sendfile is a send of the file's bytes on the connection, and splice
 * between two sockets a receive on one and a send on the other. tee copies a pipe's
 * bytes without consuming them: only its send is recorded (the bytes are received by
 * whoever reads the source pipe). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/uio.h>

#include "net_hooks.h"

/* A move from `in` (followed as ci when fi) to `out` (co when fo) of r bytes: the send
 * first, while the stamp taken before the call is still valid. */
static void moved(int in, int fi, uint32_t ci, int out, int fo, uint32_t co, ssize_t r,
                  const struct vg_net_stamp *at)
{
	if (fo)
		vg__sent(out, co, r, at);
	if (fi)
		vg__received(in, ci, r, 0);
}

typedef ssize_t (*sendfile_fn)(int, int, off_t *, size_t);
typedef ssize_t (*splice_fn)(int, loff_t *, int, loff_t *, size_t, unsigned);
typedef ssize_t (*tee_fn)(int, int, size_t, unsigned);
typedef ssize_t (*vmsplice_fn)(int, const struct iovec *, size_t, unsigned);
typedef int (*mmsg_fn)(int, struct mmsghdr *, unsigned, int);
typedef int (*recvmmsg_fn)(int, struct mmsghdr *, unsigned, int, struct timespec *);

/* The body of a call moving bytes from `in` to `out` (call: the real call's expression;
 * follow_in: how the source is judged). */
#define MOVE(in, out, call, follow_in)                                                             \
	do {                                                                                       \
		uint32_t ci = 0, co = 0;                                                           \
		int fi = follow_in(in, RET, &ci), fo = vg__follow(out, RET, &co);                  \
		if (!fi && !fo)                                                                    \
			return call;                                                               \
		struct vg_net_stamp at;                                                            \
		vg__net_stamp(&at);                                                                \
		ssize_t r = call;                                                                  \
		moved(in, fi, ci, out, fo, co, r, &at);                                            \
		vg__io_done();                                                                     \
		return r;                                                                          \
	} while (0)

VG_API ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	sendfile_fn f = REAL(sendfile_fn, "sendfile");
	MOVE(in, out, f(out, in, off, n), vg__follow_known);
}

VG_API ssize_t sendfile64(int out, int in, off_t *off, size_t n)
{
	sendfile_fn f = REAL(sendfile_fn, "sendfile64");
	MOVE(in, out, f(out, in, off, n), vg__follow_known);
}

VG_API ssize_t splice(int in, loff_t *off_in, int out, loff_t *off_out, size_t n, unsigned flags)
{
	splice_fn f = REAL(splice_fn, "splice");
	MOVE(in, out, f(in, off_in, out, off_out, n, flags), vg__follow);
}

VG_API ssize_t copy_file_range(int in, loff_t *off_in, int out, loff_t *off_out, size_t n,
                               unsigned flags)
{
	splice_fn f = REAL(splice_fn, "copy_file_range");
	MOVE(in, out, f(in, off_in, out, off_out, n, flags), vg__follow);
}

VG_API ssize_t tee(int in, int out, size_t n, unsigned flags)
{
	tee_fn f = REAL(tee_fn, "tee");
	uint32_t co;
	if (!vg__follow(out, RET, &co))
		return f(in, out, n, flags);
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	ssize_t r = f(in, out, n, flags);
	vg__sent(out, co, r, &at);
	return r;
}

/* vmsplice moves user memory into a pipe's write end, or a read end's bytes out. */
VG_API ssize_t vmsplice(int fd, const struct iovec *iov, size_t n, unsigned flags)
{
	vmsplice_fn f = REAL(vmsplice_fn, "vmsplice");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, iov, n, flags);
	int saved = errno, mode = fcntl(fd, F_GETFL);
	errno = saved;
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	ssize_t r = f(fd, iov, n, flags);
	if (mode >= 0 && (mode & O_ACCMODE) == O_RDONLY)
		vg__received(fd, c, r, 0);
	else
		vg__sent(fd, c, r, &at);
	vg__io_done();
	return r;
}

/* ---- batches: one event per message ---- */

VG_API int sendmmsg(int fd, struct mmsghdr *v, unsigned n, int flags)
{
	mmsg_fn f = REAL(mmsg_fn, "sendmmsg");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, v, n, flags);
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	int r = f(fd, v, n, flags);
	for (int i = 0; i < r; i++)
		vg__sent(fd, c, v[i].msg_len, i ? NULL : &at);
	vg__io_done();
	return r;
}

VG_API int recvmmsg(int fd, struct mmsghdr *v, unsigned n, int flags, struct timespec *timeout)
{
	recvmmsg_fn f = REAL(recvmmsg_fn, "recvmmsg");
	uint32_t c;
	if (!vg__follow(fd, RET, &c))
		return f(fd, v, n, flags, timeout);
	int r = f(fd, v, n, flags, timeout);
	for (int i = 0; i < r; i++)
		vg__received(fd, c, v[i].msg_len, flags);
	return r;
}
