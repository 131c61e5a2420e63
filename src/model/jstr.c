/* JSON string literals: a strict decoder (RFC 8259 strings, UTF-8 only) and an encoder
 * whose output the decoder reads back to the same bytes. */
#include "model/jstr.h"

#include "base/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int hex4(const char *s, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int vgm_json_parse(const char *s, size_t len, size_t *used, char **out, const char **why)
{
	*out = NULL;
	if (!len || s[0] != '"') {
		*used = 0;
		*why = "expected a JSON string (\"...\")";
		return -1;
	}
	/* The decoded text is never longer than the literal. */
	char *buf = malloc(len + 1);
	if (!buf) {
		*used = 0;
		*why = "out of memory";
		return -1;
	}
	size_t i = 1, o = 0;
	while (i < len && s[i] != '"') {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) {
			*why = "control character inside a JSON string (escape it)";
			goto bad;
		}
		if (c != '\\') {
			size_t n = vgb_utf8_len(s + i, len - i);
			if (!n) {
				*why = "invalid UTF-8 inside a JSON string";
				goto bad;
			}
			memcpy(buf + o, s + i, n);
			o += n;
			i += n;
			continue;
		}
		if (i + 1 >= len) {
			*why = "JSON string ends inside an escape";
			goto bad;
		}
		char e = s[i + 1];
		const char *simple = strchr("\"\\/bfnrt", e);
		if (e && simple) {
			static const char to[] = "\"\\/\b\f\n\r\t";
			buf[o++] = to[simple - "\"\\/bfnrt"];
			i += 2;
			continue;
		}
		if (e != 'u') {
			*why = "unknown escape in a JSON string";
			goto bad;
		}
		uint32_t cp;
		if (i + 6 > len || hex4(s + i + 2, &cp)) {
			*why = "\\u needs four hexadecimal digits";
			goto bad;
		}
		size_t n = 6;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			uint32_t lo;
			if (i + 12 > len || s[i + 6] != '\\' || s[i + 7] != 'u' ||
			    hex4(s + i + 8, &lo) || lo < 0xdc00 || lo > 0xdfff) {
				*why = "lone UTF-16 surrogate in a JSON string";
				goto bad;
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			n = 12;
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			*why = "lone UTF-16 surrogate in a JSON string";
			goto bad;
		} else if (cp == 0) {
			*why = "\\u0000 is not allowed in a model's strings";
			goto bad;
		}
		o += put_utf8(buf + o, cp);
		i += n;
	}
	if (i >= len) {
		*why = "JSON string without its closing quote";
		goto bad;
	}
	buf[o] = 0;
	*used = i + 1;
	*out = buf;
	return 0;
bad:
	*used = i;
	free(buf);
	return -1;
}

void vgm_json_write(FILE *f, const char *s)
{
	putc('"', f);
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			putc('\\', f);
			putc(c, f);
			i++;
		} else if (c == '\n') {
			fputs("\\n", f);
			i++;
		} else if (c == '\t') {
			fputs("\\t", f);
			i++;
		} else if (c == '\r') {
			fputs("\\r", f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else {
			size_t n = vgb_utf8_len(s + i, len - i);
			if (n) {
				fwrite(s + i, 1, n, f);
				i += n;
			} else {
				fputs("\xef\xbf\xbd", f);
				i++;
			}
		}
	}
	putc('"', f);
}
