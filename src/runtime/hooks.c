/* libc functions vigil interposes, so that processes and threads are recorded without
 * any change to the subject: thread creation and naming, and exec. (fork is followed
 * through pthread_atfork, process exit through on_exit.) The real functions are found
 * with dlsym(RTLD_NEXT); when libvigil is linked rather than preloaded, the same
 * definitions interpose libc's because libvigil comes first in the search order. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "exe_static.h"
#include "internal.h"

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*setname_fn)(pthread_t, const char *);
typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef void (*exit_fn)(int);

static struct {
	pthread_create_fn pthread_create;
	setname_fn pthread_setname_np;
	prctl_fn prctl;
	execve_fn execve, execvpe;
	execv_fn execv, execvp;
	exit_fn _exit;
} real;

static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (!f)
		vg__warn("cannot find the real %s: %s", name, dlerror());
	return f;
}

void vg__hooks_init(void)
{
	real.pthread_create = (pthread_create_fn)next("pthread_create");
	real.pthread_setname_np = (setname_fn)next("pthread_setname_np");
	real.prctl = (prctl_fn)next("prctl");
	real.execve = (execve_fn)next("execve");
	real.execvpe = (execve_fn)next("execvpe");
	real.execv = (execv_fn)next("execv");
	real.execvp = (execv_fn)next("execvp");
	real._exit = (exit_fn)next("_exit");
	vg__net_hooks_init();
}

/* A vfork child (or a raw clone) runs in its parent's memory without our fork handler:
 * it must not touch the parent's streams. */
static int in_other_process(void)
{
	return getpid() != vg__rt.pid;
}

#define ENSURE(fn)                                                                                 \
	do {                                                                                       \
		if (!real.fn)                                                                      \
			vg__ensure_init();                                                         \
		if (!real.fn) {                                                                    \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

/* ---- threads ---- */

int vg__real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                            void *arg)
{
	if (!real.pthread_create)
		return ENOSYS;
	return real.pthread_create(th, attr, fn, arg);
}

struct start {
	void *(*fn)(void *);
	void *arg;
	uint64_t iid[2]; /* the creator's interaction: the new thread inherits it */
};

static void *thread_trampoline(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	vg__net_iid[0] = s.iid[0];
	vg__net_iid[1] = s.iid[1];
	if (vg__rt.recording)
		vg__stream_thread_start(); /* records vg.thread.begin in the new thread */
	return s.fn(s.arg);
}

VG_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg)
{
	if (!real.pthread_create)
		vg__ensure_init();
	if (!real.pthread_create)
		return ENOSYS;
	/* Not recording, a thread still inherits its creator's interaction (docs/net.md). */
	int wrap = vg__rt.recording || vg__net_iid[0] || vg__net_iid[1];
	struct start *s = wrap ? malloc(sizeof *s) : NULL;
	if (!s)
		return real.pthread_create(thread, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->iid[0] = vg__net_iid[0];
	s->iid[1] = vg__net_iid[1];
	int rc = real.pthread_create(thread, attr, thread_trampoline, s);
	if (rc != 0)
		free(s);
	return rc;
}

static void record_own_name(const char *name)
{
	vg_entity *self = vg__thread_entity();
	if (vg__rt.recording && self) {
		vg__report_thread_named(name); /* the thread filter goes by name */
		vg__emit_thread_name((uint32_t)self->id, self->gen, name);
		/* The main thread's name is the process's (ps -o comm, top). */
		if (self->id == (uint64_t)vg__rt.pid)
			vg__process_renamed(name);
	}
}

VG_API int pthread_setname_np(pthread_t thread, const char *name)
{
	if (!real.pthread_setname_np)
		vg__ensure_init();
	if (!real.pthread_setname_np)
		return ENOSYS;
	int rc = real.pthread_setname_np(thread, name);
	if (rc == 0 && pthread_equal(thread, pthread_self()))
		record_own_name(name);
	else if (rc == 0 && vg__rt.recording)
		vg__thread_table_rename(thread, name); /* another thread of this process */
	return rc;
}

VG_API int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long),
	              a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	ENSURE(prctl);
	int rc = real.prctl(option, a2, a3, a4, a5);
	if (rc == 0 && option == PR_SET_NAME && a2) {
		char name[17];
		strncpy(name, (const char *)a2, 16);
		name[16] = 0;
		record_own_name(name);
	}
	return rc;
}

