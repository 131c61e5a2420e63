/* Interned strings: each distinct byte string stored once (NUL-terminated), alive until
 * the table is freed, so that equal strings are equal pointers. */
#ifndef VIGIL_BASE_INTERN_H
#define VIGIL_BASE_INTERN_H

#include <stddef.h>

struct vgb_intern;

struct vgb_intern *vgb_intern_new(void); /* out of memory: vgb_oom */
void vgb_intern_free(struct vgb_intern *t);
/* The one copy of s[0..len); len may hold NUL bytes (the copy's own NUL follows them). */
const char *vgb_intern(struct vgb_intern *t, const char *s, size_t len);
const char *vgb_intern_str(struct vgb_intern *t, const char *s); /* NULL: "" */
/* The copy, or NULL when s was never interned. */
const char *vgb_intern_find(const struct vgb_intern *t, const char *s, size_t len);
size_t vgb_intern_count(const struct vgb_intern *t);

#endif
