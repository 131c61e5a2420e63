/* One line for an option getopt_long refused (unknown, missing or unwanted value). */
#ifndef VIGIL_CLI_BAD_OPTION_H
#define VIGIL_CLI_BAD_OPTION_H

/* Call from getopt_long's '?' case: prints "vigil CMD: ... (see 'vigil CMD --help')";
 * returns 2, the exit status for a usage error. */
int vg_cli_bad_option(const char *cmd, char **argv);

#endif
