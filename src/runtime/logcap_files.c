/* Log files the user names (VIGIL_LOG_FILES, docs/logcapture.md): a write(2) to a
 * descriptor open on a file whose path matches one of the globs is a log write, split
 * at newlines like fd 2's. A descriptor is classified on its first write (readlink of
 * /proc/self/fd/N, fnmatch) and the answer cached; a "log" answer is checked again on
 * every write against the file's device and inode, so a descriptor closed behind our
 * back (close_range, a child's exec) and reused for a socket is never taken for a log
 * file: what is not handed on must be the log file's, nothing else's. */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "logcap.h"

#define MAX_GLOBS 16
#define MAX_FDS 65536

enum { FD_UNKNOWN = 0, FD_OTHER = 1, FD_LOG = 2 };

int vg__lc_files_on;
static char *globs[MAX_GLOBS];
static int nglobs;
static _Atomic uint8_t state[MAX_FDS];
static struct {
	_Atomic uint64_t dev, ino;
} ids[MAX_FDS];

void vg__lc_files_init(void)
{
	const char *v = getenv("VIGIL_LOG_FILES");
	if (!v || !*v)
		return;
	char *copy = strdup(v), *save = NULL;
	if (!copy)
		return;
	for (char *g = strtok_r(copy, ":", &save); g; g = strtok_r(NULL, ":", &save)) {
		if (nglobs == MAX_GLOBS) {
			vg__warn("VIGIL_LOG_FILES: more than %d globs; the rest are ignored",
			         MAX_GLOBS);
			break;
		}
		globs[nglobs++] = g; /* `copy` lives as long as the process */
	}
	vg__lc_files_on = nglobs > 0;
}

static int matches(int fd, const struct stat *st)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = vg__readlink_proc(link, path, sizeof path - 1);
	if (n <= 0 || path[0] != '/')
		return 0;
	path[n] = 0;
	/* a regular file or a FIFO a program logs into; never a socket, a tty, a device */
	if (!S_ISREG(st->st_mode) && !S_ISFIFO(st->st_mode))
		return 0;
	for (int i = 0; i < nglobs; i++)
		if (fnmatch(globs[i], path, 0) == 0)
			return 1;
	return 0;
}

int vg__lc_is_log_fd(int fd)
{
	if (fd < 0 || fd >= MAX_FDS)
		return 0;
	uint8_t s = atomic_load_explicit(&state[fd], memory_order_relaxed);
	if (s == FD_OTHER)
		return 0;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return 0;
	if (s == FD_LOG && atomic_load_explicit(&ids[fd].dev, memory_order_relaxed) == st.st_dev &&
	    atomic_load_explicit(&ids[fd].ino, memory_order_relaxed) == st.st_ino)
		return 1;
	int log = matches(fd, &st);
	if (log) {
		atomic_store_explicit(&ids[fd].dev, st.st_dev, memory_order_relaxed);
		atomic_store_explicit(&ids[fd].ino, st.st_ino, memory_order_relaxed);
	}
	atomic_store_explicit(&state[fd], log ? FD_LOG : FD_OTHER, memory_order_relaxed);
	return log;
}

void vg__lc_fd_forget(int fd)
{
	if (fd >= 0 && fd < MAX_FDS)
		atomic_store_explicit(&state[fd], FD_UNKNOWN, memory_order_relaxed);
}
