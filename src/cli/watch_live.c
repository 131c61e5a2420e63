/* vigil watch, live: starts the subject with every user sensor off and its control
 * channel pointing here, sets up the plan's sensors in each of its processes before they
 * run (docs/control.md), then answers the query over the growing trace every --every and
 * once more when the subject has exited. */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/control_link.h"
#include "cli/subject.h"
#include "cli/watch.h"

static pid_t child;
static void forward_signal(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

struct live {
	const struct watch_args *a;
	const struct vga_plan *plan;
	int64_t tick_ns;
	struct watch_answer *ans; /* its clock_origin: set at the first process */
	char **commands;          /* made at the first process (the sampling origin) */
	size_t ncommands;
	bool commands_made;
	struct vgc_subject **subjects;
	size_t nsubjects;
	size_t failures;                /* commands a subject refused */
	int64_t setup_ns_max;           /* longest set-up of one process (all commands + go) */
	struct watch_timings snapshots; /* re-evaluation: what each snapshot took */
};

/* A new process of the subject: set the plan up, then let it run. */
static void set_up(struct live *l, struct vgc_server *srv)
{
	char err[512];
	struct vgc_subject *c = vgc_accept(srv, err, sizeof err);
	if (!c) {
		fprintf(stderr, "vigil watch: a subject process could not connect: %s\n", err);
		return;
	}
	int64_t t0 = mono_ns();
	if (!l->commands_made) {
		/* Clocks tick from the first process's hello, in the subject's own clock: the
		 * subjects sample at those ticks, and the answers count them from there. */
		l->ans->clock_origin = (uint64_t)vgc_subject_hello_ns(c);
		l->ncommands =
		    vga_commands_at(l->plan, l->tick_ns, l->ans->clock_origin, &l->commands);
		l->commands_made = true;
	}
	for (size_t i = 0; i < l->ncommands; i++) {
		int64_t at;
		if (vgc_command(c, l->commands[i], &at, NULL, err, sizeof err) < 0) {
			fprintf(stderr, "vigil watch: process %d refused '%s': %s\n",
			        vgc_subject_pid(c), l->commands[i], err);
			l->failures++;
		}
	}
	int64_t at;
	if (vgc_command(c, "go", &at, NULL, err, sizeof err) < 0)
		fprintf(stderr, "vigil watch: process %d: go: %s\n", vgc_subject_pid(c), err);
	int64_t took = mono_ns() - t0;
	if (took > l->setup_ns_max)
		l->setup_ns_max = took;
	struct vgc_subject **s = realloc(l->subjects, (l->nsubjects + 1) * sizeof *s);
	if (!s)
		abort();
	l->subjects = s;
	l->subjects[l->nsubjects++] = c;
}

static int make_trace_dir(const struct watch_args *a, const char *tmp, char *dir, size_t len)
{
	if (!a->keep) {
		snprintf(dir, len, "%s/trace", tmp);
		return mkdir(dir, 0700);
	}
	if (mkdir(a->keep, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "vigil watch: --keep %s: %s\n", a->keep, strerror(errno));
		return -1;
	}
	char real[PATH_MAX];
	if (!realpath(a->keep, real) || strlen(real) >= len) {
		fprintf(stderr, "vigil watch: --keep %s: cannot resolve\n", a->keep);
		return -1;
	}
	strcpy(dir, real);
	return 0;
}

static int start_subject(const struct watch_args *a, const char *dir, const char *sock)
{
	char lib[PATH_MAX];
	if (vg_cli_find_runtime("watch", lib, sizeof lib) < 0)
		return -1;
	vg_cli_export_clock();
	setenv("VIGIL_OUT", dir, 1);
	setenv("VIGIL_SENSORS", "vg.*", 1); /* entity sources on, every user sensor off */
	setenv("VIGIL_ENTITY_FLAGS", "off", 1);
	setenv("VIGIL_CONTROL", sock, 1);
	if (a->keep) /* else the trace is removed once answered: the subject must not say where */
		unsetenv("VIGIL_OUT_TEMPORARY");
	else
		setenv("VIGIL_OUT_TEMPORARY", "1", 1);
	unsetenv("VIGIL_PROC");
	/* a directory per image unless the shared layout is asked for (VIGIL_LAYOUT=shared),
	 * whatever the runtime's default */
	const char *layout = getenv("VIGIL_LAYOUT");
	if (!layout || strcmp(layout, "shared"))
		setenv("VIGIL_LAYOUT", "image", 1);
	if (vg_cli_set_preload(lib) < 0)
		return -1;
	child = fork();
	if (child < 0) {
		fprintf(stderr, "vigil watch: cannot fork: %s\n", strerror(errno));
		return -1;
	}
	if (child == 0) {
		execvp(a->command[0], a->command);
		fprintf(stderr, "vigil watch: cannot run %s: %s\n", a->command[0], strerror(errno));
		_exit(127);
	}
	struct sigaction sa = {0};
	sa.sa_handler = forward_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGINT, SIG_IGN); /* Ctrl-C reaches the subject; watch stays to answer */
	return 0;
}

