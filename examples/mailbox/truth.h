/* The ground truth of a run: every logical fact a full recording of it must contain, with
 * logical steps instead of times (times differ from run to run, steps do not). */
#ifndef MAILBOX_TRUTH_H
#define MAILBOX_TRUTH_H

#include <stdint.h>
#include <stdio.h>

#include "options.h"

struct mb_truth;

/* An interval tuple begun and not yet ended. */
struct mb_truth_interval {
	void *tuple;
};

struct mb_truth_counts {
	uint64_t state_changes, sends, receives, waits, runs;
};

struct mb_truth *mb_truth_new(const struct mb_options *o);
void mb_truth_free(struct mb_truth *t);

void mb_truth_state(struct mb_truth *t, uint64_t step, const char *process, const char *state);
void mb_truth_send(struct mb_truth *t, uint64_t step, const char *process, const char *mailbox,
                   uint32_t msg, uint32_t payload);
/* `waited`: the message was handed to the process that was blocked on the mailbox. */
void mb_truth_receive(struct mb_truth *t, uint64_t step, const char *process, const char *mailbox,
                      uint32_t msg, int waited);
void mb_truth_waiting_begin(struct mb_truth *t, uint64_t step, const char *process,
                            const char *mailbox, struct mb_truth_interval *w);
void mb_truth_running_begin(struct mb_truth *t, uint64_t step, const char *process,
                            const char *processor, struct mb_truth_interval *r);
void mb_truth_interval_end(struct mb_truth *t, struct mb_truth_interval *i, uint64_t step);
/* An entity's lifetime, from step `created` to step `reclaimed`. */
void mb_truth_entity(struct mb_truth *t, const char *kind, uint64_t id, const char *name,
                     uint64_t created, uint64_t reclaimed);
/* The run ended after `steps` steps. */
void mb_truth_end(struct mb_truth *t, uint64_t steps);

void mb_truth_counts(const struct mb_truth *t, struct mb_truth_counts *c);
/* Writes the JSON document, one fact per line. Returns 0, or -1 (out of memory while
 * collecting, or a write error). */
int mb_truth_write(const struct mb_truth *t, FILE *f);

#endif
