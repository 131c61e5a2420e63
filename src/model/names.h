/* Naming events: tags given by patterns over sites (`vigil model --name/--names`,
 * tags.c), and finding the event a user means (`vigil cdf --from`, lookup.c). */
#ifndef VIGIL_MODEL_NAMES_H
#define VIGIL_MODEL_NAMES_H

#include <stddef.h>

#include "model/model.h"

/* Does `pattern` name `site`: a glob matching the whole site, or the site ends with
 * "/PATTERN" with PATTERN taken literally, or it is "sensor:PATTERN" (so `bufmgr.c:725` names
 * `src/backend/storage/buffer/bufmgr.c:725` and `mailbox.send` names
 * `sensor:mailbox.send`)? */
int vgm_site_matches(const char *pattern, const char *site);

/* Applies one "SITE_OR_GLOB=TAG" (split at the last '='): every matching event gets TAG.
 * Returns the number of events named, or -1 with the reason in err (no '=', empty
 * side). */
long vgm_tag(struct vgm_model *m, const char *spec, char *err, size_t errsize);
/* Applies every line of a names file: "SITE_OR_GLOB=TAG", blank lines and `#` comments
 * ignored. Each line that names no event is reported through warn (may be NULL). Returns
 * 0, or -1 with "FILE:LINE: what" in err. */
int vgm_tag_file(struct vgm_model *m, const char *path, void (*warn)(const char *line), char *err,
                 size_t errsize);

/* The event `spec` means: a name (tag), a site or `file:line` (as vgm_site_matches
 * without globs), a trace sensor's name, or the event's id in its model file. Returns
 * its index, or -1 with one line in err: unknown (with the closest names) or ambiguous
 * (with the candidates' ids). */
long vgm_lookup(const struct vgm_model *m, const char *spec, char *err, size_t errsize);

#endif
