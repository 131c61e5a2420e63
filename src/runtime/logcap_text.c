/* Capture of messages whose event is their template (docs/logcapture.md, "Templates"):
 * formatted messages of sites that do not identify the statement, stderr texts, and the
 * lines of writes to fd 2. In memory: the template is made on the caller's stack. */
#include <string.h>

#include "internal.h"
#include "logcap.h"

#define MAX_LINES 1024 /* lines of one write captured; the rest are counted as lost */

int vg__lc_capture_text(void *ret, const char *msg, size_t n)
{
	char tmpl[LC_TMPL_MAX + 4];
	size_t len = vg__lc_template(msg, n, tmpl, sizeof tmpl);
	struct lc_key k = vg__lc_tmpl_key((uintptr_t)ret, tmpl, len);
	if (k.id)
		vg__logcap_hit(k.id);
	else
		vg__logcap_lost(1);
	return k.level;
}

int vg__lc_capture_lines(void *ret, const char *buf, size_t n)
{
	int worst = 8; /* the most severe level word of the lines; 8: none */
	unsigned lines = 0;
	while (n) {
		const char *nl = memchr(buf, '\n', n);
		size_t len = nl ? (size_t)(nl - buf) : n;
		if (len && !(len == 1 && buf[0] == '\r')) {
			if (lines++ < MAX_LINES) {
				int l = vg__lc_capture_text(ret, buf, len);
				if (l >= 0 && l < worst)
					worst = l;
			} else {
				vg__logcap_lost(1);
			}
		}
		if (!nl)
			break;
		n -= len + 1;
		buf = nl + 1;
	}
	/* No level word: a write of unknown severity is handed on unless "none". */
	return vg__lc.pass >= 0 && (worst == 8 || worst <= vg__lc.pass);
}
