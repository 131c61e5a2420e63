/* VIGIL_PROBES_FILE (docs/control.md "Pattern file"): Kieker's adaptive probes as a file
 * the subject re-reads every VIGIL_PROBES_PERIOD, each line `enable PATTERN` or `disable
 * PATTERN` (the patterns of `vigil probes`, wire/probe_pattern.h; `#` comments). A file
 * whose content changed and reads whole replaces the patterns in force, as a sequence of
 * `vigil probes enable|disable` would leave them (control_probes.c). Anything else (a
 * missing or empty file, a last line without its newline: still being written, a bad
 * line) keeps the patterns in force and is said in one line, once per change of the file.
 *
 * The first read happens at start, before main; the others on a thread of their own
 * (all signals blocked, unseen by the hooks) that sleeps between reads. Opened with
 * O_NONBLOCK and read only if it is a regular file of at most 1 MiB: a FIFO, a device or
 * a huge file cannot hold it up. libc and pthreads only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define FILE_MAX (1 << 20)
#define RULES_MAX 4096

/* What was looked at last: the file's identity and times (unchanged: not read again),
 * and the hash of the content last applied or reported (the same content again: nothing
 * to do or say). */
static struct {
	int state; /* 0 nothing yet, 1 read, 2 missing (said), 3 unreadable (said) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	uint64_t hash;
	int hashed;
	size_t in_force; /* rules of the last good content */
} seen;

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static void cannot_read(const char *why)
{
	vg__warn("VIGIL_PROBES_FILE=%s: cannot read it (%s); the %zu pattern%s read before stay "
	         "in force",
	         vg__rt.cfg.probes_file, why, seen.in_force, seen.in_force == 1 ? "" : "s");
}

static void free_rules(struct vg_probe_rule *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vgw_probe_pattern_free(&r[i].p);
	free(r);
}

