/* A subject's storage: its state file (highest sequence number stored, its images), its
 * image directories in the host's trace, and the CTF packets of C subjects, appended
 * in order exactly as `vigil record` lays them out (docs/protocol.md "The collector").
 *
 * Resending is harmless: a PACKET whose sequence number is already stored is skipped,
 * and within a stream a packet with the packet_seq_num of the last stored one replaces
 * it (the runtime ships its current packet as it grows), an older one is skipped. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_io.h"
#include "metrics.h"
#include "trace/trace.h"
#include "vigild.h"
#include "wire/tsdl_header.h"

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}
static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Names that become one path component: no separators, dots or control bytes first,
 * nor a name of the trace layout (a directory `metadata` would make CTF readers take its
 * parent for a trace). */
int vgd_safe_name(const char *s, size_t n)
{
	if (n == 0 || n > VGD_NAME_MAX || s[0] == '.' || s[0] == '-' ||
	    (n == 8 && !memcmp(s, "metadata", 8)))
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '/' || c == '\\' || c < 0x20 || c == 0x7f)
			return 0;
	}
	return 1;
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0777) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

/* --sync: a new or renamed entry is durable once its directory is synced. */
static int sync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	int fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	close(fd);
	return rc;
}

/* Written beside, then renamed: a reader never sees half a file. The temporary lives in
 * DIR/.vigild, since CTF readers take every file of an image directory for a stream. */
