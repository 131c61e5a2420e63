#include "display/colour.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	uint32_t rgb;
} names[] = {
    {"black", 0x000000},  {"white", 0xffffff},     {"grey", 0x808080},   {"gray", 0x808080},
    {"silver", 0xc0c0c0}, {"red", 0xd62728},       {"green", 0x2ca02c},  {"blue", 0x1f77b4},
    {"orange", 0xff7f0e}, {"purple", 0x9467bd},    {"brown", 0x8c564b},  {"pink", 0xe377c2},
    {"olive", 0xbcbd22},  {"cyan", 0x17becf},      {"yellow", 0xffd700}, {"magenta", 0xff00ff},
    {"navy", 0x000080},   {"teal", 0x008080},      {"maroon", 0x800000}, {"steelblue", 0x4682b4},
    {"gold", 0xffd700},   {"darkgreen", 0x006400},
};

static int hex(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

bool vgd_colour_parse(const char *text, uint32_t *rgb)
{
	if (text[0] == '#') {
		size_t n = strlen(text + 1);
		if (n != 3 && n != 6)
			return false;
		uint32_t v = 0;
		for (size_t i = 1; i <= n; i++) {
			int h = hex((unsigned char)text[i]);
			if (h < 0)
				return false;
			v = n == 3 ? (v << 8) | (uint32_t)(h * 17) : (v << 4) | (uint32_t)h;
		}
		*rgb = v;
		return true;
	}
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcasecmp(text, names[i].name)) {
			*rgb = names[i].rgb;
			return true;
		}
	return false;
}

uint32_t vgd_palette(size_t i)
{
	static const uint32_t p[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
	                             0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
	return p[i % 10];
}

uint32_t vgd_colour_mix(uint32_t a, uint32_t b, double t)
{
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	uint32_t out = 0;
	for (int sh = 16; sh >= 0; sh -= 8) {
		double x = (double)((a >> sh) & 255), y = (double)((b >> sh) & 255);
		uint32_t c = (uint32_t)(x + (y - x) * t + 0.5);
		out |= (c > 255 ? 255 : c) << sh;
	}
	return out;
}
