/* Interaction identity (docs/net.md): each thread's current interaction, random ids, W3C
 * traceparent strings, the API of include/vigil/net.h, and the writers of the vg.net.*
 * events that the hooks of unmodified programs (hooks_net.c) share. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "vigil/net.h"

__thread uint64_t vg__net_iid[2] __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t malformed;

/* ---- random ids: one getrandom per process, then a counter through a bijective mix ---- */

static uint64_t rng_key[2];
static _Atomic uint64_t rng_ctr;
static _Atomic int rng_state; /* 0 unseeded, 1 seeding, 2 ready */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A fork child must not draw its parent's ids: it seeds again on its first id. */
static void rng_after_fork(void)
{
	atomic_store(&rng_state, 0);
}
static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, rng_after_fork);
}

static void rng_seed(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&rng_state, &expected, 1)) {
		while (atomic_load(&rng_state) != 2) /* another thread is seeding: microseconds */
			;
		return;
	}
	pthread_once(&atfork_once, register_atfork);
	uint64_t k[2];
	if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		k[0] = mix((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
		k[1] = mix(((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&ts ^ vg_now());
	}
	rng_key[0] = k[0];
	rng_key[1] = k[1];
	atomic_store(&rng_ctr, 0);
	atomic_store(&rng_state, 2);
}

/* A non-zero id, never repeated within a process (distinct counters give distinct ids). */
static uint64_t random_id(void)
{
	if (VG_UNLIKELY(atomic_load_explicit(&rng_state, memory_order_acquire) != 2))
		rng_seed();
	for (;;) {
		uint64_t c = atomic_fetch_add_explicit(&rng_ctr, 1, memory_order_relaxed);
		uint64_t v = mix(rng_key[0] ^ mix(c + rng_key[1]));
		if (v)
			return v;
	}
}

/* ---- traceparent ---- */

VG_API void vg_traceparent_format(char tp[VG_TRACEPARENT_LEN + 1], vg_iid iid, uint64_t parent)
{
	snprintf(tp, VG_TRACEPARENT_LEN + 1, "00-%016llx%016llx-%016llx-%s",
	         (unsigned long long)iid.hi, (unsigned long long)iid.lo, (unsigned long long)parent,
	         iid.hi | iid.lo ? "01" : "00");
}

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1; /* W3C: lowercase only; a NUL stops here too */
}

/* n hex digits at s into *v; 0 or -1. */
static int hex64(const char *s, int n, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < n; i++) {
		int d = hexdigit(s[i]);
		if (d < 0)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return 0;
}

VG_API int vg_traceparent_parse(const char *tp, vg_iid *iid, uint64_t *parent)
{
	uint64_t ver, hi, lo, par, flags;
	if (!tp || hex64(tp, 2, &ver) < 0 || ver == 0xff || tp[2] != '-' ||
	    hex64(tp + 3, 16, &hi) < 0 || hex64(tp + 19, 16, &lo) < 0 || tp[35] != '-' ||
	    hex64(tp + 36, 16, &par) < 0 || tp[52] != '-' || hex64(tp + 53, 2, &flags) < 0)
		return -1;
	/* Version 00 is exactly 55 characters; later versions may add "-fields". */
	if (ver == 0 ? tp[55] != 0 : tp[55] != 0 && tp[55] != '-')
		return -1;
	if (par == 0)
		return -1;
	if (iid) {
		iid->hi = hi;
		iid->lo = lo;
	}
	if (parent)
		*parent = par;
	return 0;
}

VG_API uint64_t vg_net_malformed(void)
{
	return atomic_load(&malformed);
}

/* ---- the events ---- */

/* Dates the event begun at p `at` when it is written where the stream stood then, in the
 * same packet (which began before `at`): nothing was written in between, times stay in
 * order. */
static void redate(uint8_t *p, const void *arg)
{
	const struct vg_net_stamp *at = arg;
	struct vg_thread *t = &vg__tls;
	if (!at->pos || t->base != at->base || at->ts < at->last || at->ts > t->last_ts)
		return;
	uint8_t *h = at->pos;
	if ((h[0] & VG_COMPACT_IDS) != VG_COMPACT_IDS) {
		/* The same compact form: still less than 2^27 ns after the previous event. */
		if (p - h != VG_EVENT_HEADER_COMPACT || (at->ts - at->last) >> VG_COMPACT_TS_BITS)
			return;
		uint32_t w;
		memcpy(&w, h, 4);
		w = (w & VG_COMPACT_IDS) | (uint32_t)at->ts << VG_COMPACT_ID_BITS;
		memcpy(h, &w, 4);
	} else {
		if (p - h != VG_EVENT_HEADER_EXTENDED)
			return;
		memcpy(h + 3, &at->ts, 8);
	}
	t->last_ts = at->ts;
}

void vg__net_emit_io(int which, const struct vg_net_stamp *at, int32_t fd, uint64_t conn,
                     uint64_t off, uint64_t len, uint64_t msg)
{
	vg_sensor *s = vg__builtin(which);
	if (!s || !vg_on(s))
		return;
	if (!at)                   /* else checked when `at` was taken (vg__net_stamp) */
		vg__title_check(); /* so that the event carries the process's current name */
	uint8_t *p = vg_event_begin(s, VG_NET_IO_PAYLOAD);
	if (!p)
		return;
	if (at)
		redate(p, at);
	p = vg_put_u32(p, (uint32_t)fd);
	p = vg_put_u64(p, conn);
	p = vg_put_u64(p, off);
	p = vg_put_u64(p, len);
	p = vg_put_u64(p, msg);
	p = vg_put_u64(p, vg__net_iid[0]);
	p = vg_put_u64(p, vg__net_iid[1]);
	vg_event_commit(p);
	if (VG_UNLIKELY(atomic_load_explicit(&s->react, memory_order_relaxed)))
		vg_sensor_fired(s, NULL, 0);
}

/* Opens the packet the next send event will go to, now, so that it can be dated at the
 * call: an event is started and abandoned (nothing is committed; the next one is written
 * in its place). */
void vg__net_make_room(void)
{
	vg_sensor *s = vg__builtin(VG_B_NET_SEND);
	struct vg_thread *t = &vg__tls;
	if (!s || !vg_on(s) || vg__reporting_off(s) || t->busy || !vg__rt.recording)
		return;
	if (vg__event_start(s, VG_NET_IO_PAYLOAD))
		vg_event_abort(); /* only the room was wanted */
}

void vg__net_emit_conn(const struct vg_net_stamp *at, int32_t fd, uint64_t conn, const char *kind,
                       const char *role, const char *local, const char *remote)
{
	if (!at) /* else checked when `at` was taken (vg__net_stamp) */
		vg__title_check();
	vg_value v[8];
	v[0].i = fd;
	v[1].u = conn;
	v[2].s = kind;
	v[3].s = role;
	v[4].s = local;
	v[5].s = remote;
	v[6].u = vg__net_iid[0];
	v[7].u = vg__net_iid[1];
	if (at)
		vg__emit_dated(vg__builtin(VG_B_NET_CONN), v, redate, at);
	else
		vg_emit(vg__builtin(VG_B_NET_CONN), v);
}

void vg__net_emit_close(int32_t fd, uint64_t conn)
{
	vg_value v[4];
	v[0].i = fd;
	v[1].u = conn;
	v[2].u = vg__net_iid[0];
	v[3].u = vg__net_iid[1];
	vg_emit(vg__builtin(VG_B_NET_CLOSE), v);
}

void vg__net_emit_partial(int32_t fd, uint64_t conn)
{
	vg_value v[4];
	v[0].i = fd;
	v[1].u = conn;
	v[2].u = vg__net_iid[0];
	v[3].u = vg__net_iid[1];
	vg_emit(vg__builtin(VG_B_NET_PARTIAL), v);
}

/* ---- the API ---- */

VG_API vg_iid vg_interaction_begin(const char *what)
{
	vg__ensure_init();
	vg_iid iid = {random_id(), random_id()};
	vg__net_iid[0] = iid.hi;
	vg__net_iid[1] = iid.lo;
	if (vg__rt.recording) {
		vg_value v[3];
		v[0].s = what ? what : "";
		v[1].u = iid.hi;
		v[2].u = iid.lo;
		vg_emit(vg__builtin(VG_B_NET_INPUT), v);
	}
	return iid;
}

VG_API void vg_msg_send(char tp[VG_TRACEPARENT_LEN + 1], const char *to, uint64_t len)
{
	(void)to;
	vg__ensure_init();
	uint64_t parent = random_id();
	vg_iid iid = {vg__net_iid[0], vg__net_iid[1]};
	if (tp)
		vg_traceparent_format(tp, iid, parent);
	if (vg__rt.recording)
		vg__net_emit_io(VG_B_NET_SEND, NULL, -1, 0, 0, len, parent);
}

VG_API int vg_msg_recv(const char *tp, uint64_t len)
{
	vg_iid iid;
	uint64_t parent;
	vg__ensure_init();
	if (vg_traceparent_parse(tp, &iid, &parent) < 0) {
		atomic_fetch_add(&malformed, 1);
		return -1;
	}
	vg__net_iid[0] = iid.hi;
	vg__net_iid[1] = iid.lo;
	if (vg__rt.recording)
		vg__net_emit_io(VG_B_NET_RECV, NULL, -1, 0, 0, len, parent);
	return 0;
}

VG_API vg_iid vg_interaction_get(void)
{
	vg_iid iid = {vg__net_iid[0], vg__net_iid[1]};
	return iid;
}

VG_API void vg_interaction_set(vg_iid iid)
{
	vg__net_iid[0] = iid.hi;
	vg__net_iid[1] = iid.lo;
}

void vg__net_after_fork(void)
{
	rng_after_fork();
	vg__net_fd_after_fork();
}

void vg__net_unfollowed(int fd, uint32_t serial, const char *call, uint64_t count)
{
	int saved = errno;
	vg_value v[6];
	v[0].i = fd;
	v[1].u = serial;
	v[2].s = call;
	v[3].u = count;
	v[4].u = vg__net_iid[0];
	v[5].u = vg__net_iid[1];
	vg_emit(vg__builtin(VG_B_NET_UNFOLLOWED), v);
	errno = saved;
}
