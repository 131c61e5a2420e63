#include "common/xml_text.h"

#include <string.h>

#include "base/utf8.h"

void vg_xml_text(FILE *f, const char *s, size_t max)
{
	size_t n = strlen(s), shown = 0, i = 0;
	while (i < n && shown < max) {
		size_t l = vgb_utf8_len(s + i, n - i);
		shown++;
		if (!l) {
			fputc('?', f);
			i++;
			continue;
		}
		if (l == 1 && (unsigned char)s[i] < 0x20) {
			fputc(' ', f);
		} else if (s[i] == '&') {
			fputs("&amp;", f);
		} else if (s[i] == '<') {
			fputs("&lt;", f);
		} else if (s[i] == '>') {
			fputs("&gt;", f);
		} else if (s[i] == '"') {
			fputs("&quot;", f);
		} else {
			fwrite(s + i, 1, l, f);
		}
		i += l;
	}
	if (i < n)
		fputs("\u2026", f);
}
