/* Plans for the jump path made on the subject's own side (docs/usdt.md, "Who decodes
 * what"): for an object whose armed sites have no plan (a library loaded later by
 * dlopen or with the program, a site switched on through a collector), the runtime runs
 * the planner `vigil usdt plan FILE '*:*'` (VIGIL_USDT_PLANNER, which vigil record sets)
 * once per file and adds what it prints to the plan table. The runtime itself holds no
 * disassembler; the planner's plans are checked against the program's bytes like any.
 *
 * This may run inside dlopen (the loader's r_brk breakpoint) or on the control thread,
 * so the planner is started without the allocator and without a signal to the program:
 * clone(CLONE_VM | CLONE_VFORK) with no exit signal (a program reaping every child with
 * waitpid(-1), as PostgreSQL's postmaster, neither sees nor reaps it), an environment
 * without the preload, and its output read through a pipe, 60 s at most. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "usdt.h"

extern char **environ;

#define MAX_ASKED 256
static struct {
	uint64_t dev, ino;
} asked[MAX_ASKED];
static size_t nasked;

struct child_args {
	const char *planner;
	char *const *argv;
	char *const *envp;
	int out;
};

static int child_main(void *arg)
{
	const struct child_args *a = arg;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (dup2(a->out, 1) < 0 || (null >= 0 && (dup2(null, 0) < 0 || dup2(null, 2) < 0)))
		_exit(126);
	execve(a->planner, a->argv, a->envp);
	_exit(127);
}

/* The planner's environment: the program's, without the preload and vigil's settings
 * (the planner must not record itself), but with the cache's directory. */
static void planner_env(char **envp, size_t max)
{
	size_t n = 0;
	for (char **e = environ; e && *e && n + 1 < max; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) &&
		    (strncmp(*e, "VIGIL_", 6) || !strncmp(*e, "VIGIL_CACHE_DIR=", 16)))
			envp[n++] = *e;
	envp[n] = NULL;
}

static int wait_child(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Each line of the planner's output to the plan table; the number added. */
static long read_plans(int fd, pid_t pid, const char *path)
{
	char line[600];
	size_t used = 0;
	long added = 0;
	int discard = 0; /* a line longer than any plan */
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left_ms = 60000 - (long)(now.tv_sec - start.tv_sec) * 1000;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = left_ms > 0 ? poll(&p, 1, (int)left_ms) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			vg__warn(
			    "usdt: the planner of %s did not finish within 60 s; its sites stay "
			    "on the int3 path",
			    path);
			kill(pid, SIGKILL);
			return added;
		}
		ssize_t got = read(fd, line + used, sizeof line - 1 - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return added;
		used += (size_t)got;
		char *nl;
		while ((nl = memchr(line, '\n', used))) {
			*nl = 0;
			char err[200];
			if (!discard && vg__usdt_plan_add(line, err, sizeof err) == 0)
				added++;
			discard = 0;
			used -= (size_t)(nl + 1 - line);
			memmove(line, nl + 1, used);
		}
		if (used == sizeof line - 1)
			used = 0, discard = 1;
	}
}

/* 1 if the file was planned already (now marked as planned). */
static int planned_before(uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < nasked; i++)
		if (asked[i].dev == dev && asked[i].ino == ino)
			return 1;
	if (nasked == MAX_ASKED)
		return 1;
	asked[nasked].dev = dev, asked[nasked++].ino = ino;
	return 0;
}

void vg__usdt_planned(uint64_t dev, uint64_t ino)
{
	planned_before(dev, ino);
}

void vg__usdt_plan_object(const char *path, uint64_t dev, uint64_t ino)
{
	const char *planner = getenv("VIGIL_USDT_PLANNER");
	if (!planner || *planner != '/' || planned_before(dev, ino))
		return;
	char file[300];
	if (!strcmp(path, "/proc/self/exe")) /* the planner's self is not ours */
		snprintf(file, sizeof file, "/proc/%ld/exe", (long)getpid());
	else
		snprintf(file, sizeof file, "%s", path);
	static char *envp[512];
	planner_env(envp, sizeof envp / sizeof *envp);
	char *argv[] = {(char *)"vigil", (char *)"usdt", (char *)"plan", file, (char *)"*:*", NULL};
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	struct child_args a = {planner, argv, envp, fds[1]};
	static char stack[16 << 10] __attribute__((aligned(16)));
	int saved = errno;
	/* CLONE_VFORK: we go on once it has exec'd, so the stack and args may be ours */
	pid_t pid = clone(child_main, stack + sizeof stack, CLONE_VM | CLONE_VFORK, &a);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		vg__warn("usdt: cannot start the planner %s: %s", planner, strerror(errno));
		errno = saved;
		return;
	}
	long added = read_plans(fds[0], pid, file);
	close(fds[0]);
	int rc = wait_child(pid);
	if (rc != 0)
		vg__warn(
		    "usdt: the planner %s failed on %s (status %d); its sites stay on the int3 "
		    "path",
		    planner, file, rc);
	else if (vg__rt.cfg.verbose)
		vg__warn("usdt: %ld plans for %s from the planner", added, file);
	errno = saved;
}
