/* The probe pattern of adaptive monitoring (docs/control.md "Probes"): an fnmatch glob on
 * sensor names ('mailbox.*'), or '%' and a POSIX extended regex ('%\.(Wait|Poll)$').
 *
 * Three places evaluate patterns: the subject for sensors it registers later
 * (src/runtime/control_probes.c), vigild for every subject's table (src/collector/relay.c)
 * and `vigil probes --pid` against one table (src/cli/probes.c). They must agree on what a
 * pattern is and what it matches, so the rule lives here once. libc only, inline: the
 * runtime includes it (it may not link the analysis rooms' libraries).
 */
#ifndef VIGIL_WIRE_PROBE_PATTERN_H
#define VIGIL_WIRE_PROBE_PATTERN_H

#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pattern travels in a 1024-byte control line. */
#define VGW_PROBE_PATTERN_MAX 900

struct vgw_probe_pattern {
	char *text; /* as given, owned */
	int is_regex;
	regex_t re;
};

/* 0, or -1 with the reason in err (empty, too long, a space or control character, which
 * no sensor name holds, a bad regex); nothing to free then. */
static inline int vgw_probe_pattern_compile(struct vgw_probe_pattern *p, const char *text,
                                            char *err, size_t errsize)
{
	p->text = NULL;
	p->is_regex = text[0] == '%';
	if (!text[0] || (p->is_regex && !text[1])) {
		snprintf(err, errsize, "empty pattern");
		return -1;
	}
	if (strlen(text) > VGW_PROBE_PATTERN_MAX) {
		snprintf(err, errsize, "pattern longer than %d bytes", VGW_PROBE_PATTERN_MAX);
		return -1;
	}
	for (const char *c = text; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f) {
			snprintf(err, errsize,
			         "pattern '%.100s': spaces and control characters cannot match a "
			         "sensor name",
			         text);
			return -1;
		}
	if (p->is_regex) {
		int rc = regcomp(&p->re, text + 1, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char why[160];
			regerror(rc, &p->re, why, sizeof why);
			snprintf(err, errsize, "bad regular expression '%.100s': %.60s", text + 1,
			         why);
			return -1;
		}
	}
	if (!(p->text = strdup(text))) {
		if (p->is_regex)
			regfree(&p->re);
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	return 0;
}

static inline int vgw_probe_pattern_match(const struct vgw_probe_pattern *p, const char *name)
{
	return p->is_regex ? regexec(&p->re, name, 0, NULL, 0) == 0
	                   : fnmatch(p->text, name, 0) == 0;
}

static inline void vgw_probe_pattern_free(struct vgw_probe_pattern *p)
{
	if (p->is_regex)
		regfree(&p->re);
	free(p->text);
	p->text = NULL;
}

#endif
