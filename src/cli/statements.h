/* TQuel statements from the command line: -e TEXT or -f FILE. */
#ifndef VIGIL_CLI_STATEMENTS_H
#define VIGIL_CLI_STATEMENTS_H

#include "tquel/tquel.h"

/* Reads and parses the statements (text_arg, else the file). NULL after printing the
 * errors (syntax errors with a caret, an unreadable file, no retrieve at all). */
struct tquel_query *vg_cli_statements(const char *cmd, const char *text_arg, const char *file);

#endif
