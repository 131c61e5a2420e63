/* The runtime's own descriptors, kept valid through what daemons do to themselves
 * (docs/architecture.md "Surviving the subject").
 *
 * Every descriptor the runtime keeps (the trace root and image directories, the metadata,
 * the held stream files) sits at a high number (>= 512, close-on-exec) and is listed here.
 * The close/dup2/dup3/close_range/closefrom hooks consult the list: closing one of them
 * is refused as if it succeeded, and a dup2 onto one first moves it elsewhere, so the
 * subject sees the results it would see without the runtime. Files are then reached
 * through the directory descriptors (openat), never by path: a chroot changes nothing,
 * and nothing needs looking up after a privilege drop. A descriptor closed behind the
 * runtime's back (a raw syscall) is noticed by its inode before use and reopened by path
 * when that still works. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define HIGH_FD 512
#define MAX_OWN 128
#define BITMAP_FDS 8192

struct own {
	int *slot; /* where the runtime keeps the descriptor; NULL = free entry */
};

static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static struct own owns[MAX_OWN];
static _Atomic uint64_t own_bits[BITMAP_FDS / 64];
static _Atomic int own_above;    /* some own descriptor is >= BITMAP_FDS */
static _Atomic unsigned own_top; /* the highest descriptor ever ours (0: none) */

static int image_fd = -1, out_fd = -1;
static dev_t image_dev, out_dev;
static ino_t image_ino, out_ino;

static void bit_set(int fd, int on)
{
	if (fd < 0)
		return;
	if (on && (unsigned)fd > atomic_load(&own_top))
		atomic_store(&own_top, (unsigned)fd); /* under own_lock */
	if (fd >= BITMAP_FDS) {
		if (on)
			atomic_store(&own_above, 1);
		return;
	}
	uint64_t m = (uint64_t)1 << (fd % 64);
	if (on)
		atomic_fetch_or(&own_bits[fd / 64], m);
	else
		atomic_fetch_and(&own_bits[fd / 64], ~m);
}

int vg__own_fd(int fd)
{
	if (fd < HIGH_FD)
		return 0; /* the runtime's descriptors are all above: one compare for most */
	if (fd < BITMAP_FDS)
		return (atomic_load_explicit(&own_bits[fd / 64], memory_order_relaxed) >>
		        (fd % 64)) &
		       1;
	if (!atomic_load_explicit(&own_above, memory_order_relaxed))
		return 0;
	int found = 0;
	pthread_mutex_lock(&own_lock);
	for (int i = 0; i < MAX_OWN && !found; i++)
		found = owns[i].slot && *owns[i].slot == fd;
	pthread_mutex_unlock(&own_lock);
	return found;
}

unsigned vg__own_fd_top(void)
{
	return atomic_load_explicit(&own_top, memory_order_relaxed);
}

int vg__high_fd(int fd)
{
	if (fd < 0 || fd >= HIGH_FD)
		return fd;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, HIGH_FD);
	if (high < 0)
		return fd; /* RLIMIT_NOFILE below HIGH_FD: keep it where it is */
	close(fd);
	return high;
}

int vg__own_fd_add(int *slot)
{
	pthread_mutex_lock(&own_lock);
	int i = 0;
	while (i < MAX_OWN && owns[i].slot)
		i++;
	if (i < MAX_OWN) {
		owns[i].slot = slot;
		bit_set(*slot, 1);
	}
	pthread_mutex_unlock(&own_lock);
	return i < MAX_OWN ? 0 : -1;
}

/* Forgets *slot and closes it, unless `keep`: the number is no longer ours (it was
 * closed behind our back and may be the subject's now). */
void vg__own_fd_release(int *slot, int keep)
{
	pthread_mutex_lock(&own_lock);
	for (int i = 0; i < MAX_OWN; i++)
		if (owns[i].slot == slot)
			owns[i].slot = NULL;
	int fd = *slot;
	*slot = -1;
	bit_set(fd, 0);
	pthread_mutex_unlock(&own_lock);
	if (fd >= 0 && !keep)
		close(fd);
}

/* Forgets *slot without closing it: the caller closes the returned descriptor (after
 * whatever must come first). */
int vg__own_fd_take(int *slot)
{
	int fd = *slot;
	vg__own_fd_release(slot, 1);
	return fd;
}

