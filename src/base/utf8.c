/* UTF-8 validation: see utf8.h. */
#include "base/utf8.h"

size_t vgb_utf8_decode(const void *str, size_t len, uint32_t *cp)
{
	const unsigned char *s = str;
	if (!len)
		return 0;
	size_t n;
	uint32_t c = s[0], min;
	if (c < 0x80) {
		n = 1, min = 0;
	} else if (c >= 0xc2 && c <= 0xdf) {
		n = 2, c &= 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (cp)
		*cp = c;
	return n;
}
