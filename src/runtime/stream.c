/* Per-thread streams: each thread writes its own CTF stream file, a sequence of packets
 * in a file-backed shared mapping. Only the slow path lives here: opening a thread's
 * stream, switching packets, counting what could not be recorded, closing.
 *
 * Crash safety: a packet is allocated with fallocate (a full disk is an error here, not
 * a SIGBUS later), its header is written at once, and every event commit advances the
 * packet's content_size (see vg_event_commit), so a SIGKILL loses no completed event.
 * The file never has space after its last packet, except for the instant between the
 * fallocate and the header write (`vigil recover` trims that).
 *
 * Each stream keeps its file open (a high, close-on-exec descriptor the subject cannot
 * close, files.c) up to HELD_MAX streams per process, so that growing it needs no path
 * lookup and no permission check: a subject that chroots or drops its privileges keeps
 * being recorded. Beyond HELD_MAX (a server with thousands of threads must not run out of
 * descriptors because it is being recorded) a stream reopens its file for each packet,
 * by name in the image directory's descriptor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "usdt.h"

#define WINDOW_SIZE ((size_t)64 << 20) /* address space only */
#define MAX_PACKET ((size_t)64 << 20)
#define ENOSPC_RETRY 65536 /* after a full disk, retry growing every this many events */
#define HELD_MAX 64        /* streams whose file stays open */

enum { STREAM_NONE, STREAM_OPEN, STREAM_OFF };
enum { SPARE_NONE, SPARE_REQUESTED, SPARE_READY, SPARE_FAILED };

struct window {
	uint8_t *base;
	uint64_t off;
	size_t len;
};

/* The next packet of a busy stream, allocated and pre-faulted by the worker while the
 * thread fills the current one. While it is ready but unused, the current packet's
 * packet_size covers it as padding, so the file stays an exact sequence of packets. */
struct spare {
	struct vg_job job;
	_Atomic int state;
	uint64_t off;
	size_t size;
	struct vg_packet_ctx *host_ctx; /* the packet that covers it */
	uint64_t host_size;             /* that packet's own size, bytes */
	uint8_t *addr;
	struct window win; /* a new window, if the spare lies outside the stream's */
	int err;
};

struct vg_stream {
	char path[PATH_MAX + 200]; /* for messages; the file is reached by `name` or `fd` */
	char name[192];            /* in the image directory */
	int fd;                    /* held open, or -1 */
	dev_t dev;
	ino_t ino;
	struct window win;  /* mapping window over the file */
	uint64_t file_size; /* bytes allocated in the file */
	uint64_t cur_off;   /* offset of the current packet */
	uint8_t *real_end;  /* end of the current packet (vg__tls.end may stop half-way) */
	uint64_t seq;
	uint64_t first_seq; /* the stream's first packet (0, or where a pool file goes on) */
	int pool_slot;      /* a pool file of the shared layout (stream_pool.c), or -1 */
	uint64_t discarded;
	uint64_t discards_since_full;
	size_t next_packet;
	int full;            /* 1: size cap reached; 2: disk full (retried) */
	bool in_loss_packet; /* the current packet only carries events_discarded */
	struct spare spare;
	vg_entity self;
};

__thread struct vg_thread vg__tls __attribute__((tls_model("initial-exec")));
static __thread struct vg_stream *tls_stream __attribute__((tls_model("initial-exec")));
static _Atomic int held; /* streams with fd >= 0 */
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ready;

uint32_t vg__thread_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

vg_entity *vg__thread_entity(void)
{
	return tls_stream ? &tls_stream->self : NULL;
}

vg_entity *vg_self(void)
{
	if (vg__tls.state == STREAM_NONE && vg__rt.recording)
		vg__stream_thread_start();
	return vg__thread_entity();
}

