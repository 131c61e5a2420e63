/* A subject for the recording side of interaction networks (docs/net.md): plain libc
 * sockets, pipes and files, not linked with libvigil, recorded through `vigil record`'s
 * preload. Each scenario prints one JSON object: the descriptors it used (so the test can
 * name them) and, for `errno`, every call's return value and errno, which must be the
 * same with and without the preload. Run: net_subject SCENARIO. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "net_subject: %s: %s\n", what, strerror(errno));
	exit(2);
}

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if (!(x))                                                                          \
			die(#x);                                                                   \
	} while (0)

static void read_exactly(int fd, char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		CHECK(r > 0);
		got += (size_t)r;
	}
}

static int pipe_scenario(void)
{
	int p[2];
	char buf[8];
	CHECK(pipe(p) == 0);
	CHECK(write(p[1], "hello", 5) == 5);
	read_exactly(p[0], buf, 5);
	struct iovec iov[2] = {{"ab", 2}, {"c", 1}};
	CHECK(writev(p[1], iov, 2) == 3);
	struct iovec in = {buf, 3};
	CHECK(readv(p[0], &in, 1) == 3);
	close(p[1]);
	CHECK(read(p[0], buf, 1) == 0); /* end of file: nothing recorded */
	close(p[0]);
	printf("{\"r\": %d, \"w\": %d}\n", p[0], p[1]);
	return 0;
}

static int socketpair_scenario(void)
{
	int sv[2];
	char buf[8];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(send(sv[0], "ping", 4, 0) == 4);
	CHECK(recv(sv[1], buf, 2, MSG_PEEK) == 2); /* peeked: received by the next call */
	CHECK(recv(sv[1], buf, 4, MSG_WAITALL) == 4);
	CHECK(write(sv[1], "po", 2) == 2);
	CHECK(read(sv[0], buf, 2) == 2);
	close(sv[0]);
	close(sv[1]);
	printf("{\"a\": %d, \"b\": %d}\n", sv[0], sv[1]);
	return 0;
}

static int dup_scenario(void)
{
	int p[2];
	char buf[8];
	CHECK(pipe(p) == 0);
	CHECK(dup2(p[1], 40) == 40);
	close(p[1]); /* the connection lives on in 40 */
	CHECK(write(40, "abc", 3) == 3);
	int d = dup(40);
	CHECK(d >= 0);
	CHECK(write(d, "de", 2) == 2);
	read_exactly(p[0], buf, 5);
	close(40);
	close(d); /* the last holder: the connection closes */
	close(p[0]);
	printf("{\"r\": %d, \"w\": %d, \"d\": %d}\n", p[0], p[1], d);
	return 0;
}

static int file_scenario(void)
{
	const char *tmp = getenv("TMPDIR"); /* the test's own folder under its launcher */
	char path[4096], buf[8];
	snprintf(path, sizeof path, "%s/vg-net-file-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, "regular", 7) == 7);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(read(fd, buf, 7) == 7);
	close(fd);
	unlink(path);
	int null = open("/dev/null", O_WRONLY);
	CHECK(write(null, "x", 1) == 1);
	close(null);
	printf("{\"f\": %d}\n", fd);
	return 0;
}

static int tcp_scenario(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 4) == 0);
	CHECK(getsockname(l, (struct sockaddr *)&a, &al) == 0);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, sizeof a) == 0);
	int s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	char buf[100];
	memset(buf, 'q', sizeof buf);
	CHECK(send(c, buf, 60, 0) == 60);
	CHECK(sendto(c, buf, 40, 0, NULL, 0) == 40);
	read_exactly(s, buf, 100);
	struct msghdr m = {0};
	struct iovec iov = {"reply", 5};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	CHECK(sendmsg(s, &m, 0) == 5);
	struct iovec in = {buf, 5};
	m.msg_iov = &in;
	CHECK(recvmsg(c, &m, MSG_WAITALL) == 5);
	close(c);
	CHECK(recvfrom(s, buf, 1, 0, NULL, NULL) == 0); /* peer closed: nothing recorded */
	close(s);
	close(l);
	printf("{\"c\": %d, \"s\": %d, \"port\": %d}\n", c, s, ntohs(a.sin_port));
	return 0;
}

static int unix_scenario(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "vg-net-test-%d", (int)getpid());
	socklen_t al =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, al) == 0 && listen(l, 4) == 0);
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, al) == 0);
	int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	CHECK(s >= 0);
	char buf[8];
	CHECK(write(c, "unix", 4) == 4);
	read_exactly(s, buf, 4);
	close(c);
	close(s);
	close(l);
	printf("{\"c\": %d, \"s\": %d}\n", c, s);
	return 0;
}

/* A fork child keeps the parent's connection and offsets and introduces it in its own
 * trace; the parent reads what both wrote. */
static int fork_scenario(void)
{
	int p[2];
	char buf[8];
	CHECK(pipe(p) == 0);
	CHECK(write(p[1], "par", 3) == 3);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK(write(p[1], "kid", 3) == 3);
		_exit(0);
	}
	CHECK(waitpid(pid, NULL, 0) == pid);
	read_exactly(p[0], buf, 6);
	printf("{\"r\": %d, \"w\": %d}\n", p[0], p[1]);
	return 0;
}

