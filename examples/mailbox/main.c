/* mailbox: the example subject system of vigil.
 *
 * Processors (threads) run processes (tasks) that send messages to mailboxes and block on
 * receive from empty ones, as in Snodgrass's "A Relational Approach to Monitoring Complex
 * Systems". Recorded with `vigil record`; --truth writes what a recording must contain.
 */
#define MAILBOX_SENSORS_IMPLEMENTATION
#include "mailbox_sensors.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "processors.h"
#include "system.h"

static int write_truth(const struct mb_system *sys, FILE *f, const char *path)
{
	int err = mb_truth_write(sys->truth, f);
	if (fclose(f) || err) {
		fprintf(stderr, "mailbox: cannot write the ground truth to '%s'%s%s\n", path,
		        errno ? ": " : "", errno ? strerror(errno) : "");
		return -1;
	}
	return 0;
}

static const char *plural(uint64_t n, const char *suffix)
{
	return n == 1 ? "" : suffix;
}

static void print_summary(const struct mb_system *sys)
{
	const struct mb_options *o = &sys->opts;
	struct mb_truth_counts c;
	mb_truth_counts(sys->truth, &c);
	printf("mailbox: seed %llu: %u process%s on %u processor%s sent %llu message%s to %u "
	       "mailbox%s in %llu steps (%llu dispatch%s, %llu wait%s)\n",
	       (unsigned long long)o->seed, o->processes, plural(o->processes, "es"), o->processors,
	       plural(o->processors, "s"), (unsigned long long)c.sends, plural(c.sends, "s"),
	       o->mailboxes, plural(o->mailboxes, "es"), (unsigned long long)sys->step - 1,
	       (unsigned long long)c.runs, plural(c.runs, "es"), (unsigned long long)c.waits,
	       plural(c.waits, "s"));
	if (vg_recording() && vg_trace_dir())
		printf("mailbox: recorded into %s (%llu events discarded)\n", vg_trace_dir(),
		       (unsigned long long)vg_events_discarded());
	else if (vg_recording()) /* shipped to a collector, or a monitor's working copy */
		printf("mailbox: recorded (%llu events discarded)\n",
		       (unsigned long long)vg_events_discarded());
}

int main(int argc, char **argv)
{
	struct mb_options opts;
	switch (mb_options_parse(&opts, argc, argv)) {
	case MB_PARSE_HELP:
		return 0;
	case MB_PARSE_ERROR:
		return 2;
	case MB_PARSE_RUN:
		break;
	}
	/* Open the truth file first: a bad path fails before the run, not after it. */
	FILE *truth = NULL;
	if (opts.truth_path && !(truth = fopen(opts.truth_path, "w"))) {
		fprintf(stderr, "mailbox: cannot write the ground truth to '%s': %s\n",
		        opts.truth_path, strerror(errno));
		return 1;
	}
	mailbox_sensors_register();
	struct mb_system sys;
	if (mb_system_init(&sys, &opts)) {
		if (truth)
			fclose(truth);
		return 1;
	}
	int status = mb_processors_run(&sys) ? 1 : 0;
	mb_system_reclaim(&sys);
	if (truth && status == 0) {
		errno = 0;
		status = write_truth(&sys, truth, opts.truth_path) ? 1 : 0;
	} else if (truth) {
		fclose(truth);
	}
	if (status == 0)
		print_summary(&sys);
	mb_system_destroy(&sys);
	return status;
}
