/* Text forms shared by the commands: wall-clock times, escaped strings, durations. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/utf8.h"
#include "trace.h"

void vgt_format_time(int64_t ns, char *buf, size_t size)
{
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;
	if (frac < 0) {
		sec--;
		frac += 1000000000;
	}
	time_t t = (time_t)sec;
	struct tm tm;
	char date[32];
	if (!gmtime_r(&t, &tm) || !strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(date, sizeof date, "@%lld", (long long)sec);
	snprintf(buf, size, "%s.%09lld", date, (long long)frac);
}

size_t vgt_utf8_char(const char *str, size_t len)
{
	return vgb_utf8_len(str, len);
}

void vgt_write_cstring(FILE *f, const char *s, size_t len)
{
	putc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = c >= 0x80 ? vgt_utf8_char(s + i, len - i) : 1;
		if (n > 1) {
			fwrite(s + i, 1, n, f);
			i += n;
			continue;
		}
		i++;
		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			/* Three octal digits: unambiguous whatever follows. */
			if (c < 0x20 || c >= 0x7f)
				fprintf(f, "\\%03o", c);
			else
				putc(c, f);
		}
	}
	putc('"', f);
}

int vgt_parse_duration(const char *text, int64_t *ns)
{
	const char *p = text;
	int64_t whole = 0, frac = 0, frac_scale = 1;
	if (*p < '0' || *p > '9')
		if (!(*p == '.' && p[1] >= '0' && p[1] <= '9'))
			return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (INT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (frac_scale < 1000000000) {
				frac = frac * 10 + (*p - '0');
				frac_scale *= 10;
			}
	}
	static const struct {
		const char *suffix;
		int64_t ns;
	} units[] = {{"", 1000000000}, {"s", 1000000000}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}};
	for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
		if (strcmp(p, units[i].suffix))
			continue;
		int64_t u = units[i].ns;
		if (whole > INT64_MAX / u || INT64_MAX - whole * u < frac * u / frac_scale)
			return -1;
		*ns = whole * u + frac * u / frac_scale;
		return 0;
	}
	return -1;
}
