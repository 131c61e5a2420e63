/* The subject system: processors, processes and mailboxes, and the state they share. */
#ifndef MAILBOX_SYSTEM_H
#define MAILBOX_SYSTEM_H

#include <pthread.h>
#include <stdint.h>

#include "fifo.h"
#include "options.h"
#include "script.h"
#include "truth.h"
#include "vigil/vigil.h"

#define MB_NONE UINT32_MAX

enum mb_state { MB_READY, MB_RUNNING, MB_BLOCKED, MB_DONE };

struct mb_process {
	vg_entity entity; /* kind "Process"; its flag gates SendMessage (the initiator) */
	char name[16];    /* P1, P2, ... */
	struct mb_script script;
	uint32_t pc;    /* next operation */
	uint32_t slice; /* operations run since it was dispatched */
	enum mb_state state;
	struct mb_truth_interval waiting; /* while Blocked */
};

struct mb_mailbox {
	vg_entity entity;        /* kind "Mailbox"; its flag gates Waiting (the target) */
	char name[16];           /* M1, M2, ... */
	struct mb_fifo messages; /* ids of the messages sent and not yet received */
	struct mb_fifo waiters;  /* processes blocked on it, woken first come first served */
};

struct mb_system;

struct mb_processor {
	vg_entity entity; /* kind "Processor"; its flag gates RunningOn (the performer) */
	char name[8];     /* A, B, ..., Z, AA, ... */
	uint32_t index;
	struct mb_system *sys;
	pthread_t thread;
	pthread_cond_t my_turn;
	uint32_t current; /* the process running on it, or MB_NONE */
	struct mb_truth_interval running;
	uint64_t work_done; /* result of the computations, so they are not optimized away */
};

/* Everything below `lock` is read and written only by the processor whose turn it is. */
struct mb_system {
	struct mb_options opts;
	struct mb_processor *processors;
	struct mb_process *processes;
	struct mb_mailbox *mailboxes;
	struct mb_truth *truth;

	pthread_mutex_t lock;
	uint64_t step;        /* the logical clock: one step per turn of one processor */
	uint32_t turn;        /* the processor whose turn it is */
	struct mb_fifo ready; /* the run queue: Ready processes, first come first served */
	uint32_t running;     /* processors with a current process */
	uint32_t done;        /* processes Done */
	int finished;         /* every process is Done, or the run failed */
	const char *failure;  /* why the run failed, or NULL */
};

const char *mb_state_name(enum mb_state s);

/* Builds the system of the options' seed: scripts, entities (created), the run queue
 * holding every process in order. Returns 0, or -1 with a line on stderr. */
int mb_system_init(struct mb_system *sys, const struct mb_options *o);
/* After the run: reclaims the entities (recorded) and completes the ground truth. */
void mb_system_reclaim(struct mb_system *sys);
/* Frees everything. */
void mb_system_destroy(struct mb_system *sys);

#endif
