/* Symbolization of raw sites (docs/model.md, "Sites"): `/abs/module+0xHEX`, the return
 * address of a logging call as an offset from the module's first mapped byte, becomes
 * `path/file.c:LINE` when the module has DWARF line information (libdw; separate debug
 * files found by build id as well), else `module+0xHEX` with the module's basename, so
 * that an event's identity survives ASLR and different install paths. */
#ifndef VIGIL_MODEL_SYMBOLIZE_H
#define VIGIL_MODEL_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vgm_symbolizer;

struct vgm_symbolizer *vgm_symbolizer_new(void);
void vgm_symbolizer_free(struct vgm_symbolizer *s);
/* The site for `site`: symbolized when it is raw, else `site` itself. The string lives
 * until vgm_symbolizer_free. NULL only when out of memory. */
const char *vgm_symbolize(struct vgm_symbolizer *s, const char *site);
/* Why no raw site can get a file:line (libdw cannot be loaded: loaded at the first call,
 * symbolize.c), or NULL when it can. */
const char *vgm_symbolizer_unavailable(void);
/* Raw sites seen, and how many of them got a file:line. */
void vgm_symbolizer_stats(const struct vgm_symbolizer *s, size_t *raw, size_t *resolved);
/* Splits a raw site into its module path (malloc'ed) and offset. false if not raw. */
bool vgm_site_is_raw(const char *site, char **module, uint64_t *offset);
/* The path as a site shows it: relative to comp_dir when under it, else with the
 * directories it shares with comp_dir (two or more) removed, else as it is. */
char *vgm_site_path(const char *file, const char *comp_dir);

#endif
