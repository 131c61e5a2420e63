/* Loading from memory: the fuzz target's entry point. Private to src/lang. */
#ifndef VIGIL_LANG_LOAD_H
#define VIGIL_LANG_LOAD_H

#include <stddef.h>
#include <stdio.h>

#include "lang/model.h"

/* As vgl_load, with the main file's text given (`name` is used in messages; imports
 * are read relative to it). `text` must stay valid until the model is freed. */
struct vgl_model *vgl_load_text(const char *name, const char *text, size_t len, FILE *errors,
                                int *nerrors);

#endif
