/* Which columns of a relation's cache file were checked against their checksums, kept
 * beside it (PATH.rel-NAME%checked), so a later query checks only the
 * columns no earlier one did (cache_internal.h, vgc_rfile_check).
 *
 * A column checked once is trusted while the file is the one checked: the same device,
 * inode, size, modification and change times. Any write to the file changes its change
 * time (ctime, which no user can set back), so a cache damaged after the check is checked
 * again, and answers nothing wrong. That is the trust vigil puts in a trace's own streams
 * (the cache's key holds their identity, not a checksum of their bytes): the cache is
 * never trusted more than the trace it was made from. What it does not see is a disk's
 * own corruption of bytes below the file system, which the trace would not see either.
 *
 * A file changed within a clock tick of its check could keep its change time (file
 * times come from a coarse clock): as git does for its index ("racily clean"), no record
 * is written for a file whose times are not at least a second older than the check's
 * start. The record carries its own checksum; a damaged, foreign or unreadable record is
 * no record. Writing it is best effort (a read-only cache is checked every time); never
 * over anything but a regular file, through a temporary file renamed into place. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file_io.h"
#include "relations/cache_internal.h"

#define MAGIC "vigil checked v1"
#define MAX_COLUMNS 4096

struct record_head {
	char magic[16];
	int64_t identity[7]; /* dev, ino, size, mtime s/ns, ctime s/ns */
	uint64_t ncols;
};

static void identity_of(const struct stat *st, int64_t id[7])
{
	int64_t v[7] = {(int64_t)st->st_dev,          (int64_t)st->st_ino,
	                (int64_t)st->st_size,         (int64_t)st->st_mtim.tv_sec,
	                (int64_t)st->st_mtim.tv_nsec, (int64_t)st->st_ctim.tv_sec,
	                (int64_t)st->st_ctim.tv_nsec};
	memcpy(id, v, sizeof v);
}

/* PATH.rel-NAME%checked: no relation's file (a name's '%' is followed by two hex digits) */
static bool record_path(const char *rel, char *out, size_t n)
{
	int len = snprintf(out, n, "%s%%checked", rel);
	return len > 0 && (size_t)len < n;
}

size_t vgc_checked_read(const char *rel, const struct stat *st, struct vgc_column *cols, size_t max)
{
	char path[4200];
	if (!record_path(rel, path, sizeof path))
		return 0;
	size_t len = 0;
	char *buf = vgb_read_file(
	    path, sizeof(struct record_head) + 8 + MAX_COLUMNS * sizeof(struct vgc_column),
	    VGB_READ_REGULAR | VGB_READ_NOFOLLOW, &len);
	if (!buf)
		return 0;
	struct record_head h;
	int64_t want[7];
	identity_of(st, want);
	size_t n = 0;
	if (len >= sizeof h + 8) {
		memcpy(&h, buf, sizeof h);
		size_t body = sizeof h + h.ncols * sizeof(struct vgc_column);
		uint64_t sum;
		if (!memcmp(h.magic, MAGIC, sizeof h.magic) && h.ncols <= MAX_COLUMNS &&
		    h.ncols <= max && len == body + 8 && !memcmp(h.identity, want, sizeof want)) {
			memcpy(&sum, buf + body, 8);
			if (sum == vgc_checksum(buf, body)) {
				n = h.ncols;
				memcpy(cols, buf + sizeof h, n * sizeof *cols);
			}
		}
	}
	free(buf);
	return n;
}

void vgc_checked_write(const char *rel, const struct stat *st, const struct vgc_column *cols,
                       size_t n, int64_t started_ns)
{
	/* racily clean: a change in the same tick as the file's last could keep its times */
	int64_t ctime = st->st_ctim.tv_sec * 1000000000ll + st->st_ctim.tv_nsec;
	int64_t mtime = st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec;
	if (ctime > started_ns - 1000000000ll || mtime > started_ns - 1000000000ll ||
	    n > MAX_COLUMNS)
		return;
	char path[4200], tmp[4300];
	if (!record_path(rel, path, sizeof path))
		return;
	struct stat old;
	if (lstat(path, &old) == 0 && !S_ISREG(old.st_mode))
		return; /* never in the place of a link, FIFO, device or folder */
	struct record_head h = {.ncols = n};
	memcpy(h.magic, MAGIC, sizeof h.magic);
	identity_of(st, h.identity);
	size_t body = sizeof h + n * sizeof *cols;
	uint8_t *buf = malloc(body + 8);
	if (!buf)
		return;
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, cols, n * sizeof *cols);
	uint64_t sum = vgc_checksum(buf, body);
	memcpy(buf + body, &sum, 8);
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd >= 0) {
		bool ok = vgb_write_all(fd, buf, body + 8) == 0;
		ok = close(fd) == 0 && ok;
		if (!ok || rename(tmp, path) != 0)
			unlink(tmp);
	}
	free(buf);
}
