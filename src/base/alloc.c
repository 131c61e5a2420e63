/* Checked allocation: see alloc.h. A zero size still returns a unique pointer. */
#define _GNU_SOURCE
#include "base/alloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Large blocks are asked to be backed by transparent huge pages (where the kernel leaves
 * that to madvise): a block written once from its start, as the engine's arrays of
 * bindings, keys and results are, otherwise costs a page fault per 4 KiB, and under a
 * hypervisor those faults were half of a join's time. Below HUGE_MIN the rounding to
 * 2 MiB would waste more than it saves. */
#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HUGE_MIN ((size_t)4 << 20)

static void advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (bytes < HUGE_MIN)
		return;
	uintptr_t from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t to = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_HUGEPAGE); /* advice only: failure is fine */
#else
	(void)p;
	(void)bytes;
#endif
}

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
	advise_huge(p, size);
	return p;
}

void *vgb_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		vgb_oom();
	if (size && n <= SIZE_MAX / size)
		advise_huge(p, n * size);
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
	advise_huge(p, bytes);
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
