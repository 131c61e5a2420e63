/* Command-line options of the mailbox example. */
#ifndef MAILBOX_OPTIONS_H
#define MAILBOX_OPTIONS_H

#include <stdint.h>

#define MB_MAX_PROCESSORS 64
#define MB_MAX_PROCESSES 100000
#define MB_MAX_MAILBOXES 100000
#define MB_MAX_MESSAGES 1000000
#define MB_MAX_QUANTUM 1000000
#define MB_MAX_PACE_US 1000000
#define MB_MAX_SEED INT64_MAX /* the truth stores it as a JSON integer */

struct mb_options {
	uint32_t processors; /* worker threads, named A, B, ... */
	uint32_t processes;  /* tasks, named P1, P2, ... */
	uint32_t mailboxes;  /* named M1, M2, ... */
	uint32_t messages;   /* messages sent in the whole run */
	uint32_t quantum;    /* operations a process runs before it yields to a Ready one */
	uint64_t seed;
	uint32_t pace_us;       /* each processor sleeps this long after each step */
	const char *truth_path; /* ground truth JSON, or NULL */
};

enum mb_parse_result { MB_PARSE_RUN, MB_PARSE_HELP, MB_PARSE_ERROR };

/* Fills `o` from argv. MB_PARSE_HELP: usage was printed on stdout; MB_PARSE_ERROR: one line
 * saying what is wrong was printed on stderr. */
enum mb_parse_result mb_options_parse(struct mb_options *o, int argc, char **argv);

#endif