int vgd_write_file(const char *path, const void *p, size_t n)
{
	static unsigned counter;
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s/.vigild/tmp-%d-%u", vgd_opt.out, (int)getpid(), counter++);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	              strstr(path, "/.vigild/") ? 0600 : 0666); /* state: secrets */
	if (fd < 0)
		return -1;
	int rc = vgb_write_all(fd, p, n);
	if (rc == 0 && vgd_opt.sync && fsync(fd) < 0)
		rc = -1;
	if (close(fd) < 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	if (rc == 0 && vgd_opt.sync)
		rc = sync_dir_of(path);
	if (rc < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
	}
	return rc;
}

static void uuid_hex(const uint8_t u[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", u[i]);
}

static int hex_uuid(const char *s, uint8_t u[16])
{
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		u[i] = (uint8_t)v;
	}
	return 0;
}

int vgd_subject_save(struct vgd_subject *s)
{
	char buf[65536];
	size_t len =
	    (size_t)snprintf(buf, sizeof buf, "vigild-subject 1\nacked %" PRIu64 "\n", s->acked);
	if (s->has_secret) {
		char hex[2 * VGW_SECRET_LEN + 1];
		for (int i = 0; i < VGW_SECRET_LEN; i++)
			sprintf(hex + 2 * i, "%02x", s->secret[i]);
		len += (size_t)snprintf(buf + len, sizeof buf - len, "secret %s\n", hex);
	}
	for (struct vgd_image *im = s->images; im && len < sizeof buf - 512; im = im->next) {
		char hex[33];
		uuid_hex(im->uuid, hex);
		len += (size_t)snprintf(buf + len, sizeof buf - len, "image %u %s %s\n", im->key,
		                        hex, im->dir);
	}
	return vgd_write_file(s->state_path, buf, len);
}

static struct vgd_image *image_new(struct vgd_subject *s, uint32_t key, const char *dir)
{
	unsigned n = 0;
	for (struct vgd_image *x = s->images; x; x = x->next)
		n++;
	if (n >= VGD_MAX_IMAGES)
		return NULL;
	struct vgd_image *im = calloc(1, sizeof *im);
	if (!im)
		return NULL;
	im->key = key;
	snprintf(im->dir, sizeof im->dir, "%s", dir);
	snprintf(im->path, sizeof im->path, "%s/%s", s->host_dir, im->dir);
	struct vgd_image **pp = &s->images;
	while (*pp)
		pp = &(*pp)->next;
	*pp = im;
	return im;
}

/* Compared in constant time: how much of a secret matched shows in no timing. */
static int same_secret(const uint8_t *a, const uint8_t *b, size_t n)
{
	unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

int vgd_subject_may_resume(const struct vgd_subject *s, const struct vgw_frame *hello)
{
	if (!s->has_secret)
		return 1; /* made by a version 1 peer (or a vigild before version 2) */
	return hello->u.hello.secret.n == VGW_SECRET_LEN &&
	       same_secret(s->secret, (const uint8_t *)hello->u.hello.secret.p, VGW_SECRET_LEN);
}

static void load_state(struct vgd_subject *s)
{
	FILE *f = fopen(s->state_path, "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		unsigned key;
		char hex[40], dir[VGD_NAME_MAX + 16];
		uint64_t acked;
		char shex[2 * VGW_SECRET_LEN + 2];
		if (sscanf(line, "acked %" SCNu64, &acked) == 1) {
			s->acked = acked;
		} else if (sscanf(line, "secret %65s", shex) == 1 &&
		           strlen(shex) == 2 * VGW_SECRET_LEN) {
			s->has_secret = 1;
			for (int i = 0; i < VGW_SECRET_LEN; i++) {
				unsigned v;
				if (sscanf(shex + 2 * i, "%2x", &v) != 1)
					v = 0;
				s->secret[i] = (uint8_t)v;
			}
		} else if (sscanf(line, "image %u %39s %215s", &key, hex, dir) == 3 &&
		           vgd_safe_name(dir, strlen(dir)) && !vgd_image_find(s, key)) {
			struct vgd_image *im = image_new(s, key, dir);
			if (im && hex_uuid(hex, im->uuid) < 0)
				memset(im->uuid, 0, 16);
		}
	}
	fclose(f);
}

int vgd_subject_open(struct vgd_subject *s, const struct vgw_frame *hello, char *err,
                     size_t errsize)
{
	const struct vgw_str *h = &hello->u.hello.host;
	if (!vgd_safe_name(h->p, h->n)) {
		snprintf(err, errsize, "HELLO: host name unusable as a directory name");
		return -1;
	}
	memcpy(s->host, h->p, h->n);
	s->host[h->n] = 0;
	s->pid = hello->u.hello.pid;
	s->start = hello->u.hello.start;
	s->kind = hello->u.hello.kind;
	size_t pn = hello->u.hello.program.n < sizeof s->program - 1 ? hello->u.hello.program.n
	                                                             : sizeof s->program - 1;
	memcpy(s->program, hello->u.hello.program.p, pn);
	s->program[pn] = 0;
	snprintf(s->host_dir, sizeof s->host_dir, "%s/%s", vgd_opt.out, s->host);
	char state_dir[PATH_MAX];
	snprintf(state_dir, sizeof state_dir, "%s/.vigild/%s", vgd_opt.out, s->host);
	if (mkdir_p(s->host_dir) < 0 || mkdir_p(state_dir) < 0) {
		snprintf(err, errsize, "cannot create %s: %s", s->host_dir, strerror(errno));
		return -1;
	}
	snprintf(s->state_path, sizeof s->state_path, "%s/%" PRIu32 "-%" PRIu64 ".state", state_dir,
	         s->pid, s->start);
	load_state(s);
	if (!vgd_subject_may_resume(s, hello)) {
		snprintf(err, errsize,
		         "HELLO: resumes the session of %s/%" PRIu32 " without its secret; refused",
		         s->host, s->pid);
		return -1;
	}
	/* A new session of a version 2 subject: the secret only it can resume it with. The
	 * subject proposes one (the C runtime does, so that the images an exec makes of it
	 * know it at once), or the collector issues one, returned in WELCOME. */
	if (!s->has_secret && hello->u.hello.version >= 2) {
		const struct vgw_str *sec = &hello->u.hello.secret;
		if (sec->n == VGW_SECRET_LEN) {
			memcpy(s->secret, sec->p, VGW_SECRET_LEN);
		} else if (sec->n != 0) {
			snprintf(err, errsize, "HELLO: a secret of %u bytes, not %d", sec->n,
			         VGW_SECRET_LEN);
			return -1;
		} else if (getrandom(s->secret, sizeof s->secret, 0) != (ssize_t)sizeof s->secret) {
			snprintf(err, errsize, "getrandom: %s", strerror(errno));
			return -1;
		}
		s->has_secret = 1;
		if (vgd_subject_save(s) < 0) {
			snprintf(err, errsize, "cannot write %s: %s", s->state_path,
			         strerror(errno));
			return -1;
		}
	}
	for (struct vgd_image *im = s->images; im; im = im->next)
		vgd_repair_image(im);
	vgd_store_subject_back(s); /* not complete after all */
	if (vgd_schemas_load(s) < 0) {
		snprintf(err, errsize, "cannot read the stored schemas of this subject");
		return -1;
	}
	return 0;
}

static void stream_close(struct vgd_stream *st)
{
	if (st->fd >= 0)
		close(st->fd);
	free(st);
}

static void report_line(void *ctx, const char *line)
{
	const struct vgd_subject *s = ctx;
	if (!vgd_opt.quiet)
		vgd_log("%s/%" PRIu32 ": recover: %s", s->host, s->pid, line);
}

void vgd_subject_close(struct vgd_subject *s, int orderly)
{
	if (orderly != VGD_KEEP)
		vgd_store_image_done(s, orderly == VGD_BYE);
	for (struct vgd_image *im = s->images, *next; im; im = next) {
		next = im->next;
		for (struct vgd_stream *st = im->streams, *sn; st; st = sn) {
			sn = st->next;
			stream_close(st);
		}
		/* A C subject that vanished: its last packets as `vigil recover` leaves them. */
		if (orderly == VGD_VANISHED && s->kind == VGW_KIND_C &&
		    access(im->path, F_OK) == 0) {
			struct vgt_recover_result res;
			char err[256];
			if (vgt_recover_dir(im->path, false, report_line, s, &res, err,
			                    sizeof err) < 0 &&
			    !vgd_opt.quiet)
				vgd_log("%s/%" PRIu32 ": recover %s: %s", s->host, s->pid, im->path,
				        err);
		}
		if (im->types)
			vgt_close(im->types);
		free(im);
	}
	s->images = NULL;
	vgd_schemas_free(s);
}

struct vgd_image *vgd_image_find(struct vgd_subject *s, uint32_t key)
{
	for (struct vgd_image *im = s->images; im; im = im->next)
		if (im->key == key)
			return im;
	return NULL;
}

/* A new image directory: the subject's name for it, made unique in the host's trace
 * (a pid reused by another recording into the same DIR). */
struct vgd_image *vgd_image_add(struct vgd_subject *s, uint32_t key, const char *dir, char *err,
                                size_t errsize)
{
	char name[VGD_NAME_MAX + 16], path[PATH_MAX];
	for (unsigned k = 0; k < 1000; k++) {
		if (k)
			snprintf(name, sizeof name, "%s.%u", dir, k);
		else
			snprintf(name, sizeof name, "%s", dir);
		snprintf(path, sizeof path, "%s/%s", s->host_dir, name);
		if (mkdir(path, 0777) == 0) {
			struct vgd_image *im = image_new(s, key, name);
			if (!im)
				snprintf(err, errsize, "out of memory");
			return im;
		}
		if (errno != EEXIST)
			break;
	}
	snprintf(err, errsize, "cannot create %s: %s", path, strerror(errno));
	return NULL;
}

/* The loss a stream carries on to its later packets (events of packets not stored) is
 * kept in the stream file itself, in the packet that records it: a note in its last
 * LOSS_NOTE bytes, past its content_size (bytes CTF readers skip). A stub is its header
 * and its note, written by one write; a packet that takes a loss in place (the disk too
 * full for a stub) gets the note in its own padding before its events_discarded. So the
 * note can never disagree with the stream it describes: a stub cut by a crash is cut
 * off with its note (and, not acknowledged, sent again), a packet stored after a note
 * is on disk only after it. A count in the state file could: the state is saved once
 * per batch of frames, and packets written after it and before a crash stay on disk.
 * After a restart, vgd_stream_get reads the last note of each stream (docs/security.md
 * "Quotas and a full disk"). */
#define LOSS_NOTE 32
#define LOSS_MAGIC 0x314e53534f4c4456ull /* "VDLOSSN1" */

struct loss_note {
	uint64_t carried;     /* lost before the packet pending_seq: final */
	uint64_t pending;     /* the events of packet pending_seq, not stored */
	uint64_t pending_seq; /* its packet_seq_num (a grown copy may replace its stub) */
};

static void put_note(uint8_t *b, const struct loss_note *n)
{
	uint64_t v[4] = {LOSS_MAGIC, n->carried, n->pending, n->pending_seq};
	memcpy(b, v, sizeof v);
}

/* The note of the packet at off (header h), if it has one. */
static int read_note(int fd, uint64_t off, const uint8_t *h, struct loss_note *n)
{
	uint64_t psize = rd64(h + VGW_PKT_PACKET_SIZE) / 8,
	         content = rd64(h + VGW_PKT_CONTENT_SIZE) / 8;
	uint64_t v[4];
	if (content > psize || psize - content < LOSS_NOTE ||
	    pread(fd, v, sizeof v, (off_t)(off + psize - LOSS_NOTE)) != (ssize_t)sizeof v ||
	    v[0] != LOSS_MAGIC)
		return 0;
	n->carried = v[1];
	n->pending = v[2];
	n->pending_seq = v[3];
	return 1;
}

/* Opens (or creates) a stream file and finds its last whole packet; a tail that is not
 * one (a write cut by a crash of the collector) is cut off. */
struct vgd_stream *vgd_stream_get(struct vgd_image *im, const char *name, char *err, size_t errsize)
{
	for (struct vgd_stream *st = im->streams; st; st = st->next)
		if (!strcmp(st->name, name))
			return st;
	if (im->nstreams >= VGD_MAX_STREAMS) {
		snprintf(err, errsize, "more than %d streams in one image", VGD_MAX_STREAMS);
		return NULL;
	}
	struct vgd_stream *st = calloc(1, sizeof *st);
	if (!st) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	snprintf(st->name, sizeof st->name, "%s", name);
	char *path = st->path;
	snprintf(st->path, sizeof st->path, "%s/%s", im->path, name);
	st->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (st->fd < 0 || (vgd_opt.sync && sync_dir_of(path) < 0)) {
		snprintf(err, errsize, "cannot open %s: %s", path, strerror(errno));
		if (st->fd >= 0)
			close(st->fd);
		free(st);
		return NULL;
	}
	struct stat sb;
	uint64_t size = fstat(st->fd, &sb) == 0 ? (uint64_t)sb.st_size : 0, off = 0;
	uint8_t h[VGW_PACKET_HEADER_SIZE];
	struct loss_note note = {0};
	uint64_t note_off = 0;
	int has_note = 0;
	while (off + VGW_PACKET_HEADER_SIZE <= size &&
	       pread(st->fd, h, sizeof h, (off_t)off) == (ssize_t)sizeof h) {
		uint64_t psize = rd64(h + VGW_PKT_PACKET_SIZE) / 8;
		if (rd32(h) != VGW_CTF_MAGIC || psize < VGW_PACKET_HEADER_SIZE ||
		    psize > size - off)
			break;
		st->has_last = 1;
		st->last_off = off;
		st->last_seq = rd64(h + VGW_PKT_SEQ_NUM);
		st->last_ts = rd64(h + VGW_PKT_TIMESTAMP_END);
		if (read_note(st->fd, off, h, &note)) {
			has_note = 1;
			note_off = off;
		}
		off += psize;
	}
	/* The loss carried to later packets, as the last note of the stream says (the
	 * stub of a lost packet, or a packet that took a loss in place). */
	if (has_note && note_off == st->last_off) {
		st->lost = note.carried; /* the stub may yet be replaced by a grown copy */
		st->has_stub = 1;
		st->stub_seq = note.pending_seq;
		st->stub_events = note.pending;
	} else if (has_note) {
		st->lost = note.carried + note.pending; /* a packet followed it: final */
	}
	if (off != size) {
		if (ftruncate(st->fd, (off_t)off) < 0) {
			snprintf(err, errsize, "cannot truncate %s: %s", path, strerror(errno));
			stream_close(st);
			return NULL;
		}
		vgd_log("%s: cut %" PRIu64 " bytes of a packet not written whole", path,
		        size - off);
	}
	st->size = off;
	st->bytes = &im->bytes;
	im->bytes += off;
	st->next = im->streams;
	im->streams = st;
	im->nstreams++;
	vgd_stream_release(st);
	return st;
}

/* A subject coming back (after a crash of the collector, or its own reconnection):
 * every stream file of its images ends with a whole packet, even the streams it will not
 * write again (vgd_stream_get cuts a tail that is not one). */
void vgd_repair_image(struct vgd_image *im)
{
	DIR *d = opendir(im->path);
	if (!d)
		return;
	struct dirent *de;
	char err[300];
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "stream", 6) && de->d_type == DT_REG &&
		    vgd_safe_name(de->d_name, strlen(de->d_name)) &&
		    !vgd_stream_get(im, de->d_name, err, sizeof err))
			vgd_log("%s", err);
	closedir(d);
}

