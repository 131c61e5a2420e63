/* Several listeners (docs/consistency.md "Several listeners"): VIGIL_LISTENERS=DIR=FILTER;...
 * gives listeners 1.. beside the main output (listener 0), each a trace directory of its
 * own with its own filter. Every event is decided once for all listeners (a mask, the
 * rules kept per listener in listen_track.c and track_call.c) and written once into the
 * thread's main packet; its commit copies it to each other listener's buffer, and leaves
 * it out of the main stream when listener 0 does not report it.
 *
 * A listener's stream is a per-thread buffer written to its file as a CTF packet when full,
 * when the next event comes 2^32 ns or more after the last (the event header carries 32
 * bits of time), and at the thread's end, the process's end and an exec. Unlike the main
 * streams (file-backed), what a killed process had not yet written is lost. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int vg__listeners = 1;

struct listener {
	char dir[PATH_MAX];
	int dir_fd, img_fd; /* the listener's root, this image's directory there */
};
static struct listener outs[VG_LISTENERS_MAX];

#define BUF_BYTES ((size_t)256 << 10)

/* One thread's stream for one listener; the owning thread appends under `busy`, the
 * process's end flushes every buffer under it too. */
struct lbuf {
	struct lbuf *next;
	_Atomic int busy;
	int listener;
	size_t used; /* bytes of the packet being filled, its header included; 0: none */
	uint64_t file_off, seq, first_ts, last_ts;
	uint32_t tid, gen;
	char name[48];
	uint8_t mem[];
};

/* The copy of a thread's last event still owed to its other listeners. The commit (inline
 * in the program, vigil.h) is the main output's alone: the thread's next listened event
 * (vg__listen_start), its flush or its end makes the copies, and the process's end or an
 * exec makes those of every thread. An event the main output does not take has its
 * packet context swapped for `scratch` between its start and that moment, so that its
 * commit does not make it part of the main stream; the next event is then written over it. */
enum { OWED_NONE, OWED_ARMED, OWED_COPYING, OWED_COPIED };
struct lthread {
	struct lthread *next;
	_Atomic int owed;        /* OWED_*: ARMED by the owner, COPYING/COPIED by whoever copies */
	struct vg_thread *owner; /* its vg__tls */
	uint8_t *start;          /* the event's first byte, in the main packet */
	uint64_t ts;             /* its time, when copied */
	unsigned mask;
	int swapped;
	long pid;
	struct vg_packet_ctx *real; /* the main packet's context, while swapped */
	struct vg_packet_ctx scratch;
	uint32_t tid, gen;
	struct lbuf *bufs[VG_LISTENERS_MAX];
};
static __thread struct lthread *me __attribute__((tls_model("initial-exec")));
static struct lbuf *all_bufs;
static struct lthread *all_threads;
static pthread_mutex_t bufs_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_buf(struct lbuf *b)
{
	while (atomic_exchange_explicit(&b->busy, 1, memory_order_acquire))
		sched_yield();
}

static void unlock_buf(struct lbuf *b)
{
	atomic_store_explicit(&b->busy, 0, memory_order_release);
}

static void flush_packet(struct lbuf *b)
{
	if (b->used <= VGW_PACKET_HEADER_SIZE) {
		b->used = 0;
		return;
	}
	uint32_t magic = VGW_CTF_MAGIC, stream_id = 0;
	memcpy(b->mem, &magic, 4);
	memcpy(b->mem + 4, vg__rt.uuid, 16);
	memcpy(b->mem + 20, &stream_id, 4);
	struct vg_packet_ctx ctx = {.timestamp_begin = b->first_ts,
	                            .timestamp_end = b->last_ts,
	                            .content_size = (uint64_t)b->used * 8,
	                            .packet_size = (uint64_t)b->used * 8,
	                            .packet_seq_num = b->seq,
	                            .tid = b->tid,
	                            .thread_gen = b->gen};
	memcpy(b->mem + 24, &ctx, sizeof ctx);
	int dir = outs[b->listener].img_fd;
	int fd = dir < 0 ? -1 : openat(dir, b->name, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd >= 0) {
		if (pwrite(fd, b->mem, b->used, (off_t)b->file_off) == (ssize_t)b->used) {
			b->file_off += b->used;
			b->seq++;
		}
		close(fd);
	}
	b->used = 0;
}

