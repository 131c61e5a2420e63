/* Small system helpers for the runtime: libc only, no allocation. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "wire/small_file.h"

/* Parses "123", "64k", "16M", "2G". Returns -1 on a malformed value. */
int vg__parse_size(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text || text[0] == '-')
		return -1;
	uint64_t unit = 1;
	switch (*end) {
	case 0:
		break;
	case 'k':
	case 'K':
		unit = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		unit = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		unit = 1ull << 30;
		end++;
		break;
	default:
		return -1;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > UINT64_MAX / unit)
		return -1;
	*out = v * unit;
	return 0;
}

int vg__mkdir_p(const char *path)
{
	/* Only the last component: a mistyped parent is an error, not a new tree of
	 * folders that a recording then fills unnoticed. */
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return -1;
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

int vg__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int vg__procfs_fd = -1;

/* A path under /proc through the held descriptor of /proc when the path itself no longer
 * resolves (the subject chrooted). */
static int open_proc(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && vg__procfs_fd >= 0 && !strncmp(path, "/proc/", 6))
		fd = openat(vg__procfs_fd, path + 6, O_RDONLY | O_CLOEXEC);
	return fd;
}

ssize_t vg__readlink_proc(const char *path, char *buf, size_t len)
{
	ssize_t n = readlink(path, buf, len);
	if (n < 0 && vg__procfs_fd >= 0 && !strncmp(path, "/proc/", 6))
		n = readlinkat(vg__procfs_fd, path + 6, buf, len);
	return n;
}

/* Reads up to len-1 bytes and NUL-terminates; strips one trailing newline. */
int vg__read_small_file(const char *path, char *buf, size_t len)
{
	return vgw_read_small_fd(open_proc(path), buf, len);
}

void vg__random_uuid(uint8_t uuid[16], char text[37])
{
	if (getrandom(uuid, 16, GRND_NONBLOCK) != 16) {
		/* No entropy yet: time and pid make it unique enough for a trace id. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t a = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		uint64_t b = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&ts;
		memcpy(uuid, &a, 8);
		memcpy(uuid + 8, &b, 8);
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x40; /* version 4 */
	uuid[8] = (uuid[8] & 0x3f) | 0x80; /* variant 1 */
	snprintf(text, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8],
	         uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15]);
}
