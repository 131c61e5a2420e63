/* vigil net export: interaction networks as OpenTelemetry traces (net_export.c). */
#ifndef VIGIL_CLI_NET_EXPORT_H
#define VIGIL_CLI_NET_EXPORT_H

#include <stddef.h>

int vg_net_export(int argc, char **argv);
/* The network files named by a DIR (its net-*.json, sorted) or one file; NULL with one
 * line in err. Each string and the array are malloc'd. */
char **vg_cli_network_files(const char *arg, size_t *n, char *err, size_t errsize);

#endif
