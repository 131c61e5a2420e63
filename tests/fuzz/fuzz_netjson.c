/* libFuzzer target: a network file of `vigil net split` (JSON), as `vigil net report` and
 * the renderers read it (issue 21: every reader of untrusted bytes has a fuzz target).
 * Any input is read or refused with one line; what is read reports and draws without
 * undefined behaviour. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "net/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, 0, &je);
	if (!j)
		return 0;
	char err[256] = "";
	struct vgn_graph *g = vgn_graph_from_json(j, "fuzz", err, sizeof err);
	json_decref(j);
	if (!g) {
		if (!err[0]) /* a refusal always says why */
			abort();
		return 0;
	}
	struct vgn_stats st;
	if (vgn_stats_compute(g, &st) == 0)
		vgn_stats_free(&st);
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		vgn_render_svg(g, null);
		vgn_render_dot(g, null);
		fclose(null);
	}
	json_t *back = vgn_graph_to_json(g);
	json_decref(back);
	vgn_graph_free(g);
	return 0;
}
