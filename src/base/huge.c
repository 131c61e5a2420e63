/* Transparent huge pages for large blocks (huge.h). A block is written soon after it is
 * allocated (relations' columns, a join's sorted inputs, a result's rows), and its first
 * touch of each 4 KiB page is a fault; on a virtual machine one costs tens of microseconds
 * (32 MiB: 200 ms in 4 KiB faults, 3 ms in 2 MiB ones, measured on the project's VM). The
 * kernel's "madvise" mode (Debian's default) gives huge pages only where advised. Only a
 * block's whole huge pages are advised: a smaller one could waste more than it saves. */
#define _GNU_SOURCE
#include "base/huge.h"

#include <stdint.h>
#include <sys/mman.h>

void vgb_huge_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (bytes < VGB_HUGE_PAGE)
		return;
	uintptr_t a = ((uintptr_t)p + VGB_HUGE_PAGE - 1) & ~(uintptr_t)(VGB_HUGE_PAGE - 1);
	uintptr_t z = ((uintptr_t)p + bytes) & ~(uintptr_t)(VGB_HUGE_PAGE - 1);
	if (z > a)
		(void)madvise((void *)a, z - a, MADV_HUGEPAGE); /* advice: failing is harmless */
#else
	(void)p;
	(void)bytes;
#endif
}

static size_t whole_pages(size_t bytes)
{
	return (bytes + VGB_HUGE_PAGE - 1) / VGB_HUGE_PAGE * VGB_HUGE_PAGE;
}

/* len bytes (a multiple of VGB_HUGE_PAGE) of address space aligned to it, or NULL. */
static char *reserve_aligned(size_t len, int prot)
{
	char *p = mmap(NULL, len + VGB_HUGE_PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	               -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	char *at = (char *)(((uintptr_t)p + VGB_HUGE_PAGE - 1) & ~(uintptr_t)(VGB_HUGE_PAGE - 1));
	if (at > p)
		munmap(p, (size_t)(at - p));
	if (at + len < p + len + VGB_HUGE_PAGE)
		munmap(at + len, (size_t)(p + len + VGB_HUGE_PAGE - (at + len)));
	return at;
}

bool vgb_huge_map(struct vgb_huge_block *b, size_t bytes)
{
	if (bytes > SIZE_MAX - 2 * VGB_HUGE_PAGE)
		return false;
	size_t len = whole_pages(bytes ? bytes : 1);
	char *at = reserve_aligned(len, PROT_READ | PROT_WRITE);
	if (!at)
		return false;
	vgb_huge_advise(at, len);
	*b = (struct vgb_huge_block){at, len};
	return true;
}

bool vgb_huge_grow(struct vgb_huge_block *b, size_t bytes)
{
	if (bytes <= b->len)
		return true;
	if (bytes > SIZE_MAX - 2 * VGB_HUGE_PAGE)
		return false;
	size_t len = whole_pages(bytes);
	char *at = reserve_aligned(len, PROT_NONE);
	if (!at)
		return false;
	void *p = mremap(b->base, b->len, len, MREMAP_MAYMOVE | MREMAP_FIXED, at);
	if (p == MAP_FAILED) {
		munmap(at, len);
		return false;
	}
	mprotect(p, len, PROT_READ | PROT_WRITE);
	vgb_huge_advise(p, len);
	*b = (struct vgb_huge_block){p, len};
	return true;
}

void vgb_huge_unmap(struct vgb_huge_block *b)
{
	if (b->base)
		munmap(b->base, b->len);
	*b = (struct vgb_huge_block){0};
}
