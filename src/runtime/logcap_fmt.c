/* Formatting of a templated message without vsnprintf (docs/logcapture.md, "Templates"):
 * the message of a site that does not identify its statement is formatted only to be
 * masked, and glibc's vsnprintf was a third of such a call. This formats the plain
 * conversions logging wrappers use (PostgreSQL's "[%lu-%d] %s") exactly as vsnprintf
 * does and gives up, before the caller falls back to vsnprintf, on anything else: flags,
 * widths, precisions, %m, floating point. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "logcap.h"

struct fout {
	char *p;
	size_t len, cap; /* cap: room for text, the NUL excluded */
};

static inline void emit(struct fout *o, const char *s, size_t n)
{
	if (n > o->cap - o->len)
		n = o->cap - o->len;
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void emit_unsigned(struct fout *o, uint64_t v, unsigned base, int neg)
{
	char buf[24];
	size_t i = sizeof buf;
	do {
		buf[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		buf[--i] = '-';
	emit(o, buf + i, sizeof buf - i);
}

/* The conversion's integer argument: `size` 0 int, 1 long, 2 long long, 3 size_t. */
static uint64_t arg_unsigned(va_list *ap, int size)
{
	switch (size) {
	case 0:
		return va_arg(*ap, unsigned);
	case 1:
		return va_arg(*ap, unsigned long);
	case 2:
		return va_arg(*ap, unsigned long long);
	default:
		return va_arg(*ap, size_t);
	}
}

static int64_t arg_signed(va_list *ap, int size)
{
	switch (size) {
	case 0:
		return va_arg(*ap, int);
	case 1:
		return va_arg(*ap, long);
	case 2:
		return va_arg(*ap, long long);
	default:
		return (int64_t)va_arg(*ap, ptrdiff_t); /* %zd: the signed size_t */
	}
}

int vg__lc_format(char *out, size_t cap, const char *fmt, va_list ap)
{
	if (cap == 0)
		return -1;
	struct fout o = {out, 0, cap - 1};
	va_list aq;
	va_copy(aq, ap);
	const char *p = fmt;
	int ok = 1;
	while (*p && ok) {
		const char *pct = strchr(p, '%');
		if (!pct) {
			emit(&o, p, strlen(p));
			break;
		}
		emit(&o, p, (size_t)(pct - p));
		p = pct + 1;
		int size = 0;
		if (*p == 'l') {
			size = p[1] == 'l' ? 2 : 1;
			p += size;
		} else if (*p == 'z') {
			size = 3;
			p++;
		}
		switch (*p) {
		case '%':
			ok = size == 0;
			emit(&o, "%", 1);
			break;
		case 's': {
			const char *s = size == 0 ? va_arg(aq, const char *) : NULL;
			ok = size == 0;
			if (ok) {
				s = s ? s : "(null)";
				emit(&o, s, strnlen(s, o.cap - o.len));
			}
			break;
		}
		case 'c':
			ok = size == 0;
			if (ok) {
				char c = (char)va_arg(aq, int);
				emit(&o, &c, 1);
			}
			break;
		case 'd':
		case 'i': {
			int64_t v = arg_signed(&aq, size);
			emit_unsigned(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, v < 0);
			break;
		}
		case 'u':
			emit_unsigned(&o, arg_unsigned(&aq, size), 10, 0);
			break;
		case 'x':
			emit_unsigned(&o, arg_unsigned(&aq, size), 16, 0);
			break;
		default: /* flags, width, precision, %m, %p, floating point: vsnprintf's */
			ok = 0;
		}
		if (ok)
			p++;
	}
	va_end(aq);
	if (!ok)
		return -1;
	out[o.len] = 0;
	return (int)o.len;
}
