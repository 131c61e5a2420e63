/* What daemons do to themselves, one scenario each (daemon_test.py): the subject does it,
 * then emits a known number of events through sensors linked with libvigil (in its main
 * thread, in a thread started afterwards, in a fork child made afterwards), so that the
 * test can demand exactly that many in the trace and none discarded.
 *
 * Usage: daemon_subject SCENARIO DIR   (DIR: the test's own directory, for a chroot jail
 * and the pid file of a daemonized process). Exit 0, or 1 with a line on stderr when the
 * subject itself saw something it would not have seen without the runtime. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vigil/vigil.h"

#define BEFORE 1000  /* events before the scenario's act */
#define AFTER 200000 /* events of the main thread after it: several MiB, many packets */
#define THREAD 50000 /* events of a thread started after it */
#define CHILD 50000  /* events of a fork child made after it */
#define NOBODY 65534

static const vg_field_desc tick_f[] = {{"n", VG_UINT32, NULL}};
static const vg_type_desc d_main = {.name = "d.main",
                                    .kind = VG_KIND_EVENT,
                                    .fields = tick_f,
                                    .nfields = 1,
                                    .performer = -1,
                                    .initiator = -1,
                                    .target = -1};
static const vg_type_desc d_thread = {.name = "d.thread",
                                      .kind = VG_KIND_EVENT,
                                      .fields = tick_f,
                                      .nfields = 1,
                                      .performer = -1,
                                      .initiator = -1,
                                      .target = -1};
static const vg_type_desc d_child = {.name = "d.child",
                                     .kind = VG_KIND_EVENT,
                                     .fields = tick_f,
                                     .nfields = 1,
                                     .performer = -1,
                                     .initiator = -1,
                                     .target = -1};
/* Registered only after the act: its declaration is appended to the metadata then. */
static const vg_type_desc d_late = {.name = "d.late",
                                    .kind = VG_KIND_EVENT,
                                    .fields = tick_f,
                                    .nfields = 1,
                                    .performer = -1,
                                    .initiator = -1,
                                    .target = -1};

static vg_sensor *s_main;
static int in_jail; /* chrooted: our own executable is not in the jail */

static void fail(const char *what)
{
	fprintf(stderr, "daemon_subject: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void emit(vg_sensor *s, uint32_t from, uint32_t n)
{
	for (uint32_t i = from; i < from + n; i++) {
		vg_value v = {.u = i};
		vg_emit(s, &v);
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	emit(vg_sensor_register(&d_thread), 0, THREAD);
	return NULL;
}

/* After the act: the main thread's events, a new sensor, a new thread, a fork child that
 * execs this program again (a new image of the same process, which must find the trace
 * without its path: the new user may not search it, a jail does not have it). */
static void after(void)
{
	emit(s_main, BEFORE, AFTER);
	emit(vg_sensor_register(&d_late), 0, 10);
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, NULL) != 0)
		fail("pthread_create");
	pthread_join(th, NULL);
	pid_t pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		if (!in_jail) {
			execl("/proc/self/exe", "daemon_subject", "child", "-", (char *)NULL);
			fail("exec");
		}
		emit(vg_sensor_register(&d_child), 0, CHILD);
		exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		fail("the fork child failed");
}

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
		fail("dropping to nobody");
	if (getuid() != NOBODY || geteuid() != NOBODY)
		fail("still privileged");
}

/* capset(2) without libcap: every capability set emptied, uid stays 0. */
static void drop_capabilities(void)
{
	struct {
		uint32_t version;
		int pid;
	} hdr = {0x20080522, 0}; /* _LINUX_CAPABILITY_VERSION_3 */
	struct {
		uint32_t effective, permitted, inheritable;
	} data[2] = {{0, 0, 0}, {0, 0, 0}};
	if (syscall(SYS_capset, &hdr, data) < 0)
		fail("capset");
	/* Without CAP_DAC_OVERRIDE, root cannot write into a directory it does not own. */
	if (mkdir("/proc/vigil-daemon-test", 0700) == 0)
		fail("capabilities still there");
}

static void do_chroot(const char *dir)
{
	char jail[4096];
	snprintf(jail, sizeof jail, "%s/jail", dir);
	if (mkdir(jail, 0755) < 0 || chroot(jail) < 0 || chdir("/") < 0)
		fail("chroot");
	in_jail = 1;
}

/* Every descriptor above 2, closed by a loop over /proc/self/fd (names first: closing
 * while reading the directory would close the directory's own descriptor). */