/* The subject is about to dup2 onto `fd`, one of ours: ours moves to another number
 * first. There is a short window in which a thread of the runtime may still use the
 * old number; the inode checks before each use catch what follows it. */
void vg__own_fd_evict(int fd)
{
	pthread_mutex_lock(&own_lock);
	for (int i = 0; i < MAX_OWN; i++) {
		if (!owns[i].slot || *owns[i].slot != fd)
			continue;
		int moved = fcntl(fd, F_DUPFD_CLOEXEC, HIGH_FD);
		*owns[i].slot = moved;
		bit_set(moved, 1);
		if (moved < 0)
			owns[i].slot = NULL;
		break;
	}
	bit_set(fd, 0);
	pthread_mutex_unlock(&own_lock);
}

/* ---- the directories ---- */

static int open_dir_at(int dirfd, const char *path, dev_t *dev, ino_t *ino)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat s;
	if (fstat(fd, &s) < 0) {
		close(fd);
		return -1;
	}
	*dev = s.st_dev;
	*ino = s.st_ino;
	return vg__high_fd(fd);
}

static int same_file(int fd, dev_t dev, ino_t ino)
{
	struct stat s;
	return fd >= 0 && fstat(fd, &s) == 0 && s.st_dev == dev && s.st_ino == ino;
}

int vg__files_open_out(void)
{
	if (vg__procfs_fd < 0) { /* /proc, for after a chroot (util.c) */
		dev_t d;
		ino_t i;
		int fd = open_dir_at(AT_FDCWD, "/proc", &d, &i);
		if (fd >= HIGH_FD) {
			vg__procfs_fd = fd;
			vg__own_fd_add(&vg__procfs_fd);
		} else if (fd >= 0) {
			close(fd); /* RLIMIT_NOFILE is low: the subject's numbers come first */
		}
	}
	if (out_fd >= 0)
		return 0;
	out_fd = open_dir_at(AT_FDCWD, vg__rt.cfg.out, &out_dev, &out_ino);
	if (out_fd < 0)
		return -1;
	vg__own_fd_add(&out_fd);
	return 0;
}

int vg__files_out_number(void)
{
	return out_fd;
}

/* An exec'd image: the trace root's descriptor its process kept open across the exec
 * (vg__files_before_exec), which works where the path may not (a chroot, a directory
 * the new user cannot search). */
