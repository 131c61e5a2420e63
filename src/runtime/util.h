/* The runtime's utilities that `vigil record` shares (util.c, compiled into vigil too), so
 * that it creates the trace root and checks VIGIL_MAX_SIZE exactly as libvigil will. The
 * rest of util.c is declared in internal.h. */
#ifndef VIGIL_RUNTIME_UTIL_H
#define VIGIL_RUNTIME_UTIL_H

#include <stdint.h>

int vg__mkdir_p(const char *path); /* the last component only; EEXIST is fine */
/* A size setting: "123", "64k", "16M", "2G" (a trailing B allowed); -1 if malformed. */
int vg__parse_size(const char *text, uint64_t *out);

#endif