/* ---- exec ---- */

static void before_exec(const char *path)
{
	if (!vg__rt.recording || in_other_process())
		return;
	vg__logcap_process_end(); /* the new image starts its own model */
	vg__title_check();        /* the last title of this image */
	vg_value v[1];
	v[0].s = path;
	vg_emit(vg__builtin(VG_B_PROCESS_EXEC), v);
	/* No preload reaches a static program: said, and counted (docs/net.md). */
	if (vg_exe_is_static(path)) {
		vg__warn("%s is statically linked: nothing of it is recorded", path);
		vg__net_unfollowed(-1, 0, "exec-static", 1);
	}
	vg_thread_flush();
	vg__listen_flush_all(); /* the listeners' buffers would die with the image */
	vg__files_before_exec();
}

static void exec_failed(void)
{
	if (vg__rt.recording && !in_other_process()) {
		int saved = errno;
		vg__files_exec_failed();
		errno = saved;
	}
}

/* A shell passes its own copy of the environment, taken before the runtime updated
 * VIGIL_PROC in place: the new image would then think it starts a new process. The copy
 * handed to the kernel gets the current VIGIL_PROC (the caller's array is not touched;
 * the allocation is freed only if the exec fails). */
static char **with_current_proc(char *const envp[])
{
	/* Not getenv: bash replaces it with its own, which answers from its stale copy. */
	const char *now = vg__proc_env() + 11;
	if (!vg__rt.recording || !envp || in_other_process()) /* (bash sets environ to its copy) */
		return NULL;
	size_t n = 0, at = (size_t)-1;
	for (; envp[n]; n++)
		if (!strncmp(envp[n], "VIGIL_PROC=", 11))
			at = n;
	if (at == (size_t)-1 || !strcmp(envp[at] + 11, now))
		return NULL;
	char **copy = malloc((n + 1) * sizeof *copy);
	if (!copy)
		return NULL;
	memcpy(copy, envp, (n + 1) * sizeof *copy);
	copy[at] = (char *)vg__proc_env();
	return copy;
}

VG_API int execve(const char *path, char *const argv[], char *const envp[])
{
	ENSURE(execve);
	before_exec(path);
	char **env = with_current_proc(envp);
	int rc = real.execve(path, argv, env ? env : envp);
	exec_failed();
	free(env);
	return rc;
}

VG_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	ENSURE(execvpe);
	before_exec(file);
	char **env = with_current_proc(envp);
	int rc = real.execvpe(file, argv, env ? env : envp);
	exec_failed();
	free(env);
	return rc;
}

VG_API int execv(const char *path, char *const argv[])
{
	ENSURE(execv);
	before_exec(path);
	int rc = real.execv(path, argv);
	exec_failed();
	return rc;
}

VG_API int execvp(const char *file, char *const argv[])
{
	ENSURE(execvp);
	before_exec(file);
	int rc = real.execvp(file, argv);
	exec_failed();
	return rc;
}

/* The execl family: gather the variadic arguments, then go through the hooks above. */
#define MAX_EXECL_ARGS 4096
#define GATHER_ARGS(first, argv, ap)                                                               \
	size_t argc = 1;                                                                           \
	argv[0] = (char *)(first);                                                                 \
	while (argv[argc - 1] && argc < MAX_EXECL_ARGS)                                            \
		argv[argc++] = va_arg(ap, char *);                                                 \
	if (argv[argc - 1]) {                                                                      \
		va_end(ap);                                                                        \
		errno = E2BIG;                                                                     \
		return -1;                                                                         \
	}

VG_API int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	va_list ap;
	va_start(ap, arg);
	GATHER_ARGS(arg, argv, ap);
	va_end(ap);
	return execv(path, argv);
}

VG_API int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	va_list ap;
	va_start(ap, arg);
	GATHER_ARGS(arg, argv, ap);
	va_end(ap);
	return execvp(file, argv);
}

VG_API int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	va_list ap;
	va_start(ap, arg);
	GATHER_ARGS(arg, argv, ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* ---- _exit: processes that skip exit handlers still record their end ---- */

VG_API void _exit(int status)
{
	if (!real._exit)
		vg__ensure_init();
	if (vg__rt.recording && !in_other_process())
		vg__process_end(status);
	if (real._exit)
		real._exit(status);
	for (;;) /* cannot happen: libc always has _exit */
		abort();
}
