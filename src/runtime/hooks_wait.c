/* Where a process waits (epoll_wait, poll, select and their variants): a server sets its
 * title, then waits for work, so the title is compared here (title.c) before the call
 * blocks. A process that does no recorded I/O (PostgreSQL's checkpointer, WAL writer)
 * otherwise would be noticed renamed only at its end. The call itself is passed on
 * untouched; the comparison costs a few ns against a system call that may block. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "internal.h"
#include "net_hooks.h"

typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
                          const sigset_t *);

#define BEFORE_WAIT()                                                                              \
	do {                                                                                       \
		if (vg__rt.recording && !vg__from_runtime(RET))                                    \
			vg__title_check();                                                         \
	} while (0)

VG_API int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	BEFORE_WAIT();
	return REAL(epoll_wait_fn, "epoll_wait")(epfd, ev, max, timeout);
}

VG_API int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *m)
{
	BEFORE_WAIT();
	return REAL(epoll_pwait_fn, "epoll_pwait")(epfd, ev, max, timeout, m);
}

VG_API int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	BEFORE_WAIT();
	return REAL(poll_fn, "poll")(fds, n, timeout);
}

VG_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	BEFORE_WAIT();
	return REAL(ppoll_fn, "ppoll")(fds, n, t, m);
}

VG_API int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
	BEFORE_WAIT();
	return REAL(select_fn, "select")(n, r, w, e, t);
}

VG_API int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
                   const sigset_t *m)
{
	BEFORE_WAIT();
	return REAL(pselect_fn, "pselect")(n, r, w, e, t, m);
}
