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

/* A field's value as JSON: integers (past INT64_MAX as their digits in a string), doubles
 * (null when not finite), text via vg_json_text, bytes as hex; NULL for an entity
 * reference, which each output writes its own way. */
json_t *vg_value_json(const struct vgt_value *v);

/* s[0..len) as a JSON string, invalid UTF-8 bytes replaced by U+FFFD. */
json_t *vg_json_text(const char *s, size_t len);

#endif
