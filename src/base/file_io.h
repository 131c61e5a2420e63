/* Whole files in and out: the read-until-done and write-until-done loops (EINTR, short
 * reads and writes) written once. */
#ifndef VIGIL_BASE_FILE_IO_H
#define VIGIL_BASE_FILE_IO_H

#include <stddef.h>

/* How vgb_read_file opens: a FIFO or device may block or never end. */
enum {
	VGB_READ_REGULAR = 1,  /* only a regular file (opened O_NONBLOCK, then checked) */
	VGB_READ_NOFOLLOW = 2, /* not through a symbolic link (ELOOP) */
};

/* The whole file at path, at most max bytes, NUL-terminated (the NUL not counted in *len),
 * malloc'd. NULL with errno: EISDIR, EINVAL (not a regular file, with VGB_READ_REGULAR),
 * EFBIG (more than max bytes), or what open(2) or read(2) said. */
char *vgb_read_file(const char *path, size_t max, unsigned how, size_t *len);
/* The same from an open descriptor, read to its end. */
char *vgb_read_fd(int fd, size_t max, size_t *len);
/* All of buf to fd, through short writes and EINTR: 0, or -1 with errno. */
int vgb_write_all(int fd, const void *buf, size_t len);

#endif
