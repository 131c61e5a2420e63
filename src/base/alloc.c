/* Checked allocation: see alloc.h. A zero size still returns a unique pointer. */
#define _GNU_SOURCE
#include "base/alloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Noreturn void vgb_oom(void)
{
	fputs("vigil: out of memory\n", stderr);
	exit(2);
}

/* Large blocks (HUGE_MIN and more) ask for transparent huge pages (the kernel's "madvise" mode,
 * Debian's default): a block is written soon after it is allocated (relations' columns, a join's
 * sorted inputs, a result's rows), and its first touch of each 4 KiB page is a fault; on
 * a virtual machine one costs tens of microseconds (32 MiB: 200 ms in 4 KiB faults, 3 ms
 * in 2 MiB ones, measured on the project's VM). Below HUGE_MIN a huge page could waste
 * more than it saves. Only the block's whole 2 MiB pages are advised. */
#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HUGE_MIN ((size_t)1 << 20)

static void huge_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (bytes < HUGE_MIN)
		return;
	uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t z = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
	if (z > a)
		(void)madvise((void *)a, z - a, MADV_HUGEPAGE); /* advice: failing is harmless */
#else
	(void)p;
	(void)bytes;
#endif
}

void *vgb_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		vgb_oom();
	huge_advise(p, size);
	return p;
}

void *vgb_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		vgb_oom();
	if (size && n <= SIZE_MAX / size)
		huge_advise(p, n * size);
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
	huge_advise(p, bytes);
	return p;
}

void *vgb_xmalloc_huge(size_t size)
{
	size_t bytes = (size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	if (bytes < size)
		vgb_oom();
	void *p = NULL;
	if (posix_memalign(&p, HUGE_PAGE, bytes ? bytes : HUGE_PAGE))
		vgb_oom();
	huge_advise(p, bytes ? bytes : HUGE_PAGE);
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
