/* io_uring (docs/net.md, "Not followed, and counted"): liburing submits with its own
 * system calls and reads completions from memory shared with the kernel, so no call can
 * be interposed and no byte is followed. What can be said is how many submissions each
 * instance took: the kernel shows its submission queue's tail in /proc/self/fdinfo. At
 * exit, each instance still open is recorded as vg.net.unfollowed (call io_uring,
 * count: its submissions, on any descriptor). An instance closed earlier is not seen. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* The SqTail of the instance on fd, or -1 when fd is not one. */
static long long sq_tail(int fd)
{
	char path[64], link[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	if (n < 0)
		return -1;
	link[n] = 0;
	if (strcmp(link, "anon_inode:[io_uring]"))
		return -1;
	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	char buf[4096];
	if (vg__read_small_file(path, buf, sizeof buf) < 0)
		return -1;
	const char *t = strstr(buf, "\nSqTail:");
	return t ? strtoll(t + 8, NULL, 10) : -1;
}

void vg__net_count_rings(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd == self)
			continue;
		long long n = sq_tail((int)fd);
		if (n >= 0)
			vg__net_unfollowed((int)fd, 0, "io_uring", (uint64_t)n);
	}
	closedir(d);
}
