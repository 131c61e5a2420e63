/* Building and tearing down the system: names, queues and entity lifetimes. Entities are
 * created before the processors start (step 0) and reclaimed after they stop. */
#include "system.h"

#include <stdio.h>
#include <stdlib.h>

#include "mailbox_sensors.h"

const char *mb_state_name(enum mb_state s)
{
	static const char *const names[] = {"Ready", "Running", "Blocked", "Done"};
	return names[s];
}

/* A, B, ..., Z, AA, AB, ...: bijective base 26. */
static void processor_name(char *out, uint32_t index)
{
	char rev[8];
	int n = 0;
	for (uint32_t i = index + 1; i; i = (i - 1) / 26)
		rev[n++] = (char)('A' + (i - 1) % 26);
	for (int k = 0; k < n; k++)
		out[k] = rev[n - 1 - k];
	out[n] = 0;
}

static int alloc_parts(struct mb_system *sys, struct mb_plan *plan)
{
	const struct mb_options *o = &sys->opts;
	sys->processors = calloc(o->processors, sizeof *sys->processors);
	sys->processes = calloc(o->processes, sizeof *sys->processes);
	sys->mailboxes = calloc(o->mailboxes, sizeof *sys->mailboxes);
	sys->truth = mb_truth_new(o);
	if (!sys->processors || !sys->processes || !sys->mailboxes || !sys->truth ||
	    mb_fifo_init(&sys->ready, o->processes))
		return -1;
	for (uint32_t c = 0; c < o->processors; c++) {
		struct mb_processor *cpu = &sys->processors[c];
		processor_name(cpu->name, c);
		cpu->index = c;
		cpu->sys = sys;
		cpu->current = MB_NONE;
		pthread_cond_init(&cpu->my_turn, NULL);
	}
	for (uint32_t m = 0; m < o->mailboxes; m++) {
		struct mb_mailbox *mb = &sys->mailboxes[m];
		snprintf(mb->name, sizeof mb->name, "M%u", m + 1);
		if (mb_fifo_init(&mb->messages, plan->sends_to_mailbox[m]) ||
		    mb_fifo_init(&mb->waiters, o->processes))
			return -1;
	}
	for (uint32_t p = 0; p < o->processes; p++) {
		struct mb_process *proc = &sys->processes[p];
		snprintf(proc->name, sizeof proc->name, "P%u", p + 1);
		proc->script = plan->scripts[p];
		plan->scripts[p] = (struct mb_script){0}; /* now owned by the process */
		proc->state = MB_READY;
	}
	for (uint32_t i = 0; i < o->processes; i++)
		mb_fifo_push(&sys->ready, plan->start_order[i]);
	return 0;
}

static void create_entities(struct mb_system *sys)
{
	const struct mb_options *o = &sys->opts;
	for (uint32_t c = 0; c < o->processors; c++)
		vg_entity_create(&sys->processors[c].entity, MAILBOX_KIND_Processor, c + 1,
		                 sys->processors[c].name);
	for (uint32_t m = 0; m < o->mailboxes; m++)
		vg_entity_create(&sys->mailboxes[m].entity, MAILBOX_KIND_Mailbox, m + 1,
		                 sys->mailboxes[m].name);
	for (uint32_t p = 0; p < o->processes; p++) {
		struct mb_process *proc = &sys->processes[p];
		vg_entity_create(&proc->entity, MAILBOX_KIND_Process, p + 1, proc->name);
		mailbox_ProcessState(&proc->entity, mb_state_name(proc->state));
		mb_truth_state(sys->truth, 0, proc->name, mb_state_name(proc->state));
	}
}

int mb_system_init(struct mb_system *sys, const struct mb_options *o)
{
	*sys = (struct mb_system){.opts = *o, .step = 1};
	pthread_mutex_init(&sys->lock, NULL);
	struct mb_plan plan = {0};
	if (mb_plan_generate(&plan, o) || alloc_parts(sys, &plan)) {
		fprintf(stderr,
		        "mailbox: out of memory building a system of %u processes and %u "
		        "messages\n",
		        o->processes, o->messages);
		mb_plan_free(&plan, o);
		mb_system_destroy(sys);
		return -1;
	}
	mb_plan_free(&plan, o);
	create_entities(sys);
	return 0;
}

void mb_system_reclaim(struct mb_system *sys)
{
	const struct mb_options *o = &sys->opts;
	uint64_t end = sys->step;
	for (uint32_t c = 0; c < o->processors; c++) {
		vg_entity_reclaim(&sys->processors[c].entity);
		mb_truth_entity(sys->truth, "Processor", c + 1, sys->processors[c].name, 0, end);
	}
	for (uint32_t m = 0; m < o->mailboxes; m++) {
		vg_entity_reclaim(&sys->mailboxes[m].entity);
		mb_truth_entity(sys->truth, "Mailbox", m + 1, sys->mailboxes[m].name, 0, end);
	}
	for (uint32_t p = 0; p < o->processes; p++) {
		vg_entity_reclaim(&sys->processes[p].entity);
		mb_truth_entity(sys->truth, "Process", p + 1, sys->processes[p].name, 0, end);
	}
	mb_truth_end(sys->truth, end - 1);
}

void mb_system_destroy(struct mb_system *sys)
{
	const struct mb_options *o = &sys->opts;
	if (sys->processors)
		for (uint32_t c = 0; c < o->processors; c++)
			pthread_cond_destroy(&sys->processors[c].my_turn);
	if (sys->mailboxes)
		for (uint32_t m = 0; m < o->mailboxes; m++) {
			mb_fifo_free(&sys->mailboxes[m].messages);
			mb_fifo_free(&sys->mailboxes[m].waiters);
		}
	if (sys->processes)
		for (uint32_t p = 0; p < o->processes; p++)
			free(sys->processes[p].script.ops);
	free(sys->processors);
	free(sys->processes);
	free(sys->mailboxes);
	mb_fifo_free(&sys->ready);
	mb_truth_free(sys->truth);
	pthread_mutex_destroy(&sys->lock);
	*sys = (struct mb_system){0};
}
