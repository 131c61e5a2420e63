/* The display step (docs/display.md): a `.vgd` display specification associates relations
 * of a trace, primitive or derived by TQuel, with graphical representations; a scene is
 * what the display shows at one instant of valid time, as JSON (for the page,
 * ui/src/display/render.js) or as a static SVG (vigil display render). */
#ifndef VIGIL_DISPLAY_DISPLAY_H
#define VIGIL_DISPLAY_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct vgq_database;
struct vgd_display;

/* Reads, parses and checks the file at `path` against the relations of `db` (derived
 * relations are computed by the engine from the file's `derive` statements). NULL after
 * reporting every error to `errors` as "FILE:LINE:COL: error: MESSAGE", the source line
 * and a caret (a missing file: one line). `db` must outlive the display. */
struct vgd_display *vgd_load(const char *path, struct vgq_database *db, FILE *errors);
/* The same from a text in memory; `source` names it in messages, `dir` is where the
 * files named by `derive "FILE"` are looked for (NULL: the current folder). */
struct vgd_display *vgd_load_text(const char *source, const char *text, size_t len, const char *dir,
                                  struct vgq_database *db, FILE *errors);
void vgd_free(struct vgd_display *d);

/* The valid time the display covers (absolute ns): the trace's first and last event. */
void vgd_span(const struct vgd_display *d, int64_t *first, int64_t *last);
/* Every instant at which a tuple of a displayed relation starts or ends, sorted and
 * distinct (for stepping a movie from change to change); valid until vgd_free. */
const int64_t *vgd_changes(const struct vgd_display *d, size_t *n);

/* Every instant (absolute, within the span, sorted, distinct, malloc'd) at which what the
 * scene holds can change: the trace's first event, the changes, where an event's hold
 * ends, and (animationtrace) where a tuple leaves the fading past. Between two of them
 * only the fading and the clock move (with time as an axis, everything slides). */
int64_t *vgd_frames(const struct vgd_display *d, size_t *n);

/* The scene at absolute time `at` (taken within 10^18 ns of the trace's span) as one JSON
 * object (docs/display.md, "Scenes"): malloc'd, NULL only when out of memory. */
char *vgd_scene_json(const struct vgd_display *d, int64_t at);
/* The scene at `at` as a standalone SVG document (flashing with SMIL animation). 0, or -1
 * when writing failed. */
int vgd_scene_svg(const struct vgd_display *d, int64_t at, FILE *out);

/* The sensors the display needs (vigil watch --display): its derive statements planned
 * as vigil watch plans a query (bound in session `s`, on the display's database, which
 * must outlive the plan), and the α of every relation it shows that sensors feed, whole
 * (on every entity). NULL after errors (reported to `errors`). */
struct vga_plan;
struct vga_sensors;
struct vgq_session;
struct vga_plan *vgd_plan(const struct vgd_display *d, struct vgq_session *s,
                          const struct vga_sensors *sensors, bool optimize, FILE *errors);

#endif
