/* vigil ui --watch: the subject run by `vigil watch` (the same binary, a child process:
 * only the sensors the query needs are enabled, docs/watch.md), its answers read as JSON
 * lines while it runs and handed to the page by /api/live; when it has ended, the trace
 * vigil watch kept is opened and the timeline and workbench work on it.
 *
 * A reader thread only appends the child's output to a buffer under a mutex; everything
 * else (parsing, opening the trace) happens in the server's thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ui/ui.h"

struct vgu_live {
	pid_t pid;
	int fd;
	pthread_t reader;
	pthread_mutex_t mu;
	char *buf; /* vigil watch's stdout so far */
	size_t len, cap;
	bool done;  /* EOF: vigil watch has exited */
	int status; /* its wait status, once done */
	char tmp[PATH_MAX], dir[PATH_MAX + 16];
	const char *trace_path[1]; /* the app's paths once the trace is opened */
	bool opened;               /* the kept trace is open (a->trace) */
	char open_error[256];
};

static void *read_output(void *arg)
{
	struct vgu_live *l = arg;
	char chunk[65536];
	for (;;) {
		ssize_t n = read(l->fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		pthread_mutex_lock(&l->mu);
		if (l->len + (size_t)n + 1 > l->cap) {
			size_t c = l->cap ? l->cap : 65536;
			while (c < l->len + (size_t)n + 1)
				c *= 2;
			char *p = realloc(l->buf, c);
			if (!p)
				abort();
			l->buf = p;
			l->cap = c;
		}
		memcpy(l->buf + l->len, chunk, (size_t)n);
		l->len += (size_t)n;
		l->buf[l->len] = 0;
		pthread_mutex_unlock(&l->mu);
	}
	int status = 0;
	while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&l->mu);
	l->done = true;
	l->status = status;
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int vgu_live_start(struct vgu_app *a, const char *sensors, const char *qfile, const char *qtext,
                   const char *every, const char *display, char **command)
{
	struct vgu_live *l = calloc(1, sizeof *l);
	if (!l)
		return -1;
	vgt_set_copy_streams(true); /* the subject's trace is still written (trace.h) */
	pthread_mutex_init(&l->mu, NULL);
	const char *tmpdir = getenv("TMPDIR"); /* as mktemp(1) does */
	if (!tmpdir || !*tmpdir || strlen(tmpdir) > PATH_MAX - 64)
		tmpdir = "/tmp";
	snprintf(l->tmp, sizeof l->tmp, "%s/vigil-ui-watch-XXXXXX", tmpdir);
	if (!mkdtemp(l->tmp)) {
		fprintf(stderr, "vigil ui: cannot make a temporary folder: %s\n", strerror(errno));
		free(l);
		return -1;
	}
	snprintf(l->dir, sizeof l->dir, "%s/trace", l->tmp);
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		fprintf(stderr, "vigil ui: cannot find this vigil: %s\n", strerror(errno));
		rmdir(l->tmp);
		free(l);
		return -1;
	}
	self[n] = 0;
	size_t nc = 0;
	while (command[nc])
		nc++;
	const char **argv = calloc(nc + 16, sizeof *argv);
	size_t k = 0;
	argv[k++] = self;
	argv[k++] = "watch";
	if (sensors) { /* else vigil watch reads the description the program carries */
		argv[k++] = "--sensors";
		argv[k++] = sensors;
	}
	argv[k++] = qfile ? "-f" : "-e";
	argv[k++] = qfile ? qfile : qtext;
	argv[k++] = "--format";
	argv[k++] = "json";
	argv[k++] = "--keep";
	argv[k++] = l->dir;
	if (every) {
		argv[k++] = "--every";
		argv[k++] = every;
	}
	if (display) { /* only the sensors the query and the display need */
		argv[k++] = "--display";
		argv[k++] = display;
	}
	argv[k++] = "--";
	for (size_t i = 0; i < nc; i++)
		argv[k++] = command[i];
	argv[k] = NULL;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		fprintf(stderr, "vigil ui: pipe: %s\n", strerror(errno));
		free(argv);
		rmdir(l->tmp);
		free(l);
		return -1;
	}
	l->pid = fork();
	if (l->pid == 0) {
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL); /* vigil ui blocks them for sigwait */
		dup2(p[1], STDOUT_FILENO);
		/* its own process group: Ctrl-C in the terminal stops vigil ui, which stops it */
		setpgid(0, 0);
		execv(self, (char *const *)argv);
		_exit(127);
	}
	free(argv);
	close(p[1]);
	if (l->pid < 0) {
		fprintf(stderr, "vigil ui: cannot fork: %s\n", strerror(errno));
		close(p[0]);
		rmdir(l->tmp);
		free(l);
		return -1;
	}
	l->fd = p[0];
	pthread_create(&l->reader, NULL, read_output, l);
	l->trace_path[0] = l->dir;
	a->live = l;
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void vgu_live_stop(struct vgu_app *a)
{
	struct vgu_live *l = a->live;
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	bool done = l->done;
	pthread_mutex_unlock(&l->mu);
	if (!done)
		kill(l->pid, SIGTERM); /* vigil watch passes it to its subject, answers, exits */
	pthread_join(l->reader, NULL);
	close(l->fd);
	vgu_display_close(a);
	vgu_app_close(a);
	nftw(l->tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(l->buf);
	pthread_mutex_destroy(&l->mu);
	free(l);
	a->live = NULL;
}

const char *vgu_live_dir(const struct vgu_app *a)
{
	return a->live ? a->live->dir : NULL;
}

bool vgu_live_failed(const struct vgu_app *a)
{
	return a->live && a->live->open_error[0];
}

bool vgu_live_waiting(const struct vgu_app *a)
{
	return a->live && !a->live->opened;
}

/* One answer line of vigil watch, with the UTC text of its times added. */
static json_t *tuple_line(const char *s, size_t n)
{
	json_t *t = json_loadb(s, n, 0, NULL);
	if (!t)
		return NULL;
	char buf[64];
	json_t *at = json_object_get(t, "at"), *from = json_object_get(t, "from"),
	       *to = json_object_get(t, "to");
	if (json_is_integer(at ? at : from)) {
		vgt_format_time(json_integer_value(at ? at : from), buf, sizeof buf);
		json_object_set_new(t, "time", json_string(buf));
	}
	if (json_is_integer(to)) {
		vgt_format_time(json_integer_value(to), buf, sizeof buf);
		json_object_set_new(t, "time_to", json_string(buf));
	}
	return t;
}

void vgu_api_live(struct vgu_app *a, size_t from, struct vgu_reply *r)
{
	struct vgu_live *l = a->live;
	if (!l)
		return vgu_reply_error(r, 404, "not live (vigil ui --watch ... -- PROGRAM)");
	pthread_mutex_lock(&l->mu);
	bool done = l->done;
	int status = l->status;
	/* complete lines only */
	size_t end = l->len;
	while (end > 0 && l->buf[end - 1] != '\n')
		end--;
	char *copy = end ? strndup(l->buf, end) : NULL;
	pthread_mutex_unlock(&l->mu);
	/* vigil watch's answers, and the subject's own output (it shares the pipe) */
	json_t *tuples = json_array(), *output = json_array();
	size_t lines = 0;
	for (char *p = copy; p && *p;) {
		char *nl = strchr(p, '\n');
		if (lines++ >= from) {
			json_t *t = *p == '{' ? tuple_line(p, (size_t)(nl - p)) : NULL;
			if (t && json_object_get(t, "relation"))
				json_array_append_new(tuples, t);
			else {
				json_decref(t);
				json_t *txt = json_stringn(p, (size_t)(nl - p));
				json_array_append_new(output,
				                      txt ? txt : json_string("(not UTF-8)"));
			}
		}
		p = nl + 1;
	}
	free(copy);
	if (done && !l->opened && !l->open_error[0]) {
		a->ends_without_begin = true;
		if (vgu_app_open(a, l->trace_path, 1) == 0) {
			l->opened = true;
			vgu_display_open(a); /* over the whole trace now */
		} else
			snprintf(l->open_error, sizeof l->open_error,
			         "the subject's trace could not be opened (see vigil ui's stderr)");
	}
	json_t *o = json_pack("{s:b,s:I,s:o,s:o,s:I,s:b}", "running", !done, "lines",
	                      (json_int_t)lines, "tuples", tuples, "output", output, "pid",
	                      (json_int_t)l->pid, "trace", l->opened);
	if (done)
		json_object_set_new(
		    o, "exit",
		    json_integer(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
	if (l->open_error[0])
		json_object_set_new(o, "error", json_string(l->open_error));
	vgu_reply_json(r, 200, o);
}
