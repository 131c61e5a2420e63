/* The shared layout's pool of stream files (docs/trace-format.md "Shared layout"): the
 * threads of every image of a recording write into shared/pool-0, pool-1, ..., each file
 * held by one thread at a time through an exclusive flock. A thread claims the first file
 * nobody holds and appends its packets after the last packet there; its thread end (or
 * its process's death: the kernel drops the lock with the last descriptor) gives the file
 * to the next claimant. So the many short processes of a build fill a few files instead
 * of taking a file system block each.
 *
 * The file stays one CTF stream for every reader: packet_seq_num and events_discarded go
 * on from the previous writer's last packet, and time never goes backwards (the claimant
 * starts at the previous packet's end at the earliest). Each packet names its writer, and
 * vigil's reader splits a file where the writer changes (src/trace/shared.c).
 *
 * Where the last packet is: .pool-index (hidden from readers, babeltrace2 included) keeps
 * per file the offset where its current holder started, so a claimant walks only that
 * holder's packets. A holder killed while allocating a packet may leave zeros after its
 * last one: the claimant covers them with an empty packet (never a truncation, which could
 * cut under a writer that lost its descriptor but still maps the file). Bytes after the
 * last packet that are not zeros are left as they are (readers say the damage). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define POOL_FILES 4096 /* pool-0 .. pool-4095 */
#define PROBES 256      /* files tried (not counting our own threads') before giving up */
#define INDEX_NAME ".pool-index"

/* Files held by this process's threads: skipped without a system call. */
static _Atomic uint64_t mine[POOL_FILES / 64];

static bool is_mine(unsigned k)
{
	return atomic_load(&mine[k / 64]) >> (k % 64) & 1;
}

static void set_mine(unsigned k, bool on)
{
	uint64_t bit = (uint64_t)1 << (k % 64);
	if (on)
		atomic_fetch_or(&mine[k / 64], bit);
	else
		atomic_fetch_and(&mine[k / 64], ~bit);
}

static uint64_t u64_at(const uint8_t *h, size_t off)
{
	uint64_t v;
	memcpy(&v, h + off, 8);
	return v;
}

static void put_u64(uint8_t *h, size_t off, uint64_t v)
{
	memcpy(h + off, &v, 8);
}

/* Reads the packet header at off; true when it is one of this trace's, ending in the file. */
static bool packet_at(int fd, uint64_t off, uint64_t fsize, uint8_t *h)
{
	size_t n = vg__rt.packet_header;
	if (off + n > fsize || pread(fd, h, n, (off_t)off) != (ssize_t)n)
		return false;
	uint32_t magic;
	memcpy(&magic, h, 4);
	uint64_t psize = u64_at(h, VGW_PKT_PACKET_SIZE);
	return magic == VGW_CTF_MAGIC && !memcmp(h + VGW_PKT_UUID, vg__rt.uuid, 16) &&
	       psize % 8 == 0 && psize / 8 >= n && off + psize / 8 <= fsize;
}

/* Are the bytes [off, end) zeros (space allocated and never written)? */
static bool zeros(int fd, uint64_t off, uint64_t end)
{
	uint8_t buf[4096];
	while (off < end) {
		size_t n = end - off < sizeof buf ? (size_t)(end - off) : sizeof buf;
		if (pread(fd, buf, n, (off_t)off) != (ssize_t)n)
			return false;
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return false;
		off += n;
	}
	return true;
}

static int index_open(void)
{
	return vg__image_open(INDEX_NAME, O_RDWR | O_CREAT | O_NOFOLLOW, 0666);
}

static uint64_t index_get(int idx, unsigned k)
{
	uint64_t v = 0;
	if (idx < 0 || pread(idx, &v, 8, (off_t)k * 8) != 8)
		return 0;
	return v;
}

/* Finds where the file's packets end, from the index's hint (or from the start), covers
 * what a killed holder left unfinished, and says how the stream goes on. */
