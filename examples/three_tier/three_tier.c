/* three_tier: a client, a front server and a back-end server over TCP on loopback, the
 * validation subject of interaction networks (docs/net.md, README.md here). One program,
 * one subcommand per tier; `run` starts all three as separate processes. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wire.h"

static const char usage[] =
    "usage: three_tier run [--instrumented] [options]\n"
    "       three_tier back|front|client [options]\n"
    "\n"
    "A client, a front server and a back-end server over TCP on 127.0.0.1. Each client\n"
    "request goes to the front, which calls the back end once or twice (odd requests\n"
    "twice), then replies.\n"
    "\n"
    "  run                start back, front and client as three processes; when the\n"
    "                     client is done, stop the servers (SIGTERM)\n"
    "  back               serve requests with a pool of workers; prints 'back PORT'\n"
    "  front              a thread per client connection; prints 'front PORT'\n"
    "  client             prints a JSON summary\n"
    "\n"
    "options:\n"
    "  --instrumented     (run) use the instrumented build three_tier_vg, which carries\n"
    "                     a W3C traceparent in each message through libvigil\n"
    "                     (vg_interaction_begin, vg_msg_send, vg_msg_recv); the default\n"
    "                     is this build, which makes no vigil call at all\n"
    "  --port N           (back, front) port to listen on; 0: any (default)\n"
    "  --back-port N      (front) the back end's port\n"
    "  --front-port N     (client) the front's port\n"
    "  --threads N        client threads, each with its own connection (default 3)\n"
    "  --requests N       requests per client thread (default 4)\n"
    "  --pool N           back-end workers (default 4)\n"
    "  --work-us N        back-end work per call, microseconds (default 200)\n"
    "  -h, --help         this help\n"
    "\n"
    "examples:\n"
    "  three_tier run --threads 2 --requests 5\n"
    "  vigil record -o run1 -- build/bin/three_tier run              # unmodified\n"
    "  vigil record -o run2 -- build/bin/three_tier run --instrumented\n";

static int number(const char *opt, const char *v, int lo, int hi)
{
	char *end;
	errno = 0;
	long n = v ? strtol(v, &end, 10) : 0;
	if (!v || errno || *end || n < lo || n > hi) {
		fprintf(stderr, "three_tier: %s needs a number from %d to %d, not '%s'\n", opt, lo,
		        hi, v ? v : "");
		exit(2);
	}
	return (int)n;
}

/* Starts `exe role args...` with its stdout on a pipe; reads its first line "ROLE PORT". */
static pid_t start(const char *exe, char *const argv[], int *port)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv(exe, argv);
		perror(exe);
		_exit(127);
	}
	close(p[1]);
	char line[64];
	size_t n = 0;
	while (n < sizeof line - 1) {
		ssize_t r = read(p[0], line + n, 1);
		if (r <= 0 || line[n] == '\n')
			break;
		n++;
	}
	line[n] = 0;
	close(p[0]);
	if (pid < 0 || sscanf(line, "%*s %d", port) != 1) {
		fprintf(stderr, "three_tier: %s %s did not start\n", exe, argv[1]);
		return -1;
	}
	return pid;
}

static int run(const struct tt_options *o, int instrumented)
{
	char self[PATH_MAX], exe[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	*slash = 0;
	snprintf(exe, sizeof exe, "%s/%s", self, instrumented ? "three_tier_vg" : "three_tier");
	if (access(exe, X_OK) != 0) {
		fprintf(stderr, "three_tier: cannot run %s: %s\n", exe, strerror(errno));
		return 1;
	}
	char pool[16], work[16], bport[16], fport[16], threads[16], requests[16];
	snprintf(pool, sizeof pool, "%d", o->pool);
	snprintf(work, sizeof work, "%d", o->work_us);
	snprintf(threads, sizeof threads, "%d", o->threads);
	snprintf(requests, sizeof requests, "%d", o->requests);
	int back_port = 0, front_port = 0;
	char *back_argv[] = {exe, "back", "--pool", pool, "--work-us", work, NULL};
	pid_t back = start(exe, back_argv, &back_port);
	if (back < 0)
		return 1;
	snprintf(bport, sizeof bport, "%d", back_port);
	char *front_argv[] = {exe, "front", "--back-port", bport, NULL};
	pid_t front = start(exe, front_argv, &front_port);
	if (front < 0) {
		kill(back, SIGTERM);
		return 1;
	}
	snprintf(fport, sizeof fport, "%d", front_port);
	char *client_argv[] = {exe,     "client",     "--front-port", fport, "--threads",
	                       threads, "--requests", requests,       NULL};
	int status = 1;
	pid_t client = fork();
	if (client == 0) {
		execv(exe, client_argv);
		perror(exe);
		_exit(127);
	}
	if (client > 0)
		waitpid(client, &status, 0);
	kill(front, SIGTERM);
	kill(back, SIGTERM);
	waitpid(front, NULL, 0);
	waitpid(back, NULL, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	struct tt_options o = {.threads = 3, .requests = 4, .pool = 4, .work_us = 200};
	int instrumented = 0;
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *role = argv[1];
	if (!strcmp(role, "-h") || !strcmp(role, "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--instrumented")) {
			instrumented = 1;
			continue;
		} else if (!strcmp(a, "--port"))
			o.port = number(a, v, 0, 65535);
		else if (!strcmp(a, "--back-port"))
			o.back_port = number(a, v, 1, 65535);
		else if (!strcmp(a, "--front-port"))
			o.front_port = number(a, v, 1, 65535);
		else if (!strcmp(a, "--threads"))
			o.threads = number(a, v, 1, 256);
		else if (!strcmp(a, "--requests"))
			o.requests = number(a, v, 1, 1000000);
		else if (!strcmp(a, "--pool"))
			o.pool = number(a, v, 1, 256);
		else if (!strcmp(a, "--work-us"))
			o.work_us = number(a, v, 0, 10000000);
		else {
			fprintf(stderr, "three_tier: unknown option '%s' (see --help)\n", a);
			return 2;
		}
		i++;
	}
	if (!strcmp(role, "run"))
		return run(&o, instrumented);
	if (instrumented && !TT_INSTRUMENTED) {
		fprintf(stderr, "three_tier: --instrumented is for 'run' (the tiers of "
		                "three_tier_vg are instrumented)\n");
		return 2;
	}
	if (!strcmp(role, "back"))
		return tt_back(&o);
	if (!strcmp(role, "front")) {
		if (!o.back_port) {
			fprintf(stderr, "three_tier front: --back-port is required\n");
			return 2;
		}
		return tt_front(&o);
	}
	if (!strcmp(role, "client")) {
		if (!o.front_port) {
			fprintf(stderr, "three_tier client: --front-port is required\n");
			return 2;
		}
		return tt_client(&o);
	}
	fprintf(stderr, "three_tier: unknown command '%s' (see --help)\n", role);
	return 2;
}
