/* Checked allocation for the analysis rooms: out of memory is one line on stderr and exit
 * status 2, never a crash. (The runtime keeps its own: it may never stop its host.) */
#ifndef VIGIL_BASE_ALLOC_H
#define VIGIL_BASE_ALLOC_H

#include <stddef.h>

_Noreturn void vgb_oom(void);
void *vgb_xmalloc(size_t size);
void *vgb_xcalloc(size_t n, size_t size);
void *vgb_xrealloc(void *p, size_t n, size_t size); /* n * size, overflow checked */
/* A block of whole 2 MiB pages (size rounded up), aligned to them and every one advised
 * to be a transparent huge page: for a large block written at once (freed by free). */
void *vgb_xmalloc_huge(size_t size);
char *vgb_xstrdup(const char *s);
char *vgb_xstrndup(const char *s, size_t n);
char *vgb_xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
