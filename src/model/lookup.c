/* Finding the event a user names on the command line, with "did you mean" on a miss. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "query/suggest.h"

static int literal_match(const char *spec, const struct vgm_event *e)
{
	size_t n = strlen(spec), s = strlen(e->site);
	if (!strcmp(spec, e->site))
		return 1;
	if (s > n && !strcmp(e->site + s - n, spec) && e->site[s - n - 1] == '/')
		return 1;
	/* a trace sensor: its format is its name */
	return !strncmp(e->site, "sensor:", 7) && !strcmp(e->fmt, spec);
}

static long unique(const struct vgm_model *m, const char *spec, const long *hits, size_t n,
                   char *err, size_t errsize)
{
	if (n == 1)
		return hits[0];
	size_t len = (size_t)snprintf(err, errsize, "event '%s' is ambiguous: ids", spec);
	for (size_t i = 0; i < n && i < 8 && len < errsize; i++)
		len += (size_t)snprintf(err + len, errsize - len, "%s %llu", i ? "," : "",
		                        (unsigned long long)m->events[hits[i]].id);
	if (n > 8 && len < errsize)
		snprintf(err + len, errsize - len, ", ... (%zu in all)", n);
	return -1;
}

long vgm_lookup(const struct vgm_model *m, const char *spec, char *err, size_t errsize)
{
	long *hits = malloc((m->nevents + 1) * sizeof *hits);
	if (!hits) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	size_t n = 0;
	long r = -1;
	for (size_t i = 0; i < m->nevents; i++)
		if (m->events[i].name && !strcmp(m->events[i].name, spec))
			hits[n++] = (long)i;
	if (!n && spec[0] && strspn(spec, "0123456789") == strlen(spec)) {
		unsigned long long id = strtoull(spec, NULL, 10);
		for (size_t i = 0; i < m->nevents; i++)
			if (m->events[i].id == id)
				hits[n++] = (long)i;
	}
	if (!n)
		for (size_t i = 0; i < m->nevents; i++)
			if (literal_match(spec, &m->events[i]))
				hits[n++] = (long)i;
	if (n) {
		r = unique(m, spec, hits, n, err, errsize);
		free(hits);
		return r;
	}
	free(hits);
	/* Unknown: suggest among names, sites and sensor names. */
	const char **names = malloc((3 * m->nevents + 1) * sizeof *names);
	size_t k = 0;
	if (names) {
		for (size_t i = 0; i < m->nevents; i++) {
			const struct vgm_event *e = &m->events[i];
			if (e->name)
				names[k++] = e->name;
			if (!strncmp(e->site, "sensor:", 7))
				names[k++] = e->fmt;
			else
				names[k++] = e->site;
		}
	}
	char close[400];
	int s = names ? vgq_suggest(spec, names, k, close, sizeof close) : -1;
	if (s == 1)
		snprintf(err, errsize, "unknown event '%s' (closest: %s)", spec, close);
	else if (s == 0)
		snprintf(err, errsize, "unknown event '%s' (events: %s)", spec, close);
	else
		snprintf(err, errsize, "unknown event '%s' (a name, a file:line, or an event id)",
		         spec);
	free(names);
	return -1;
}