static int find_end(int fd, uint64_t hint, struct vg_pool_claim *c)
{
	struct stat s;
	if (fstat(fd, &s) < 0)
		return -1;
	uint64_t fsize = (uint64_t)s.st_size, off = hint;
	uint8_t h[VGW_PACKET_HEADER_SIZE_SHARED], last[VGW_PACKET_HEADER_SIZE_SHARED];
	bool have_last = false;
	if (off > fsize || (off < fsize && !packet_at(fd, off, fsize, h)))
		off = 0; /* a hint that does not hold: walk the whole file */
	while (off < fsize && packet_at(fd, off, fsize, h)) {
		memcpy(last, h, sizeof last);
		have_last = true;
		off += u64_at(h, VGW_PKT_PACKET_SIZE) / 8;
	}
	size_t hsize = vg__rt.packet_header;
	if (off < fsize && !zeros(fd, off, fsize)) {
		off = fsize; /* not a packet: damage readers report; left as it is */
	} else if (off < fsize && (!have_last || fsize - off < hsize)) {
		if (ftruncate(fd, (off_t)off) < 0) /* nothing to continue: a new file's zeros */
			return -1;
	} else if (off < fsize) {
		/* The holder died between allocating a packet and writing its header: an empty
		 * packet of the same writer covers the space. */
		put_u64(last, VGW_PKT_TIMESTAMP_BEGIN, u64_at(last, VGW_PKT_TIMESTAMP_END));
		put_u64(last, VGW_PKT_CONTENT_SIZE, (uint64_t)hsize * 8);
		put_u64(last, VGW_PKT_PACKET_SIZE, (fsize - off) * 8);
		put_u64(last, VGW_PKT_SEQ_NUM, u64_at(last, VGW_PKT_SEQ_NUM) + 1);
		if (pwrite(fd, last, hsize, (off_t)off) != (ssize_t)hsize)
			return -1;
		off = fsize;
	}
	c->end = off;
	c->seq = have_last ? u64_at(last, VGW_PKT_SEQ_NUM) + 1 : 0;
	c->discarded = have_last ? u64_at(last, VGW_PKT_EVENTS_DISCARDED) : 0;
	c->last_ts = have_last ? u64_at(last, VGW_PKT_TIMESTAMP_END) : 0;
	return 0;
}

/* Opens and locks pool-k: its descriptor, -1 when another thread (of any process) holds
 * it or it is not ours to write (another user's), -2 when no pool file can be had here
 * (no locks on this file system, no space, no descriptors: trying on would create files
 * for nothing). */
static int try_file(unsigned k, char *name, size_t len)
{
	snprintf(name, len, "pool-%u", k);
	int fd = vg__image_open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0666);
	if (fd < 0)
		return errno == EACCES || errno == EPERM || errno == ELOOP ? -1 : -2;
	struct stat s;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int busy = errno == EWOULDBLOCK;
		close(fd);
		return busy ? -1 : -2;
	}
	if (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

int vg__pool_claim(struct vg_pool_claim *c, char *name, size_t len)
{
	c->fd = c->slot = -1;
	unsigned tries = 0;
	for (unsigned k = 0; k < POOL_FILES && tries < PROBES; k++) {
		if (is_mine(k))
			continue;
		tries++;
		int fd = try_file(k, name, len);
		if (fd == -2)
			return -1;
		if (fd < 0)
			continue;
		int idx = index_open();
		if (find_end(fd, index_get(idx, k), c) < 0) {
			if (idx >= 0)
				close(idx);
			close(fd);
			continue;
		}
		/* The next claimant walks from here: this holder's packets only. */
		if (idx >= 0) {
			if (pwrite(idx, &c->end, 8, (off_t)k * 8) != 8) {
				/* no hint: the next claimant walks the whole file */
			}
			close(idx);
		}
		set_mine(k, true);
		c->fd = fd;
		c->slot = (int)k;
		return 0;
	}
	return -1;
}

void vg__pool_release(int slot)
{
	if (slot >= 0 && slot < POOL_FILES)
		set_mine((unsigned)slot, false);
}

void vg__pool_after_fork(void)
{
	for (unsigned i = 0; i < POOL_FILES / 64; i++)
		atomic_store(&mine[i], 0);
}
