/* VIGIL_CONTROL=listen (docs/control.md, "Attaching"): instead of connecting to a monitor
 * at start, the process listens on the abstract Unix socket `vigil-control.<pid>` and a
 * monitor attaches whenever it likes (`vigil watch --pid`). Up to 8 monitors at once,
 * each with its own plan (the subject runs their union); only
 * the process's own user (or root) may attach, checked with SO_PEERCRED, since abstract
 * sockets have no file permissions. When a monitor detaches, what its plan raised is
 * lowered; when the last one does, everything is, and the built-in sensors go back to what
 * VIGIL_SENSORS says: the process keeps recording its entity sources for the next monitor. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"

#define MONITORS_TEXT "8"

#define MAX_MONITORS (VG_CONTROL_OWNERS - 1)

static int listen_fd = -1;
/* The attached monitors: slot i is owner i + 1 of the rules (control_rules.c); fd -1 =
 * free. Only the control thread changes them (the fds are swapped under vg__rt.lock for
 * a fork child, see control.c). */
static struct monitor {
	int fd;
	struct vg__ctl_reader in;
} mons[MAX_MONITORS];
static int nattached;

int vg__control_listening(void)
{
	return vg__rt.cfg.control && !strcmp(vg__rt.cfg.control, "listen");
}

int vg__control_monitors_attached(void)
{
	return nattached;
}

static void refuse(int fd, const char *why)
{
	char line[160];
	int n = snprintf(line, sizeof line, "error %s\n", why);
	ssize_t unused = send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)unused;
	close(fd);
}

static void take_monitor(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		refuse(fd, "permission denied: only the process's own user or root may attach");
		return;
	}
	int slot = 0;
	while (slot < MAX_MONITORS && mons[slot].fd >= 0)
		slot++;
	if (slot == MAX_MONITORS) {
		refuse(fd, "busy: " MONITORS_TEXT " monitors are attached already");
		return;
	}
	fd = vg__control_high_fd(fd);
	memset(&mons[slot].in, 0, sizeof mons[slot].in);
	if (vg__control_send_hello(fd) < 0) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&vg__rt.lock);
	mons[slot].fd = fd;
	vg__own_fd_add(&mons[slot].fd); /* the subject's close loops leave it alone (files.c) */
	pthread_mutex_unlock(&vg__rt.lock);
	nattached++;
}

/* Monitor `slot` left: its plan goes (all of it when it was the last one). */
static void detach(int slot)
{
	vg__control_undo_owner(slot + 1);
	pthread_mutex_lock(&vg__rt.lock);
	int fd = vg__own_fd_take(&mons[slot].fd);
	pthread_mutex_unlock(&vg__rt.lock);
	nattached--;
	close(fd);
	/* Every `vigil probes` call detaches: noise on the host program's stderr, so only
	 * said when asked (VIGIL_VERBOSE). */
	if (vg__rt.cfg.verbose)
		vg__warn("monitor detached; the sensors it enabled are off again (probe switches "
		         "stay)");
}

static void *listen_main(void *arg)
{
	(void)arg;
	syscall(SYS_prctl, PR_SET_NAME, "vigil-control", 0, 0, 0); /* not through our hook */
	for (;;) {
		struct pollfd p[1 + MAX_MONITORS];
		p[0] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
		for (int i = 0; i < MAX_MONITORS; i++) /* a negative fd is ignored by poll */
			p[1 + i] = (struct pollfd){.fd = mons[i].fd, .events = POLLIN};
		int n = poll(p, 1 + MAX_MONITORS, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return NULL;
		for (int i = 0; i < MAX_MONITORS; i++)
			if (mons[i].fd >= 0 && p[1 + i].revents &&
			    vg__control_serve_available(i + 1, mons[i].fd, &mons[i].in) < 0)
				detach(i);
		if (p[0].revents & POLLIN)
			take_monitor();
	}
}

void vg__control_listen_start(void)
{
	for (int i = 0; i < MAX_MONITORS; i++)
		mons[i].fd = -1;
	nattached = 0;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	/* Abstract namespace: sun_path[0] = 0, the name follows, no file to clean up. */
	int len =
	    snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "vigil-control.%d", (int)vg__rt.pid);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, alen) < 0 || listen(fd, 4) < 0) {
		vg__warn("VIGIL_CONTROL=listen: cannot listen on @vigil-control.%d: %s; no monitor "
		         "can attach",
		         (int)vg__rt.pid, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	listen_fd = vg__control_high_fd(fd);
	vg__own_fd_add(&listen_fd);
	if (vg__control_start_thread(listen_main) != 0) {
		vg__warn("VIGIL_CONTROL=listen: cannot start the control thread; no monitor can "
		         "attach");
		vg__own_fd_release(&listen_fd, 0);
	}
}

/* A fork child listens under its own pid; its parent's monitor is not its monitor. */
void vg__control_listen_after_fork(void)
{
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
	for (int i = 0; i < MAX_MONITORS; i++) {
		if (mons[i].fd >= 0)
			close(mons[i].fd);
		mons[i].fd = -1;
	}
	nattached = 0;
	vg__control_on = 1;
	vg__control_undo(0, 0);
	vg__control_listen_start();
}
