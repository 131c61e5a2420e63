/* The processors: one real thread each, taking logical steps in turn. */
#ifndef MAILBOX_PROCESSORS_H
#define MAILBOX_PROCESSORS_H

#include "system.h"

/* Runs the system to its end: starts one thread per processor and joins them. Returns 0,
 * or -1 with a line on stderr (a thread could not start, or the run failed). */
int mb_processors_run(struct mb_system *sys);

#endif
