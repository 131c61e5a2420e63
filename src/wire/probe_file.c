/* Reading the pattern file (wire/probe_file.h). A file whose content changed and reads
 * whole is new rules; anything else (a missing or empty file, a last line without its
 * newline: still being written, a bad line) is said once per change of the file, and the
 * caller keeps the patterns in force. */
#define _GNU_SOURCE
#include "wire/probe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILE_MAX (1 << 20)
#define RULES_MAX 4096

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

void vgw_probe_rules_free(struct vgw_probe_rule *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vgw_probe_pattern_free(&r[i].p);
	free(r);
}

int vgw_probe_period_parse(const char *text, long *ms)
{
	long long x = 0;
	const char *p = text;
	while (*p >= '0' && *p <= '9' && x <= 3600000)
		x = x * 10 + (*p++ - '0');
	if (!strcmp(p, "s"))
		x *= 1000;
	else if (*p && strcmp(p, "ms"))
		return -1;
	if (p == text || x < 10 || x > 3600000)
		return -1;
	*ms = (long)x;
	return 0;
}

/* Parses the whole content: 0 with the rules, or -1 with "LINE: why" in err. */
static int parse(char *text, size_t len, struct vgw_probe_rule **out, size_t *nout, char *err,
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
	struct vgw_probe_rule *rules = calloc(lines ? lines : 1, sizeof *rules);
	if (!rules) {
		snprintf(err, errsize, " out of memory");
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
		vgw_probe_rules_free(rules, n);
		return -1;
	}
	*out = rules;
	*nout = n;
	return 0;
}

static enum vgw_probe_file_look content(struct vgw_probe_file *f, char *text, size_t len,
                                        struct vgw_probe_rule **rules, size_t *n, char *err,
                                        size_t errsize)
{
	uint64_t h = fnv1a(text, len);
	if (f->hashed && f->hash == h) /* touched, or back as it was: nothing changed */
		return VGW_PROBE_FILE_SAME;
	f->hash = h;
	f->hashed = 1;
	if (parse(text, len, rules, n, err, errsize) < 0)
		return VGW_PROBE_FILE_BAD;
	f->in_force = *n;
	return VGW_PROBE_FILE_RULES;
}

enum vgw_probe_file_look vgw_probe_file_look(struct vgw_probe_file *f, const char *path,
                                             struct vgw_probe_rule **rules, size_t *n, char *err,
                                             size_t errsize)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		snprintf(err, errsize, "%s", strerror(errno));
		int said = f->state == 2;
		f->state = 2;
		return said ? VGW_PROBE_FILE_SAME : VGW_PROBE_FILE_UNREADABLE;
	}
	if (f->state == 1 && st.st_dev == f->dev && st.st_ino == f->ino && st.st_size == f->size &&
	    st.st_mtim.tv_sec == f->mtime.tv_sec && st.st_mtim.tv_nsec == f->mtime.tv_nsec &&
	    st.st_ctim.tv_sec == f->ctime.tv_sec && st.st_ctim.tv_nsec == f->ctime.tv_nsec)
		return VGW_PROBE_FILE_SAME;
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
		snprintf(err, errsize, "%s", why);
		free(text);
		int said = f->state == 3;
		f->state = 3;
		return said ? VGW_PROBE_FILE_SAME : VGW_PROBE_FILE_UNREADABLE;
	}
	f->state = 1;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->ctime = st.st_ctim;
	if (len > st.st_size) /* it grew while read: look again next time */
		f->size = -1;
	enum vgw_probe_file_look r =
	    content(f, text, (size_t)(len > st.st_size ? st.st_size : len), rules, n, err, errsize);
	free(text);
	return r;
}
