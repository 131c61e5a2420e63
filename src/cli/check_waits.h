/* vigil check --deadlocks: the wait-for graph's cycles as text or JSON lines, and the
 * graph at an instant as SVG (docs/consistency.md, "Wait-for graph"). */
#ifndef VIGIL_CLI_CHECK_WAITS_H
#define VIGIL_CLI_CHECK_WAITS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check/waitfor.h"

/* Prints each cycle (one line, or one JSON object with json) on stdout and the count on
 * stderr; returns the number of cycles. instant: "the end of the trace" or "t=SECONDS",
 * what a standing cycle stands at. */
size_t vg_check_cycles_print(struct vgc_wf *wf, bool json, bool incomplete, const char *instant);

/* Writes the graph as it is now to path (vg_out: '-' is stdout); at_ts / at_t: the
 * instant. 0, or -1 with one line on stderr. */
int vg_check_waits_svg(struct vgc_wf *wf, const char *path, int64_t at_ts, double at_t);

/* An unsigned number as JSON: an integer, or its digits in a string past INT64_MAX. */
json_t *vg_json_u64(uint64_t v);

#endif
