/* One event of a trace as a JSON object (jansson): `vigil dump --json`'s line, and the
 * events the Python module yields. */
#ifndef VIGIL_CLI_EVENT_JSON_H
#define VIGIL_CLI_EVENT_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "trace/trace.h"

/* {"ts","clock","time","host","pid","proc","tid","name","fields":{...}}; entity references
 * are {"kind","id","gen","name"}, with the name `names` knows so far (may be NULL). */
json_t *vg_event_json(const struct vgt_event *ev, const struct vgt_names *names);

/* s[0..len) as a JSON string, invalid UTF-8 bytes replaced by U+FFFD. */
json_t *vg_json_text(const char *s, size_t len);

#endif