static void close_loop_proc(void)
{
	int fds[4096], n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		fail("opendir /proc/self/fd");
	struct dirent *de;
	while ((de = readdir(d)) && n < 4096)
		if (de->d_name[0] != '.')
			fds[n++] = atoi(de->d_name);
	int self = dirfd(d);
	for (int i = 0; i < n; i++)
		if (fds[i] > 2 && fds[i] != self && close(fds[i]) != 0)
			fail("close of an open descriptor");
	closedir(d);
}

static void close_loop_all(void)
{
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < max; fd++)
		close((int)fd);
}

/* /dev/null dup2'd over every descriptor above 2, each checked to be /dev/null after. */
static void dup2_over_all(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct stat ns;
	if (null < 0 || fstat(null, &ns) < 0)
		fail("/dev/null");
	int fds[4096], n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d)) && n < 4096)
		if (de->d_name[0] != '.')
			fds[n++] = atoi(de->d_name);
	int self = d ? dirfd(d) : -1;
	for (int i = 0; i < n; i++) {
		int fd = fds[i];
		if (fd <= 2 || fd == self || fd == null)
			continue;
		struct stat s;
		if (dup2(null, fd) != fd || fstat(fd, &s) < 0 || s.st_rdev != ns.st_rdev ||
		    !S_ISCHR(s.st_mode))
			fail("dup2 did not make the descriptor /dev/null");
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++)
		if (fds[i] > 2 && fds[i] != self && fds[i] != null)
			close(fds[i]);
	close(null);
}

static void lower(int resource, rlim_t cur)
{
	struct rlimit rl;
	if (getrlimit(resource, &rl) < 0)
		fail("getrlimit");
	rl.rlim_cur = cur;
	if (setrlimit(resource, &rl) < 0)
		fail("setrlimit");
}

/* The address space now used, from /proc/self/status (VmSize, kB). */
static rlim_t address_space(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kb = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmSize: %lu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (rlim_t)kb * 1024;
}

/* fork, setsid, fork: the grandchild carries on, detached, with its standard
 * descriptors on /dev/null and every other one closed; it writes its pid into
 * DIR/daemon.pid so that the test can wait for its end. */
static void daemonize(const char *dir)
{
	pid_t pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid > 0) {
		int status;
		waitpid(pid, &status, 0);
		exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	}
	if (setsid() < 0)
		fail("setsid");
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid > 0)
		_exit(0);
	char path[4096];
	snprintf(path, sizeof path, "%s/daemon.pid", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		fail("pid file");
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	if (chdir("/") < 0)
		fail("chdir");
	umask(0);
	int null = open("/dev/null", O_RDWR);
	if (null < 0)
		fail("/dev/null");
	for (int fd = 0; fd < 3; fd++)
		dup2(null, fd);
	closefrom(3);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: daemon_subject SCENARIO DIR\n");
		return 2;
	}
	const char *sc = argv[1], *dir = argv[2];
	if (!strcmp(sc, "child")) { /* the fork child's exec'd image */
		emit(vg_sensor_register(&d_child), 0, CHILD);
		return 0;
	}
	s_main = vg_sensor_register(&d_main);
	emit(s_main, 0, BEFORE);
	if (!strcmp(sc, "setuid"))
		drop_to_nobody();
	else if (!strcmp(sc, "capabilities"))
		drop_capabilities();
	else if (!strcmp(sc, "chroot"))
		do_chroot(dir);
	else if (!strcmp(sc, "chroot_setuid")) {
		do_chroot(dir);
		drop_to_nobody();
	} else if (!strcmp(sc, "daemonize"))
		daemonize(dir);
	else if (!strcmp(sc, "close_range")) {
		if (close_range(3, ~0u, 0) != 0)
			fail("close_range");
	} else if (!strcmp(sc, "closefrom"))
		closefrom(3);
	else if (!strcmp(sc, "close_loop_proc"))
		close_loop_proc();
	else if (!strcmp(sc, "close_loop_all"))
		close_loop_all();
	else if (!strcmp(sc, "dup2"))
		dup2_over_all();
	else if (!strcmp(sc, "nofile")) {
		/* Lowered to what is open now plus two: the runtime may not take them. */
		close_loop_all();
		lower(RLIMIT_NOFILE, 5);
		int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY);
		if (a != 3 || b != 4)
			fail("the subject's descriptors are not 3 and 4");
		close(a);
		close(b);
	} else if (!strcmp(sc, "fsize")) {
		lower(RLIMIT_FSIZE, 1 << 20); /* below what the events need */
	} else if (!strcmp(sc, "as")) {
		lower(RLIMIT_AS, address_space() + ((rlim_t)48 << 20));
	} else {
		fprintf(stderr, "daemon_subject: unknown scenario %s\n", sc);
		return 2;
	}
	after();
	return 0;
}
