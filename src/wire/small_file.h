/* One read of a small kernel file (wire/small_file.c): a /proc or /sys file whose whole
 * text comes in one read. Shared by libvigil's /proc reads (runtime/util.c, which opens
 * through its held /proc descriptor after a chroot) and the clock's clocksource check
 * (wire/clock.c). libc only, no allocation. */
#ifndef VIGIL_WIRE_SMALL_FILE_H
#define VIGIL_WIRE_SMALL_FILE_H

#include <stddef.h>

/* Reads up to len-1 bytes of fd and closes it; the text NUL-terminated, one trailing
 * newline stripped. Its length, or -1 when fd < 0 or the read fails. */
int vgw_read_small_fd(int fd, char *buf, size_t len);
/* The same for the file at path. */
int vgw_read_small_file(const char *path, char *buf, size_t len);

#endif
