/* Checked allocation: see alloc.h. A zero size still returns a unique pointer. Large
 * blocks are advised to huge pages (base/huge.h). */
#define _GNU_SOURCE
#include "base/alloc.h"
#include "base/huge.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void vgb_oom(void)
{
	fputs("vigil: out of memory\n", stderr);
	exit(2);
}

void *vgb_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		vgb_oom();
	vgb_huge_advise(p, size);
	return p;
}

void *vgb_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		vgb_oom();
	if (size && n <= SIZE_MAX / size)
		vgb_huge_advise(p, n * size);
	return p;
}

void *vgb_xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		vgb_oom();
	size_t bytes = n * size;
	p = realloc(p, bytes ? bytes : 1);
	if (!p)
		vgb_oom();
	vgb_huge_advise(p, bytes);
	return p;
}

void *vgb_xmalloc_huge(size_t size)
{
	size_t bytes = (size + VGB_HUGE_PAGE - 1) & ~(size_t)(VGB_HUGE_PAGE - 1);
	if (bytes < size)
		vgb_oom();
	void *p = NULL;
	if (posix_memalign(&p, VGB_HUGE_PAGE, bytes ? bytes : VGB_HUGE_PAGE))
		vgb_oom();
	vgb_huge_advise(p, bytes ? bytes : VGB_HUGE_PAGE);
	return p;
}

char *vgb_xstrdup(const char *s)
{
	return vgb_xstrndup(s, strlen(s));
}

char *vgb_xstrndup(const char *s, size_t n)
{
	if (n == SIZE_MAX)
		vgb_oom();
	char *p = vgb_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *vgb_xprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		vgb_oom();
	return s;
}