/* `locked`: the caller holds bufs_lock (the process's end copying another thread's). */
static struct lbuf *buf_for(struct lthread *l, int i, int locked)
{
	if (l->bufs[i])
		return l->bufs[i];
	if (outs[i].img_fd < 0)
		return NULL;
	void *m = mmap(NULL, sizeof(struct lbuf) + BUF_BYTES, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct lbuf *b = m;
	b->listener = i;
	b->tid = l->tid;
	b->gen = l->gen;
	snprintf(b->name, sizeof b->name, "stream-%u-%u", b->tid, b->gen);
	if (!locked)
		pthread_mutex_lock(&bufs_lock);
	b->next = all_bufs;
	all_bufs = b;
	if (!locked)
		pthread_mutex_unlock(&bufs_lock);
	return l->bufs[i] = b;
}

/* Copies the event at ev (its header as the main stream has it) into listener i's
 * buffer, its compact header rewritten against that buffer's previous event. */
static void append(struct lthread *l, int i, const uint8_t *ev, size_t len, int locked)
{
	struct lbuf *b = buf_for(l, i, locked);
	size_t hlen = (ev[0] & VG_COMPACT_IDS) == VG_COMPACT_IDS ? VG_EVENT_HEADER_EXTENDED
	                                                         : VG_EVENT_HEADER_COMPACT;
	uint16_t id = (uint16_t)(ev[0] & VG_COMPACT_IDS);
	if (hlen == VG_EVENT_HEADER_EXTENDED)
		memcpy(&id, ev + 1, 2);
	size_t need = len - hlen + VG_EVENT_HEADER_MAX;
	if (!b || len < hlen || need > BUF_BYTES - VGW_PACKET_HEADER_SIZE)
		return;
	lock_buf(b);
	if (b->used && need > BUF_BYTES - b->used)
		flush_packet(b);
	if (!b->used) {
		b->used = VGW_PACKET_HEADER_SIZE;
		b->first_ts = b->last_ts = l->ts;
	}
	uint8_t *p = vg__header_put(b->mem + b->used, id, l->ts, b->last_ts);
	memcpy(p, ev + hlen, len - hlen);
	b->used = (size_t)(p - b->mem) + len - hlen;
	b->last_ts = l->ts;
	unlock_buf(b);
}

/* The owed event's copies, if it was committed (a commit moves the thread's position;
 * an abort or an event still being written leaves it at the event's start). */
static int copy_owed(struct lthread *l, int locked)
{
	uint8_t *end = __atomic_load_n(&l->owner->pos, __ATOMIC_ACQUIRE);
	if (end == l->start)
		return 0;
	/* Its time as committed (vg.net.* events are dated again after their start). */
	l->ts = __atomic_load_n(&l->owner->last_ts, __ATOMIC_RELAXED);
	for (int i = 1; i < vg__listeners; i++)
		if (l->mask >> i & 1u)
			append(l, i, l->start, (size_t)(end - l->start), locked);
	return 1;
}

/* The main packet's context back after an event the main output does not take. */
static void give_back(struct lthread *l)
{
	struct vg_thread *t = l->owner;
	if (!l->swapped)
		return;
	t->ctx = l->real;
	t->ctx->events_discarded = l->scratch.events_discarded; /* losses meanwhile */
	t->pos = l->start; /* the next event goes where this one was */
	t->last_ts = t->ctx->timestamp_end;
	l->swapped = 0;
}

/* The owner, with its `busy` claimed: the copies of its last event, then its packet
 * context back if that event was not the main output's. */
static void settle(struct lthread *l)
{
	int st = atomic_load_explicit(&l->owed, memory_order_acquire);
	if (st == OWED_NONE)
		return;
	if (l->pid != vg__rt.pid) { /* a fork child: the event and the packet are the parent's */
		l->swapped = 0;
		atomic_store_explicit(&l->owed, OWED_NONE, memory_order_relaxed);
		return;
	}
	for (;; st = atomic_load_explicit(&l->owed, memory_order_acquire)) {
		if (st == OWED_ARMED &&
		    atomic_compare_exchange_strong(&l->owed, &st, OWED_COPYING)) {
			copy_owed(l, 0);
			break;
		}
		if (st == OWED_COPIED)
			break;
		sched_yield(); /* the process's end is copying it */
	}
	give_back(l);
	atomic_store_explicit(&l->owed, OWED_NONE, memory_order_release);
}

static struct lthread *lthread_mine(void)
{
	if (me)
		return me;
	void *m = mmap(NULL, sizeof(struct lthread), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct lthread *l = m;
	l->owner = &vg__tls;
	pthread_mutex_lock(&bufs_lock);
	l->next = all_threads;
	all_threads = l;
	pthread_mutex_unlock(&bufs_lock);
	return me = l;
}

uint8_t *vg__listen_start(vg_sensor *s, uint32_t payload)
{
	struct vg_thread *t = &vg__tls;
	if (t->busy)
		return vg__event_nested(s);
	if (VG_UNLIKELY(!t->state && vg__rt.recording)) {
		/* The stream first, with its vg.thread.begin owed and settled like any event,
		 * rather than from the slow path in the middle of this one. */
		uint32_t fan = t->fan;
		vg__stream_thread_start();
		t->fan = fan;
	}
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	struct lthread *l = lthread_mine();
	if (l)
		settle(l);
	unsigned m = t->fan & ((1u << VG_LISTENERS_MAX) - 1u);
	t->fan = 0;
	if (!m || (!l && !(m & 1u))) { /* nobody's, or no way to leave the main stream out */
		atomic_signal_fence(memory_order_seq_cst);
		t->busy = 0;
		return NULL;
	}
	uint8_t *p = vg__event_start_claimed(t, s, payload);
	if (!p || !l || m == 1u)
		return p;
	l->start = t->pos;
	l->mask = m;
	l->pid = vg__rt.pid;
	l->tid = t->ctx->tid;
	l->gen = t->ctx->thread_gen;
	if (!(m & 1u)) {
		l->real = t->ctx;
		l->scratch = *t->ctx;
		t->ctx = &l->scratch;
		l->swapped = 1;
	}
	atomic_store_explicit(&l->owed, OWED_ARMED, memory_order_release);
	return p;
}

uint8_t *vg__listen_event_begin(vg_sensor *s, uint32_t payload)
{
	unsigned m = vg__listen_wanted(s) & vg__listen_take_live();
	vg__listen_decide(m);
	return m ? vg__listen_start(s, payload) : NULL;
}

void vg__listen_settle(void)
{
	struct vg_thread *t = &vg__tls;
	if (!vg__listening || !me || t->busy)
		return;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	settle(me);
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

void vg__listen_thread_exit(void)
{
	struct lthread *l = me;
	if (!l)
		return;
	vg__listen_settle();
	me = NULL;
	pthread_mutex_lock(&bufs_lock);
	for (struct lthread **p = &all_threads; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	for (int i = 1; i < VG_LISTENERS_MAX; i++) {
		struct lbuf *b = l->bufs[i];
		if (!b)
			continue;
		lock_buf(b);
		flush_packet(b);
		unlock_buf(b);
		for (struct lbuf **p = &all_bufs; *p; p = &(*p)->next)
			if (*p == b) {
				*p = b->next;
				break;
			}
		munmap(b, sizeof(struct lbuf) + BUF_BYTES);
	}
	pthread_mutex_unlock(&bufs_lock);
	munmap(l, sizeof *l);
}

void vg__listen_flush_all(void)
{
	vg__listen_settle();
	pthread_mutex_lock(&bufs_lock);
	/* Other threads' last events: copied here (a thread blocked for good owes its last
	 * one); one still being written is not an event yet. */
	for (struct lthread *l = all_threads; l; l = l->next) {
		int st = OWED_ARMED;
		if (l == me || !atomic_compare_exchange_strong(&l->owed, &st, OWED_COPYING))
			continue;
		atomic_store_explicit(&l->owed, copy_owed(l, 1) ? OWED_COPIED : OWED_ARMED,
		                      memory_order_release);
	}
	for (struct lbuf *b = all_bufs; b; b = b->next) {
		lock_buf(b);
		flush_packet(b);
		unlock_buf(b);
	}
	pthread_mutex_unlock(&bufs_lock);
}

/* The child's buffers are the parent's, which writes them: forgotten, not written. An
 * event the child recorded before this (its process's begin) gives its packet context
 * back first; an owed event of the parent's is the parent's (told apart by pid). */
void vg__listen_after_fork(void)
{
	if (me && me->pid == vg__rt.pid) /* its copies would go to forgotten buffers */
		give_back(me);
	all_bufs = NULL;
	all_threads = NULL;
	pthread_mutex_init(&bufs_lock, NULL);
	me = NULL;
}

static int high_own(int fd)
{
	fd = vg__high_fd(fd);
	if (fd >= 0 && fd < 512) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The main image's metadata, copied into listener i's image. */
static int copy_metadata(int i)
{
	int in = vg__image_open("metadata", O_RDONLY, 0);
	int out =
	    openat(outs[i].img_fd, "metadata", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	int rc = in >= 0 && out >= 0 ? 0 : -1;
	char buf[8192];
	ssize_t n;
	while (rc == 0 && (n = read(in, buf, sizeof buf)) > 0)
		rc = vg__write_all(out, buf, (size_t)n);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static int open_dir(int i, char *err, size_t errsize);

void vg__listen_image_start(void)
{
	for (int i = 1; i < vg__listeners; i++) {
		struct listener *l = &outs[i];
		if (l->img_fd >= 0)
			vg__own_fd_release(&l->img_fd, 0);
		/* A fork child has closed the parent's descriptors (files.c): reopened. */
		if (l->dir_fd < 0 && open_dir(i, NULL, 0) < 0) {
			vg__warn(
			    "VIGIL_LISTENERS: cannot open %s: %s; listener %d records nothing of "
			    "this image",
			    l->dir, strerror(errno), i);
			continue;
		}
		if (mkdirat(l->dir_fd, vg__image_name(), 0777) < 0 && errno != EEXIST) {
			vg__warn(
			    "VIGIL_LISTENERS: cannot create %s/%s: %s; listener %d records nothing "
			    "of this image",
			    l->dir, vg__image_name(), strerror(errno), i);
			continue;
		}
		int fd = openat(l->dir_fd, vg__image_name(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		l->img_fd = fd < 0 ? -1 : high_own(fd);
		if (l->img_fd >= 0 && vg__own_fd_add(&l->img_fd) < 0) {
			close(l->img_fd);
			l->img_fd = -1;
		}
		if (l->img_fd >= 0 && copy_metadata(i) < 0) {
			vg__warn(
			    "VIGIL_LISTENERS: cannot write %s/%s/metadata: %s; listener %d records "
			    "nothing of this image",
			    l->dir, vg__image_name(), strerror(errno), i);
			vg__own_fd_release(&l->img_fd, 0);
			l->img_fd = -1;
		}
	}
}

void vg__listen_metadata_append(const char *text, size_t len)
{
	for (int i = 1; i < vg__listeners; i++) {
		if (outs[i].img_fd < 0)
			continue;
		int fd = openat(outs[i].img_fd, "metadata", O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			continue;
		(void)vg__write_all(fd, text, len);
		close(fd);
	}
}

/* ---- VIGIL_LISTENERS ---- */

/* One listener's filter: whitespace-separated items, each a VIGIL_REPORT list
 * (`sync,objects`), `threads=GLOBS`, `sensors=GLOBS` or `suspended`. */
static int parse_filter(int i, char *text, char *err, size_t errsize)
{
	unsigned mask = VG_CAT_ENTITY | VG_CAT_ACTIVITY;
	int suspended = 0;
	char *threads = NULL, *sensors = NULL, *save = NULL;
	for (char *w = strtok_r(text, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!strncmp(w, "threads=", 8)) {
			threads = w + 8;
		} else if (!strncmp(w, "sensors=", 8)) {
			sensors = w + 8;
		} else if (!strcmp(w, "suspended")) {
			suspended = 1;
		} else if (vg__report_mask_parse(w, &mask) < 0) {
			snprintf(err, errsize,
			         "listener %d: '%s': expected a list of entity, activity, types, "
			         "objects, "
			         "execution, synchronization, all, none, or threads=GLOBS, "
			         "sensors=GLOBS, "
			         "suspended",
			         i, w);
			return -1;
		}
	}
	vg__report_listener(i, mask, suspended, threads && *threads ? strdup(threads) : NULL,
	                    sensors && *sensors ? strdup(sensors) : NULL);
	return 0;
}

/* The listeners' root directories, made and opened now. */
static int open_dir(int i, char *err, size_t errsize)
{
	struct listener *l = &outs[i];
	char abs[PATH_MAX];
	if (vg__mkdir_p(l->dir) < 0 ||
	    (l->dir_fd = open(l->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		if (err)
			snprintf(err, errsize, "listener %d: cannot create directory %s: %s", i,
			         l->dir, strerror(errno));
		return -1;
	}
	/* Absolute, so that a fork child of a subject that changed directory finds it. */
	if (l->dir[0] != '/' && realpath(l->dir, abs) && strlen(abs) < sizeof l->dir)
		strcpy(l->dir, abs);
	l->dir_fd = high_own(l->dir_fd);
	if (l->dir_fd < 0 || vg__own_fd_add(&l->dir_fd) < 0) {
		if (err)
			snprintf(err, errsize, "listener %d: no descriptor left for %s", i, l->dir);
		if (l->dir_fd >= 0)
			close(l->dir_fd);
		l->dir_fd = -1;
		errno = EMFILE;
		return -1;
	}
	return 0;
}

static int parse(char *text, char *err, size_t errsize)
{
	int n = 1;
	char *save = NULL;
	for (char *item = strtok_r(text, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
		while (*item == ' ')
			item++;
		if (!*item)
			continue;
		if (n == VG_LISTENERS_MAX) {
			snprintf(err, errsize, "more than %d listeners (the main output is one)",
			         VG_LISTENERS_MAX);
			return -1;
		}
		char *eq = strchr(item, '=');
		if (!eq || eq == item) {
			snprintf(err, errsize, "listener %d: '%s': expected DIR=FILTER", n, item);
			return -1;
		}
		*eq = 0;
		if ((size_t)snprintf(outs[n].dir, sizeof outs[n].dir, "%s", item) >=
		    sizeof outs[n].dir) {
			snprintf(err, errsize, "listener %d: directory name too long", n);
			return -1;
		}
		if (parse_filter(n, eq + 1, err, errsize) < 0)
			return -1;
		n++;
	}
	for (int i = 1; i < n; i++)
		if (open_dir(i, err, errsize) < 0)
			return -1;
	return n;
}

void vg__listen_init(void)
{
	for (int i = 0; i < VG_LISTENERS_MAX; i++)
		outs[i].dir_fd = outs[i].img_fd = -1;
	const char *env = getenv("VIGIL_LISTENERS");
	if (!env || !*env)
		return;
	char *text = strdup(env), err[PATH_MAX + 256];
	int n = text ? parse(text, err, sizeof err) : -1;
	if (!text)
		snprintf(err, sizeof err, "out of memory");
	free(text);
	if (n < 0) {
		vg__warn("VIGIL_LISTENERS: %s; no listeners, recording as configured", err);
		for (int i = 1; i < VG_LISTENERS_MAX; i++)
			if (outs[i].dir_fd >= 0)
				vg__own_fd_release(&outs[i].dir_fd, 0);
		return;
	}
	vg__listeners = n;
	vg__listen_image_start();
}
