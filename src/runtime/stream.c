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
 * No file descriptor is held between packets: a server with thousands of threads must
 * not run out of descriptors because it is being recorded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define WINDOW_SIZE ((size_t)8 << 20)
#define MAX_PACKET ((size_t)64 << 20)
#define ENOSPC_RETRY 65536 /* after a full disk, retry growing every this many events */

enum { STREAM_NONE, STREAM_OPEN, STREAM_OFF };

struct vg_stream {
	char path[PATH_MAX + 64];
	uint8_t *win; /* mapping window over the file */
	uint64_t win_off;
	size_t win_len;
	uint64_t file_size; /* end of the last packet */
	uint64_t seq;
	uint64_t discarded;
	uint64_t discards_since_full;
	size_t next_packet;
	int full; /* 1: size cap reached; 2: disk full (retried) */
	vg_entity self;
};

__thread struct vg_thread vg__tls __attribute__((tls_model("initial-exec")));
static __thread struct vg_stream *tls_stream __attribute__((tls_model("initial-exec")));
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
	if (!st)
		return;
	st->discarded++;
	/* The last packet carries the count, so the loss is in the trace itself. */
	if (vg__tls.ctx)
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

static int map_window(struct vg_stream *st, uint64_t off, size_t len)
{
	if (st->win && off >= st->win_off && off + len <= st->win_off + st->win_len)
		return 0;
	uint64_t start = off & ~(uint64_t)4095;
	size_t wlen = WINDOW_SIZE;
	while (start + wlen < off + len)
		wlen *= 2;
	int fd = open(st->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Mapping past the end of the file is allowed; only touching it is not, and we
	 * touch a packet only after fallocate has made it part of the file. */
	void *m = mmap(NULL, wlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	if (st->win)
		munmap(st->win, st->win_len);
	st->win = m;
	st->win_off = start;
	st->win_len = wlen;
	return 0;
}

static int grow_file(struct vg_stream *st, size_t size)
{
	int fd = open(st->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fallocate(fd, 0, (off_t)st->file_size, (off_t)size);
	if (rc < 0 && (errno == EOPNOTSUPP || errno == ENOSYS))
		rc = posix_fallocate(fd, (off_t)st->file_size, (off_t)size) == 0 ? 0 : -1;
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* Opens a new packet large enough for an event of `need` bytes. */
static int packet_open(struct vg_stream *st, size_t need)
{
	size_t size = st->next_packet;
	while (size < need + VG_PACKET_HEADER_SIZE && size < MAX_PACKET)
		size *= 2;
	if (size < need + VG_PACKET_HEADER_SIZE)
		return -1; /* a single event larger than any packet */
	uint64_t cap = vg__rt.cfg.max_bytes;
	/* Each stream's first packet is always allowed, so every stream can carry its
	 * own events_discarded count. */
	if (cap && st->seq > 0 && atomic_load(&vg__rt.bytes_used) + size > cap) {
		st->full = 1;
		return -1;
	}
	if (grow_file(st, size) < 0) {
		if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
			st->full = 2;
		else
			st->full = 1;
		return -1;
	}
	if (map_window(st, st->file_size, size) < 0) {
		/* Keep the file an exact sequence of packets. */
		if (truncate(st->path, (off_t)st->file_size) < 0)
			st->full = 1;
		return -1;
	}
	uint8_t *p = st->win + (st->file_size - st->win_off);
	uint64_t now = vg_now();
	uint32_t magic = VG_CTF_MAGIC, stream_id = 0;
	memcpy(p, &magic, 4);
	memcpy(p + 4, vg__rt.uuid, 16);
	memcpy(p + 20, &stream_id, 4);
	struct vg_packet_ctx *ctx = (struct vg_packet_ctx *)(p + 24);
	ctx->timestamp_begin = now;
	ctx->timestamp_end = now;
	ctx->content_size = VG_PACKET_HEADER_SIZE * 8;
	ctx->packet_size = (uint64_t)size * 8;
	ctx->packet_seq_num = st->seq;
	ctx->events_discarded = st->discarded;
	ctx->tid = (uint32_t)st->self.id;
	ctx->thread_gen = st->self.gen;

	struct vg_thread *t = &vg__tls;
	t->base = p;
	t->pos = p + VG_PACKET_HEADER_SIZE;
	t->end = p + size;
	t->ctx = ctx;
	t->last_ts = now;
	st->file_size += size;
	st->seq++;
	st->full = 0;
	atomic_fetch_add(&vg__rt.bytes_used, size);
	if (st->next_packet < vg__rt.cfg.packet_size_max)
		st->next_packet *= 2; /* busy threads get larger packets: fewer switches */
	return 0;
}

/* Ends the current packet at its content, giving back the unused space. */
static void packet_close(struct vg_stream *st)
{
	struct vg_thread *t = &vg__tls;
	if (!t->base)
		return;
	uint64_t used = (uint64_t)(t->pos - t->base);
	uint64_t size = t->ctx->packet_size / 8;
	/* Packet size first, then the file: a crash between leaves zeros that
	 * `vigil recover` trims, never a packet claiming bytes past the end. */
	t->ctx->packet_size = used * 8;
	if (truncate(st->path, (off_t)(st->file_size - size + used)) == 0) {
		st->file_size = st->file_size - size + used;
		atomic_fetch_sub(&vg__rt.bytes_used, size - used);
	} else {
		t->ctx->packet_size = size * 8;
	}
	t->base = t->pos = t->end = NULL;
}

static void thread_exit_destructor(void *arg)
{
	(void)arg;
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
	st->next_packet = vg__rt.cfg.packet_size;
	snprintf(st->path, sizeof st->path, "%s/stream-%u-%u", vg__rt.dir, tid, st->self.gen);
	int fd = open(st->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		vg__warn("cannot create %s: %s; thread %u is not recorded", st->path,
		         strerror(errno), tid);
		free(st);
		return;
	}
	close(fd);
	if (packet_open(st, 0) < 0) {
		vg__warn("cannot allocate the first packet of %s: %s; thread %u is not recorded",
		         st->path, strerror(errno), tid);
		unlink(st->path);
		free(st);
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
	vg__process_begin_once();
	if (tid == (uint32_t)vg__rt.pid && vg__rt.image > 0)
		vg__emit_thread_name(tid, st->self.gen, name);
	else
		vg__emit_thread_begin(tid, st->self.gen, name);
}

void vg__stream_thread_exit(void)
{
	struct vg_thread *t = &vg__tls;
	struct vg_stream *st = tls_stream;
	if (t->state != STREAM_OPEN || !st)
		return;
	vg__emit_thread_end((uint32_t)st->self.id, st->self.gen);
	packet_close(st);
	t->state = STREAM_OFF;
	t->ctx = NULL;
	if (st->win)
		munmap(st->win, st->win_len);
	tls_stream = NULL;
	free(st);
}

void vg__stream_thread_end_event(void)
{
	if (vg__tls.state == STREAM_OPEN && tls_stream)
		vg__emit_thread_end((uint32_t)tls_stream->self.id, tls_stream->self.gen);
}

void vg_thread_flush(void)
{
	if (vg__tls.state == STREAM_OPEN && tls_stream && !vg__tls.busy)
		packet_close(tls_stream);
}

void vg__stream_forget_after_fork(void)
{
	/* The parent's stream is the parent's: the child gets its own on first use. */
	if (tls_stream && tls_stream->win)
		munmap(tls_stream->win, tls_stream->win_len);
	tls_stream = NULL;
	memset(&vg__tls, 0, sizeof vg__tls);
	if (key_ready)
		pthread_setspecific(exit_key, NULL);
}

uint8_t *vg__event_begin_slow(vg_sensor *s, uint32_t payload)
{
	struct vg_thread *t = &vg__tls;
	if (t->busy) { /* a signal handler interrupted an event of this thread */
		count_discard(tls_stream);
		return NULL;
	}
	if (!vg__rt.recording || s->id == 0xFFFF)
		return NULL;
	if (t->state == STREAM_NONE)
		vg__stream_thread_start();
	struct vg_stream *st = tls_stream;
	if (t->state != STREAM_OPEN || !st) {
		count_discard(NULL);
		return NULL;
	}
	size_t need = VG_EVENT_HEADER_SIZE + (size_t)payload;
	if ((size_t)(t->end - t->pos) < need) {
		if (st->full == 1 ||
		    (st->full == 2 && ++st->discards_since_full % ENOSPC_RETRY != 0)) {
			count_discard(st);
			return NULL;
		}
		packet_close(st);
		if (packet_open(st, need) < 0) {
			count_discard(st);
			return NULL;
		}
	}
	t->busy = 1;
	uint8_t *p = t->pos;
	uint64_t ts = vg_now();
	t->last_ts = ts;
	memcpy(p, &s->id, 2);
	memcpy(p + 2, &ts, 8);
	return p + VG_EVENT_HEADER_SIZE;
}