static void count_discard(struct vg_stream *st)
{
	atomic_fetch_add_explicit(&vg__rt.discarded, 1, memory_order_relaxed);
	if (!st) {
		atomic_fetch_add_explicit(&vg__rt.discarded_unstreamed, 1, memory_order_relaxed);
		return;
	}
	st->discarded++;
	/* The last packet carries the count, so the loss is in the trace itself. */
	if (vg__tls.ctx)
		vg__tls.ctx->events_discarded = st->discarded;
}

void vg__stream_adopt_unstreamed_loss(void)
{
	struct vg_stream *st = tls_stream;
	if (!st || !vg__tls.ctx)
		return; /* no packet here either: the loss is said on stderr only */
	uint64_t n = atomic_exchange(&vg__rt.discarded_unstreamed, 0);
	st->discarded += n;
	vg__tls.ctx->events_discarded = st->discarded;
}

void vg__count_discarded(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		count_discard(tls_stream);
}

uint64_t vg_events_discarded(void)
{
	return atomic_load(&vg__rt.discarded);
}

static void unmap(struct window *w)
{
	if (w->base)
		munmap(w->base, w->len);
	w->base = NULL;
}

static void release_fd(struct vg_stream *st, int keep)
{
	if (st->fd < 0)
		return;
	vg__own_fd_release(&st->fd, keep);
	atomic_fetch_sub(&held, 1);
}

/* The stream's file, open for writing: its held descriptor if it is still that file,
 * else opened anew by name (*transient: the caller closes it). */
static int stream_fd(struct vg_stream *st, int *transient)
{
	struct stat s;
	*transient = 0;
	if (st->fd >= 0) {
		int fd = st->fd;
		if (fstat(fd, &s) == 0 && s.st_ino == st->ino && s.st_dev == st->dev)
			return fd;
		release_fd(st, 1); /* closed behind our back: the number is not ours now */
	}
	if (st->pool_slot >= 0) { /* its lock went with the descriptor: no longer ours */
		errno = ESTALE;
		return -1;
	}
	int fd = vg__image_open(st->name, O_RDWR, 0);
	if (fd < 0)
		return -1;
	if (fstat(fd, &s) < 0 || s.st_ino != st->ino || s.st_dev != st->dev) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	*transient = 1;
	return fd;
}

static void stream_fd_done(int fd, int transient)
{
	if (transient) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
}

static int set_file_size(struct vg_stream *st, uint64_t size)
{
	int transient, fd = stream_fd(st, &transient);
	if (fd < 0)
		return -1;
	int rc = ftruncate(fd, (off_t)size);
	stream_fd_done(fd, transient);
	return rc;
}

/* Makes [off, off+size) part of the file, mapped and pre-faulted. The address is in the
 * stream's window, or in a new window returned in *nw. */
