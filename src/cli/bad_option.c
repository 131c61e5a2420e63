/* The message for an option getopt_long refused, the same for every command. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bad_option.h"

int vg_cli_bad_option(const char *cmd, char **argv)
{
	const char *arg = argv[optind - 1];
	if (optopt && optopt < 256)
		fprintf(stderr, "vigil %s: unknown option '-%c'", cmd, optopt);
	else if (optopt && strchr(arg, '='))
		fprintf(stderr, "vigil %s: option '%.*s' takes no value", cmd,
		        (int)strcspn(arg, "="), arg);
	else if (optopt)
		fprintf(stderr, "vigil %s: option '%s' needs a value", cmd, arg);
	else
		fprintf(stderr, "vigil %s: unknown option '%s'", cmd, arg);
	fprintf(stderr, " (see 'vigil %s --help')\n", cmd);
	return 2;
}
