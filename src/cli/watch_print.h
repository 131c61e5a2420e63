/* vigil watch's output: result tuples printed once each, as they become final. */
#ifndef VIGIL_CLI_WATCH_PRINT_H
#define VIGIL_CLI_WATCH_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "relations/relation.h"

enum watch_format { WATCH_TEXT, WATCH_CSV, WATCH_JSON };

struct watch_printer;
struct watch_printer *watch_printer_new(FILE *out, enum watch_format f, int64_t origin);
void watch_printer_free(struct watch_printer *p);
/* Prints the tuples of r not printed before. With `final` false, only the tuples whose
 * valid time ended before `horizon` (later data cannot change them). Returns the number
 * printed, or -1 on a write error. */
long watch_print(struct watch_printer *p, const struct vgq_relation *r, bool final,
                 int64_t horizon);
uint64_t watch_printed(const struct watch_printer *p);
/* Text times are seconds since the first origin given (the first snapshot's first event). */
void watch_printer_origin(struct watch_printer *p, int64_t origin);

#endif
