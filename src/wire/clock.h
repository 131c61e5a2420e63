/* The clock hand-off (wire/clock.c): the trace clock's TSC-to-ns mapping calibrated once
 * and passed to every process of a subject as VIGIL_CLOCK, so that their streams merge
 * exactly. `vigil record` calibrates and exports; libvigil imports (or calibrates itself)
 * and exports again to its children. */
#ifndef VIGIL_WIRE_CLOCK_H
#define VIGIL_WIRE_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Calibrates the mapping (20 ms when the TSC is usable) and measures the wall clock's
 * offset from CLOCK_MONOTONIC. */
void vgw_clock_init(void);
/* The VIGIL_CLOCK text: "tsc,MULT,BASE_TSC,BASE_NS,REALTIME_OFFSET" or
 * "mono,0,0,0,REALTIME_OFFSET". 0, or -1 when len is too small. */
int vgw_clock_export(char *buf, size_t len);
/* Takes a VIGIL_CLOCK text: 0, or -1 when it is malformed, from another machine or boot
 * (the clock is then as before). */
int vgw_clock_import(const char *text);
/* Wall clock minus CLOCK_MONOTONIC, ns, as calibrated or imported. */
int64_t vgw_clock_realtime_offset_ns(void);

#endif
