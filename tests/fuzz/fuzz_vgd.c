/* libFuzzer target: the front end of the display specification language (lexer, parser,
 * error reports). Any input parses without crashing; each error points inside the text
 * and prints with its caret; what parsed without error holds together. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "display/ast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vgd_file *f = vgd_parse("fuzz", (const char *)data, size);
	for (size_t i = 0; i < f->nerrors; i++) {
		const struct vgd_error *e = &f->errors[i];
		if (e->loc.line < 1 || e->loc.col < 1 || e->loc.off > size || !e->message[0] ||
		    e->loc.col - 1 > e->loc.off)
			abort();
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		abort();
	vgd_print_errors(f, out);
	fclose(out);
	if (f->nerrors && !len)
		abort();
	free(buf);
	if (!f->nerrors) {
		for (size_t i = 0; i < f->nshows; i++) {
			const struct vgd_show *s = &f->shows[i];
			if (!s->rel || (s->form == VGD_F_ICON && !s->nshapes) ||
			    (s->form != VGD_F_ICON && !s->a) ||
			    ((s->form == VGD_F_INSIDE || s->form == VGD_F_LINK) && !s->b))
				abort();
			for (size_t k = 0; k < s->naspects; k++) {
				const struct vgd_aspect *a = &s->aspects[k];
				if ((a->drive == VGD_D_VALUE || a->drive == VGD_D_ORDER ||
				     a->drive == VGD_D_TABLE) &&
				    !a->attr)
					abort();
			}
		}
		for (size_t i = 0; i < f->nderives; i++)
			if (!f->derives[i].file && f->derives[i].off + f->derives[i].len > size)
				abort();
	}
	vgd_file_free(f);
	return 0;
}
