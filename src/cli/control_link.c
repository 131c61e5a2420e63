/* The monitor's end of the control channel: a listening Unix socket, one connection per
 * subject process image, one command line and one answer line at a time
 * (docs/control.md). Every wait is bounded, so a stuck subject cannot hang the monitor. */
#define _GNU_SOURCE
#include "cli/control_link.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 5000

struct vgc_server {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

struct vgc_subject {
	int fd;
	int pid;
	int broken; /* an answer was missed: later ones would be out of step */
	int64_t hello_ns;
	char image[PATH_MAX];
	char buf[PATH_MAX + 512]; /* received, not yet consumed */
	size_t len;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is readable or the deadline: 1 readable, 0 timeout, -1 error. */
static int wait_readable(int fd, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - mono_ms();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : r > 0;
	}
}

struct vgc_server *vgc_listen(const char *path, char *err, size_t errsize)
{
	struct vgc_server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	if (strlen(path) >= sizeof s->path) {
		snprintf(err, errsize, "%s: path longer than %zu bytes", path, sizeof s->path - 1);
		free(s);
		return NULL;
	}
	strcpy(s->path, path);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strcpy(a.sun_path, path);
	unlink(path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(s->fd, 64) < 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return NULL;
	}
	return s;
}

int vgc_server_fd(const struct vgc_server *s)
{
	return s->fd;
}

/* Reads one line (without its newline) into `line`: 0, or -1 with err set. */
static int read_line(struct vgc_subject *c, char *line, size_t size, int64_t deadline, char *err,
                     size_t errsize)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		if (nl) {
			size_t n = (size_t)(nl - c->buf);
			if (n >= size) {
				snprintf(err, errsize, "answer line too long");
				return -1;
			}
			memcpy(line, c->buf, n);
			line[n] = 0;
			c->len -= n + 1;
			memmove(c->buf, nl + 1, c->len);
			return 0;
		}
		if (c->len == sizeof c->buf) {
			snprintf(err, errsize, "answer line too long");
			return -1;
		}
		int w = wait_readable(c->fd, deadline);
		if (w <= 0) {
			snprintf(err, errsize, "%s",
			         w == 0 ? "no answer within 5 s" : strerror(errno));
			return -1;
		}
		ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errsize, "%s",
			         r == 0 ? "connection closed" : strerror(errno));
			return -1;
		}
		c->len += (size_t)r;
	}
}

/* "hello vigil-control 1 pid=<pid> image=<dir> now=<ns>"; the dir may hold spaces. */
static int parse_hello(struct vgc_subject *c, const char *line)
{
	const char *prefix = "hello vigil-control 1 pid=";
	if (strncmp(line, prefix, strlen(prefix)))
		return -1;
	char *end;
	long pid = strtol(line + strlen(prefix), &end, 10);
	if (pid <= 0 || strncmp(end, " image=", 7))
		return -1;
	const char *img = end + 7;
	const char *now = strstr(img, " now=");
	for (const char *p; now && (p = strstr(now + 1, " now="));)
		now = p;
	if (!now || (size_t)(now - img) >= sizeof c->image)
		return -1;
	memcpy(c->image, img, (size_t)(now - img));
	c->image[now - img] = 0;
	c->hello_ns = strtoll(now + 5, &end, 10);
	if (*end)
		return -1;
	c->pid = (int)pid;
	return 0;
}

struct vgc_subject *vgc_accept(struct vgc_server *s, char *err, size_t errsize)
{
	int64_t deadline = mono_ms() + WAIT_MS;
	int w = wait_readable(s->fd, deadline);
	if (w <= 0) {
		snprintf(err, errsize, "%s",
		         w == 0 ? "no subject connected within 5 s" : strerror(errno));
		return NULL;
	}
	int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "accept: %s", strerror(errno));
		return NULL;
	}
	struct vgc_subject *c = calloc(1, sizeof *c);
	if (!c) {
		close(fd);
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	c->fd = fd;
	char line[sizeof c->buf];
	if (read_line(c, line, sizeof line, deadline, err, errsize) < 0) {
		vgc_subject_close(c);
		return NULL;
	}
	if (parse_hello(c, line) < 0) {
		snprintf(err, errsize, "not a vigil-control 1 hello: %.200s", line);
		vgc_subject_close(c);
		return NULL;
	}
	return c;
}

/* The process a user means by PID: PID itself, or, when PID is a `vigil` command (the
 * `$!` of `vigil record --listen -- PROGRAM &`) with one child, the subject it runs.
 * -1 (err set) when there is no such process. */
static int subject_of(int pid, bool *via_vigil, char *err, size_t errsize)
{
	*via_vigil = false;
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH)) {
		snprintf(err, errsize, "no process %d", pid);
		return -1;
	}
	char path[64], exe[PATH_MAX], self[PATH_MAX];
	snprintf(path, sizeof path, "/proc/%d/exe", pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1),
	        m = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0 || m <= 0 || n != m || memcmp(exe, self, (size_t)n))
		return pid;
	*via_vigil = true;
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
	FILE *f = fopen(path, "r");
	int child = 0, second = 0, got = 0;
	if (f) {
		got = fscanf(f, "%d %d", &child, &second);
		fclose(f);
	}
	bool one = got == 1; /* two numbers: more than one child, no guess */
	return one && child > 0 ? child : pid;
}

static struct vgc_subject *attach_once(int pid, char *err, size_t errsize);

/* Whether PID's environment asks it to listen (VIGIL_CONTROL=listen, as vigil record
 * --listen sets it): such a process will listen once its runtime has started. */
