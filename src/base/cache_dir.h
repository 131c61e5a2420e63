/* Where vigil keeps what it makes of a trace that cannot lie beside it (the relations
 * cache, the build's spill file, the streams' packet summaries): one rule, written once. */
#ifndef VIGIL_BASE_CACHE_DIR_H
#define VIGIL_BASE_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* VIGIL_CACHE_DIR, else $XDG_CACHE_HOME/vigil, else $HOME/.cache/vigil, into out; false
 * when none is set or it does not fit. */
bool vgb_cache_dir(char *out, size_t n);

#endif
