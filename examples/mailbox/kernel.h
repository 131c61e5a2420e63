/* The operating system of the subject: what one processor does in one logical step. */
#ifndef MAILBOX_KERNEL_H
#define MAILBOX_KERNEL_H

#include <stdint.h>

#include "system.h"

/* Runs one step of `cpu` (its turn, with the system lock held): dispatch the next Ready
 * process, or run one operation of its current process, or exit it, or idle. Returns the
 * units of computation the processor owes before its next turn, done outside the lock. */
uint32_t mb_kernel_step(struct mb_system *sys, struct mb_processor *cpu);

#endif