static int allocate_space(struct vg_stream *st, uint64_t off, size_t size, uint8_t **addr,
                          struct window *nw, int *err)
{
	nw->base = NULL;
	int transient, fd = stream_fd(st, &transient);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (!vg__fsize_allows(off + size)) { /* past RLIMIT_FSIZE: SIGXFSZ would kill */
		*err = errno;
		stream_fd_done(fd, transient);
		return -1;
	}
	int rc = fallocate(fd, 0, (off_t)off, (off_t)size);
	if (rc < 0 && (errno == EOPNOTSUPP || errno == ENOSYS))
		rc = posix_fallocate(fd, (off_t)off, (off_t)size) == 0 ? 0 : -1;
	if (rc < 0) {
		*err = errno;
		stream_fd_done(fd, transient);
		return -1;
	}
	if (st->win.base && off >= st->win.off && off + size <= st->win.off + st->win.len) {
		*addr = st->win.base + (off - st->win.off);
	} else {
		/* Mapping past the end of the file is allowed; only touching it is not, and
		 * a packet is touched only once fallocate has made it part of the file. */
		nw->off = off & ~(uint64_t)4095;
		nw->len = WINDOW_SIZE;
		while (nw->off + nw->len < off + size)
			nw->len *= 2;
		void *m =
		    mmap(NULL, nw->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)nw->off);
		if (m == MAP_FAILED && errno == ENOMEM) {
			/* RLIMIT_AS lowered by the subject: a window of just this packet. */
			nw->len = (off + size - nw->off + 4095) & ~(uint64_t)4095;
			m = mmap(NULL, nw->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			         (off_t)nw->off);
		}
		if (m == MAP_FAILED) {
			*err = errno;
			ftruncate(fd, (off_t)off); /* keep the file a sequence of packets */
			stream_fd_done(fd, transient);
			return -1;
		}
		nw->base = m;
		/* Large page-cache folios where the filesystem has them (ext4 since Linux 6.16,
		 * tmpfs mounted huge=): one allocation per 2 MiB instead of per 4 KiB page cut
		 * the worker's pre-faulting by about a third (docs/architecture.md). Best
		 * effort: elsewhere it changes nothing. */
		madvise(m, nw->len, MADV_HUGEPAGE);
		*addr = nw->base + (off - nw->off);
	}
	stream_fd_done(fd, transient);
	/* One call faults the packet in, instead of a page fault per 4 KiB on the hot path.
	 * Best effort: older kernels lack it and fault lazily. */
	uintptr_t page = (uintptr_t)*addr & ~(uintptr_t)4095; /* packets need not start on one */
	madvise((void *)page, (uintptr_t)*addr + size - page, MADV_POPULATE_WRITE);
	return 0;
}

static void adopt_window(struct vg_stream *st, struct window *nw)
{
	if (!nw->base)
		return;
	unmap(&st->win);
	st->win = *nw;
	nw->base = NULL;
}

static size_t packet_size_for(struct vg_stream *st, size_t need)
{
	size_t size = st->next_packet;
	while (size < need + vg__rt.packet_header && size < MAX_PACKET)
		size *= 2;
	return size;
}

/* Shared layout: the image that writes the packet, after the thread (wire/tsdl_header.h). */
static void write_owner(uint8_t *p)
{
	uint32_t pid = (uint32_t)vg__rt.pid, ppid = (uint32_t)vg__rt.ppid;
	char name[16] = {0};
	memcpy(name, vg__rt.procname, strnlen(vg__rt.procname, sizeof name - 1));
	memcpy(p + VGW_PKT_PID, &pid, 4);
	memcpy(p + VGW_PKT_PPID, &ppid, 4);
	memcpy(p + VGW_PKT_PROCESS_GEN, &vg__rt.process_gen, 8);
	memcpy(p + VGW_PKT_PARENT_GEN, &vg__rt.parent_gen, 8);
	memcpy(p + VGW_PKT_IMAGE, &vg__rt.image, 4);
	memcpy(p + VGW_PKT_PROCNAME, name, 16);
}

/* Writes a packet header at p and makes it the thread's current packet. From the
 * second packet on, vg__tls.end stops at the middle until the thread is half-way through
 * it: crossing the middle is the (free) signal that the stream is busy enough for a
 * spare (spare_activate then keeps one in preparation at all times). */
