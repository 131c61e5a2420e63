/* What daemons do to themselves, made harmless to the recording (docs/architecture.md
 * "Surviving the subject"):
 *
 * - a privilege drop (setuid, seteuid, setreuid, setresuid): just before it, while the
 *   process still may, the image directory and its files are given to the new user (its
 *   later threads create streams there), and the trace root grants it rwx by an ACL entry
 *   (its later fork children and exec'd images make their directories there, and the log
 *   model is written there at exit);
 * - closing every descriptor (close_range, closefrom; close, dup2 and dup3 are in
 *   hooks_net.c): the runtime's descriptors are skipped as if closed (files.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"

#define VG_API __attribute__((visibility("default")))

static void *real_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* ---- privilege drops ---- */

/* POSIX ACL as the kernel stores it in system.posix_acl_access (little-endian). */
enum { A_USER_OBJ = 1, A_USER = 2, A_GROUP_OBJ = 4, A_GROUP = 8, A_MASK = 0x10, A_OTHER = 0x20 };
struct acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};
#define ACL_MAX 64

static int acl_cmp(const void *a, const void *b)
{
	const struct acl_entry *x = a, *y = b;
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Adds user:uid:rwx to the directory's access ACL (and widens its mask to match). */
static int acl_grant(int dirfd, uid_t uid)
{
	uint8_t buf[4 + ACL_MAX * 8];
	struct acl_entry e[ACL_MAX + 2];
	size_t n = 0;
	ssize_t len = fgetxattr(dirfd, "system.posix_acl_access", buf, sizeof buf);
	if (len >= 4 && (len - 4) % 8 == 0) {
		for (ssize_t off = 4; off < len && n < ACL_MAX; off += 8, n++) {
			memcpy(&e[n].tag, buf + off, 2);
			memcpy(&e[n].perm, buf + off + 2, 2);
			memcpy(&e[n].id, buf + off + 4, 4);
		}
	} else {
		if (len < 0 && errno != ENODATA)
			return -1;
		struct stat s;
		if (fstat(dirfd, &s) < 0)
			return -1;
		e[n++] = (struct acl_entry){A_USER_OBJ, (s.st_mode >> 6) & 7, UINT32_MAX};
		e[n++] = (struct acl_entry){A_GROUP_OBJ, (s.st_mode >> 3) & 7, UINT32_MAX};
		e[n++] = (struct acl_entry){A_OTHER, s.st_mode & 7, UINT32_MAX};
	}
	int have_user = 0, have_mask = 0;
	uint16_t group_class = 7;
	for (size_t i = 0; i < n; i++) {
		if (e[i].tag == A_USER && e[i].id == uid) {
			if (e[i].perm == 7)
				return 0; /* already granted */
			e[i].perm = 7;
			have_user = 1;
		}
		if (e[i].tag == A_USER || e[i].tag == A_GROUP_OBJ || e[i].tag == A_GROUP)
			group_class |= e[i].perm;
	}
	if (!have_user)
		e[n++] = (struct acl_entry){A_USER, 7, (uint32_t)uid};
	for (size_t i = 0; i < n; i++)
		if (e[i].tag == A_MASK) {
			e[i].perm = group_class;
			have_mask = 1;
		}
	if (!have_mask)
		e[n++] = (struct acl_entry){A_MASK, group_class, UINT32_MAX};
	qsort(e, n, sizeof e[0], acl_cmp);
	uint32_t version = 2;
	memcpy(buf, &version, 4);
	for (size_t i = 0; i < n; i++) {
		memcpy(buf + 4 + i * 8, &e[i].tag, 2);
		memcpy(buf + 4 + i * 8 + 2, &e[i].perm, 2);
		memcpy(buf + 4 + i * 8 + 4, &e[i].id, 4);
	}
	return fsetxattr(dirfd, "system.posix_acl_access", buf, 4 + n * 8, 0);
}

/* The image directory and every file in it become the new user's. In the shared layout
 * only the image's own stream files do (their names start with its label), and the
 * directory, every image's, grants the user rwx. */
static int give_image(int dirfd, uid_t uid)
{
	if (vg__rt.shared ? acl_grant(dirfd, uid) < 0 : fchown(dirfd, uid, (gid_t)-1) < 0)
		return -1;
	size_t label = strlen(vg__rt.label);
	int dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d) {
		if (dup >= 0)
			close(dup);
		return -1;
	}
	rewinddir(d);
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		if (vg__rt.shared &&
		    (strncmp(de->d_name, vg__rt.label, label) || de->d_name[label] != '-'))
			continue; /* another image's, or the metadata (written through its
			             descriptor) */
		if (fchownat(dirfd, de->d_name, uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) < 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

/* Called before the subject's effective user changes to `uid` (-1: unchanged). */
static void before_uid_change(uid_t uid)
{
	if (!vg__rt.recording || uid == (uid_t)-1 || uid == geteuid())
		return;
	int saved = errno;
	static _Atomic int warned;
	int dir = vg__image_fd(), out = vg__out_fd();
	int bad = dir < 0 || give_image(dir, uid) < 0;
	if (out >= 0 && acl_grant(out, uid) < 0)
		bad |= 2;
	vg__send_before_uid_change(uid);
	if (bad && geteuid() == 0 && !atomic_exchange(&warned, 1))
		vg__warn("cannot give %s to user %u before the subject becomes it (%s); threads, "
		         "children and images it starts later may not be recorded",
		         (bad & 1) ? vg__rt.dir : vg__rt.cfg.out, (unsigned)uid, strerror(errno));
	errno = saved;
}

typedef int (*id1_fn)(uid_t);
typedef int (*id2_fn)(uid_t, uid_t);
typedef int (*id3_fn)(uid_t, uid_t, uid_t);

VG_API int setuid(uid_t uid)
{
	static id1_fn f;
	if (!f && !(f = (id1_fn)real_fn("setuid"))) {
		errno = ENOSYS;
		return -1;
	}
	before_uid_change(uid);
	return f(uid);
}

VG_API int seteuid(uid_t uid)
{
	static id1_fn f;
	if (!f && !(f = (id1_fn)real_fn("seteuid"))) {
		errno = ENOSYS;
		return -1;
	}
	before_uid_change(uid);
	return f(uid);
}

VG_API int setreuid(uid_t r, uid_t e)
{
	static id2_fn f;
	if (!f && !(f = (id2_fn)real_fn("setreuid"))) {
		errno = ENOSYS;
		return -1;
	}
	before_uid_change(e != (uid_t)-1 ? e : r);
	return f(r, e);
}

VG_API int setresuid(uid_t r, uid_t e, uid_t s)
{
	static id3_fn f;
	if (!f && !(f = (id3_fn)real_fn("setresuid"))) {
		errno = ENOSYS;
		return -1;
	}
	before_uid_change(e);
	return f(r, e, s);
}

/* ---- closing every descriptor ---- */

#define CLOSE_RANGE_UNSHARE_ 2 /* linux/close_range.h */

/* Closes [first, last] except the runtime's descriptors, all of which are at most
 * `top`: 0, or -1 with errno. */
static int close_range_sparing(unsigned first, unsigned last, int flags, unsigned top)
{
	int err = 0;
	unsigned lo = first;
	for (unsigned fd = first < 512 ? 512 : first; fd <= last && fd <= top; fd++) {
		if (!vg__own_fd((int)fd))
			continue;
		if (fd > lo && syscall(SYS_close_range, lo, fd - 1, flags) < 0 && !err)
			err = errno;
		lo = fd + 1;
		flags &= ~CLOSE_RANGE_UNSHARE_; /* the first call did it */
	}
	if (lo <= last && syscall(SYS_close_range, lo, last, flags) < 0 && !err)
		err = errno;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

VG_API int close_range(unsigned first, unsigned last, int flags)
{
	unsigned top = vg__own_fd_top();
	if (!top || first > top || first > last)
		return (int)syscall(SYS_close_range, first, last, flags);
	return close_range_sparing(first, last, flags, top);
}

VG_API void closefrom(int lowfd)
{
	if (lowfd < 0)
		lowfd = 0;
	if (close_range((unsigned)lowfd, ~0u, 0) == 0 || errno != ENOSYS)
		return;
	/* No close_range in this kernel: one close per possible descriptor. */
	long max = sysconf(_SC_OPEN_MAX);
	unsigned top = max > 0 ? (unsigned)max : 1024;
	if (vg__own_fd_top() > top)
		top = vg__own_fd_top();
	for (unsigned fd = (unsigned)lowfd; fd <= top; fd++)
		if (!vg__own_fd((int)fd))
			syscall(SYS_close, fd);
}
