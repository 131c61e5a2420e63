/* Name -> pointer tables of the checker (open addressing). Private to src/lang. */
#ifndef VIGIL_LANG_SYMTAB_H
#define VIGIL_LANG_SYMTAB_H

#include <stddef.h>

struct vgb_arena;

struct vgl_symtab {
	struct vgl_sym *slots;
	size_t cap, n;
	struct vgb_arena *arena;
};

void *vgl_sym_get(const struct vgl_symtab *t, const char *name);
/* Adds name -> value unless the name is there: returns the value already there, or
 * NULL when added. */
void *vgl_sym_put(struct vgl_symtab *t, const char *name, void *value);

#endif