static void begin_packet(struct vg_stream *st, uint8_t *p, uint64_t off, size_t size)
{
	st->in_loss_packet = false;
	uint64_t now = vg_now();
	if (now < vg__tls.last_ts)
		now = vg__tls.last_ts;
	uint32_t magic = VGW_CTF_MAGIC, stream_id = 0;
	memcpy(p, &magic, 4);
	memcpy(p + 4, vg__rt.uuid, 16);
	memcpy(p + 20, &stream_id, 4);
	struct vg_packet_ctx *ctx = (struct vg_packet_ctx *)(p + 24);
	ctx->timestamp_begin = now;
	ctx->timestamp_end = now;
	ctx->content_size = vg__rt.packet_header * 8;
	ctx->packet_size = (uint64_t)size * 8;
	ctx->packet_seq_num = st->seq;
	ctx->events_discarded = st->discarded;
	ctx->tid = (uint32_t)st->self.id;
	ctx->thread_gen = st->self.gen;
	if (vg__rt.shared)
		write_owner(p);

	struct vg_thread *t = &vg__tls;
	t->base = p;
	t->pos = p + vg__rt.packet_header;
	st->real_end = p + size;
	/* A stream's first packet is filled to its end: the switch then happens on the
	 * thread, and only a stream that goes on writing gets the worker's spares. */
	t->end = st->seq == st->first_seq ? p + size : p + size / 2;
	t->ctx = ctx;
	t->last_ts = now;
	st->cur_off = off;
	st->seq++;
	st->full = 0;
	if (st->next_packet < vg__rt.cfg.packet_size_max)
		st->next_packet *= 2; /* busy threads get larger packets: fewer switches */
}

static int cap_allows(struct vg_stream *st, size_t size)
{
	uint64_t cap = vg__rt.cfg.max_bytes;
	/* Each stream's first packet is always allowed, so every stream can carry its
	 * own events_discarded count. */
	return !cap || st->seq == st->first_seq || atomic_load(&vg__rt.bytes_used) + size <= cap;
}

static void note_failure(struct vg_stream *st, int err)
{
	st->full = (err == ENOSPC || err == EDQUOT || err == EFBIG) ? 2 : 1;
}

/* Opens a packet at the end of the file, on the calling thread. */
static int packet_open_here(struct vg_stream *st, size_t need)
{
	size_t size = packet_size_for(st, need);
	if (size < need + vg__rt.packet_header)
		return -1; /* one event larger than any packet */
	if (!cap_allows(st, size)) {
		st->full = 1;
		return -1;
	}
	uint8_t *p;
	struct window nw;
	int err;
	if (allocate_space(st, st->file_size, size, &p, &nw, &err) < 0) {
		note_failure(st, err);
		errno = err;
		return -1;
	}
	adopt_window(st, &nw);
	uint64_t off = st->file_size;
	st->file_size += size;
	atomic_fetch_add(&vg__rt.bytes_used, size);
	begin_packet(st, p, off, size);
	return 0;
}

/* ---- the spare packet ---- */

static void spare_prepare(struct vg_job *job)
{
	struct spare *sp = (struct spare *)job;
	struct vg_stream *st = (struct vg_stream *)((char *)sp - offsetof(struct vg_stream, spare));
	if (allocate_space(st, sp->off, sp->size, &sp->addr, &sp->win, &sp->err) < 0) {
		atomic_store_explicit(&sp->state, SPARE_FAILED, memory_order_release);
		return;
	}
	sp->host_ctx->packet_size = (sp->host_size + sp->size) * 8;
	atomic_store_explicit(&sp->state, SPARE_READY, memory_order_release);
}

static void spare_request(struct vg_stream *st)
{
	struct spare *sp = &st->spare;
	size_t size = packet_size_for(st, 0);
	if (atomic_load(&sp->state) != SPARE_NONE || !cap_allows(st, size))
		return;
	sp->off = st->file_size;
	sp->size = size;
	sp->host_ctx = vg__tls.ctx;
	sp->host_size = (uint64_t)(st->real_end - vg__tls.base);
	sp->job.run = spare_prepare;
	atomic_fetch_add(&vg__rt.bytes_used, size);
	atomic_store(&sp->state, SPARE_REQUESTED);
	if (vg__worker_submit(&sp->job) < 0)
		spare_prepare(&sp->job);
}

