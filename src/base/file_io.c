/* Whole files in and out: see file_io.h. */
#define _GNU_SOURCE
#include "base/file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"

/* Reads to the end; hint is the expected size (a regular file's), 0 when unknown. */
static char *read_to_end(int fd, size_t max, size_t hint, size_t *len)
{
	if (max > SIZE_MAX / 4)
		max = SIZE_MAX / 4;
	size_t cap = hint ? hint + 1 : 65536, n = 0;
	if (cap > max + 1)
		cap = max + 1;
	char *buf = vgb_xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			cap = cap > max / 2 ? max + 1 : cap * 2;
			buf = vgb_xrealloc(buf, cap + 1, 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		errno = EFBIG;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

char *vgb_read_fd(int fd, size_t max, size_t *len)
{
	struct stat st;
	size_t hint = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		hint = (uint64_t)st.st_size > max ? max : (size_t)st.st_size;
	return read_to_end(fd, max, hint, len);
}

char *vgb_read_file(const char *path, size_t max, unsigned how, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | (how & VGB_READ_REGULAR ? O_NONBLOCK : 0) |
	                        (how & VGB_READ_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0)
		return NULL;
	struct stat st;
	int e = 0;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (S_ISDIR(st.st_mode))
		e = EISDIR;
	else if ((how & VGB_READ_REGULAR) && !S_ISREG(st.st_mode))
		e = EINVAL;
	else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max)
		e = EFBIG;
	char *buf = NULL;
	if (!e) {
		/* Regular files opened O_NONBLOCK read as usual. */
		buf = vgb_read_fd(fd, max, len);
		if (!buf)
			e = errno;
	}
	close(fd);
	errno = e;
	return buf;
}

int vgb_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}
