/* The scripts of the processes: what each process does, derived from the seed alone. */
#ifndef MAILBOX_SCRIPT_H
#define MAILBOX_SCRIPT_H

#include <stdint.h>

#include "options.h"

enum mb_op_kind {
	MB_OP_SEND,    /* send message `msg` (with `payload`) to `mailbox` */
	MB_OP_RECEIVE, /* receive one message from `mailbox`, blocking while it is empty */
	MB_OP_WORK,    /* compute for `units` units, no communication */
};

struct mb_op {
	enum mb_op_kind kind;
	uint32_t mailbox; /* index; send and receive */
	uint32_t msg;     /* send: message id, 1, 2, ... */
	uint32_t payload; /* send */
	uint32_t units;   /* work */
};

struct mb_script {
	struct mb_op *ops;
	uint32_t len, cap;
};

/* A generated system: one script per process, the order in which the processes are
 * first Ready, and the number of sends to each mailbox (which bounds its queue). */
struct mb_plan {
	struct mb_script *scripts;  /* [processes] */
	uint32_t *start_order;      /* [processes]: process indexes */
	uint32_t *sends_to_mailbox; /* [mailboxes] */
};

/* Returns 0, or -1 when out of memory. */
int mb_plan_generate(struct mb_plan *plan, const struct mb_options *o);
void mb_plan_free(struct mb_plan *plan, const struct mb_options *o);

#endif