static int spare_wait(struct spare *sp)
{
	int state, spins = 0;
	while ((state = atomic_load_explicit(&sp->state, memory_order_acquire)) ==
	       SPARE_REQUESTED) {
		if (++spins < 100) {
			sched_yield();
		} else {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
	return state;
}

/* Gives the spare's space back: the file ends after the current packet again. */
static void spare_drop(struct vg_stream *st)
{
	struct spare *sp = &st->spare;
	int state = spare_wait(sp);
	if (state == SPARE_READY) {
		sp->host_ctx->packet_size = sp->host_size * 8;
		set_file_size(st, sp->off);
		unmap(&sp->win);
	}
	if (state != SPARE_NONE)
		atomic_fetch_sub(&vg__rt.bytes_used, sp->size);
	atomic_store(&sp->state, SPARE_NONE);
}

/* Moves to the spare: its header first, then the old packet stops covering it, so a
 * crash at any instant leaves a readable file. */
static void spare_activate(struct vg_stream *st)
{
	struct spare *sp = &st->spare;
	struct vg_packet_ctx *old = sp->host_ctx;
	st->file_size = sp->off + sp->size;
	begin_packet(st, sp->addr, sp->off, sp->size);
	atomic_signal_fence(memory_order_release);
	old->packet_size = sp->host_size * 8;
	adopt_window(st, &sp->win);
	atomic_store(&sp->state, SPARE_NONE);
	/* A stream that needed a spare is busy: keep the worker one packet ahead. */
	vg__tls.end = st->real_end;
	spare_request(st);
}

/* The current packet cannot take `need` more bytes (or its middle was reached). */
static int packet_switch(struct vg_stream *st, size_t need)
{
	struct vg_thread *t = &vg__tls;
	if (st->full == 1 && vg__rt.cfg.to) { /* VIGIL_TO: acknowledged space is freed */
		st->next_packet = vg__rt.cfg.packet_size;
		if (cap_allows(st, packet_size_for(st, need)))
			st->full = 0;
	}
	if (st->full == 1 || (st->full == 2 && ++st->discards_since_full % ENOSPC_RETRY != 0))
		return -1;
	if (t->base && !st->in_loss_packet && (size_t)(st->real_end - t->pos) >= need) {
		spare_request(st);
		t->end = st->real_end;
		return 0;
	}
	struct spare *sp = &st->spare;
	int state = spare_wait(sp);
	if (state == SPARE_READY && sp->size >= need + vg__rt.packet_header) {
		spare_activate(st);
		return 0;
	}
	if (state == SPARE_FAILED) {
		note_failure(st, sp->err);
		spare_drop(st);
		return -1;
	}
	spare_drop(st);
	return packet_open_here(st, need);
}

/* Ends the current packet at its content, giving back the unused space. */
static void packet_close(struct vg_stream *st)
{
	struct vg_thread *t = &vg__tls;
	if (!t->base)
		return;
	uint32_t was_busy = t->busy;
	t->busy = 1; /* a signal handler must not write into a packet being closed */
	atomic_signal_fence(memory_order_seq_cst);
	spare_drop(st);
	/* Rounded up to 8 bytes so that the next packet's context stays aligned. */
	uint64_t used = ((uint64_t)(t->pos - t->base) + 7) & ~(uint64_t)7;
	uint64_t size = (uint64_t)(st->real_end - t->base);
	/* Packet size first, then the file: a crash between leaves zeros that
	 * `vigil recover` trims, never a packet claiming bytes past the end. */
	t->ctx->packet_size = used * 8;
	if (set_file_size(st, st->cur_off + used) == 0) {
		st->file_size = st->cur_off + used;
		atomic_fetch_sub(&vg__rt.bytes_used, size - used);
	} else {
		t->ctx->packet_size = size * 8;
	}
	t->base = t->pos = t->end = NULL;
	st->real_end = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = was_busy;
}

/* A thread whose stream could not be made: its end would have been recorded. */
#define STREAMLESS ((void *)2)

static void thread_exit_destructor(void *arg)
{
	if (arg == STREAMLESS) {
		vg__usdt_thread_exit();
		vg__thread_table_remove();
		if (vg__wanted(vg__builtin(VG_B_THREAD_END), NULL))
			count_discard(NULL);
		return;
	}
	vg__stream_thread_exit();
}

static void make_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit_destructor) != 0)
		vg__warn("cannot watch thread exits; thread ends will not be recorded");
	else
		key_ready = 1;
}

