/* The files a command writes (`-o FILE`, `--svg FILE`, generated sources), written one way.
 *
 * vigil runs as root in many places, so an output must never destroy what it does not
 * own: a path that names something other than a regular file (a device such as
 * /dev/null, a FIFO, a terminal) is written in place, never truncated, replaced or
 * renamed over. A regular file, or a path that does not exist yet, is written to a new
 * file beside it and renamed over it once complete: a reader never sees half of it, and
 * a failed run leaves the old file as it was. A symbolic link stays a link: its target is
 * what gets replaced. "-" is standard output.
 */
#ifndef VIGIL_COMMON_OUT_FILE_H
#define VIGIL_COMMON_OUT_FILE_H

#include <stddef.h>
#include <stdio.h>

struct vg_out {
	FILE *f;     /* write here between vg_out_open and vg_out_commit/vg_out_abort */
	char *path;  /* what the user named */
	char *final; /* what is replaced at commit: the path, or a link's target */
	char *tmp;   /* the file being written, or NULL when written in place */
};

/* Opens path for writing; 0, or -1 with "PATH: why" in err. A directory is refused. */
int vg_out_open(struct vg_out *o, const char *path, char *err, size_t errsize);

/* Flushes and closes; a regular file is renamed into place. 0, or -1 with "PATH: why" in
 * err, the old file untouched and the temporary removed. */
int vg_out_commit(struct vg_out *o, char *err, size_t errsize);

/* Gives up: the temporary is removed, the old file untouched. */
void vg_out_abort(struct vg_out *o);

/* For outputs that are databases or folders, which cannot be written in place: 0 when
 * path does not exist or is a regular file, else -1 with "PATH: is not a regular file
 * ..." in err. */
int vg_out_check_regular(const char *path, char *err, size_t errsize);

#endif
