/* Shows where an error is: one source line and a caret under a column. Shared by every
 * language vigil reads (sensor descriptions, TQuel). */
#ifndef VIGIL_COMMON_CARET_H
#define VIGIL_COMMON_CARET_H

#include <stddef.h>
#include <stdio.h>

/* Prints the line of `len` bytes at `line` (without its newline), then a caret under
 * byte column `col` (0-based, clamped to the line). Tabs are kept so the caret lines up,
 * control bytes are shown as '?', and a long line is shown as a window around the column. */
void vg_show_caret(FILE *out, const char *line, size_t len, size_t col);

#endif