static void thread_name(char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%u/comm", vg__thread_tid());
	if (vg__read_small_file(path, buf, len) < 0)
		buf[0] = 0;
}

/* Shared layout: a file of the pool (stream_pool.c), whose lock the stream keeps by
 * holding its descriptor for its whole life; false when none can be had. */
static bool claim_pool_file(struct vg_stream *st)
{
	if (atomic_fetch_add(&held, 1) >=
	    HELD_MAX) { /* a file reopened per packet loses its lock */
		atomic_fetch_sub(&held, 1);
		return false;
	}
	struct vg_pool_claim c;
	struct stat s;
	if (vg__pool_claim(&c, st->name, sizeof st->name) < 0) {
		atomic_fetch_sub(&held, 1);
		return false;
	}
	st->fd = vg__high_fd(c.fd);
	if (st->fd < 512 || fstat(st->fd, &s) < 0 || vg__own_fd_add(&st->fd) < 0) {
		close(st->fd);
		st->fd = -1;
		vg__pool_release(c.slot);
		atomic_fetch_sub(&held, 1);
		return false;
	}
	st->dev = s.st_dev;
	st->ino = s.st_ino;
	st->pool_slot = c.slot;
	st->file_size = c.end;
	st->seq = st->first_seq = c.seq;
	st->discarded = c.discarded;
	if (vg__tls.last_ts < c.last_ts) /* the file's time goes on from its last packet */
		vg__tls.last_ts = c.last_ts;
	snprintf(st->path, sizeof st->path, "%s/%s", vg__rt.dir, st->name);
	return true;
}

/* A file of its own for the thread's stream; false (said) when it cannot be made. */
static bool create_own_file(struct vg_stream *st, uint32_t tid)
{
	if (vg__rt.shared) /* the directory is every image's */
		snprintf(st->name, sizeof st->name, "%s-%u-%u", vg__rt.label, tid, st->self.gen);
	else
		snprintf(st->name, sizeof st->name, "stream-%u-%u", tid, st->self.gen);
	snprintf(st->path, sizeof st->path, "%s/%s", vg__rt.dir, st->name);
	st->fd = vg__image_open(st->name, O_RDWR | O_CREAT | O_EXCL, 0666);
	struct stat s;
	if (st->fd < 0 || fstat(st->fd, &s) < 0) {
		vg__warn("cannot create %s: %s; thread %u is not recorded", st->path,
		         strerror(errno), tid);
		if (st->fd >= 0)
			close(st->fd);
		return false;
	}
	st->dev = s.st_dev;
	st->ino = s.st_ino;
	if (atomic_fetch_add(&held, 1) < HELD_MAX) {
		st->fd = vg__high_fd(st->fd);
		/* A low number (RLIMIT_NOFILE lowered) would be one the subject expects to
		 * get from its next open: not kept. */
		if (st->fd < 512 || vg__own_fd_add(&st->fd) < 0) {
			close(st->fd);
			st->fd = -1;
			atomic_fetch_sub(&held, 1);
		}
	} else {
		atomic_fetch_sub(&held, 1);
		close(st->fd);
		st->fd = -1;
	}
	return true;
}

