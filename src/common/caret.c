#include "common/caret.h"

#define WINDOW 160 /* longest part of a source line shown */

void vg_show_caret(FILE *out, const char *line, size_t len, size_t col)
{
	size_t from = 0;
	if (col > len)
		col = len;
	if (col > WINDOW / 2)
		from = col - WINDOW / 2;
	size_t to = from + WINDOW < len ? from + WINDOW : len;
	if (from)
		fputs("...", out);
	for (size_t i = from; i < to; i++) {
		unsigned char ch = (unsigned char)line[i];
		fputc(ch == '\t'                  ? '\t'
		      : ch == '\r'                ? ' '
		      : (ch < 0x20 || ch == 0x7f) ? '?'
		                                  : ch,
		      out);
	}
	if (to < len)
		fputs("...", out);
	fputc('\n', out);
	if (from)
		fputs("   ", out);
	for (size_t i = from; i < col; i++)
		fputc(line[i] == '\t' ? '\t' : ' ', out);
	fputs("^\n", out);
}
