/* How long the control channel takes to switch a sensor (docs/control.md): this program
 * is the monitor (src/cli/control_link.c) and, started again with --subject, the subject
 * (linked with libvigil, one registered sensor, idle). It sends N commands alternating
 * `sensor +1 bench.ctl` and `sensor -1 bench.ctl` and reports, in microseconds:
 *   send -> applied: from just before the send to the subject's `ok <ns>` stamp, taken
 *                    right after the counter changed (the subject runs with
 *                    VIGIL_CLOCK=mono, so both ends read the same CLOCK_MONOTONIC);
 *   round trip:      from the send to the answer read back.
 * usage: control-latency [N]   (default 10000); exit status 1 if anything failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/control_link.h"
#include "vigil/vigil.h"

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int subject(void)
{
	static const vg_field_desc f[] = {{"n", VG_INT64, NULL}};
	static const vg_type_desc d = {
	    "bench.ctl", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, f, 1, -1, -1, -1, VG_OP_ACTIVITY};
	vg_sensor_register(&d);
	char buf[64];
	while (read(0, buf, sizeof buf) > 0) /* until the monitor closes our stdin */
		;
	return 0;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, int64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp64);
	printf("  %-16s median %8.1f us   p99 %8.1f us   max %8.1f us\n", what, v[n / 2] / 1e3,
	       v[n * 99 / 100] / 1e3, v[n - 1] / 1e3);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--subject"))
		return subject();
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
	if (n < 2 || n > 10000000) {
		fprintf(stderr, "usage: control-latency [N]  (2 <= N <= 10000000)\n");
		return 2;
	}
	char dir[] = "/tmp/vigil-ctl-latency-XXXXXX", sock[128], trace[128], err[512];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sock, sizeof sock, "%s/ctl.sock", dir);
	snprintf(trace, sizeof trace, "%s/trace", dir);
	struct vgc_server *srv = vgc_listen(sock, err, sizeof err);
	if (!srv) {
		fprintf(stderr, "control-latency: %s\n", err);
		return 1;
	}
	int in[2];
	if (pipe(in) < 0) {
		perror("pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		close(in[0]);
		close(in[1]);
		setenv("VIGIL_OUT", trace, 1);
		setenv("VIGIL_SENSORS", "vg.*", 1);
		setenv("VIGIL_CONTROL", sock, 1);
		setenv("VIGIL_CLOCK", "mono", 1);
		unsetenv("VIGIL_PROC");
		execl("/proc/self/exe", argv[0], "--subject", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	int failed = 0;
	struct vgc_subject *c = vgc_accept(srv, err, sizeof err);
	int64_t *applied = calloc((size_t)n, sizeof *applied),
	        *rtt = calloc((size_t)n, sizeof *rtt);
	int64_t ns;
	long count;
	if (!c || !applied || !rtt || vgc_command(c, "go", &ns, NULL, err, sizeof err) < 0) {
		fprintf(stderr, "control-latency: %s\n", err);
		failed = 1;
	}
	/* The subject registers its sensor in main, after `go`: wait until it has. */
	for (int tries = 0; !failed; tries++) {
		if (vgc_command(c, "sensor +1 bench.ctl", &ns, &count, err, sizeof err) < 0 ||
		    vgc_command(c, "sensor -1 bench.ctl", &ns, NULL, err, sizeof err) < 0) {
			fprintf(stderr, "control-latency: %s\n", err);
			failed = 1;
		} else if (count == 1) {
			break;
		} else if (tries == 5000) {
			fprintf(stderr, "control-latency: the subject never registered bench.ctl\n");
			failed = 1;
		} else {
			usleep(1000);
		}
	}
	for (long i = 0; !failed && i < n; i++) {
		const char *cmd = i % 2 ? "sensor -1 bench.ctl" : "sensor +1 bench.ctl";
		int64_t t0 = mono_ns();
		if (vgc_command(c, cmd, &ns, &count, err, sizeof err) < 0 || count != 1) {
			fprintf(stderr, "control-latency: %s: %s\n", cmd,
			        count != 1 ? "count" : err);
			failed = 1;
			break;
		}
		rtt[i] = mono_ns() - t0;
		applied[i] = ns - t0;
	}
	if (!failed) {
		printf("control channel, %ld commands (sensor +1/-1 over a Unix socket):\n", n);
		report("send -> applied", applied, (size_t)n);
		report("round trip", rtt, (size_t)n);
	}
	close(in[1]); /* the subject exits, then its connection closes */
	int status = 0;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "control-latency: the subject ended with status %d\n", status);
		failed = 1;
	}
	vgc_subject_close(c);
	vgc_server_close(srv);
	free(applied);
	free(rtt);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "control-latency: could not remove %s\n", dir);
	return failed;
}