void vgd_stream_release(struct vgd_stream *st)
{
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
}

int vgd_stream_write(struct vgd_stream *st, const uint8_t *p, size_t n, char *err, size_t errsize)
{
	if (st->fd < 0 && (st->fd = open(st->path, O_RDWR | O_CLOEXEC)) < 0) {
		snprintf(err, errsize, "cannot open %s: %s", st->path, strerror(errno));
		return -1;
	}
	size_t done = 0;
	while (done < n) {
		ssize_t w = pwrite(st->fd, p + done, n - done, (off_t)(st->size + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : ENOSPC;
			snprintf(err, errsize, "write %s: %s", st->name, strerror(e));
			/* Keep the file a sequence of packets. */
			if (ftruncate(st->fd, (off_t)st->size) < 0) {
			}
			errno = e;
			return -1;
		}
		done += (size_t)w;
	}
	if (vgd_opt.sync && fdatasync(st->fd) < 0) {
		snprintf(err, errsize, "fdatasync %s: %s", st->name, strerror(errno));
		return -1;
	}
	st->has_last = 1;
	st->last_off = st->size;
	st->last_seq = n >= VGW_PACKET_HEADER_SIZE ? rd64(p + VGW_PKT_SEQ_NUM) : 0;
	st->last_ts = n >= VGW_PACKET_HEADER_SIZE ? rd64(p + VGW_PKT_TIMESTAMP_END) : 0;
	st->size += n;
	if (st->bytes)
		*st->bytes += n;
	return 0;
}

int vgd_metadata(struct vgd_subject *s, const struct vgw_frame *f, char *err, size_t errsize)
{
	const struct vgw_str *d = &f->u.metadata.dir;
	if (!vgd_safe_name(d->p, d->n)) {
		snprintf(err, errsize, "METADATA: image directory name unusable");
		return -1;
	}
	if (f->u.metadata.tsdl.n < 8 || memcmp(f->u.metadata.tsdl.p, "/* CTF 1", 8)) {
		snprintf(err, errsize, "METADATA: not CTF 1.8 TSDL text");
		return -1;
	}
	struct vgd_image *im = vgd_image_find(s, f->u.metadata.image);
	if (!im) {
		char dir[VGD_NAME_MAX + 1];
		memcpy(dir, d->p, d->n);
		dir[d->n] = 0;
		im = vgd_image_add(s, f->u.metadata.image, dir, err, errsize);
		if (!im)
			return -1;
		if (vgd_subject_save(s) < 0) {
			snprintf(err, errsize, "cannot write %s: %s", s->state_path,
			         strerror(errno));
			return -1;
		}
	}
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/metadata", im->path);
	if (vgd_write_file(path, f->u.metadata.tsdl.p, f->u.metadata.tsdl.n) < 0) {
		snprintf(err, errsize, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	/* A text the readers cannot use is stored all the same (they report it); its
	 * packets then count for no host's lag. */
	im->has_clock = vgt_metadata_clock(f->u.metadata.tsdl.p, f->u.metadata.tsdl.n,
	                                   &im->clock_offset_ns, &im->clock_freq) == 0;
	return 0;
}

/* The packet's newest event (timestamp_end) as wall-clock time of its host. */
static void note_lag(const struct vgd_subject *s, const struct vgd_image *im, const uint8_t *p)
{
	if (!im->has_clock || !im->clock_freq)
		return;
	unsigned __int128 ns =
	    (unsigned __int128)rd64(p + VGW_PKT_TIMESTAMP_END) * 1000000000u / im->clock_freq;
	__int128 t = (__int128)im->clock_offset_ns + (__int128)ns;
	if (t > INT64_MAX || t < INT64_MIN)
		return;
	vgd_metrics_host_data(s->host, (int64_t)t);
}

/* Writes a packet at offset keep of the stream (the stored copy it replaces, or the
 * end), the file cut after it. */
static int write_at(struct vgd_stream *st, uint64_t keep, const uint8_t *p, size_t n, char *err,
                    size_t errsize)
{
	uint64_t old_size = st->size;
	*st->bytes -= st->size - keep;
	st->size = keep;
	if (vgd_stream_write(st, p, n, err, errsize) < 0) {
		vgd_stream_release(st);
		return -1;
	}
	if (st->size < old_size && ftruncate(st->fd, (off_t)st->size) < 0) {
		int e = errno;
		snprintf(err, errsize, "truncate %s: %s", st->name, strerror(e));
		vgd_stream_release(st);
		errno = e;
		return -1;
	}
	vgd_stream_release(st);
	return 0;
}

/* Stores the loss of a packet at offset keep of the stream: its header and loss note
 * (a stub whose events_discarded is disc), or, when not even that fits (the disk is
 * full), disc in the header of the last packet stored, in place, so the total stays
 * exact; its note too when its padding has room (else a restart forgets the carry). */
static int store_loss(struct vgd_subject *s, struct vgd_stream *st, uint64_t keep,
                      const uint8_t *header, uint64_t disc, const struct loss_note *note,
                      int disk_full, char *err, size_t errsize)
{
	uint8_t stub[VGW_PACKET_HEADER_SIZE + LOSS_NOTE];
	memcpy(stub, header, VGW_PACKET_HEADER_SIZE);
	uint64_t bits = VGW_PACKET_HEADER_SIZE * 8, size_bits = sizeof stub * 8;
	memcpy(stub + VGW_PKT_CONTENT_SIZE, &bits, 8);
	memcpy(stub + VGW_PKT_PACKET_SIZE, &size_bits, 8);
	memcpy(stub + VGW_PKT_EVENTS_DISCARDED, &disc, 8);
	put_note(stub + VGW_PACKET_HEADER_SIZE, note);
	if (write_at(st, keep, stub, sizeof stub, err, errsize) < 0) {
		if (!st->has_last || st->last_off + VGW_PACKET_HEADER_SIZE > st->size ||
		    (errno != ENOSPC && errno != EDQUOT && errno != EFBIG) ||
		    (st->fd = open(st->path, O_RDWR | O_CLOEXEC)) < 0)
			return -1; /* the subject keeps its data and tries again */
		uint8_t h[VGW_PACKET_HEADER_SIZE], nb[LOSS_NOTE];
		int ok = pread(st->fd, h, sizeof h, (off_t)st->last_off) == (ssize_t)sizeof h;
		uint64_t psize = rd64(h + VGW_PKT_PACKET_SIZE) / 8,
		         content = rd64(h + VGW_PKT_CONTENT_SIZE) / 8;
		put_note(nb, note);
		/* The note first: a crash between the two writes leaves the lost packet
		 * unacknowledged, sent again and counted again over either state. */
		if (ok && content <= psize && psize - content >= LOSS_NOTE)
			ok =
			    pwrite(st->fd, nb, sizeof nb,
			           (off_t)(st->last_off + psize - LOSS_NOTE)) == (ssize_t)sizeof nb;
		ok = ok && pwrite(st->fd, &disc, 8, (off_t)st->last_off + 64) == 8;
		vgd_stream_release(st);
		if (!ok)
			return -1;
	}
	if (!(s->loss_logged & (1 << disk_full))) {
		s->loss_logged |= 1 << disk_full;
		vgd_log("%s/%" PRIu32 ": %s: events not stored, counted in the trace as "
		        "discarded",
		        s->host, s->pid,
		        disk_full ? "the disk is full" : "its --quota-per-subject is reached");
	}
	return 0;
}

/* A packet of a C subject not stored (quota.c counts its events). The subject's data is
 * acknowledged: it is counted, not kept. A grown copy of the same packet replaces the
 * stub with a new count. */
static int lose_packet(struct vgd_subject *s, struct vgd_image *im, struct vgd_stream *st,
                       uint64_t keep, const uint8_t *p, size_t n, uint64_t disc0, int disk_full,
                       char *err, size_t errsize)
{
	uint64_t events = vgd_count_events(im, p, n), pseq = rd64(p + VGW_PKT_SEQ_NUM);
	struct loss_note note = {st->lost, events, pseq};
	if (store_loss(s, st, keep, p, disc0 + st->lost + events, &note, disk_full, err, errsize) <
	    0)
		return -1;
	if (st->has_stub && st->stub_seq == pseq && s->lost_events >= st->stub_events)
		s->lost_events -= st->stub_events; /* a copy of the same packet, grown */
	st->has_stub = 1;
	st->stub_seq = pseq;
	st->stub_events = events;
	uint64_t before = s->lost_events;
	s->lost_events += events;
	if (s->lost_events > before)
		VGD_COUNT(events_discarded, s->lost_events - before);
	return 0;
}

int vgd_store_records_packet(struct vgd_subject *s, struct vgd_stream *st, uint8_t *p, size_t n,
                             uint64_t events, char *err, size_t errsize)
{
	if (st->has_stub) { /* read back from the stream's note after a restart */
		st->lost += st->stub_events;
		st->has_stub = 0;
	}
	uint64_t total = 0, disc = st->lost;
	for (struct vgd_image *x = s->images; x; x = x->next)
		total += x->bytes;
	memcpy(p + VGW_PKT_EVENTS_DISCARDED, &disc, 8);
	int over = vgd_opt.quota && total + n > vgd_opt.quota;
	if (!over) {
		if (vgd_stream_write(st, p, n, err, errsize) == 0)
			return 0;
		if (errno != ENOSPC && errno != EDQUOT && errno != EFBIG)
			return -1;
		over = 2;
	}
	struct loss_note note = {disc, events, rd64(p + VGW_PKT_SEQ_NUM)};
	if (store_loss(s, st, st->size, p, disc + events, &note, over == 2, err, errsize) < 0)
		return -1;
	st->lost += events;
	s->lost_events += events;
	VGD_COUNT(events_discarded, events);
	return 0;
}

int vgd_packet(struct vgd_subject *s, const struct vgw_frame *f, char *err, size_t errsize)
{
	const uint8_t *p = (const uint8_t *)f->u.packet.packet.p;
	size_t n = f->u.packet.packet.n;
	struct vgd_image *im = vgd_image_find(s, f->u.packet.image);
	if (!im) {
		snprintf(err, errsize, "PACKET for image %u before its METADATA",
		         f->u.packet.image);
		return -1;
	}
	const struct vgw_str *sn = &f->u.packet.stream;
	if (!vgd_safe_name(sn->p, sn->n) || sn->n < 7 || memcmp(sn->p, "stream", 6)) {
		snprintf(err, errsize, "PACKET: stream name unusable");
		return -1;
	}
	if (n < VGW_PACKET_HEADER_SIZE || rd32(p) != VGW_CTF_MAGIC ||
	    rd64(p + VGW_PKT_PACKET_SIZE) != (uint64_t)n * 8 ||
	    rd64(p + VGW_PKT_CONTENT_SIZE) > rd64(p + VGW_PKT_PACKET_SIZE) ||
	    rd64(p + VGW_PKT_CONTENT_SIZE) < VGW_PACKET_HEADER_SIZE * 8) {
		snprintf(
		    err, errsize,
		    "PACKET: not one whole CTF packet (%zu bytes; magic %08x, packet_size %" PRIu64
		    ", content_size %" PRIu64 " bits)",
		    n, n >= 4 ? rd32(p) : 0, n >= 56 ? rd64(p + VGW_PKT_PACKET_SIZE) : 0,
		    n >= 48 ? rd64(p + VGW_PKT_CONTENT_SIZE) : 0);
		return -1;
	}
	if (f->u.packet.seq <= s->acked)
		return 0; /* stored before a reconnection */
	char name[VGD_NAME_MAX + 1];
	memcpy(name, sn->p, sn->n);
	name[sn->n] = 0;
	struct vgd_stream *st = vgd_stream_get(im, name, err, errsize);
	if (!st)
		return -1;
	uint64_t pseq = rd64(p + VGW_PKT_SEQ_NUM);
	if (st->has_last && pseq < st->last_seq) {
		s->acked = f->u.packet.seq; /* already stored: acknowledged as such */
		return 0;
	}
	/* A packet after the stub of a lost one: that loss is final, carried on. */
	if (st->has_stub && pseq != st->stub_seq) {
		st->lost += st->stub_events;
		st->has_stub = 0;
	}
	/* The same packet, grown since, replaces the stored copy. */
	uint64_t keep = st->has_last && pseq == st->last_seq ? st->last_off : st->size;
	uint64_t total = 0;
	for (struct vgd_image *x = s->images; x; x = x->next)
		total += x->bytes;
	total -= st->size - keep;
	int over = vgd_opt.quota && total + n > vgd_opt.quota;
	uint64_t disc0 = rd64(p + VGW_PKT_EVENTS_DISCARDED);
	if (!over) {
		uint8_t *w = (uint8_t *)p; /* the frame's bytes, in the connection's buffer */
		uint64_t disc = disc0 + st->lost;
		memcpy(w + 64, &disc, 8);
		if (write_at(st, keep, w, n, err, errsize) == 0)
			st->has_stub = 0;
		else if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
			over = 2; /* the disk is full: counted like the quota */
		else
			return -1;
	}
	if (over && lose_packet(s, im, st, keep, p, n, disc0, over == 2, err, errsize) < 0)
		return -1;
	s->acked = f->u.packet.seq;
	note_lag(s, im, p);
	return 0;
}
