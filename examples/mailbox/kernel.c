/* The kernel: dispatching, sending, receiving, blocking and waking. Every logical fact is
 * recorded twice, in the same order: by its sensor (into the trace, from the thread of
 * the processor that makes it happen) and in the ground truth (with its logical step). */
#include "kernel.h"

#include "mailbox_sensors.h"

static void set_state(struct mb_system *sys, struct mb_process *p, enum mb_state state)
{
	p->state = state;
	mailbox_ProcessState(&p->entity, mb_state_name(state));
	mb_truth_state(sys->truth, sys->step, p->name, mb_state_name(state));
}

/* The process leaves the processor (Ready again, Blocked or Done). */
static void undispatch(struct mb_system *sys, struct mb_processor *cpu, struct mb_process *p,
                       enum mb_state state)
{
	set_state(sys, p, state);
	mailbox_RunningOn_end(&p->entity, &cpu->entity);
	mb_truth_interval_end(sys->truth, &cpu->running, sys->step);
	cpu->current = MB_NONE;
	sys->running--;
}

static void dispatch(struct mb_system *sys, struct mb_processor *cpu, uint32_t pi)
{
	struct mb_process *p = &sys->processes[pi];
	cpu->current = pi;
	sys->running++;
	p->slice = 0;
	set_state(sys, p, MB_RUNNING);
	mailbox_RunningOn_begin(&p->entity, &cpu->entity);
	mb_truth_running_begin(sys->truth, sys->step, p->name, cpu->name, &cpu->running);
}

static void finish(struct mb_system *sys, struct mb_processor *cpu, struct mb_process *p)
{
	undispatch(sys, cpu, p, MB_DONE);
	if (++sys->done == sys->opts.processes)
		sys->finished = 1;
}

/* Nothing to run here. If nothing runs anywhere either while processes remain, they all
 * wait for each other: impossible with the generated scripts, so report, never hang. */
static void idle(struct mb_system *sys)
{
	if (sys->running == 0 && mb_fifo_empty(&sys->ready) && sys->done < sys->opts.processes) {
		sys->failure = "every remaining process is blocked (deadlock)";
		sys->finished = 1;
	}
}

static void send(struct mb_system *sys, struct mb_process *p, const struct mb_op *op)
{
	struct mb_mailbox *mb = &sys->mailboxes[op->mailbox];
	mailbox_SendMessage(&p->entity, &mb->entity, op->msg, op->payload);
	mb_truth_send(sys->truth, sys->step, p->name, mb->name, op->msg, op->payload);
	if (mb_fifo_empty(&mb->waiters)) {
		mb_fifo_push(&mb->messages, op->msg);
		return;
	}
	/* Hand the message to the first waiter, which becomes Ready. */
	uint32_t wi = mb_fifo_pop(&mb->waiters);
	struct mb_process *w = &sys->processes[wi];
	mb_truth_receive(sys->truth, sys->step, w->name, mb->name, op->msg, 1);
	mailbox_Waiting_end(&w->entity, &mb->entity);
	mb_truth_interval_end(sys->truth, &w->waiting, sys->step);
	set_state(sys, w, MB_READY);
	mb_fifo_push(&sys->ready, wi);
}

/* Returns 1 if a message was received, 0 if the process blocked (and left the processor). */
static int receive(struct mb_system *sys, struct mb_processor *cpu, struct mb_process *p,
                   const struct mb_op *op)
{
	struct mb_mailbox *mb = &sys->mailboxes[op->mailbox];
	if (!mb_fifo_empty(&mb->messages)) {
		uint32_t msg = mb_fifo_pop(&mb->messages);
		mb_truth_receive(sys->truth, sys->step, p->name, mb->name, msg, 0);
		return 1;
	}
	mailbox_Waiting_begin(&p->entity, &mb->entity);
	mb_truth_waiting_begin(sys->truth, sys->step, p->name, mb->name, &p->waiting);
	mb_fifo_push(&mb->waiters, cpu->current);
	undispatch(sys, cpu, p, MB_BLOCKED);
	return 0;
}

uint32_t mb_kernel_step(struct mb_system *sys, struct mb_processor *cpu)
{
	if (cpu->current == MB_NONE) {
		if (mb_fifo_empty(&sys->ready))
			idle(sys);
		else
			dispatch(sys, cpu, mb_fifo_pop(&sys->ready));
		return 0;
	}
	struct mb_process *p = &sys->processes[cpu->current];
	/* Exiting is a step of its own: a process woken by its last receive must run again
	 * to return from it. */
	if (p->pc == p->script.len) {
		finish(sys, cpu, p);
		return 0;
	}
	const struct mb_op *op = &p->script.ops[p->pc++];
	uint32_t work = 0;
	switch (op->kind) {
	case MB_OP_SEND:
		send(sys, p, op);
		break;
	case MB_OP_RECEIVE:
		if (!receive(sys, cpu, p, op))
			return 0;
		break;
	case MB_OP_WORK:
		work = op->units;
		break;
	}
	/* Time slicing: after `quantum` operations a process yields to a Ready one, so that
	 * processes move between processors. */
	if (++p->slice >= sys->opts.quantum && p->pc < p->script.len &&
	    !mb_fifo_empty(&sys->ready)) {
		undispatch(sys, cpu, p, MB_READY);
		mb_fifo_push(&sys->ready, (uint32_t)(p - sys->processes));
	}
	return work;
}