/* Opens the calling thread's stream and records its beginning. */
void vg__stream_thread_start(void)
{
	struct vg_thread *t = &vg__tls;
	if (t->state != STREAM_NONE)
		return;
	t->state = STREAM_OFF; /* until it works */
	if (!vg__rt.recording)
		return;
	struct vg_stream *st = calloc(1, sizeof *st);
	if (!st) {
		count_discard(NULL);
		return;
	}
	uint32_t tid = vg__thread_tid();
	st->self.kind = "thread";
	st->self.id = tid;
	st->self.gen = vg__generation_next("thread", tid);
	atomic_store(&st->self.flag, vg__rt.cfg.entity_default);
	st->next_packet = vg__rt.cfg.first_packet_size;
	st->pool_slot = -1;
	if (!(vg__rt.shared && !vg__rt.cfg.own_streams && claim_pool_file(st)) &&
	    !create_own_file(st, tid)) {
		count_discard(NULL);
		free(st);
		vg__thread_table_join(NULL);
		pthread_once(&key_once, make_key);
		if (key_ready)
			pthread_setspecific(exit_key, STREAMLESS);
		return;
	}
	if (packet_open_here(st, 0) < 0) {
		vg__warn("cannot allocate the first packet of %s: %s; thread %u is not recorded",
		         st->path, strerror(errno), tid);
		release_fd(st, 0);
		int dir = vg__image_fd();
		if (st->pool_slot >= 0) /* the others' packets stay */
			vg__pool_release(st->pool_slot);
		else if (dir >= 0)
			unlinkat(dir, st->name, 0);
		count_discard(NULL);
		free(st);
		vg__thread_table_join(NULL);
		pthread_once(&key_once, make_key);
		if (key_ready) /* its end is counted too: kept + discarded = emitted */
			pthread_setspecific(exit_key, STREAMLESS);
		return;
	}
	tls_stream = st;
	t->state = STREAM_OPEN;
	pthread_once(&key_once, make_key);
	if (key_ready)
		pthread_setspecific(exit_key, st);
	char name[64];
	thread_name(name, sizeof name);
	/* The main thread of an exec'd image existed before: it is renamed, not created. */
	vg__report_thread_named(name);
	vg__process_begin_once();
	if (tid == (uint32_t)vg__rt.pid && vg__rt.image > 0)
		vg__emit_thread_continued(tid, st->self.gen, name);
	else
		vg__emit_thread_begin(tid, st->self.gen, name);
	vg__thread_table_join(&st->self); /* and renames by its creator, pending till now */
	vg__io_flight_join();
	vg__title_check();
	if (vg__control_on) { /* a monitor may enable sensors placed on this thread */
		pthread_mutex_lock(&vg__rt.lock);
		vg__control_entity_live_locked(&st->self, name);
		pthread_mutex_unlock(&vg__rt.lock);
	}
}