static bool will_listen(int pid)
{
	char path[64], buf[8192];
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		if (!strcmp(buf + i, "VIGIL_CONTROL=listen"))
			return true;
	}
	return false;
}

/* Attaches to PID, or to the subject of the `vigil record` that PID is. That subject may
 * not listen yet when asked right after `vigil record --listen ... &`: it is waited for
 * while vigil record runs, up to 5 s, or up to 60 s (a loaded machine) while vigil record
 * has not started it yet or its environment says it will listen. */
struct vgc_subject *vgc_attach(int pid, char *err, size_t errsize)
{
	struct timespec t0, now, pause = {0, 50 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool via_vigil;
		int subject = subject_of(pid, &via_vigil, err, errsize);
		if (subject < 0)
			return NULL;
		struct vgc_subject *c = attach_once(subject, err, errsize);
		clock_gettime(CLOCK_MONOTONIC, &now);
		long waited = now.tv_sec - t0.tv_sec;
		bool coming = subject == pid || will_listen(subject);
		if (c || !via_vigil || !strstr(err, "does not listen") ||
		    waited >= (coming ? 60 : 5) || kill(pid, 0) < 0)
			return c;
		nanosleep(&pause, NULL);
	}
}

static struct vgc_subject *attach_once(int pid, char *err, size_t errsize)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "vigil-control.%d", pid);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, alen) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (e == ECONNREFUSED || e == ENOENT)
			snprintf(err, errsize,
			         "process %d does not listen for monitors (start it with "
			         "VIGIL_CONTROL=listen, e.g. vigil record --listen)",
			         pid);
		else
			snprintf(err, errsize, "cannot attach to process %d: %s", pid, strerror(e));
		return NULL;
	}
	/* Anyone may bind the abstract name first: trust only the target process itself
	 * (the listener's pid), run by root, by us, or by the owner of /proc/PID. */
	struct ucred cr = {0};
	socklen_t crlen = sizeof cr;
	struct stat pst;
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/%d", pid);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0 || cr.pid != pid ||
	    (cr.uid != 0 && cr.uid != geteuid() &&
	     (stat(proc, &pst) < 0 || pst.st_uid != cr.uid))) {
		snprintf(err, errsize,
		         "@vigil-control.%d is held by pid %d (uid %u), not by process %d; refused",
		         pid, (int)cr.pid, (unsigned)cr.uid, pid);
		close(fd);
		return NULL;
	}
	struct vgc_subject *c = calloc(1, sizeof *c);
	if (!c) {
		close(fd);
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	c->fd = fd;
	char line[sizeof c->buf];
	if (read_line(c, line, sizeof line, mono_ms() + WAIT_MS, err, errsize) < 0) {
		vgc_subject_close(c);
		return NULL;
	}
	if (!strncmp(line, "error ", 6)) {
		snprintf(err, errsize, "process %d refused: %.200s", pid, line + 6);
		vgc_subject_close(c);
		return NULL;
	}
	if (parse_hello(c, line) < 0 || c->pid != pid) {
		snprintf(err, errsize, "process %d: not a vigil-control 1 hello: %.200s", pid,
		         line);
		vgc_subject_close(c);
		return NULL;
	}
	return c;
}

int vgc_subject_pid(const struct vgc_subject *c)
{
	return c->pid;
}
const char *vgc_subject_image(const struct vgc_subject *c)
{
	return c->image;
}
int64_t vgc_subject_hello_ns(const struct vgc_subject *c)
{
	return c->hello_ns;
}
int vgc_subject_fd(const struct vgc_subject *c)
{
	return c->fd;
}

int vgc_command(struct vgc_subject *c, const char *line, int64_t *now_ns, long *count, char *err,
                size_t errsize)
{
	if (count)
		*count = -1;
	if (c->broken) {
		snprintf(err, errsize, "an earlier command got no answer; the link is out of step");
		return -1;
	}
	size_t n = strlen(line);
	if (memchr(line, '\n', n) || n > 1024) {
		snprintf(err, errsize, "a command is one line of at most 1024 bytes");
		return -1;
	}
	char out[1026];
	memcpy(out, line, n);
	out[n++] = '\n';
	for (size_t off = 0; off < n;) {
		ssize_t w = send(c->fd, out + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, errsize, "send: %s", strerror(errno));
			c->broken = 1;
			return -1;
		}
		off += (size_t)w;
	}
	char ans[1100];
	if (read_line(c, ans, sizeof ans, mono_ms() + WAIT_MS, err, errsize) < 0) {
		c->broken = 1;
		return -1;
	}
	if (!strncmp(ans, "error ", 6)) {
		snprintf(err, errsize, "%s", ans + 6);
		return -1;
	}
	char *end = ans;
	long long ns = strncmp(ans, "ok ", 3) ? -1 : strtoll(ans + 3, &end, 10);
	long cnt = -1;
	if (ns >= 0 && *end == ' ')
		cnt = strtol(end + 1, &end, 10);
	if (ns < 0 || *end) {
		snprintf(err, errsize, "unexpected answer: %.200s", ans);
		c->broken = 1;
		return -1;
	}
	if (now_ns)
		*now_ns = ns;
	if (count)
		*count = cnt;
	return 0;
}

void vgc_subject_close(struct vgc_subject *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

void vgc_server_close(struct vgc_server *s)
{
	if (!s)
		return;
	close(s->fd);
	unlink(s->path);
	free(s);
}
