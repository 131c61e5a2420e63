/* Output files written without harming what they replace (out_file.h). */
#define _GNU_SOURCE
#include "common/out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errsize, const char *path, const char *why)
{
	snprintf(err, errsize, "%s: %s", path, why);
	return -1;
}

static void out_free(struct vg_out *o)
{
	free(o->path);
	free(o->final);
	free(o->tmp);
	o->path = o->final = o->tmp = NULL;
	o->f = NULL;
}

int vg_out_check_regular(const char *path, char *err, size_t errsize)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : fail(err, errsize, path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(err, errsize, path,
		            S_ISDIR(st.st_mode) ? "is a directory"
		                                : "is not a regular file (a device, FIFO or "
		                                  "socket is never replaced)");
	return 0;
}

/* A new file beside final, created exclusively, with final's mode when it exists. */
static int open_beside(struct vg_out *o, const struct stat *old, char *err, size_t errsize)
{
	size_t n = strlen(o->final) + 32;
	if (!(o->tmp = malloc(n)))
		return fail(err, errsize, o->path, "out of memory");
	for (int attempt = 0; attempt < 100; attempt++) {
		snprintf(o->tmp, n, "%s.tmp%ld.%d", o->final, (long)getpid(), attempt);
		mode_t mode = old ? old->st_mode & 07777 : 0666;
		int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return fail(err, errsize, o->path, strerror(errno));
		if (old)
			(void)fchmod(fd, old->st_mode & 07777); /* umask applied at open */
		if (!(o->f = fdopen(fd, "w"))) {
			int e = errno;
			close(fd);
			unlink(o->tmp);
			return fail(err, errsize, o->path, strerror(e));
		}
		return 0;
	}
	return fail(err, errsize, o->path, "cannot create a temporary file beside it");
}

int vg_out_open(struct vg_out *o, const char *path, char *err, size_t errsize)
{
	*o = (struct vg_out){0};
	if (!(o->path = strdup(path)))
		return fail(err, errsize, path, "out of memory");
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	struct stat st;
	int exists = stat(path, &st) == 0; /* follows links: the target decides */
	if (!exists && errno != ENOENT) {
		fail(err, errsize, path, strerror(errno));
		out_free(o);
		return -1;
	}
	if (exists && S_ISDIR(st.st_mode)) {
		fail(err, errsize, path, "is a directory");
		out_free(o);
		return -1;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		/* A device, FIFO or socket: written in place, never truncated. */
		int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
			fail(err, errsize, path, strerror(errno));
			if (fd >= 0)
				close(fd);
			out_free(o);
			return -1;
		}
		return 0;
	}
	struct stat lst;
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && exists) {
		o->final = realpath(path, NULL); /* the link stays; its target is replaced */
	} else {
		o->final = strdup(path);
	}
	if (!o->final) {
		fail(err, errsize, path, strerror(errno));
		out_free(o);
		return -1;
	}
	if (open_beside(o, exists ? &st : NULL, err, errsize) < 0) {
		out_free(o);
		return -1;
	}
	return 0;
}

int vg_out_commit(struct vg_out *o, char *err, size_t errsize)
{
	if (!o->f)
		return fail(err, errsize, o->path ? o->path : "output", "not open");
	int rc = 0, e = 0;
	if (o->f == stdout) {
		if (fflush(stdout) || ferror(stdout))
			rc = -1, e = errno ? errno : EIO;
	} else {
		if (ferror(o->f))
			rc = -1, e = errno ? errno : EIO;
		if (fclose(o->f) && !rc)
			rc = -1, e = errno;
		o->f = NULL;
		if (o->tmp) {
			if (!rc && rename(o->tmp, o->final) < 0)
				rc = -1, e = errno;
			if (rc)
				unlink(o->tmp);
		}
	}
	if (rc)
		fail(err, errsize, o->path, strerror(e));
	out_free(o);
	return rc;
}

void vg_out_abort(struct vg_out *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	out_free(o);
}
