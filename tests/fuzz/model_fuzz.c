/* libFuzzer target: the model file reader (src/model/model_read.c). Any input is read
 * without crashing; an error is one line "fuzz.vgm:LINE: what"; what reads writes a
 * model that reads back and writes the same bytes again; a model diffs with itself. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "model/model.h"

static char *write_string(const struct vgm_model *m, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f || vgm_write(m, f))
		abort();
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vgm_model *m = vgm_model_new();
	char err[1024];
	if (vgm_read_buffer(m, "fuzz.vgm", (const char *)data, size, err, sizeof err)) {
		unsigned line;
		if (strncmp(err, "fuzz.vgm:", 9) || sscanf(err + 9, "%u:", &line) != 1 || !line ||
		    strchr(err, '\n'))
			abort();
		if (m->nevents || m->ntrans)
			abort(); /* a damaged file adds nothing */
		vgm_model_free(m);
		return 0;
	}
	size_t len1, len2;
	char *once = write_string(m, &len1);
	struct vgm_model *m2 = vgm_model_new();
	if (vgm_read_buffer(m2, "once", once, len1, err, sizeof err))
		abort();
	char *twice = write_string(m2, &len2);
	if (len1 != len2 || memcmp(once, twice, len1))
		abort();
	struct vgm_diff d;
	struct vgm_diff_opts o = {1, 1.0, VGM_EVENTS_BY_SHARE};
	if (vgm_diff(m, m2, &o, &d) < 0)
		abort();
	for (size_t i = 0; i < d.ntrans; i++)
		if (d.trans[i].score != 1.0)
			abort(); /* a model equals itself */
	vgm_diff_free(&d);
	free(once);
	free(twice);
	vgm_model_free(m2);
	vgm_model_free(m);
	return 0;
}
