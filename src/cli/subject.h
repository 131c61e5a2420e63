/* A subject's environment: libvigil preloaded, the clock calibrated once. */
#ifndef VIGIL_CLI_SUBJECT_H
#define VIGIL_CLI_SUBJECT_H

#include <stddef.h>

/* libvigil.so: $VIGIL_LIB, or beside the vigil binary, or in ../lib. -1 after printing. */
int vg_cli_find_runtime(const char *cmd, char *out, size_t len);
/* Puts lib first in LD_PRELOAD (keeping what was there). -1 when out of memory. */
int vg_cli_set_preload(const char *lib);
/* Calibrates the clock and exports it in VIGIL_CLOCK, so all processes convert alike. */
void vg_cli_export_clock(void);

#endif
