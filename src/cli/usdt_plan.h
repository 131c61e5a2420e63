/* Patch plans for the jump path of USDT sites (usdt_plan.c, docs/usdt.md). */
#ifndef VIGIL_CLI_USDT_PLAN_H
#define VIGIL_CLI_USDT_PLAN_H

/* Called with each site's plan (`DEV:INO:PC:HEX:INSNS`, src/runtime/usdt_jump.c reads
 * it); 0 if it was taken. */
typedef int (*vg_usdt_plan_fn)(const char *plan, void *arg);

/* Plans the sites of the ELF file at path (named `shown` in messages) whose probes match
 * one of the comma-separated PROVIDER:GLOB patterns; a site refused gets one line on
 * stderr and stays on the int3 path. The number of plans taken. */
int vg_usdt_plan_file(const char *path, const char *shown, const char *patterns,
                      vg_usdt_plan_fn emit, void *arg);

#endif