/* A connection passed over SCM_RIGHTS: the parent connects and accepts a Unix stream
 * connection, passes the accepted end to a child forked before it existed, and talks to
 * it on the connecting end. The child's fd number held a pipe before (closed behind the
 * hooks' back by a raw system call), so a stale word would name the pipe. */
static int scm_scenario(void)
{
	int ctl[2], stale[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, ctl) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(ctl[0]);
		CHECK(pipe(stale) == 0);
		CHECK(write(stale[1], "old", 3) == 3);
		syscall(SYS_close, stale[1]); /* the number is free; the hooks did not see it */
		char one, buf[8];
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = {&one, 1};
		struct msghdr m = {.msg_iov = &iov,
		                   .msg_iovlen = 1,
		                   .msg_control = u.b,
		                   .msg_controllen = sizeof u.b};
		CHECK(recvmsg(ctl[1], &m, 0) == 1);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		CHECK(cm && cm->cmsg_type == SCM_RIGHTS);
		int fd;
		memcpy(&fd, CMSG_DATA(cm), sizeof fd);
		CHECK(fd == stale[1]);
		read_exactly(fd, buf, 4);
		CHECK(write(fd, "ok", 2) == 2);
		_exit(0);
	}
	close(ctl[1]);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "vg-net-scm-%d", (int)getpid());
	socklen_t al =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, al) == 0 && listen(l, 4) == 0);
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, al) == 0);
	int s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct iovec iov = {"x", 1};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &s, sizeof s);
	CHECK(sendmsg(ctl[0], &m, 0) == 1);
	close(s);
	char buf[8];
	CHECK(write(c, "scm!", 4) == 4);
	read_exactly(c, buf, 2);
	CHECK(waitpid(pid, NULL, 0) == pid);
	printf("{\"c\": %d, \"ctl\": %d}\n", c, ctl[0]);
	return 0;
}

/* Reads stdin (a regular file in the test): kind stdin. */
static int stdin_scenario(void)
{
	char buf[64];
	ssize_t n = read(0, buf, sizeof buf);
	printf("{\"n\": %zd}\n", n);
	return 0;
}

static void result(const char *name, long rc, int first)
{
	printf("%s\"%s\": [%ld, %d]", first ? "" : ", ", name, rc, rc < 0 ? errno : 0);
}

/* Failing calls: the same results with and without the preload; nothing recorded. */
static int errno_scenario(void)
{
	signal(SIGPIPE, SIG_IGN);
	char buf[4] = "abc";
	int p[2];
	CHECK(pipe(p) == 0);
	close(p[0]);
	printf("{");
	errno = 0;
	result("write_closed_pipe", write(p[1], buf, 3), 1);
	errno = 0;
	result("read_bad_fd", read(-1, buf, 3), 0);
	errno = 0;
	result("recv_not_socket", recv(p[1], buf, 3, 0), 0);
	errno = 0;
	result("close_bad_fd", close(12345), 0);
	errno = 0;
	result("dup2_bad_fd", dup2(12345, 50), 0);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 &&
	      getsockname(l, (struct sockaddr *)&a, &al) == 0);
	close(l); /* a port nobody listens on */
	int c = socket(AF_INET, SOCK_STREAM, 0);
	errno = 0;
	result("connect_refused", connect(c, (struct sockaddr *)&a, sizeof a), 0);
	close(c);
	int n = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	errno = 0;
	result("recv_not_connected", recv(n, buf, 3, 0), 0);
	close(n);
	errno = 0;
	result("accept_bad_fd", accept(-1, NULL, NULL), 0);
	/* Success leaves errno alone. */
	int q[2];
	CHECK(pipe(q) == 0);
	errno = 4242;
	long w = write(q[1], buf, 3);
	printf(", \"errno_kept\": [%ld, %d]", w, errno);
	errno = 4243;
	long r = read(q[0], buf, 3);
	printf(", \"errno_kept_read\": [%ld, %d]", r, errno);
	printf("}\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(
		    stderr,
		    "usage: net_subject pipe|socketpair|dup|file|tcp|unix|fork|scm|stdin|errno\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *s = argv[1];
	if (!strcmp(s, "pipe"))
		return pipe_scenario();
	if (!strcmp(s, "socketpair"))
		return socketpair_scenario();
	if (!strcmp(s, "dup"))
		return dup_scenario();
	if (!strcmp(s, "file"))
		return file_scenario();
	if (!strcmp(s, "tcp"))
		return tcp_scenario();
	if (!strcmp(s, "unix"))
		return unix_scenario();
	if (!strcmp(s, "fork"))
		return fork_scenario();
	if (!strcmp(s, "stdin"))
		return stdin_scenario();
	if (!strcmp(s, "scm"))
		return scm_scenario();
	if (!strcmp(s, "errno"))
		return errno_scenario();
	fprintf(stderr, "net_subject: unknown scenario '%s'\n", s);
	return 2;
}
