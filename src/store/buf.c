/* A growing text buffer for SQL statements and COPY data, and one-line errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

static void grow(struct vgs_buf *b, size_t more)
{
	if (b->n + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->n + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		fputs("vigil: out of memory\n", stderr);
		abort();
	}
	b->p = p;
	b->cap = cap;
}

void vgs_buf_put(struct vgs_buf *b, const void *s, size_t n)
{
	grow(b, n);
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

void vgs_buf_putc(struct vgs_buf *b, char c)
{
	grow(b, 1);
	b->p[b->n++] = c;
	b->p[b->n] = 0;
}

void vgs_buf_puts(struct vgs_buf *b, const char *s)
{
	vgs_buf_put(b, s, strlen(s));
}

void vgs_buf_printf(struct vgs_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

static void quoted(struct vgs_buf *b, const char *s, char q)
{
	vgs_buf_putc(b, q);
	for (; *s; s++) {
		if (*s == q)
			vgs_buf_putc(b, q);
		vgs_buf_putc(b, *s);
	}
	vgs_buf_putc(b, q);
}

void vgs_buf_ident(struct vgs_buf *b, const char *name)
{
	quoted(b, name, '"');
}

void vgs_buf_literal(struct vgs_buf *b, const char *s)
{
	quoted(b, s, '\'');
}

void vgs_buf_free(struct vgs_buf *b)
{
	free(b->p);
	*b = (struct vgs_buf){0};
}

int vgs_fail(char *err, size_t errsize, const char *fmt, ...)
{
	if (!errsize)
		return -1;
	char tmp[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	/* One line: libpq ends messages with a newline and separates DETAIL/HINT by them. */
	size_t o = 0;
	for (const char *p = tmp; *p && o + 1 < errsize; p++) {
		if (*p == '\n' || *p == '\r') {
			while (p[1] == '\n' || p[1] == '\r' || p[1] == ' ' || p[1] == '\t')
				p++;
			if (!p[1])
				break;
			if (o + 3 >= errsize)
				break;
			err[o++] = ';';
			err[o++] = ' ';
			continue;
		}
		err[o++] = *p == '\t' ? ' ' : *p;
	}
	err[o] = 0;
	return -1;
}
