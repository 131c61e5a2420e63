/* The descriptors an unmodified program's hooks follow (docs/net.md, "Unmodified
 * programs"): a per-process table indexed by fd, one 32-bit word each, and a table of
 * connections indexed by their serial. Both are anonymous mappings made on first use
 * (no malloc) and copied into a fork child with the rest of memory. Not installed. */
#ifndef VIGIL_RUNTIME_NET_FD_H
#define VIGIL_RUNTIME_NET_FD_H

#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"

#define VG_FD_MAX (1u << 20)   /* fds past this are never followed */
#define VG_CONN_MAX (1u << 17) /* connections per process image; then not followed */
#define VG_FD_UNKNOWN 0u       /* not seen yet: classified (one fstat) on first use */
#define VG_FD_NOT 0xFFFFFFFFu  /* seen: a regular file or anything else not followed */
#define VG_NET_NAME 120        /* longest endpoint name kept */

/* A followed connection. An fd holding it has its serial; dup'd fds share it (and its
 * byte offsets: they are one open file description). */
struct vg_conn {
	_Atomic uint64_t out, in; /* bytes this process sent / received on it so far */
	_Atomic int32_t refs;     /* fds holding it */
	_Atomic uint32_t epoch;   /* the image epoch whose trace has its vg.net.conn */
	char kind[8];
	char role[12]; /* as it was made: a fork child introduces it with the same role */
	char local[VG_NET_NAME], remote[VG_NET_NAME];
};

extern _Atomic(_Atomic uint32_t *) vg__net_fdtab;
extern struct vg_conn *vg__net_conns;
extern _Atomic uint32_t vg__net_epoch;
_Atomic uint32_t *vg__net_fdtab_make(void); /* NULL if it cannot be made */

/* The fd's word: VG_FD_NOT when the hooks must only pass the call on (not recording,
 * out of range, not followed), VG_FD_UNKNOWN, or a connection serial. */
static inline uint32_t vg__net_fd_word(int fd)
{
	if (VG_LIKELY(!vg__rt.recording) || VG_UNLIKELY((unsigned)fd >= VG_FD_MAX))
		return VG_FD_NOT;
	_Atomic uint32_t *tab = atomic_load_explicit(&vg__net_fdtab, memory_order_acquire);
	if (VG_UNLIKELY(!tab) && !(tab = vg__net_fdtab_make()))
		return VG_FD_NOT;
	return atomic_load_explicit(&tab[fd], memory_order_relaxed);
}

/* First I/O on an fd: follows it (role "inherited") or marks it not followed. Returns
 * the serial or VG_FD_NOT. errno is kept. */
uint32_t vg__net_fd_classify(int fd);
/* A new connection on fd (connect, accept, pipe, socketpair): `peer_ino` the other end
 * of a socketpair (0: ask the kernel). `addr`: the address connect was given, used when
 * the peer's name is not known yet (a connect in progress). `at`: when the call was made
 * (a connect), or NULL: now. errno is kept. */
void vg__net_fd_new(int fd, const char *role, uint64_t peer_ino, const void *addr, unsigned addrlen,
                    const struct vg_net_stamp *at);
void vg__net_fd_closed(int fd);        /* the fd no longer holds what it held */
void vg__net_fd_dup(int from, int to); /* `to` now holds what `from` holds */
/* Has this image's trace introduced the connection? A fork child's has not introduced
 * those it kept: it does so (vg__net_fd_announce) on first use, with the role the
 * connection was made with (the same connection: an accepted one stays `accept`). */
static inline int vg__net_conn_current(uint32_t serial)
{
	return atomic_load_explicit(&vg__net_conns[serial].epoch, memory_order_relaxed) ==
	       atomic_load_explicit(&vg__net_epoch, memory_order_relaxed);
}
void vg__net_fd_announce(int fd, uint32_t serial);
/* Bytes moved on a followed fd: records vg.net.send or vg.net.recv. */
void vg__net_fd_io(int which, int fd, uint32_t serial, uint64_t n, const struct vg_net_stamp *at);

#endif
