/* The control channel's connection (docs/control.md): with VIGIL_CONTROL=PATH the runtime
 * connects to the monitor's Unix socket at start, says hello, applies the monitor's
 * commands until `go` (the program's main has not started yet), then serves further
 * commands on a control thread. The rules themselves are in control_rules.c.
 *
 * Nothing here runs on a recording thread's path: sensors only ever see the counters
 * the commands change. When the monitor goes away, what it raised is lowered and the
 * subject carries on. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "usdt.h"

#define MAX_LINE 1024 /* bytes of a line, without its newline */
#define MAX_TOKENS 5
#define MAX_DELTA 1000000

/* The connection; swapped under vg__rt.lock so that a fork child (whose parent holds
 * the lock while forking) sees either the open descriptor or -1, never a stale one. */
static int ctl_fd = -1;

/* The connection's reader (VIGIL_CONTROL=PATH: one monitor, owner 0). */
static struct vg__ctl_reader rd;

enum { LINE = 1, LINE_TOO_LONG = 2, GONE = 0, TIMEOUT = -2 };

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int vg__control_high_fd(int fd)
{
	/* Out of the low numbers a program may close or reuse wholesale. */
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

static int connect_monitor(const char *path, char *why, size_t whysize)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof a.sun_path) {
		snprintf(why, whysize, "path longer than %zu bytes", sizeof a.sun_path - 1);
		return -1;
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		snprintf(why, whysize, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return vg__control_high_fd(fd);
}

static int send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Takes the next complete line out of the buffer into `line` (NUL-terminated; it may
 * hold NUL bytes, see *len): LINE, LINE_TOO_LONG, or 0 when no line is complete yet. */
static int take_line(struct vg__ctl_reader *rd, char *line, size_t *len)
{
	char *nl = memchr(rd->buf, '\n', rd->len);
	if (!nl) {
		if (rd->len > MAX_LINE) { /* no newline in sight: drop it up to its end */
			rd->overlong = 1;
			rd->len = 0;
		}
		return 0;
	}
	size_t n = (size_t)(nl - rd->buf);
	int result = rd->overlong ? LINE_TOO_LONG : LINE;
	if (!rd->overlong) {
		memcpy(line, rd->buf, n);
		line[n] = 0;
		*len = n;
	}
	rd->overlong = 0;
	rd->len -= n + 1;
	memmove(rd->buf, nl + 1, rd->len);
	return result;
}

/* Reads what fd has into the buffer (blocking until something comes): 1, or GONE. */
static int fill(struct vg__ctl_reader *rd, int fd)
{
	for (;;) {
		ssize_t r = read(fd, rd->buf + rd->len, sizeof rd->buf - rd->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return GONE;
		rd->len += (size_t)r;
		return 1;
	}
}

/* The next line; waits until `deadline` (mono_ms) or forever if it is negative. */
static int read_line(struct vg__ctl_reader *rd, int fd, int64_t deadline, char *line, size_t *len)
{
	for (;;) {
		int got = take_line(rd, line, len);
		if (got)
			return got;
		if (deadline >= 0) {
			int64_t left = deadline - mono_ms();
			if (left <= 0)
				return TIMEOUT;
			struct pollfd p = {.fd = fd, .events = POLLIN};
			int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
			if (r < 0 && errno != EINTR)
				return GONE;
			if (r <= 0)
				continue;
		}
		if (fill(rd, fd) == GONE)
			return GONE;
	}
}

/* "+1", "-1", "2": a signed decimal of at most MAX_DELTA. */
static int parse_delta(const char *t, int32_t *out)
{
	const char *p = t + (*t == '+' || *t == '-');
	if (!*p || strlen(p) > 7)
		return -1;
	long v = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v > MAX_DELTA)
		return -1;
	*out = (int32_t)(*t == '-' ? -v : v);
	return 0;
}

static int parse_u64(const char *t, uint64_t max, uint64_t *out)
{
	if (!*t || strlen(t) > 20)
		return -1;
	uint64_t v = 0;
	for (const char *p = t; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		unsigned d = (unsigned)(*p - '0');
		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Applies one command line; writes its answer (with newline) into `ans`. */
static void handle(int owner, char *line, size_t len, char *ans, size_t anssize, int *go)
{
	char err[320] = "";
	long count = -1;
	char *tok[MAX_TOKENS + 1];
	int n = 0;
	int32_t delta = 0;
	if (memchr(line, 0, len)) {
		snprintf(err, sizeof err, "NUL byte in line");
		goto done;
	}
	for (char *p = line;;) {
		if (n == MAX_TOKENS + 1)
			break;
		tok[n++] = p;
		char *sp = strchr(p, ' ');
		if (!sp)
			break;
		*sp = 0;
		p = sp + 1;
	}
	for (int i = 0; i < n; i++)
		if (!*tok[i]) {
			snprintf(err, sizeof err,
			         "empty token (tokens are separated by single spaces)");
			goto done;
		}
	if (n > MAX_TOKENS) {
		snprintf(err, sizeof err, "too many tokens");
		goto done;
	}
	const char *cmd = tok[0];
	int rule = !strcmp(cmd, "sensor") || !strcmp(cmd, "entities") || !strcmp(cmd, "entity") ||
	           !strcmp(cmd, "trigger") || !strcmp(cmd, "sample");
	if (rule && (n < 2 || parse_delta(tok[1], &delta) < 0)) {
		snprintf(err, sizeof err, "%s: expected a delta such as +1 or -1, at most %d", cmd,
		         MAX_DELTA);
		goto done;
	}
	if (!strcmp(cmd, "ping") || !strcmp(cmd, "go") || !strcmp(cmd, "reset")) {
		if (n != 1)
			snprintf(err, sizeof err, "usage: %s", cmd);
		else if (cmd[0] == 'g')
			*go = 1;
		else if (cmd[0] == 'r') /* a monitor about to leave: its plan off, answered */
			vg__control_undo_owner(owner);
	} else if (!strcmp(cmd, "sensor")) {
		if (n != 3)
			snprintf(err, sizeof err, "usage: sensor <delta> <glob>");
		else
			vg__control_sensor_rule(owner, delta, tok[2], &count, err, sizeof err);
	} else if (!strcmp(cmd, "entities")) {
		if (n != 3 && n != 4)
			snprintf(err, sizeof err, "usage: entities <delta> <kind> [<name>]");
		else
			vg__control_entities_rule(owner, delta, tok[2], n == 4 ? tok[3] : NULL,
			                          &count, err, sizeof err);
	} else if (!strcmp(cmd, "entity")) {
		uint64_t id, gen;
		if (n != 5)
			snprintf(err, sizeof err, "usage: entity <delta> <kind> <id> <gen>");
		else if (parse_u64(tok[3], UINT64_MAX, &id) < 0 ||
		         parse_u64(tok[4], UINT32_MAX, &gen) < 0)
			snprintf(err, sizeof err, "entity: id and gen must be unsigned decimals");
		else
			vg__control_entity_one(owner, delta, tok[2], id, (uint32_t)gen, err,
			                       sizeof err);
	} else if (!strcmp(cmd, "trigger")) {
		if (n != 4)
			snprintf(err, sizeof err, "usage: trigger <delta> <sensor> <field>");
		else
			vg__control_trigger_rule(owner, delta, tok[2], tok[3], &count, err,
			                         sizeof err);
	} else if (!strcmp(cmd, "sample")) {
		uint64_t origin, period;
		if (n != 5)
			snprintf(err, sizeof err, "usage: sample <delta> <glob> <origin> <period>");
		else if (parse_u64(tok[3], UINT64_MAX, &origin) < 0 ||
		         parse_u64(tok[4], UINT64_MAX, &period) < 0)
			snprintf(err, sizeof err,
			         "sample: origin and period must be unsigned decimals (ns)");
		else
			vg__control_sample_rule(owner, delta, tok[2], origin, period, &count, err,
			                        sizeof err);
	} else if (!strcmp(cmd, "report")) { /* control_report.c: the process's reporting */
		vg__control_report(tok, n, &count, err, sizeof err);
	} else if (!strcmp(cmd, "list")) { /* probes (control_probes.c): the whole answer */
		uint64_t from;
		if (n != 2 || parse_u64(tok[1], UINT64_MAX, &from) < 0)
			snprintf(err, sizeof err, "usage: list <from-id>");
		else if (vg__control_list(from, ans, anssize, MAX_LINE) == 0)
			return;
	} else if (!strcmp(cmd, "probe")) {
		uint64_t id;
		int on = n == 3 && !strcmp(tok[2], "on");
		if (n != 3 || parse_u64(tok[1], UINT64_MAX, &id) < 0 ||
		    (!on && strcmp(tok[2], "off")))
			snprintf(err, sizeof err, "usage: probe <id> on|off");
		else
			vg__control_probe(id, on, &count, err, sizeof err);
	} else if (!strcmp(cmd, "pattern")) {
		if (n != 2 && n != 3)
			snprintf(err, sizeof err,
			         "usage: pattern enable|disable <pattern>, "
			         "pattern reset, pattern matches");
		else
			vg__control_pattern(tok[1], n == 3 ? tok[2] : NULL, &count, err,
			                    sizeof err);
	} else if (!strcmp(cmd, "usdt")) { /* probe sites (usdt.c, docs/usdt.md) */
		if (n == 3 && !strcmp(tok[1], "plan"))
			vg__usdt_plan(tok[2], err, sizeof err);
		else if (n != 3 || (strcmp(tok[1], "enable") && strcmp(tok[1], "disable")))
			snprintf(
			    err, sizeof err,
			    "usage: usdt enable|disable <provider:glob>, usdt plan <site plan>");
		else if (!vg__rt.recording)
			snprintf(err, sizeof err, "usdt: not recording");
		else
			vg__usdt_switch(tok[1][0] == 'e', tok[2], &count, err, sizeof err);
	} else {
		snprintf(err, sizeof err,
		         "unknown command (expected sensor, entities, entity, trigger, sample, "
		         "list, probe, pattern, usdt, report, reset, go or ping)");
	}
done:
	if (err[0])
		snprintf(ans, anssize, "error %s\n", err);
	else if (count >= 0)
		snprintf(ans, anssize, "ok %" PRIu64 " %ld\n", vg_now(), count);
	else
		snprintf(ans, anssize, "ok %" PRIu64 "\n", vg_now());
}

void vg__control_command(const char *line, char *ans, size_t anssize)
{
	char copy[MAX_LINE + 1];
	size_t len = strlen(line);
	if (len > MAX_LINE) {
		snprintf(ans, anssize, "error line longer than %d bytes\n", MAX_LINE);
		return;
	}
	memcpy(copy, line, len + 1);
	int go = 0;
	handle(0, copy, len, ans, anssize, &go);
}

/* Answers one line (or says it was too long); -1 if the answer could not be sent. */
static int answer(int owner, int fd, int r, char *line, size_t len, int *go)
{
	char ans[MAX_LINE + 2]; /* a `list` answer fills a whole line */
	if (r == LINE_TOO_LONG)
		snprintf(ans, sizeof ans, "error line longer than %d bytes\n", MAX_LINE);
	else
		handle(owner, line, len, ans, sizeof ans, go);
	return send_all(fd, ans, strlen(ans));
}

/* Answers commands until `go` (if until_go), the end of the connection or the deadline. */
static int serve(int fd, int until_go, int64_t deadline)
{
	char line[sizeof rd.buf + 1];
	for (;;) {
		size_t len = 0;
		int r = read_line(&rd, fd, deadline, line, &len);
		if (r == GONE || r == TIMEOUT)
			return r;
		int go = 0;
		if (answer(0, fd, r, line, len, &go) < 0)
			return GONE;
		if (go && until_go)
			return LINE;
	}
}

int vg__control_serve_available(int owner, int fd, struct vg__ctl_reader *in)
{
	if (fill(in, fd) == GONE)
		return -1;
	char line[sizeof in->buf + 1];
	size_t len = 0;
	int go = 0;
	for (int r; (r = take_line(in, line, &len));)
		if (answer(owner, fd, r, line, len, &go) < 0)
			return -1;
	return 0;
}

int vg__control_send_hello(int fd)
{
	char hello[PATH_MAX + 128];
	int n =
	    snprintf(hello, sizeof hello, "hello vigil-control 1 pid=%d image=%s now=%" PRIu64 "\n",
	             (int)vg__rt.pid, vg__rt.dir, vg_now());
	return send_all(fd, hello, (size_t)n);
}

/* Closes the connection, lowers what the monitor raised, says so on stderr. */
static void monitor_gone(const char *why)
{
	pthread_mutex_lock(&vg__rt.lock);
	int fd = vg__own_fd_take(&ctl_fd);
	pthread_mutex_unlock(&vg__rt.lock);
	vg__control_undo(1, 1);
	if (fd >= 0)
		close(fd);
	vg__warn("%smonitor gone; sensors disabled", why);
}

static void *control_main(void *arg)
{
	(void)arg;
	syscall(SYS_prctl, PR_SET_NAME, "vigil-control", 0, 0, 0); /* not through our hook */
	serve(ctl_fd, 0, -1);
	monitor_gone("");
	return NULL;
}

int vg__control_start_thread(void *(*fn)(void *))
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_t th;
	int rc = vg__real_pthread_create(&th, &attr, fn, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Connects, says hello, serves until `go`, starts the thread. `fail_is_gone`: a failed
 * connection counts as a monitor gone (fork child) rather than none at all. */
static void connect_and_handshake(int fail_is_gone)
{
	const char *path = vg__rt.cfg.control;
	char why[512];
	memset(&rd, 0, sizeof rd);
	int fd = connect_monitor(path, why, sizeof why);
	if (fd < 0) {
		if (fail_is_gone) {
			vg__control_undo(1, 0);
			vg__warn("VIGIL_CONTROL=%s: %s; monitor gone; sensors disabled", path, why);
		} else {
			vg__warn("VIGIL_CONTROL=%s: %s; no monitor", path, why);
		}
		return;
	}
	pthread_mutex_lock(&vg__rt.lock);
	ctl_fd = fd;
	vg__own_fd_add(&ctl_fd); /* the subject's close loops leave it alone (files.c) */
	pthread_mutex_unlock(&vg__rt.lock);
	int wait_s = vg__rt.cfg.control_wait_s;
	int r = vg__control_send_hello(fd) < 0 ? GONE
	                                       : serve(fd, 1, mono_ms() + (int64_t)wait_s * 1000);
	if (r == LINE && vg__control_start_thread(control_main) == 0)
		return;
	snprintf(why, sizeof why, "VIGIL_CONTROL=%s: %s; ", path,
	         r == TIMEOUT ? "no go from the monitor in time (VIGIL_CONTROL_WAIT)"
	         : r == GONE  ? "connection closed before go"
	                      : "cannot start the control thread");
	monitor_gone(why);
}

void vg__control_start(void)
{
	if (!vg__rt.cfg.control)
		return;
	if (!vg__rt.recording) {
		vg__warn("VIGIL_CONTROL=%s: not recording (VIGIL_OUT); no monitor",
		         vg__rt.cfg.control);
		return;
	}
	vg__control_on = 1;
	if (vg__control_listening()) {
		vg__control_listen_start();
		return;
	}
	connect_and_handshake(0);
}

/* In a fork child: the parent's connection is the parent's. The child starts from the
 * configured counters and asks the monitor anew. */
void vg__control_after_fork(void)
{
	if (ctl_fd >= 0)
		close(ctl_fd);
	ctl_fd = -1;
	memset(&rd, 0, sizeof rd);
	if (!vg__rt.cfg.control || !vg__rt.recording)
		return;
	if (vg__control_listening()) {
		vg__control_listen_after_fork();
		return;
	}
	vg__control_on = 1;
	vg__control_undo(0, 0);
	connect_and_handshake(1);
}
