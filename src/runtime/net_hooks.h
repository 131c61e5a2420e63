/* What the interposed I/O calls of unmodified programs share (hooks_net.c, hooks_move.c,
 * hooks_stdio.c; docs/net.md "Unmodified programs"): finding the real function, telling
 * libvigil's own calls apart, deciding whether an fd is followed, and recording the
 * bytes a call moved. Not installed. */
#ifndef VIGIL_RUNTIME_NET_HOOKS_H
#define VIGIL_RUNTIME_NET_HOOKS_H

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "net_fd.h"

/* The real function `name`, found once with dlsym(RTLD_NEXT). */
#define REAL(type, name)                                                                           \
	({                                                                                         \
		static _Atomic(type) real_;                                                        \
		type f_ = atomic_load_explicit(&real_, memory_order_relaxed);                      \
		if (VG_UNLIKELY(!f_)) {                                                            \
			f_ = (type)dlsym(RTLD_NEXT, name);                                         \
			atomic_store_explicit(&real_, f_, memory_order_relaxed);                   \
		}                                                                                  \
		f_;                                                                                \
	})
#define RET __builtin_return_address(0)

extern uintptr_t vg__self_lo, vg__self_hi; /* libvigil's executable segments */

/* Was the call made by libvigil itself (its control socket, warnings, trace files)? */
static inline int vg__from_runtime(const void *ret)
{
	return (uintptr_t)ret - vg__self_lo < vg__self_hi - vg__self_lo;
}

/* Is fd followed? Its connection serial in *serial. */
static inline int vg__follow(int fd, const void *ret, uint32_t *serial)
{
	uint32_t w = vg__net_fd_word(fd);
	if (VG_LIKELY(w == VG_FD_NOT) || vg__from_runtime(ret))
		return 0;
	if (w == VG_FD_UNKNOWN && (w = vg__net_fd_classify(fd)) == VG_FD_NOT)
		return 0;
	if (VG_UNLIKELY(!vg__net_conn_current(w)))
		vg__net_fd_announce(fd, w); /* before the call is stamped */
	*serial = w;
	return 1;
}

/* As vg__follow, but an fd not seen yet is taken as not followed without asking the
 * kernel: for sendfile's source, nearly always a regular file opened for the call
 * (one fstat per request saved in a web server); a pipe or socket already seen is. */
static inline int vg__follow_known(int fd, const void *ret, uint32_t *serial)
{
	uint32_t w = vg__net_fd_word(fd);
	if (VG_LIKELY(w == VG_FD_NOT || w == VG_FD_UNKNOWN) || vg__from_runtime(ret))
		return 0;
	if (VG_UNLIKELY(!vg__net_conn_current(w)))
		vg__net_fd_announce(fd, w);
	*serial = w;
	return 1;
}

static inline void vg__sent(int fd, uint32_t c, ssize_t r, const struct vg_net_stamp *at)
{
	if (r > 0)
		vg__net_fd_io(VG_B_NET_SEND, fd, c, (uint64_t)r, at);
	vg__io_done();
}

static inline void vg__received(int fd, uint32_t c, ssize_t r, int flags)
{
	if (r > 0 && !(flags & MSG_PEEK)) /* peeked bytes are received by the next call */
		vg__net_fd_io(VG_B_NET_RECV, fd, c, (uint64_t)r, NULL);
}

/* After vg__received: a read on a terminal whose bytes hold no line end (a shell reading
 * its terminal byte by byte while a line is typed) is part of a line: vg.net.partial says
 * so, and the analysis makes the whole line one input (docs/net.md "Terminals"). */
static inline void vg__tty_read(int fd, uint32_t c, const void *buf, ssize_t r)
{
	if (r <= 0 || memcmp(vg__net_conns[c].kind, "tty", 4))
		return;
	const char *p = buf;
	for (ssize_t i = 0; i < r; i++)
		if (p[i] == '\n' || p[i] == '\r' || p[i] == 4) /* 4: ^D, end of input */
			return;
	int saved = errno;
	vg__net_emit_partial(fd, c);
	errno = saved;
}

#endif
