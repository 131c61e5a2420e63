/* One analysis of several traces: load them all, match messages, estimate (or read) the
 * clock correction and apply it; problems that leave a partial result are warnings. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

static void warnf(struct vgn_session *ss, const char *fmt, ...)
{
	if (!ss->warn)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	ss->warn(ss->ctx, line);
}

static void host_list(const struct vgn_set *s, char *buf, size_t size)
{
	size_t k = 0;
	buf[0] = 0;
	for (size_t h = 0; h < s->nhosts && k + 1 < size; h++)
		k += (size_t)snprintf(buf + k, size - k, "%s%s", h ? ", " : "", s->hosts[h].name);
}

/* Is path a, resolved, b or inside b? */
static bool within(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (a[n] == 0 || a[n] == '/' || (n && b[n - 1] == '/'));
}

/* A trace named twice, or inside another one named, would have every message counted
 * twice: the later name is skipped with a warning (0), or, when it holds an earlier one,
 * refused (-1). */
static int named_before(struct vgn_session *ss, const char *const *paths, size_t i, char *err,
                        size_t errsize)
{
	char *me = realpath(paths[i], NULL);
	if (!me)
		return 1; /* the load reports it */
	int rc = 1;
	for (size_t j = 0; j < i && rc == 1; j++) {
		char *other = realpath(paths[j], NULL);
		if (!other)
			continue;
		if (within(me, other)) {
			warnf(ss, "%s: already read as part of %s (skipped)", paths[i], paths[j]);
			rc = 0;
		} else if (within(other, me)) {
			snprintf(err, errsize, "%s holds %s, named before it: name each trace once",
			         paths[i], paths[j]);
			rc = -1;
		}
		free(other);
	}
	free(me);
	return rc;
}

int vgn_session_open(struct vgn_session *ss, const char *const *paths, size_t n,
                     const char *reference, const char *clock_file, char *err, size_t errsize)
{
	ss->set = vgn_set_new();
	struct vgn_set *s = ss->set;
	char e[1024], first_err[1024] = "";
	bool *bad = calloc(n + 1, sizeof *bad);
	char(*errs)[1024] = calloc(n + 1, sizeof *errs);
	if (!bad || !errs) {
		free(bad);
		free(errs);
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int fresh = named_before(ss, paths, i, err, errsize);
		if (fresh < 0) {
			free(bad);
			free(errs);
			return -1;
		}
		if (!fresh)
			continue;
		uint64_t before = ss->load.net_events;
		if (ss->open_trace && n == 1)
			vgn_load_open(s, ss->open_trace, paths[i], &ss->load, ss->progress);
		else if (vgn_load_trace(s, paths[i], &ss->load, ss->progress, errs[i],
		                        sizeof *errs) < 0) {
			bad[i] = true;
			if (!first_err[0])
				snprintf(first_err, sizeof first_err, "%s", errs[i]);
			continue;
		}
		ss->traces_read++;
		if (ss->load.net_events == before)
			warnf(ss,
			      "%s: no vg.net events (recorded without the network sensors, or "
			      "nothing was sent or received)",
			      paths[i]);
	}
	/* one line: the only trace's problem, or the first when none could be read */
	for (size_t i = 0; ss->traces_read && i < n; i++)
		if (bad[i]) {
			warnf(ss, "%s (skipped)", errs[i]);
			ss->skipped++;
		}
	free(bad);
	free(errs);
	if (!ss->traces_read) {
		if (n == 1)
			snprintf(err, errsize, "%s", first_err);
		else
			snprintf(err, errsize,
			         "none of the %zu traces could be read; the first: %s", n,
			         first_err);
		return -1;
	}
	if (!ss->load.net_events) {
		snprintf(err, errsize,
		         "no vg.net events in %s%s: nothing to split (record with a vigil that "
		         "has the network sensors, docs/net.md)",
		         paths[0], n > 1 ? " and the other traces" : "");
		return -1;
	}
	vgn_match(s, &ss->match);
	if (s->nhosts > 1 && !ss->match.cross_host_pairs) {
		char hosts[512];
		host_list(s, hosts, sizeof hosts);
		ss->unrelated = true;
		warnf(ss,
		      "no message matched between the hosts (%s): traces from unrelated runs? "
		      "clocks cannot be corrected; each host is analysed on its own clock",
		      hosts);
	}
	uint32_t ref = VGN_NONE;
	if (reference) {
		for (size_t h = 0; h < s->nhosts; h++)
			if (!strcmp(s->hosts[h].name, reference))
				ref = (uint32_t)h;
		if (ref == VGN_NONE) {
			char hosts[512];
			host_list(s, hosts, sizeof hosts);
			snprintf(err, errsize,
			         "--reference %s: no such host in the traces (hosts: %s)",
			         reference, hosts);
			return -1;
		}
	}
	if (clock_file) {
		json_error_t je;
		json_t *j = json_load_file(clock_file, 0, &je);
		if (!j) {
			snprintf(err, errsize, "%s:%d:%d: %s", clock_file, je.line, je.column,
			         je.text);
			return -1;
		}
		int rc = vgn_clock_from_json(s, j, &ss->clock, e, sizeof e);
		json_decref(j);
		if (rc < 0) {
			snprintf(err, errsize, "%s: %s", clock_file, e);
			return -1;
		}
	} else {
		vgn_clock_estimate(s, ref, &ss->clock);
	}
	bool said = ss->unrelated; /* all hosts unrelated: said once above */
	for (size_t h = 0; h < s->nhosts; h++) {
		const struct vgn_clock_host *c = &ss->clock.hosts[h];
		if (c->status == VGN_CLOCK_UNCONNECTED && !said) {
			ss->unrelated = true;
			warnf(ss,
			      "host %s exchanged no matched message with the other hosts (a trace "
			      "from another run?): its clock is not corrected",
			      s->hosts[h].name);
		}
		if (c->status == VGN_CLOCK_CROSSED) {
			ss->crossed++;
			warnf(ss, "clocks of %s and %s cannot be reconciled: %s", s->hosts[h].name,
			      ss->clock.reference < s->nhosts ? s->hosts[ss->clock.reference].name
			                                      : "?",
			      c->why[0] ? c->why : "the bounds cross");
		}
	}
	ss->backwards = vgn_clock_apply(s, &ss->clock);
	return 0;
}

void vgn_session_close(struct vgn_session *ss)
{
	vgn_clock_free(&ss->clock);
	vgn_set_free(ss->set);
	ss->set = NULL;
}
