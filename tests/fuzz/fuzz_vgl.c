/* libFuzzer target: the front end of the sensor description language (lexer, parser,
 * checker). A checked model must hold together; a refused input must say why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang.h"
#include "lang/load.h"

static void check_model(const struct vgl_model *m)
{
	if (!m->package || !m->nfiles)
		abort();
	for (size_t i = 0; i < m->nrecords; i++) {
		const struct vgl_record *r = &m->records[i];
		uint64_t size = 0;
		for (size_t k = 0; k < r->nfields; k++) {
			const struct vgl_field *f = &r->fields[k];
			if (!f->name || !f->prop || f->type == VGL_STRUCT)
				abort();
			if (f->type == VGL_ENTITY && !f->entity)
				abort();
			for (size_t p = 0; p < f->npath; p++)
				if (!f->path[p])
					abort();
			size += f->type == VGL_STRING  ? f->max + 1u
			        : f->type == VGL_BYTES ? f->max + 4u
			                               : 1;
		}
		if (r->max_size && r->worst_size > r->max_size)
			abort();
		if (r->nall < r->nprops || (r->parent && r->nall != r->parent->nall + r->nprops))
			abort();
		if (r->worst_size < size && r->worst_size != UINT32_MAX)
			abort();
	}
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		const int roles[] = {s->performer, s->initiator, s->target};
		for (int k = 0; k < 3; k++)
			if (roles[k] >= 0 && ((size_t)roles[k] >= s->record->nfields ||
			                      s->record->fields[roles[k]].type != VGL_ENTITY))
				abort();
		if (s->flag != VGL_FLAG_SENSOR && roles[s->flag - 1] < 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly the input: reads past it are caught by the sanitizer. */
	char *text = malloc(size ? size : 1);
	memcpy(text, data, size);
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	int nerrors = -1;
	struct vgl_model *m = vgl_load_text("fuzz.vgl", text, size, sink, &nerrors);
	if (m ? nerrors != 0 : nerrors <= 0)
		abort(); /* a refused input always says why */
	if (m)
		check_model(m);
	vgl_free(m);
	free(text);
	return 0;
}
