/* Tags: readable names given to events by patterns over their sites, or over their
 * formats ("fmt:GLOB": the events of one site told apart by template or format). */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"

int vgm_site_matches(const char *pattern, const char *site)
{
	if (!fnmatch(pattern, site, 0))
		return 1;
	size_t n = strlen(pattern), s = strlen(site);
	return n && s > n && !strcmp(site + s - n, pattern) &&
	       (site[s - n - 1] == '/' || (s - n == 7 && !strncmp(site, "sensor:", 7)));
}

long vgm_tag(struct vgm_model *m, const char *spec, char *err, size_t errsize)
{
	const char *eq = strrchr(spec, '=');
	if (!eq || eq == spec || !eq[1]) {
		snprintf(err, errsize, "'%s' is not SITE_OR_GLOB=TAG", spec);
		return -1;
	}
	char *pattern = strndup(spec, (size_t)(eq - spec));
	if (!pattern) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	long named = 0;
	for (size_t i = 0; i < m->nevents; i++) {
		if (!strncmp(pattern, "fmt:", 4)
		        ? fnmatch(pattern + 4, m->events[i].fmt ? m->events[i].fmt : "", 0) != 0
		        : !vgm_site_matches(pattern, m->events[i].site))
			continue;
		if (vgm_event_set_name(m, i, eq + 1)) {
			free(pattern);
			snprintf(err, errsize, "out of memory");
			return -1;
		}
		named++;
	}
	free(pattern);
	return named;
}

int vgm_tag_file(struct vgm_model *m, const char *path, void (*warn)(const char *line), char *err,
                 size_t errsize)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	int rc = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
		                   line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = 0;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		char why[300];
		long named = vgm_tag(m, p, why, sizeof why);
		if (named < 0) {
			snprintf(err, errsize, "%s:%u: %s", path, lineno, why);
			rc = -1;
			break;
		}
		if (!named && warn) {
			char msg[600];
			snprintf(msg, sizeof msg, "%s:%u: '%.400s' names no event", path, lineno,
			         p);
			warn(msg);
		}
	}
	if (!rc && ferror(f)) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	free(line);
	fclose(f);
	return rc;
}
