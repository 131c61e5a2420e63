/* `--format text|json`, the same on every command that prints a table (docs/export.md,
 * "JSON for scripts"); `--json` stays its short form. */
#ifndef VIGIL_CLI_FORMAT_OPT_H
#define VIGIL_CLI_FORMAT_OPT_H

#include <stdbool.h>

/* 0 with *json set, or 2 after one line "vigil CMD: --format 'X': text or json". */
int vg_cli_format(const char *cmd, const char *arg, bool *json);

#endif