/* Parses the whole content: 0 with the rules, or -1 with "LINE: why" in err. */
static int parse(char *text, size_t len, struct vg_probe_rule **out, size_t *nout, char *err,
                 size_t errsize)
{
	unsigned lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (!len) { /* truncated by a writer that has not written yet */
		snprintf(err, errsize,
		         " the file is empty (still being written? a file of only a "
		         "comment line clears the patterns)");
		return -1;
	}
	if (text[len - 1] != '\n') {
		snprintf(err, errsize, "%u: the last line has no newline (still being written?)",
		         lines + 1);
		return -1;
	}
	struct vg_probe_rule *rules = calloc(lines ? lines : 1, sizeof *rules);
	if (!rules) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	size_t n = 0;
	unsigned line = 0;
	for (char *p = text; p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		*nl = 0;
		line++;
		char *w = p + strspn(p, " \t\r");
		p = nl + 1;
		size_t wl = strcspn(w, " \t\r");
		if (!*w || *w == '#')
			continue;
		char *pat = w + wl + strspn(w + wl, " \t");
		char *end = pat + strlen(pat);
		while (end > pat && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = 0;
		int enable = wl == 6 && !strncmp(w, "enable", 6);
		char why[300];
		if (!enable && !(wl == 7 && !strncmp(w, "disable", 7))) {
			snprintf(err, errsize, "%u: '%.*s' is not enable or disable PATTERN", line,
			         (int)(wl > 40 ? 40 : wl), w);
		} else if (n == RULES_MAX) {
			snprintf(err, errsize, "%u: more than %d patterns", line, RULES_MAX);
		} else if (vgw_probe_pattern_compile(&rules[n].p, pat, why, sizeof why) < 0) {
			snprintf(err, errsize, "%u: %s", line, why);
		} else {
			rules[n++].enable = enable;
			continue;
		}
		free_rules(rules, n);
		return -1;
	}
	*out = rules;
	*nout = n;
	return 0;
}

static void apply(char *text, size_t len)
{
	uint64_t h = fnv1a(text, len);
	if (seen.hashed && seen.hash == h) /* touched, or back as it was: nothing changed */
		return;
	seen.hash = h;
	seen.hashed = 1;
	struct vg_probe_rule *rules;
	size_t n;
	char err[400];
	if (parse(text, len, &rules, &n, err, sizeof err) < 0) {
		vg__warn("VIGIL_PROBES_FILE=%s:%s; the %zu pattern%s read before stay in force",
		         vg__rt.cfg.probes_file, err, seen.in_force, seen.in_force == 1 ? "" : "s");
		return;
	}
	long changed = vg__control_probes_replace(rules, n);
	seen.in_force = n;
	if (vg__rt.cfg.verbose)
		vg__warn("VIGIL_PROBES_FILE=%s: %zu pattern%s in force, %ld sensor%s switched",
		         vg__rt.cfg.probes_file, n, n == 1 ? "" : "s", changed,
		         changed == 1 ? "" : "s");
}

/* One look at the file: read and applied only if it changed since the last look. */
static void look(void)
{
	const char *path = vg__rt.cfg.probes_file;
	struct stat st;
	if (stat(path, &st) < 0) {
		if (seen.state != 2)
			cannot_read(strerror(errno));
		seen.state = 2;
		return;
	}
	if (seen.state == 1 && st.st_dev == seen.dev && st.st_ino == seen.ino &&
	    st.st_size == seen.size && st.st_mtim.tv_sec == seen.mtime.tv_sec &&
	    st.st_mtim.tv_nsec == seen.mtime.tv_nsec && st.st_ctim.tv_sec == seen.ctime.tv_sec &&
	    st.st_ctim.tv_nsec == seen.ctime.tv_nsec)
		return;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	const char *why = NULL;
	char *text = NULL;
	ssize_t len = 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_size > FILE_MAX)
		why = "larger than 1 MiB";
	else if (!(text = malloc((size_t)st.st_size + 1)))
		why = "out of memory";
	else
		while (len <= st.st_size) { /* one byte more than its size: did it grow? */
			ssize_t r = read(fd, text + len, (size_t)(st.st_size + 1 - len));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				why = strerror(errno);
			if (r <= 0)
				break;
			len += r;
		}
	if (fd >= 0)
		close(fd);
	if (why) {
		if (seen.state != 3)
			cannot_read(why);
		seen.state = 3;
		free(text);
		return;
	}
	seen.state = 1;
	seen.dev = st.st_dev;
	seen.ino = st.st_ino;
	seen.size = st.st_size;
	seen.mtime = st.st_mtim;
	seen.ctime = st.st_ctim;
	if (len > st.st_size) /* it grew while read: look again next time */
		seen.size = -1;
	apply(text, (size_t)(len > st.st_size ? st.st_size : len));
	free(text);
}

static void *probes_main(void *arg)
{
	(void)arg;
	long ms = vg__rt.cfg.probes_period_ms;
	struct timespec period = {ms / 1000, (ms % 1000) * 1000000L};
	for (;;) {
		struct timespec left = period;
		while (nanosleep(&left, &left) < 0 && errno == EINTR)
			;
		look();
	}
	return NULL;
}

void vg__probes_file_start(void)
{
	if (!vg__rt.cfg.probes_file)
		return;
	if (!vg__rt.recording) {
		vg__warn("VIGIL_PROBES_FILE=%s: not recording (VIGIL_OUT); not read",
		         vg__rt.cfg.probes_file);
		return;
	}
	vg__control_on = 1; /* sensors registered later get the patterns */
	look();
	if (vg__control_start_thread(probes_main) != 0)
		vg__warn("VIGIL_PROBES_FILE=%s: cannot start the thread that re-reads it; read "
		         "once",
		         vg__rt.cfg.probes_file);
}

/* A fork child has no thread of its parent's: it starts its own, with what it knows. */
void vg__probes_file_after_fork(void)
{
	if (!vg__rt.cfg.probes_file || !vg__rt.recording)
		return;
	vg__control_on = 1;
	if (vg__control_start_thread(probes_main) != 0)
		vg__warn("VIGIL_PROBES_FILE=%s: cannot start the thread that re-reads it",
		         vg__rt.cfg.probes_file);
}
