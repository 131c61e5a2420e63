/* Large blocks in transparent huge pages: one rule for the heap's blocks (alloc.c) and for
 * blocks in mappings of their own (the relations' large columns, spill.c). */
#ifndef VIGIL_BASE_HUGE_H
#define VIGIL_BASE_HUGE_H

#include <stdbool.h>
#include <stddef.h>

#define VGB_HUGE_PAGE ((size_t)2 << 20)

/* Advises the whole huge pages inside [p, p + bytes) (none in a block under one). */
void vgb_huge_advise(void *p, size_t bytes);

/* A block of its own: anonymous pages aligned to VGB_HUGE_PAGE, a multiple of it long,
 * advised, grown by moving its pages (mremap), never copied. */
struct vgb_huge_block {
	char *base;
	size_t len;
};

/* A zeroed block of at least `bytes`: false when the address space is refused. */
bool vgb_huge_map(struct vgb_huge_block *b, size_t bytes);
/* b holding at least `bytes`, its contents kept (b->base may move): false when refused,
 * b then as it was. */
bool vgb_huge_grow(struct vgb_huge_block *b, size_t bytes);
void vgb_huge_unmap(struct vgb_huge_block *b);

#endif
