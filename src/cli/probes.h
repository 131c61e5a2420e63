/* vigil probes: the --collector path, beside the --pid path of probes.c. */
#ifndef VIGIL_CLI_PROBES_H
#define VIGIL_CLI_PROBES_H

#include "wire/probe_pattern.h"

/* --collector HOST:PORT|unix:PATH: the verb through vigild (docs/protocol.md "Probes"),
 * which matches the pattern against every subject's table. Exit status. */
int probes_collector(const char *addr, const char *verb, const struct vgw_probe_pattern *p,
                     int json);

#endif
