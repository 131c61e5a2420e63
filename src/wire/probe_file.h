/* The pattern file of adaptive probes (docs/control.md "Pattern file"): lines `enable
 * PATTERN` or `disable PATTERN` (wire/probe_pattern.h; `#` comments), re-read when it
 * changes. Two readers: the subject (VIGIL_PROBES_FILE, src/runtime/probes_file.c) and
 * vigild for its subjects (--probes-file, src/collector/probes_file.c); they must agree
 * on what a whole file is, so the reading lives here once. libc only: compiled into
 * libvigil too (hidden, listed in the wire room's CMake). */
#ifndef VIGIL_WIRE_PROBE_FILE_H
#define VIGIL_WIRE_PROBE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "wire/probe_pattern.h"

/* A probe rule: `pattern enable|disable PATTERN`, or a line of the pattern file. */
struct vgw_probe_rule {
	struct vgw_probe_pattern p;
	int enable;
};

/* What was looked at last: the file's identity and times (unchanged: not read again),
 * and the hash of the content last applied or reported (the same content again: nothing
 * to do or say). Zeroed before the first look. */
struct vgw_probe_file {
	int state; /* 0 nothing yet, 1 read, 2 missing (said), 3 unreadable (said) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	uint64_t hash;
	int hashed;
	size_t in_force; /* rules of the last good content */
};

enum vgw_probe_file_look {
	VGW_PROBE_FILE_SAME,       /* nothing new to apply or say */
	VGW_PROBE_FILE_RULES,      /* new content: *rules, *n (the caller's), to apply */
	VGW_PROBE_FILE_UNREADABLE, /* missing, not a regular file, too big: err says why */
	VGW_PROBE_FILE_BAD,        /* read whole but not a pattern file (yet): err is
	                            * "LINE: why", or " why" for the whole file */
};

/* One look at `path`: read only if it changed since the last look, and said only once
 * per change (an error returns SAME until the file changes again). Opened with
 * O_NONBLOCK and read only if it is a regular file of at most 1 MiB: a FIFO, a device or
 * a huge file cannot hold it up. On RULES, f->in_force becomes n. */
enum vgw_probe_file_look vgw_probe_file_look(struct vgw_probe_file *f, const char *path,
                                             struct vgw_probe_rule **rules, size_t *n, char *err,
                                             size_t errsize);
void vgw_probe_rules_free(struct vgw_probe_rule *r, size_t n);
/* The period between reads: "250ms", "2s" or digits (milliseconds), 10 ms to 1 hour.
 * 0 with *ms, or -1. */
int vgw_probe_period_parse(const char *text, long *ms);

#endif
