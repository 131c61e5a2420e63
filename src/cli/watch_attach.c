/* vigil watch --pid: attaches to a running process that listens for monitors
 * (VIGIL_CONTROL=listen, docs/control.md "Attaching"), installs the plan's sensors there,
 * and answers the query over that process's own trace every --every, until the process
 * ends, --for has passed, or the user interrupts. Detaching (closing the connection)
 * lowers exactly what was raised; the process runs on. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/control_link.h"
#include "cli/watch.h"

static volatile sig_atomic_t stop_signal;
static void on_stop(int sig)
{
	stop_signal = sig;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sends the plan; the number of commands refused (each reported). */
static size_t install(struct vgc_subject *c, const struct vga_plan *plan, int64_t tick_ns)
{
	char **commands, err[512];
	/* Clocks tick from the attach (the hello): the process samples at those ticks. */
	size_t n = vga_commands_at(plan, tick_ns, (uint64_t)vgc_subject_hello_ns(c), &commands);
	size_t refused = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t at;
		if (vgc_command(c, commands[i], &at, NULL, err, sizeof err) < 0) {
			fprintf(stderr, "vigil watch: process %d refused '%s': %s\n",
			        vgc_subject_pid(c), commands[i], err);
			refused++;
		}
	}
	vga_commands_free(commands, n);
	return refused;
}

enum end { ENDED, INTERRUPTED, TIME_UP, FAILED };

/* Answers every --every until something ends the watch. */
static enum end run(const struct watch_args *a, struct vgc_subject *c, const struct tquel_query *q,
                    const struct vga_plan *plan, const struct vgq_options *o,
                    struct watch_printer *pr, struct watch_answer *ans, struct watch_follow *wf,
                    int *snapshots)
{
	const char *image = vgc_subject_image(c);
	int64_t until = a->attach_for ? mono_ns() + a->attach_for : INT64_MAX;
	int64_t next = mono_ns() + a->every;
	for (;;) {
		if (stop_signal)
			return INTERRUPTED;
		int64_t now = mono_ns();
		if (now >= until)
			return TIME_UP;
		int64_t wake = next < until ? next : until;
		struct pollfd p = {vgc_subject_fd(c), POLLIN, 0};
		int64_t wait_ms = (wake - now) / 1000000;
		int n = poll(&p, 1, wait_ms < 0 ? 0 : wait_ms > 1000 ? 1000 : (int)wait_ms);
		if (n > 0) /* readable with nothing asked: the process has gone */
			return ENDED;
		if (mono_ns() >= next) {
			if (wf ? watch_follow_step(wf, false) < 0
			       : watch_answer(image, q, plan, o, pr, false, ans) < 0)
				return FAILED;
			(*snapshots)++;
			next = mono_ns() + a->every;
		}
	}
}

int watch_attach(const struct watch_args *a, struct vgc_subject *c, const struct tquel_query *q,
                 const struct vga_plan *plan, const struct vgq_options *o)
{
	/* SA_RESTART: a write to a full stdout pipe is resumed, not failed; poll is never
	 * restarted (signal(7)), so it still returns at once. */
	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	int pid = vgc_subject_pid(c);
	char image[4096];
	snprintf(image, sizeof image, "%s", vgc_subject_image(c));
	size_t refused = install(c, plan, o->tick_ns);
	if (refused) {
		/* Answers from part of the plan would not be the query's: take the part that
		 * was installed away again and leave the process (and any other monitor) as
		 * it was. A sampling clock another monitor's plan holds is the usual cause. */
		char err[512];
		int64_t at;
		vgc_command(c, "reset", &at, NULL, err, sizeof err);
		vgc_subject_close(c);
		fprintf(stderr,
		        "vigil watch: process %d refused %zu command(s) of the plan (above), "
		        "which conflicts with another monitor's; detached, nothing answered\n",
		        pid, refused);
		return 2;
	}
	if (!a->quiet)
		fprintf(stderr, "vigil watch: attached to process %d (trace %s)\n", pid, image);
	struct watch_printer *pr = watch_printer_new(stdout, a->format, 0);
	struct watch_answer ans = {.since = (uint64_t)vgc_subject_hello_ns(c),
	                           .clock_origin = (uint64_t)vgc_subject_hello_ns(c)};
	int snapshots = 0;
	char reason[512];
	struct watch_follow *wf =
	    watch_follow_new(image, q, plan, o, &ans, a->lateness, pr, reason, sizeof reason);
	if (!wf && !a->quiet)
		fprintf(stderr, "vigil watch: answering by re-evaluation at each update: %s\n",
		        reason);
	enum end why = run(a, c, q, plan, o, pr, &ans, wf, &snapshots);
	/* Switch the plan off first (the process answers once it is off), so the final
	 * answer is over everything the plan recorded; then detach. */
	char err[512];
	int64_t at;
	if (why != ENDED && vgc_command(c, "reset", &at, NULL, err, sizeof err) < 0 && !a->quiet)
		fprintf(stderr, "vigil watch: process %d: reset: %s\n", pid, err);
	vgc_subject_close(c);
	int rc = 0;
	char *extra = NULL;
	if (why != FAILED && wf &&
	    (watch_follow_step(wf, true) < 0 ||
	     watch_follow_end(wf, &ans, a->stats ? &extra : NULL) < 0))
		why = FAILED;
	else if (why != FAILED && !wf && watch_answer(image, q, plan, o, pr, true, &ans) < 0)
		why = FAILED;
	if (why == FAILED)
		rc = 2;
	if (!a->quiet && why != FAILED) {
		static const char *const what[] = {"the process ended", "interrupted",
		                                   "time is up"};
		fprintf(stderr,
		        "vigil watch: detached from process %d (%s); %" PRIu64 " tuple(s); %" PRIu64
		        " packet(s) asked for, %" PRIu64 " extraneous, %" PRIu64
		        " from entity sources\n",
		        pid, what[why], watch_printed(pr), ans.counts.kept, ans.counts.extraneous,
		        ans.counts.sources);
	}
	if (a->stats) {
		char *line = NULL;
		if (asprintf(&line, ",\"pid\":%d,\"snapshots\":%d%s", pid, snapshots,
		             extra ? extra : ",\"evaluation\":\"re-evaluation\"") < 0)
			abort();
		watch_print_stats("attach", plan, &ans, watch_printed(pr), line);
		free(line);
	}
	free(extra);
	watch_follow_free(wf);
	watch_printer_free(pr);
	free(ans.per_alpha);
	return rc;
}