/* Serves connections and answers every --every until the subject exits; its status. */
static int run(struct live *l, struct vgc_server *srv, const char *dir, const struct tquel_query *q,
               const struct vga_plan *plan, const struct vgq_options *o, struct watch_printer *pr,
               struct watch_answer *ans, struct watch_follow *wf, int *snapshots)
{
	int64_t next = mono_ns() + l->a->every;
	for (;;) {
		struct pollfd pfd = {vgc_server_fd(srv), POLLIN, 0};
		int64_t wait_ms = (next - mono_ns()) / 1000000;
		if (wait_ms < 0)
			wait_ms = 0;
		if (wait_ms > 50)
			wait_ms = 50; /* also notice the subject's exit soon */
		int n = poll(&pfd, 1, (int)wait_ms);
		if (n > 0 && (pfd.revents & POLLIN))
			set_up(l, srv);
		int status;
		pid_t w = waitpid(child, &status, WNOHANG);
		if (w == child)
			return status;
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, "vigil watch: lost the subject: %s\n", strerror(errno));
			return -1;
		}
		if (mono_ns() >= next) {
			if (!wf)
				watch_timing_start(&l->snapshots);
			if (wf ? watch_follow_step(wf, false) < 0
			       : watch_answer(dir, q, plan, o, pr, false, ans) < 0)
				return -2;
			if (!wf) { /* a snapshot takes every event read so far */
				l->snapshots.taking = ans->events;
				watch_timing_add(&l->snapshots);
			}
			(*snapshots)++;
			next = mono_ns() + l->a->every;
		}
	}
}

int watch_live(const struct watch_args *a, const struct tquel_query *q, const struct vga_plan *plan,
               const struct vgq_options *o)
{
	char tmp[] = "/tmp/vigil-watch-XXXXXX";
	if (!mkdtemp(tmp)) {
		fprintf(stderr, "vigil watch: cannot make a temporary directory: %s\n",
		        strerror(errno));
		return 2;
	}
	char dir[PATH_MAX], sock[PATH_MAX + 16], err[512];
	snprintf(sock, sizeof sock, "%s/control", tmp);
	int rc = 2;
	struct vgc_server *srv = NULL;
	struct watch_printer *pr = NULL;
	struct watch_answer ans = {0};
	struct watch_follow *wf = NULL;
	struct live l = {.a = a, .plan = plan, .tick_ns = o->tick_ns, .ans = &ans};
	if (make_trace_dir(a, tmp, dir, sizeof dir) < 0)
		goto out;
	if (!(srv = vgc_listen(sock, err, sizeof err))) {
		fprintf(stderr, "vigil watch: %s\n", err);
		goto out;
	}
	if (start_subject(a, dir, sock) < 0)
		goto out;
	pr = watch_printer_new(stdout, a->format, 0);
	/* The update network over the trace as it is written, when the query allows. */
	char why[512];
	wf = watch_follow_new(dir, q, plan, o, &ans, a->lateness, pr, why, sizeof why);
	if (!wf && !a->quiet)
		fprintf(stderr, "vigil watch: answering by re-evaluation at each update: %s\n",
		        why);
	int snapshots = 0;
	int status = run(&l, srv, dir, q, plan, o, pr, &ans, wf, &snapshots);
	if (status == -2) { /* the output failed: stop the subject, it is no use */
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
		goto out;
	}
	struct vgt_recover_result rr;
	vgt_recover_dir(dir, false, NULL, NULL, &rr, err, sizeof err);
	char *extra = NULL;
	watch_timing_start(&l.snapshots);
	int final =
	    wf ? watch_follow_step(wf, true) : watch_answer(dir, q, plan, o, pr, true, &ans);
	watch_timing_add(&l.snapshots);
	if (wf && watch_follow_end(wf, &ans, a->stats ? &extra : NULL) < 0)
		final = -1;
	if (!wf && a->stats)
		watch_stats_extra(&extra, "re-evaluation", 0, &l.snapshots, NULL, NULL);
	if (final < 0) {
		free(extra);
		goto out;
	}
	if (status == -1)
		rc = 2;
	else if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else
		rc = 128 + WTERMSIG(status);
	if (!a->quiet) {
		if (status >= 0 && WIFSIGNALED(status))
			fprintf(stderr, "vigil watch: %s was killed by signal %d\n", a->command[0],
			        WTERMSIG(status));
		else if (status >= 0)
			fprintf(stderr, "vigil watch: %s exited with status %d\n", a->command[0],
			        WEXITSTATUS(status));
		fprintf(
		    stderr,
		    "vigil watch: %" PRIu64 " tuple(s); %" PRIu64 " packet(s) asked for, %" PRIu64
		    " extraneous, %" PRIu64 " from entity sources; %zu process(es) set up%s\n",
		    watch_printed(pr), ans.counts.kept, ans.counts.extraneous, ans.counts.sources,
		    l.nsubjects, l.failures ? "; some commands were refused (above)" : "");
		if (!l.nsubjects)
			fprintf(stderr,
			        "vigil watch: no process of %s connected, so no sensor was enabled "
			        "(libvigil must be loaded: a static or setuid program ignores "
			        "LD_PRELOAD)\n",
			        a->command[0]);
		if (a->keep)
			fprintf(stderr, "vigil watch: the subject's trace is in %s\n", dir);
	}
	if (a->stats) {
		char *line = NULL;
		if (asprintf(&line,
		             ",\"processes\":%zu,\"snapshots\":%d,\"setup_ns_max\":%" PRId64 "%s",
		             l.nsubjects, snapshots, l.setup_ns_max, extra ? extra : "") < 0)
			abort();
		watch_print_stats("live", plan, &ans, watch_printed(pr), line);
		free(line);
	}
	free(extra);
out:
	for (size_t i = 0; i < l.nsubjects; i++)
		vgc_subject_close(l.subjects[i]);
	free(l.subjects);
	free(l.snapshots.ns);
	free(l.snapshots.cpu_ns);
	free(l.snapshots.taken);
	vga_commands_free(l.commands, l.ncommands);
	if (srv)
		vgc_server_close(srv);
	watch_follow_free(wf);
	watch_printer_free(pr);
	free(ans.per_alpha);
	nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
