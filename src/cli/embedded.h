/* The sensor description a program carries: `vigil gen --lang c` embeds the .vgl files
 * as ELF notes (src/lang/gen_c_embed.c); vigil relations, watch and ui read them here
 * when no --sensors is given. */
#ifndef VIGIL_CLI_EMBEDDED_H
#define VIGIL_CLI_EMBEDDED_H

#include <stdbool.h>
#include <stddef.h>

#include "lang/lang.h"

/* The model embedded in `program` (a path, or a name looked up in PATH as exec would).
 * Returns NULL with *found = 0 when it is not a readable ELF file or carries no
 * description (nothing printed); with *found = 1 when it carries one that does not load
 * (its errors printed, each line starting "vigil CMD: PROGRAM: "). */
struct vgl_model *vg_cli_embedded_model(const char *cmd, const char *program, int *found);

/* Whether `path` is a regular file that starts as an ELF file does. */
bool vg_cli_is_elf(const char *path);

#endif
