/* Column memory with a budget (spill.c): the columns store.c grows live on the heap while
 * they fit the build's memory budget; past it, a large column is moved to a temporary file
 * in the cache directory, mapped (the page cache holds its pages, not the heap), and the
 * pages of such columns the process holds are dropped whenever they pass half the budget
 * (they are read back from the page cache, or the disk, when next touched). Pointers to
 * columns stay plain arrays, read as before.
 *
 * Environment: VIGIL_BUILD_MEMORY, the budget (bytes, with K, M, G or T: "512M"; default a
 * quarter of the machine's memory): columns on the heap take at most half of it, the
 * spilled columns' resident pages the other half. A budget of 0 spills every column of
 * at least one page. */
#ifndef VIGIL_RELATIONS_SPILL_H
#define VIGIL_RELATIONS_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How one relation's columns are held: hung off the relation by store.c (NULL for
 * relations whose columns other code allocated). */
struct vgq_colmem;

/* Makes *col hold `bytes` (its first min(old_bytes, bytes) bytes kept, the rest
 * unspecified): on the heap, or in the spill file when the budget is spent and the
 * column is large. *m is made on first use. Out of memory: vgb_oom. */
void vgq_colmem_resize(struct vgq_colmem **m, void **col, size_t old_bytes, size_t bytes);
/* Moves *col (a heap array of the caller's, old_bytes; or one m already spilled) to the
 * spill file, `bytes` long, whatever the budget: the executor's state past the query's
 * budget (query/exec_memory.c). False when it cannot (no spill file, a full disk: said
 * once): *col is then unchanged. */
bool vgq_colmem_spill(struct vgq_colmem **m, void **col, size_t old_bytes, size_t bytes);
/* Frees one column held by m (heap or spill file), and at last m itself. */
void vgq_colmem_release(struct vgq_colmem *m, void *col);
void vgq_colmem_free(struct vgq_colmem *m);

/* The budget in bytes (VIGIL_BUILD_MEMORY, read once). A value that is not a size is one
 * line on stderr and exit status 2. */
size_t vgq_spill_budget(void);
/* Sets the budget as VIGIL_BUILD_MEMORY would (tests compare builds under two budgets). */
void vgq_spill_set_budget(size_t bytes);

/* "512M", "4G", "1048576": bytes (K, M, G, T are powers of 1024; "KiB", "MB" too); false
 * if s is not such a size. The query's memory budget (VIGIL_QUERY_MEMORY) reads it too. */
bool vgq_parse_size(const char *s, size_t *out);

/* What spilling did in this process, for --stats: bytes of columns moved to the spill
 * file (their mapped size, summed over every column ever spilled), columns spilled, and
 * how many times the resident pages were dropped. */
struct vgq_spill_stats {
	uint64_t bytes, columns, trims;
};
struct vgq_spill_stats vgq_spill_stats(void);

#endif