void vg__files_adopt_out(int fd)
{
	struct stat s, p;
	if (out_fd >= 0 || fd < 0 || fstat(fd, &s) < 0 || !S_ISDIR(s.st_mode))
		return;
	if (stat(vg__rt.cfg.out, &p) == 0 && (p.st_dev != s.st_dev || p.st_ino != s.st_ino))
		return; /* not the root VIGIL_OUT names: left alone */
	/* The default spool is named by user and pid, which an exec after a privilege drop
	 * or in a fork child no longer match: it is the inherited directory's name. */
	char link[40], real[sizeof vg__rt.cfg.out];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = vg__rt.cfg.spool_private ? vg__readlink_proc(link, real, sizeof real - 1) : -1;
	if (n > 0 && real[0] == '/') {
		real[n] = 0;
		if (stat(real, &p) == 0 && p.st_dev == s.st_dev && p.st_ino == s.st_ino)
			memcpy(vg__rt.cfg.out, real, (size_t)n + 1);
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	out_fd = fd;
	out_dev = s.st_dev;
	out_ino = s.st_ino;
	vg__own_fd_add(&out_fd);
}

/* Around an exec: the root's descriptor is inherited by the new image (it names it in
 * VIGIL_PROC), and closed on exec again if the exec fails. */
void vg__files_before_exec(void)
{
	if (out_fd >= 0)
		fcntl(out_fd, F_SETFD, 0);
}

void vg__files_exec_failed(void)
{
	if (out_fd >= 0)
		fcntl(out_fd, F_SETFD, FD_CLOEXEC);
}

int vg__files_open_image(void)
{
	if (image_fd >= 0)
		vg__own_fd_release(&image_fd, 0);
	const char *name = strrchr(vg__rt.dir, '/');
	name = name ? name + 1 : vg__rt.dir;
	if (out_fd >= 0)
		image_fd = open_dir_at(out_fd, name, &image_dev, &image_ino);
	else
		image_fd = open_dir_at(AT_FDCWD, vg__rt.dir, &image_dev, &image_ino);
	if (image_fd < 0)
		return -1;
	vg__own_fd_add(&image_fd);
	return 0;
}

/* A descriptor of ours closed behind our back: reopened by path, if it is still the same
 * directory (not after a chroot). */
static int checked(int *fd, dev_t dev, ino_t ino, const char *path)
{
	int cur = *fd;
	if (same_file(cur, dev, ino))
		return cur;
	pthread_mutex_lock(&own_lock);
	if (*fd == cur) { /* nobody reopened it meanwhile */
		bit_set(cur, 0);
		dev_t d;
		ino_t i;
		int n = open_dir_at(AT_FDCWD, path, &d, &i);
		if (n >= 0 && (d != dev || i != ino)) {
			close(n);
			n = -1;
		}
		*fd = n;
		bit_set(n, 1);
	}
	cur = *fd;
	pthread_mutex_unlock(&own_lock);
	if (cur < 0)
		errno = EBADF;
	return cur;
}

int vg__image_fd(void)
{
	return checked(&image_fd, image_dev, image_ino, vg__rt.dir);
}

int vg__out_fd(void)
{
	return checked(&out_fd, out_dev, out_ino, vg__rt.cfg.out);
}

const char *vg__image_name(void)
{
	const char *name = strrchr(vg__rt.dir, '/');
	return name ? name + 1 : vg__rt.dir;
}

/* A file of ours, by name in the image directory. */
int vg__image_open(const char *name, int flags, mode_t mode)
{
	int dir = vg__image_fd();
	if (dir < 0)
		return -1;
	return openat(dir, name, flags | O_CLOEXEC, mode);
}

/* The same, created with mode 0666 if flags say so, and its identity: a descriptor kept
 * is checked against it before each use. -1 when it cannot be opened or examined. */
int vg__image_open_id(const char *name, int flags, dev_t *dev, ino_t *ino)
{
	int fd = vg__image_open(name, flags, 0666);
	struct stat s;
	if (fd >= 0 && fstat(fd, &s) == 0) {
		*dev = s.st_dev;
		*ino = s.st_ino;
		return fd;
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* ---- paths inside the trace root (send.c's spool), through its descriptor ---- */

/* The root's descriptor and path relative to it, or AT_FDCWD and path itself. */
static int out_rel(const char *path, const char **rel)
{
	size_t n = strlen(vg__rt.cfg.out);
	int fd;
	if (n && !strncmp(path, vg__rt.cfg.out, n) && (path[n] == '/' || !path[n]) &&
	    (fd = vg__out_fd()) >= 0) {
		*rel = path[n] ? path + n + 1 : ".";
		return fd;
	}
	*rel = path;
	return AT_FDCWD;
}

int vg__out_open(const char *path, int flags)
{
	const char *rel;
	int dir = out_rel(path, &rel);
	return openat(dir, rel, flags | O_CLOEXEC);
}

DIR *vg__out_opendir(const char *path)
{
	int fd = vg__out_open(path, O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		close(fd);
	return d;
}

int vg__out_stat(const char *path, struct stat *sb)
{
	const char *rel;
	int dir = out_rel(path, &rel);
	return fstatat(dir, rel, sb, 0);
}

int vg__out_unlink(const char *path, int flags)
{
	const char *rel;
	int dir = out_rel(path, &rel);
	return unlinkat(dir, rel, flags);
}

void vg__files_after_fork(void)
{
	/* Everything but the root (and /proc) is the parent's image's: its directory, metadata and
	 * the files of all its threads' streams (the child has only the forking thread). */
	pthread_mutex_init(&own_lock, NULL);
	for (int i = 0; i < MAX_OWN; i++) {
		int *slot = owns[i].slot;
		if (!slot || slot == &out_fd || slot == &vg__procfs_fd)
			continue;
		owns[i].slot = NULL;
		int fd = *slot;
		*slot = -1;
		bit_set(fd, 0);
		if (fd >= 0)
			close(fd);
	}
}

/* RLIMIT_FSIZE: growing a file past it raises SIGXFSZ, whose default action kills the
 * process. The runtime asks first and counts the loss instead. */
int vg__fsize_allows(uint64_t end)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    end <= (uint64_t)rl.rlim_cur)
		return 1;
	errno = EFBIG;
	return 0;
}
