/* VIGIL_TO: the sender thread (docs/protocol.md "Subjects"). The sensor path is
 * unchanged: threads record into their stream files in the spool (VIGIL_SPOOL, in
 * memory) as always. This thread ships each packet once it is complete, and the current
 * packet of each stream every 100 ms as it grows (the collector replaces it by the next
 * copy with the same packet_seq_num), the metadata before any packet that may use it,
 * and frees a packet's pages once the collector acknowledged it. What is not
 * acknowledged counts against VIGIL_TO_BUFFER (the image's size cap): past it, threads
 * discard and count events, and record again once space is freed (stream.c).
 *
 * A packet is complete when the next packet's header follows it in the file: the
 * recording thread writes that header before it stops writing the old packet's size
 * (stream.c, spare_activate), so the old packet is final by then.
 *
 * Like the worker, the thread blocks all signals and never records. It reconnects by
 * itself (backoff up to 1 s) and resends, with their original sequence numbers, the
 * frames the collector's WELCOME does not acknowledge. It also ships the images an exec
 * left behind (same pid and start, older image). At exit (vg__send_finish) it ships the
 * rest and waits for the acknowledgements, at most VIGIL_TO_LINGER ms; a fully
 * acknowledged image is removed from the spool. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "wire/frame.h"

#define SNAPSHOT_NS 100000000ull /* the current packets, every 100 ms */
#define MAX_IMAGES 32
#define HDR VGW_PACKET_HEADER_SIZE

struct sstream {
	char name[64];
	uint64_t next_off;  /* the first packet not shipped whole */
	uint64_t snap_bits; /* content_size of its last copy shipped, 0: none */
	uint64_t snap_disc; /* and its events_discarded (a loss packet grows only there) */
	uint64_t seen_size; /* the file's size at the last look */
};

struct simage {
	uint32_t key; /* the image number: vigil_image */
	char path[PATH_MAX];
	char name[256];
	int earlier;   /* left by an exec: complete, not counted in bytes_used */
	int meta_sent; /* in this connection */
	off_t meta_size;
	struct sstream *st;
	size_t nst, capst;
};

struct inflight {
	uint64_t seq;
	uint16_t image;
	uint32_t stream;
	uint64_t off;
	uint64_t len;  /* bytes shipped */
	uint64_t bits; /* content_size shipped (a copy of the current packet), 0: whole */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int wake[2];
	int running, finishing, drained;
	int fd;
	uint64_t next_seq;
	int seq_known;
	struct simage img[MAX_IMAGES];
	size_t nimg;
	struct inflight *q;
	size_t qhead, qlen, qcap; /* q[qhead .. qlen) */
	uint8_t *buf;             /* a packet being sent */
	size_t bufcap;
	uint8_t *mbuf; /* metadata: its own buffer, since send_packet sends it between
	                  reading a packet into buf and sending it */
	size_t mbufcap;
	int backoff_ms;
	uint64_t next_try_ns, last_snap_ns;
	size_t noted;                   /* sensors the collector knows of (its `list`, or a NOTE) */
	uint8_t secret[VGW_SECRET_LEN]; /* the session's, from the first WELCOME */
	int has_secret;
	int warned;
} S = {.fd = -1, .wake = {-1, -1}};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int high_fd(int fd)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* ---- the connection ---- */

static void disconnect(void)
{
	vg__own_fd_release(&S.fd, 0);
	for (size_t i = 0; i < S.nimg; i++)
		S.img[i].meta_sent = 0;
}

