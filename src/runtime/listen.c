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
__thread uint64_t vg__listen_prev_ts __attribute__((tls_model("initial-exec")));

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
static __thread struct lbuf *mine[VG_LISTENERS_MAX] __attribute__((tls_model("initial-exec")));
static struct lbuf *all_bufs;
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

static struct lbuf *buf_for(int i)
{
	if (mine[i])
		return mine[i];
	if (outs[i].img_fd < 0 || !vg__tls.ctx)
		return NULL;
	void *m = mmap(NULL, sizeof(struct lbuf) + BUF_BYTES, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct lbuf *b = m;
	b->listener = i;
	b->tid = vg__tls.ctx->tid;
	b->gen = vg__tls.ctx->thread_gen;
	snprintf(b->name, sizeof b->name, "stream-%u-%u", b->tid, b->gen);
	pthread_mutex_lock(&bufs_lock);
	b->next = all_bufs;
	all_bufs = b;
	pthread_mutex_unlock(&bufs_lock);
	return mine[i] = b;
}

static void append(int i, const uint8_t *ev, size_t len, uint64_t ts)
{
	struct lbuf *b = buf_for(i);
	if (!b || len > BUF_BYTES - VGW_PACKET_HEADER_SIZE)
		return;
	lock_buf(b);
	if (b->used && (len > BUF_BYTES - b->used || ((ts - b->last_ts) >> 32)))
		flush_packet(b);
	if (!b->used) {
		b->used = VGW_PACKET_HEADER_SIZE;
		b->first_ts = ts;
	}
	memcpy(b->mem + b->used, ev, len);
	b->used += len;
	b->last_ts = ts;
	unlock_buf(b);
}

void vg__listen_commit(uint8_t *end)
{
	struct vg_thread *t = &vg__tls;
	unsigned m = t->fan & ((1u << VG_LISTENERS_MAX) - 1u);
	t->fan = 0;
	for (int i = 1; i < vg__listeners; i++)
		if (m >> i & 1u)
			append(i, t->pos, (size_t)(end - t->pos), t->last_ts);
	if (m & 1u) {
		vg_event_commit(end); /* fan is 0 now: the main stream's commit */
		return;
	}
	/* Not the main output's: the packet stays as it was, and so does the time the next
	 * event is measured from. */
	t->last_ts = vg__listen_prev_ts;
	atomic_signal_fence(memory_order_release);
	t->busy = 0;
}

uint8_t *vg__listen_event_begin(vg_sensor *s, uint32_t payload)
{
	unsigned m = vg__listen_wanted(s) & vg__listen_take_live();
	vg__listen_decide(m);
	return m ? vg__event_start(s, payload) : NULL;
}

static void forget(struct lbuf *b)
{
	pthread_mutex_lock(&bufs_lock);
	for (struct lbuf **p = &all_bufs; *p; p = &(*p)->next)
		if (*p == b) {
			*p = b->next;
			break;
		}
	pthread_mutex_unlock(&bufs_lock);
	munmap(b, sizeof(struct lbuf) + BUF_BYTES);
}

void vg__listen_thread_exit(void)
{
	for (int i = 1; i < VG_LISTENERS_MAX; i++) {
		struct lbuf *b = mine[i];
		if (!b)
			continue;
		mine[i] = NULL;
		lock_buf(b);
		flush_packet(b);
		unlock_buf(b);
		forget(b);
	}
}

void vg__listen_flush_all(void)
{
	pthread_mutex_lock(&bufs_lock);
	for (struct lbuf *b = all_bufs; b; b = b->next) {
		lock_buf(b);
		flush_packet(b);
		unlock_buf(b);
	}
	pthread_mutex_unlock(&bufs_lock);
}

/* The child's buffers are the parent's, which writes them: forgotten, not written. */
void vg__listen_after_fork(void)
{
	all_bufs = NULL;
	pthread_mutex_init(&bufs_lock, NULL);
	for (int i = 0; i < VG_LISTENERS_MAX; i++)
		mine[i] = NULL;
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