void vg__stream_thread_exit(void)
{
	struct vg_thread *t = &vg__tls;
	struct vg_stream *st = tls_stream;
	vg__usdt_thread_exit();
	if (t->state != STREAM_OPEN || !st)
		return;
	vg__thread_table_remove();
	vg__io_flight_leave();
	vg__title_check();
	vg__emit_thread_end((uint32_t)st->self.id, st->self.gen);
	vg__track_thread_exit();
	vg__track_call_thread_exit();
	vg__report_thread_exit();
	if (vg__control_on) {
		pthread_mutex_lock(&vg__rt.lock);
		vg__control_entity_dead_locked(&st->self);
		pthread_mutex_unlock(&vg__rt.lock);
	}
	t->busy = 1; /* signal handlers stay out while the stream goes away */
	atomic_signal_fence(memory_order_seq_cst);
	packet_close(st);
	t->state = STREAM_OFF;
	t->ctx = NULL;
	unmap(&st->win);
	release_fd(st, 0); /* a pool file's lock goes with it */
	vg__pool_release(st->pool_slot);
	tls_stream = NULL;
	free(st);
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

void vg__stream_thread_end_event(void)
{
	if (vg__tls.state == STREAM_OPEN && tls_stream)
		vg__emit_thread_end((uint32_t)tls_stream->self.id, tls_stream->self.gen);
}

void vg_thread_flush(void)
{
	vg__listen_settle(); /* the listeners' copy of the last event, before its packet closes */
	if (vg__tls.state == STREAM_OPEN && tls_stream && !vg__tls.busy)
		packet_close(tls_stream);
}

void vg__stream_forget_after_fork(void)
{
	/* The parent's stream is the parent's: the child gets its own on first use. Its
	 * thread entity leaves the monitor's live table before its memory goes. */
	struct vg_stream *st = tls_stream;
	if (st) {
		if (vg__control_on) {
			pthread_mutex_lock(&vg__rt.lock);
			vg__control_entity_dead_locked(&st->self);
			pthread_mutex_unlock(&vg__rt.lock);
		}
		unmap(&st->win);
		if (atomic_load(&st->spare.state) == SPARE_READY)
			unmap(&st->spare.win);
		free(st); /* its descriptor went with vg__files_after_fork */
	}
	atomic_store(&held, 0);
	vg__pool_after_fork(); /* the parent's threads hold their pool files */
	tls_stream = NULL;
	memset(&vg__tls, 0, sizeof vg__tls);
	if (key_ready)
		pthread_setspecific(exit_key, NULL);
}

uint8_t *vg__event_nested(vg_sensor *s)
{
	(void)s;
	count_discard(tls_stream);
	return NULL;
}

/* Events are being lost for lack of space. They are counted in a small packet of their
 * own after the last recorded event, which records nothing else: every reader then sees
 * the loss between two packets, where CTF readers look for it (babeltrace2 ignores a count
 * carried by a stream's first packet). Its 4 KiB are outside the size cap, like a
 * stream's first packet. */
static void open_loss_packet(struct vg_stream *st)
{
	struct vg_thread *t = &vg__tls;
	if (st->in_loss_packet || !t->base)
		return;
	packet_close(st);
	uint8_t *p;
	struct window nw;
	int err, full = st->full;
	size_t next = st->next_packet;
	if (allocate_space(st, st->file_size, 4096, &p, &nw, &err) < 0)
		return; /* the count stays in the packet just closed */
	adopt_window(st, &nw);
	uint64_t off = st->file_size;
	st->file_size += 4096;
	atomic_fetch_add(&vg__rt.bytes_used, 4096);
	begin_packet(st, p, off, 4096);
	t->end = t->pos; /* no room: every event goes to the slow path */
	st->full = full;
	st->next_packet = next;
	st->in_loss_packet = true;
}

static uint8_t *give_up(struct vg_stream *st, int counted)
{
	if (counted && st && st->full)
		open_loss_packet(st);
	if (counted)
		count_discard(st);
	if (st && st->in_loss_packet) { /* its time span covers the losses */
		uint64_t now = vg_now();
		if (now > vg__tls.ctx->timestamp_end)
			vg__tls.ctx->timestamp_end = now;
	}
	vg__tls.busy = 0;
	return NULL;
}

uint8_t *vg__event_begin_slow(vg_sensor *s, uint32_t payload)
{
	struct vg_thread *t = &vg__tls; /* busy is ours */
	if (!vg__rt.recording || s->id == 0xFFFF)
		return give_up(NULL, 0);
	if (t->state == STREAM_NONE) {
		t->busy = 0; /* opening records vg.thread.begin through the normal path */
		vg__stream_thread_start();
		t->busy = 1;
	}
	struct vg_stream *st = tls_stream;
	if (t->state != STREAM_OPEN || !st)
		return give_up(NULL, 1);
	size_t need = VG_EVENT_HEADER_MAX + (size_t)payload;
	uint64_t ts = vg_now();
	if (ts < t->last_ts) /* never backwards within a stream */
		ts = t->last_ts;
	if ((size_t)(t->end - t->pos) < need) {
		if (packet_switch(st, need) < 0)
			return give_up(st, 1);
		if (ts < t->last_ts)
			ts = t->last_ts;
	}
	return vg__event_header(t, s, ts);
}