static int send_iov(struct iovec *iov, int n)
{
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
	while (mh.msg_iovlen) {
		ssize_t w = sendmsg(S.fd, &mh, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) { /* SO_SNDTIMEO: a collector that does not read is left */
			disconnect();
			return -1;
		}
		while (mh.msg_iovlen && (size_t)w >= mh.msg_iov->iov_len) {
			w -= (ssize_t)mh.msg_iov->iov_len;
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen) {
			mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + w;
			mh.msg_iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

static int send_buf(struct vgw_buf *b)
{
	if (b->failed)
		return -1;
	struct iovec iov = {b->p, b->len};
	int rc = send_iov(&iov, 1);
	b->len = 0;
	return rc;
}

static int open_socket(void)
{
	const char *to = vg__rt.cfg.to;
	int fd = -1;
	struct timeval tv = {1, 0};
	if (!strncmp(to, "unix:", 5)) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		if (strlen(to + 5) >= sizeof a.sun_path)
			return -1;
		strcpy(a.sun_path, to + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
			close(fd);
			return -1;
		}
		return high_fd(fd);
	}
	char host[256];
	const char *colon = strrchr(to, ':');
	if (!colon || (size_t)(colon - to) >= sizeof host)
		return -1;
	memcpy(host, to, (size_t)(colon - to));
	host[colon - to] = 0;
	if (host[0] == '[') {
		memmove(host, host + 1, strlen(host));
		host[strcspn(host, "]")] = 0;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res;
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
		return -1;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* bounds connect too */
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return high_fd(fd);
}

static int read_exact(uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = recv(S.fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void free_acked(uint64_t acked);
static int resend_inflight(void);

/* The session's secret, kept in the spool (mode 0600) for the images an exec makes of
 * this process and for `vigil send` of what a killed process left there. Named relative
 * to the spool's descriptor: an exec'd image after a privilege drop or a chroot reaches
 * the spool by the descriptor it inherits, not by name. */
static void secret_name(char *buf, size_t n)
{
	snprintf(buf, n, ".session-%d-%" PRIu64, (int)vg__rt.pid, vg__rt.process_gen);
}

static void save_secret(void)
{
	char name[64], hex[2 * VGW_SECRET_LEN + 2];
	secret_name(name, sizeof name);
	for (int i = 0; i < VGW_SECRET_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", S.secret[i]);
	hex[2 * VGW_SECRET_LEN] = '\n';
	int dir = vg__out_fd();
	int fd = dir < 0 ? -1
	                 : openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	                          0600);
	if (fd < 0) {
		vg__warn("VIGIL_TO=%s: cannot keep the session's secret in %s: %s; an exec'd image "
		         "of process %d will not resume its session",
		         vg__rt.cfg.to, vg__rt.cfg.out, strerror(errno), (int)vg__rt.pid);
		return;
	}
	/* and where it goes: `vigil record --to` ships leftovers to the same collector only */
	char to[PATH_MAX + 8];
	int n = snprintf(to, sizeof to, "to=%s\n",
	                 vg__rt.cfg.to_origin ? vg__rt.cfg.to_origin : vg__rt.cfg.to);
	if (write(fd, hex, sizeof hex - 1) < 0 || write(fd, to, (size_t)n) < 0) {
	}
	close(fd);
}

static void load_secret(void)
{
	char name[64], hex[2 * VGW_SECRET_LEN + 8];
	secret_name(name, sizeof name);
	int dir = vg__out_fd();
	int fd = dir < 0 ? -1 : openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	ssize_t n = read(fd, hex, sizeof hex - 1);
	close(fd);
	if (n < 2 * VGW_SECRET_LEN)
		return;
	for (int i = 0; i < VGW_SECRET_LEN; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return;
		S.secret[i] = (uint8_t)v;
	}
	S.has_secret = 1;
}

/* Before the subject becomes user `uid`: its exec'd images must still read the secret. */
void vg__send_before_uid_change(uid_t uid)
{
	char name[64];
	secret_name(name, sizeof name);
	int dir = vg__out_fd();
	if (vg__rt.cfg.to && dir >= 0 &&
	    fchownat(dir, name, uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOENT)
		vg__warn("VIGIL_TO=%s: cannot give the session's secret to user %u: %s",
		         vg__rt.cfg.to, (unsigned)uid, strerror(errno));
}

/* Connects, says HELLO, reads WELCOME, resends what it does not acknowledge. */
static int try_connect(void)
{
	S.fd = open_socket();
	if (S.fd >= 0)
		vg__own_fd_add(&S.fd); /* the subject's close loops leave it alone (files.c) */
	if (S.fd < 0)
		return -1;
	struct timeval tv = {2, 0};
	setsockopt(S.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct vgw_buf b = {0};
	vgw_put_hello(&b, vg__rt.cfg.to_token, vg__rt.hostname, (uint32_t)vg__rt.pid,
	              vg__rt.process_gen, vg__rt.procname, VGW_KIND_C,
	              S.has_secret ? S.secret : NULL, S.has_secret ? VGW_SECRET_LEN : 0);
	int rc = send_buf(&b);
	vgw_buf_free(&b);
	uint8_t w[VGW_HEADER + 64];
	uint32_t plen;
	uint8_t type;
	struct vgw_frame f;
	if (rc < 0 || read_exact(w, VGW_HEADER) < 0 || vgw_header(w, 64, &plen, &type) < 0 ||
	    type != VGW_WELCOME || read_exact(w + VGW_HEADER, plen) < 0 ||
	    vgw_decode(type, w + VGW_HEADER, plen, &f, NULL, 0) < 0) {
		disconnect();
		return -1;
	}
	if (!S.has_secret && f.u.welcome.secret.n == VGW_SECRET_LEN) {
		memcpy(S.secret, f.u.welcome.secret.p, VGW_SECRET_LEN);
		S.has_secret = 1;
		save_secret();
	}
	uint64_t acked = f.u.welcome.acked;
	if (!S.seq_known) { /* a new image numbers on from what the process sent before */
		S.next_seq = acked + 1;
		S.seq_known = 1;
	}
	free_acked(acked);
	/* The collector reads the sensor table anew after each WELCOME (list). */
	pthread_mutex_lock(&vg__rt.lock);
	S.noted = vg__registry_count();
	pthread_mutex_unlock(&vg__rt.lock);
	return resend_inflight();
}

/* ---- the spool ---- */

static struct sstream *stream_of(struct simage *im, const char *name)
{
	for (size_t i = 0; i < im->nst; i++)
		if (!strcmp(im->st[i].name, name))
			return &im->st[i];
	if (im->nst == im->capst) {
		size_t cap = im->capst ? im->capst * 2 : 16;
		struct sstream *p = realloc(im->st, cap * sizeof *p);
		if (!p)
			return NULL;
		im->st = p;
		im->capst = cap;
	}
	struct sstream *s = &im->st[im->nst++];
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", name);
	return s;
}

static int grow(uint8_t **buf, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	uint8_t *p = realloc(*buf, n);
	if (!p)
		return -1;
	*buf = p;
	*cap = n;
	return 0;
}

static int ensure_buf(size_t n)
{
	return grow(&S.buf, &S.bufcap, n);
}

/* METADATA for the image if not sent in this connection or grown since. */
static int send_metadata(struct simage *im)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/metadata", im->path);
	int fd = vg__out_open(path, O_RDONLY);
	if (fd < 0)
		return 0; /* not yet written */
	struct stat sb;
	int rc = 0;
	if (fstat(fd, &sb) == 0 && (!im->meta_sent || sb.st_size != im->meta_size) &&
	    grow(&S.mbuf, &S.mbufcap, (size_t)sb.st_size + 1) == 0) {
		ssize_t n = pread(fd, S.mbuf, (size_t)sb.st_size, 0);
		if (n == sb.st_size) {
			struct vgw_buf b = {0};
			vgw_begin(&b, VGW_METADATA);
			vgw_u32(&b, im->key);
			vgw_cstr(&b, im->name);
			vgw_u32(&b, (uint32_t)n);
			uint32_t flen = (uint32_t)(b.len - 4 + (size_t)n);
			memcpy(b.p, &flen, 4);
			struct iovec iov[2] = {{b.p, b.len}, {S.mbuf, (size_t)n}};
			rc = b.failed ? -1 : send_iov(iov, 2);
			vgw_buf_free(&b);
			if (rc == 0) {
				im->meta_sent = 1;
				im->meta_size = sb.st_size;
			}
		}
	}
	close(fd);
	return rc;
}

/* Sends S.buf[0..len) as a PACKET of (image, stream) with sequence number seq. */
static int send_packet(struct simage *im, struct sstream *st, uint64_t seq, size_t len)
{
	if (send_metadata(im) < 0) /* after reading the packet: it covers its events */
		return -1;
	struct vgw_buf b = {0};
	vgw_begin(&b, VGW_PACKET);
	vgw_u32(&b, im->key);
	vgw_cstr(&b, st->name);
	vgw_u64(&b, seq);
	vgw_u32(&b, (uint32_t)len);
	uint32_t flen = (uint32_t)(b.len - 4 + len);
	memcpy(b.p, &flen, 4);
	struct iovec iov[2] = {{b.p, b.len}, {S.buf, len}};
	int rc = b.failed ? -1 : send_iov(iov, 2);
	vgw_buf_free(&b);
	return rc;
}

/* Reads a packet (whole, bits = 0) or a copy of its first `bits` of content into S.buf,
 * made a packet of its own. Returns the length, 0 when it cannot. */
static size_t read_packet(int fd, uint64_t off, uint64_t len, uint64_t bits)
{
	if (len > VGW_MAX_FRAME_DEFAULT - 512 || ensure_buf((size_t)len) < 0 ||
	    pread(fd, S.buf, (size_t)len, (off_t)off) != (ssize_t)len)
		return 0;
	if (bits) {
		uint64_t size = len * 8;
		memcpy(S.buf + VGW_PKT_CONTENT_SIZE, &bits, 8);
		memcpy(S.buf + VGW_PKT_PACKET_SIZE, &size, 8);
	}
	return (size_t)len;
}

static int queue_push(struct inflight e)
{
	if (S.qhead && S.qhead == S.qlen)
		S.qhead = S.qlen = 0;
	if (S.qlen == S.qcap) {
		if (S.qhead) { /* compact */
			memmove(S.q, S.q + S.qhead, (S.qlen - S.qhead) * sizeof *S.q);
			S.qlen -= S.qhead;
			S.qhead = 0;
		}
		if (S.qlen == S.qcap) {
			size_t cap = S.qcap ? S.qcap * 2 : 256;
			struct inflight *p = realloc(S.q, cap * sizeof *p);
			if (!p)
				return -1;
			S.q = p;
			S.qcap = cap;
		}
	}
	S.q[S.qlen++] = e;
	return 0;
}

static int open_stream(struct simage *im, struct sstream *st)
{
	char path[PATH_MAX + 80];
	snprintf(path, sizeof path, "%s/%s", im->path, st->name);
	return vg__out_open(path, O_RDWR);
}

/* Frees an acknowledged whole packet: its pages but the first (the header stays, so the
 * file can still be walked), and its bytes from the size cap. */
static void free_packet(const struct inflight *e)
{
	struct simage *im = &S.img[e->image];
	int fd = open_stream(im, &im->st[e->stream]);
	if (fd >= 0) {
		uint64_t a = (e->off + HDR + 4095) & ~4095ull, z = (e->off + e->len) & ~4095ull;
		if (z > a)
			fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a,
			          (off_t)(z - a));
		close(fd);
	}
	if (!im->earlier)
		atomic_fetch_sub(&vg__rt.bytes_used, e->len);
}

static void free_acked(uint64_t acked)
{
	while (S.qhead < S.qlen && S.q[S.qhead].seq <= acked) {
		if (!S.q[S.qhead].bits)
			free_packet(&S.q[S.qhead]);
		S.qhead++;
	}
}

static int resend_inflight(void)
{
	for (size_t i = S.qhead; i < S.qlen; i++) {
		struct inflight *e = &S.q[i];
		struct simage *im = &S.img[e->image];
		struct sstream *st = &im->st[e->stream];
		int fd = open_stream(im, st);
		size_t len = fd >= 0 ? read_packet(fd, e->off, e->len, e->bits) : 0;
		if (fd >= 0)
			close(fd);
		if (len && send_packet(im, st, e->seq, len) < 0)
			return -1;
	}
	return 0;
}

/* Ships what is new in one stream: whole packets, then a copy of the current one when
 * it grew (every 100 ms, or at once when finishing). */
static int scan_stream(struct simage *im, struct sstream *st, int copy_now)
{
	int fd = open_stream(im, st);
	if (fd < 0)
		return 0;
	struct stat sb;
	int rc = 0;
	uint64_t size = fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	uint8_t h[HDR], nh[4];
	while (st->next_off + HDR <= size && pread(fd, h, HDR, (off_t)st->next_off) == HDR &&
	       rd64(h) != 0) {
		uint32_t magic;
		memcpy(&magic, h, 4);
		uint64_t off = st->next_off, psize = rd64(h + VGW_PKT_PACKET_SIZE) / 8,
		         bits = rd64(h + VGW_PKT_CONTENT_SIZE);
		if (magic != VGW_CTF_MAGIC || psize < HDR || bits < HDR * 8 || bits > psize * 8)
			break;
		uint32_t next_magic = 0;
		int whole = off + psize + HDR <= size &&
		            pread(fd, nh, 4, (off_t)(off + psize)) == 4 &&
		            (memcpy(&next_magic, nh, 4), next_magic == VGW_CTF_MAGIC);
		struct inflight e = {
		    .image = (uint16_t)(im - S.img), .stream = (uint32_t)(st - im->st), .off = off};
		if (whole) {
			e.len = psize;
		} else {
			if (!copy_now || (bits == st->snap_bits &&
			                  rd64(h + VGW_PKT_EVENTS_DISCARDED) == st->snap_disc))
				break;
			e.len = ((bits / 8) + 7) & ~7ull;
			e.bits = bits;
		}
		size_t len = read_packet(fd, e.off, e.len, e.bits);
		if (!len) {
			if (whole)
				st->next_off = off + psize; /* too large to ship: skipped */
			break;
		}
		e.seq = S.next_seq++;
		if (queue_push(e) < 0 || send_packet(im, st, e.seq, len) < 0) {
			rc = -1;
			break;
		}
		if (!whole) {
			st->snap_bits = bits;
			st->snap_disc = rd64(S.buf + VGW_PKT_EVENTS_DISCARDED);
			break;
		}
		st->next_off = off + psize;
		st->snap_bits = 0;
	}
	close(fd);
	return rc;
}

static int scan_image(struct simage *im, int copy_now)
{
	DIR *d = vg__out_opendir(im->path);
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "stream-", 7) && strlen(de->d_name) < 64)
			stream_of(im, de->d_name);
	closedir(d);
	if (send_metadata(im) < 0)
		return -1;
	for (size_t i = 0; i < im->nst; i++) {
		/* A new packet grows the file; between the 100 ms looks at the current
		 * packets, an unchanged file needs no more than a stat. */
		struct sstream *st = &im->st[i];
		char path[PATH_MAX + 80];
		struct stat sb;
		snprintf(path, sizeof path, "%s/%s", im->path, st->name);
		if (vg__out_stat(path, &sb) < 0 ||
		    (!copy_now && (uint64_t)sb.st_size == st->seen_size))
			continue;
		st->seen_size = (uint64_t)sb.st_size;
		if (scan_stream(im, st, copy_now) < 0)
			return -1;
	}
	return 0;
}

static void add_image(const char *path, const char *name, uint32_t key, int earlier)
{
	if (S.nimg == MAX_IMAGES)
		return;
	struct simage *im = &S.img[S.nimg++];
	memset(im, 0, sizeof *im);
	im->key = key;
	im->earlier = earlier;
	if (snprintf(im->path, sizeof im->path, "%s", path) >= (int)sizeof im->path ||
	    snprintf(im->name, sizeof im->name, "%s", name) >= (int)sizeof im->name)
		S.nimg--; /* a name that does not fit is no image the collector could lay out */
}

static const char *env_value(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? p + strlen(key) : NULL;
}

/* Images an exec left in the spool: same pid and process start, older image number. */
static void find_earlier_images(void)
{
	DIR *d = vg__out_opendir(vg__rt.cfg.out);
	if (!d)
		return;
	struct dirent *de;
	char path[PATH_MAX + 256], meta[PATH_MAX + 300], text[8192];
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", vg__rt.cfg.out, de->d_name);
		if (!strcmp(path, vg__rt.dir))
			continue;
		snprintf(meta, sizeof meta, "%s/metadata", path);
		int mfd = vg__out_open(meta, O_RDONLY);
		ssize_t tn = mfd >= 0 ? read(mfd, text, sizeof text - 1) : -1;
		if (mfd >= 0)
			close(mfd);
		if (tn <= 0)
			continue;
		text[tn] = 0;
		const char *pid = env_value(text, "\tvpid = ");
		const char *gen = env_value(text, "\tvigil_process_gen = ");
		const char *img = env_value(text, "\tvigil_image = ");
		if (!pid || !gen || !img || atoi(pid) != (int)vg__rt.pid ||
		    strtoull(gen, NULL, 10) != vg__rt.process_gen ||
		    strtoul(img, NULL, 10) >= vg__rt.image)
			continue;
		add_image(path, de->d_name, (uint32_t)strtoul(img, NULL, 10), 1);
	}
	closedir(d);
}

static void remove_dir(const char *path)
{
	DIR *d = vg__out_opendir(path);
	if (!d)
		return;
	struct dirent *de;
	char p[PATH_MAX + 256];
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(p, sizeof p, "%s/%s", path, de->d_name);
			vg__out_unlink(p, 0);
		}
	closedir(d);
	vg__out_unlink(path, AT_REMOVEDIR);
}

/* ---- the thread ---- */

/* NOTE `registered ID NAME` for each sensor registered since (docs/protocol.md, Probes). */
static void send_notes(void)
{
	char line[300];
	for (;;) {
		pthread_mutex_lock(&vg__rt.lock);
		vg_sensor *s = S.noted < vg__registry_count() ? vg__registry_at(S.noted) : NULL;
		if (s)
			snprintf(line, sizeof line, "registered %zu %s", S.noted, s->name);
		pthread_mutex_unlock(&vg__rt.lock);
		if (!s)
			return;
		S.noted++;
		struct vgw_buf b = {0};
		vgw_put_line(&b, VGW_NOTE, line);
		int rc = send_buf(&b);
		vgw_buf_free(&b);
		if (rc < 0)
			return;
	}
}

/* A CONTROL line from the collector: answered by the control channel's parser. */
static void serve_control(const struct vgw_frame *f)
{
	char line[1100], ans[1200];
	size_t n = f->u.line.line.n;
	if (n >= sizeof line) {
		snprintf(ans, sizeof ans, "error line longer than %zu bytes", sizeof line - 1);
	} else {
		memcpy(line, f->u.line.line.p, n);
		line[n] = 0;
		vg__control_command(line, ans, sizeof ans);
		ans[strcspn(ans, "\n")] = 0;
	}
	struct vgw_buf b = {0};
	vgw_put_line(&b, VGW_REPLY, ans);
	send_buf(&b);
	vgw_buf_free(&b);
}

#define MAX_IN 8192 /* ACK and CONTROL frames */

static void read_acks(void)
{
	uint8_t buf[4096];
	static uint8_t pend[MAX_IN + VGW_HEADER];
	static size_t npend;
	for (;;) {
		ssize_t r = recv(S.fd, buf, sizeof buf, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0) {
			npend = 0;
			disconnect();
			return;
		}
		for (ssize_t i = 0; i < r; i++) {
			pend[npend++] = buf[i];
			uint32_t plen;
			uint8_t type;
			if (npend < VGW_HEADER)
				continue;
			if (vgw_header(pend, MAX_IN, &plen, &type) < 0) {
				npend = 0;
				disconnect();
				return;
			}
			if (npend < VGW_HEADER + plen)
				continue;
			struct vgw_frame f;
			if (vgw_decode(type, pend + VGW_HEADER, plen, &f, NULL, 0) == 0) {
				if (type == VGW_ACK)
					free_acked(f.u.ack.seq);
				else if (type == VGW_CONTROL)
					serve_control(&f);
			}
			npend = 0;
			if (S.fd < 0)
				return;
		}
	}
}

static int all_shipped(void)
{
	return S.fd >= 0 && S.qhead == S.qlen;
}

static void *sender_main(void *arg)
{
	(void)arg;
	syscall(SYS_prctl, PR_SET_NAME, "vigil-sender", 0, 0, 0);
	/* Never records: not even what libc does for it (a name lookup's sockets). */
	vg_report_thread_suspend();
	S.backoff_ms = 10;
	for (;;) {
		pthread_mutex_lock(&S.lock);
		int finishing = S.finishing;
		pthread_mutex_unlock(&S.lock);
		uint64_t now = now_ns();
		if (S.fd < 0 && (finishing || now >= S.next_try_ns)) {
			if (try_connect() < 0) {
				disconnect();
				S.next_try_ns = now + (uint64_t)S.backoff_ms * 1000000ull;
				S.backoff_ms = S.backoff_ms * 2 > 1000 ? 1000 : S.backoff_ms * 2;
			} else {
				S.backoff_ms = 10;
			}
		}
		if (S.fd >= 0) {
			int copy_now = finishing || now - S.last_snap_ns >= SNAPSHOT_NS;
			if (copy_now)
				S.last_snap_ns = now;
			for (size_t i = 0; i < S.nimg && S.fd >= 0; i++)
				scan_image(&S.img[i], copy_now);
		}
		if (S.fd >= 0)
			send_notes();
		if (S.fd >= 0)
			read_acks();
		if (finishing && all_shipped()) {
			struct vgw_buf b = {0};
			vgw_put_bye(&b);
			send_buf(&b);
			vgw_buf_free(&b);
			disconnect();
			for (size_t i = 0; i < S.nimg; i++)
				remove_dir(S.img[i].path);
			char sp[64];
			secret_name(sp, sizeof sp);
			if (vg__out_fd() >= 0)
				unlinkat(vg__out_fd(), sp, 0);
			if (vg__rt.cfg.spool_private)
				rmdir(vg__rt.cfg.out);
			pthread_mutex_lock(&S.lock);
			S.drained = 1;
			pthread_cond_broadcast(&S.cond);
			pthread_mutex_unlock(&S.lock);
			return NULL;
		}
		struct pollfd p[2] = {{.fd = S.wake[0], .events = POLLIN},
		                      {.fd = S.fd, .events = POLLIN}};
		int timeout = finishing ? 5 : 25;
		if (poll(p, S.fd >= 0 ? 2 : 1, timeout) > 0 && p[0].revents) {
			char junk[64];
			/* raw syscalls: an interposer in front of ours (ASan's) would make
			 * the runtime's own pipe look like the subject's */
			while (syscall(SYS_read, S.wake[0], junk, sizeof junk) > 0) {
			}
		}
	}
}

void vg__send_start(void)
{
	if (!vg__rt.cfg.to || !vg__rt.recording)
		return;
	pthread_mutex_init(&S.lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&S.cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pipe2(S.wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return;
	S.wake[0] = high_fd(S.wake[0]);
	S.wake[1] = high_fd(S.wake[1]);
	vg__own_fd_add(&S.wake[0]);
	vg__own_fd_add(&S.wake[1]);
	/* Probes through the collector: the registration hook matches the patterns it
	 * is given (docs/protocol.md, Probes). */
	vg__control_on = 1;
	const char *slash = strrchr(vg__rt.dir, '/');
	add_image(vg__rt.dir, slash ? slash + 1 : vg__rt.dir, vg__rt.image, 0);
	if (vg__rt.image > 0)
		find_earlier_images();
	/* The session's secret: an earlier image of this process (exec) chose it, or this
	 * one does, before it could exec, so that every image resumes the same session. */
	load_secret();
	if (!S.has_secret && getrandom(S.secret, sizeof S.secret, 0) == (ssize_t)sizeof S.secret) {
		S.has_secret = 1;
		save_secret();
	}
	/* all signals blocked, detached, unseen by the hooks: like the control thread */
	int rc = vg__control_start_thread(sender_main);
	if (rc != 0)
		vg__warn("VIGIL_TO=%s: cannot start the sender thread: %s; the records stay in %s",
		         vg__rt.cfg.to, strerror(rc), vg__rt.dir);
	else
		S.running = 1;
}

void vg__send_finish(void)
{
	if (!S.running)
		return;
	pthread_mutex_lock(&S.lock);
	S.finishing = 1;
	pthread_mutex_unlock(&S.lock);
	if (syscall(SYS_write, S.wake[1], "x", 1) < 0) { /* raw: see the sender's read */
	}
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += vg__rt.cfg.to_linger_ms / 1000;
	until.tv_nsec += (long)(vg__rt.cfg.to_linger_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&S.lock);
	while (!S.drained)
		if (pthread_cond_timedwait(&S.cond, &S.lock, &until) == ETIMEDOUT)
			break;
	int drained = S.drained;
	pthread_mutex_unlock(&S.lock);
	if (!drained)
		vg__warn("VIGIL_TO=%s: the collector did not acknowledge everything within "
		         "VIGIL_TO_LINGER (%d ms); what is left stays in %s",
		         vg__rt.cfg.to, vg__rt.cfg.to_linger_ms, vg__rt.dir);
}

void vg__send_after_fork(void)
{
	if (!vg__rt.cfg.to)
		return;
	/* The parent's sender, connection and queue are the parent's. */
	if (S.fd >= 0)
		close(S.fd);
	if (S.wake[0] >= 0) {
		close(S.wake[0]);
		close(S.wake[1]);
	}
	memset(&S, 0, sizeof S);
	S.fd = -1;
	S.wake[0] = S.wake[1] = -1;
	vg__send_start();
}
