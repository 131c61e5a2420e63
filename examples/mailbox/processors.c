/* Deterministic turns on real threads.
 *
 * The processors take logical steps in a fixed round-robin order A, B, C, ..., one step
 * per turn, under the system lock: so the logical run (every fact, its order, its step)
 * depends on the options alone, never on how the threads are scheduled. Each thread
 * records its sensors itself, during its own turn, so the trace's time order follows the
 * logical order. The computation of a WORK operation happens after the turn is passed on,
 * outside the lock: there the processors really run in parallel.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "processors.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"

/* Deterministic busy work; its result is kept so the compiler cannot drop it. */
static void compute(struct mb_processor *cpu, uint32_t units)
{
	uint64_t x = cpu->work_done | 1;
	for (uint32_t i = 0; i < units * 20000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	cpu->work_done = x;
}

static void pass_turn(struct mb_system *sys)
{
	sys->step++;
	sys->turn = (sys->turn + 1) % sys->opts.processors;
	if (sys->finished)
		for (uint32_t c = 0; c < sys->opts.processors; c++)
			pthread_cond_signal(&sys->processors[c].my_turn);
	else
		pthread_cond_signal(&sys->processors[sys->turn].my_turn);
}

static void *processor_main(void *arg)
{
	struct mb_processor *cpu = arg;
	struct mb_system *sys = cpu->sys;
	uint32_t owed = 0;
	for (;;) {
		if (owed)
			compute(cpu, owed);
		pthread_mutex_lock(&sys->lock);
		while (!sys->finished && sys->turn != cpu->index)
			pthread_cond_wait(&cpu->my_turn, &sys->lock);
		if (sys->finished) {
			pthread_mutex_unlock(&sys->lock);
			return NULL;
		}
		owed = mb_kernel_step(sys, cpu);
		pass_turn(sys);
		pthread_mutex_unlock(&sys->lock);
		if (sys->opts.pace_us)
			usleep(sys->opts.pace_us);
	}
}

int mb_processors_run(struct mb_system *sys)
{
	uint32_t started = 0;
	int err = 0;
	for (; started < sys->opts.processors; started++) {
		struct mb_processor *cpu = &sys->processors[started];
		err = pthread_create(&cpu->thread, NULL, processor_main, cpu);
		if (err)
			break;
		char name[16];
		snprintf(name, sizeof name, "cpu-%s", cpu->name);
		pthread_setname_np(cpu->thread, name);
	}
	if (err) {
		/* Stop the ones that started: the run cannot be the one the options describe. */
		pthread_mutex_lock(&sys->lock);
		sys->finished = 1;
		sys->failure = "a processor thread could not start";
		for (uint32_t c = 0; c < started; c++)
			pthread_cond_signal(&sys->processors[c].my_turn);
		pthread_mutex_unlock(&sys->lock);
		fprintf(stderr, "mailbox: cannot start processor %s: %s\n",
		        sys->processors[started].name, strerror(err));
	}
	for (uint32_t c = 0; c < started; c++)
		pthread_join(sys->processors[c].thread, NULL);
	if (sys->failure && !err)
		fprintf(stderr, "mailbox: run failed at step %llu: %s\n",
		        (unsigned long long)sys->step - 1, sys->failure);
	return sys->failure ? -1 : 0;
}
