/* The SIGTRAP handler of armed USDT sites (docs/usdt.md, "Mechanism").
 *
 * An armed site's int3 traps with the thread's registers in the ucontext; the handler
 * finds the site by address (rip - 1), reads each argument operand from the registers
 * and memory the note names, records one event, and returns: rip already points past
 * the int3, i.e. past the 1-byte nop it replaced, so the program goes on as if the nop
 * had run. Nothing here locks or allocates.
 *
 * The program keeps its own SIGTRAP handling: while ours is installed, sigaction() and
 * signal() for SIGTRAP set and report the program's disposition, which ours calls for
 * every SIGTRAP that is not one of our sites (raise, kill, the program's own int3), or
 * applies (SIG_DFL: the default action, by re-raising with it; SIG_IGN: nothing). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"
#include "usdt.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction;
static _Atomic int installed;
static struct sigaction app; /* the program's SIGTRAP disposition while ours is installed */
static sigaction_fn resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return real_sigaction;
}

/* ---- the full path: may allocate the thread's stack of open starts, or its buffer ---- */

static struct vg_usdt_open_starts *starts(void)
{
	if (!vg__usdt_open_starts) {
		void *m = mmap(NULL, sizeof *vg__usdt_open_starts, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED)
			vg__usdt_open_starts = m; /* zero-filled */
	}
	return vg__usdt_open_starts;
}

void vg__usdt_thread_exit(void)
{
	if (vg__usdt_open_starts) {
		munmap(vg__usdt_open_starts, sizeof *vg__usdt_open_starts);
		vg__usdt_open_starts = NULL;
	}
}

void vg__usdt_record(const struct vg_usdt_site *s, const long long *gregs)
{
	vg_sensor *sensor = s->sensor;
	uint64_t since = s->pair_role == VG_USDT_CLOSE ? vg__usdt_pair_close(s->pair) : 0;
	if (!vg_on(sensor)) {
		if (s->pair_role == VG_USDT_OPEN)
			vg__usdt_pair_open(starts(), s->pair, vg_now());
		return;
	}
	uint8_t *p = vg_event_begin(sensor, s->payload);
	if (s->pair_role == VG_USDT_OPEN) /* the start's own time when it was recorded */
		vg__usdt_pair_open(starts(), s->pair, p ? vg_event_time() : vg_now());
	if (!p)
		return;
	if (s->pair_role == VG_USDT_CLOSE) {
		memcpy(p, &since, 8);
		p += 8;
	}
	vg_event_commit(vg__usdt_write_args(p, s, gregs));
}

/* A trampoline's second call (usdt_tramp.c), when vg__usdt_jump_fast could not finish
 * the hit alone, with the vector state saved: gregs as the int3 path's ucontext has them. */
__attribute__((used)) void vg__usdt_jump_hit(const struct vg_usdt_site *s, long long *gregs);
__attribute__((used)) void vg__usdt_jump_hit(const struct vg_usdt_site *s, long long *gregs)
{
	if (vg__usdt_in_trap || !atomic_load_explicit(&s->armed, memory_order_relaxed))
		return;
	int saved = errno;
	gregs[REG_RIP] = (long long)(atomic_load_explicit(&s->addr, memory_order_relaxed) + 1);
	vg__usdt_in_trap = 1;
	vg__usdt_record(s, gregs);
	vg__usdt_in_trap = 0;
	errno = saved;
}

/* ---- the handler ---- */

/* A SIGTRAP that is not ours, handled as the program asked. */
static void chain(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction a = app; /* a copy: the program may change it meanwhile */
	if (a.sa_flags & SA_SIGINFO) {
		if (a.sa_sigaction)
			a.sa_sigaction(sig, si, ctx);
		return;
	}
	if (a.sa_handler == SIG_IGN)
		return;
	if (a.sa_handler == SIG_DFL) { /* terminate with a core, as without us */
		struct sigaction dfl = {.sa_handler = SIG_DFL};
		resolve()(SIGTRAP, &dfl, NULL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGTRAP);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		raise(SIGTRAP);
		return;
	}
	a.sa_handler(sig);
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	ucontext_t *uc = ctx;
	/* int3 raises SIGTRAP with SI_KERNEL; kill/raise/sigqueue carry their own codes */
	struct vg_usdt_site *s = si && si->si_code == SI_KERNEL
	                             ? vg__usdt_find((uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1)
	                             : NULL;
	if (s && s->pair_role == VG_USDT_LOADER) {
		/* the loader's empty r_brk function: return from it by resuming at a ret of
		 * ours (a real ret: a shadow stack pops the same address), then, the link
		 * maps being consistent, arm the sites of what was just mapped */
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)vg__usdt_ret;
		if (_r_debug.r_state == RT_CONSISTENT && atomic_load(&s->armed) &&
		    !vg__usdt_in_trap) {
			vg__usdt_in_trap = 1;
			vg__usdt_loaded();
			vg__usdt_in_trap = 0;
		}
	} else if (!s) {
		chain(sig, si, ctx);
	} else {
		/* counted, so that usdt_jump.c knows when no thread still acts on an older path */
		atomic_fetch_add(&s->in_flight, 1);
		if (!vg__usdt_in_trap && atomic_load_explicit(&s->armed, memory_order_relaxed)) {
			vg__usdt_in_trap = 1;
			vg__usdt_record(s, uc->uc_mcontext.gregs);
			vg__usdt_in_trap = 0;
		}
		/* the bytes after the nop are (being) replaced: go on with their copies */
		if (atomic_load(&s->path) != VG_USDT_PATH_INT3)
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s->jump->resume;
		atomic_fetch_sub(&s->in_flight, 1);
	}
	/* else rip is past the int3, i.e. past the nop it stands for: the program goes on */
	errno = saved;
}

int vg__usdt_trap_install(void)
{
	if (atomic_load(&installed))
		return 0;
	if (!resolve()) {
		errno = ENOSYS;
		return -1;
	}
	/* SA_NODEFER: a site hit inside the handler traps again instead of meeting a
	 * blocked SIGTRAP, which the kernel would turn into the default action (death). */
	struct sigaction ours = {.sa_sigaction = on_trap,
	                         .sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER | SA_ONSTACK};
	sigemptyset(&ours.sa_mask);
	int rc = real_sigaction(SIGTRAP, &ours, &app); /* the caller holds usdt.c's lock */
	if (rc == 0)
		atomic_store(&installed, 1);
	return rc;
}

/* ---- the program's sigaction and signal for SIGTRAP ---- */

VG_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig != SIGTRAP || !atomic_load(&installed)) {
		if (!resolve()) {
			errno = ENOSYS;
			return -1;
		}
		return real_sigaction(sig, act, old);
	}
	/* no lock: sigaction is async-signal-safe and may be called from a handler */
	if (old)
		*old = app;
	if (act)
		app = *act;
	return 0;
}

VG_API sighandler_t signal(int sig, sighandler_t handler)
{
	if (sig != SIGTRAP || !atomic_load(&installed)) {
		static sighandler_t (*real_signal)(int, sighandler_t);
		if (!real_signal)
			real_signal =
			    (sighandler_t(*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
		if (!real_signal) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return real_signal(sig, handler);
	}
	/* BSD semantics, as glibc's signal() */
	struct sigaction act = {.sa_handler = handler, .sa_flags = SA_RESTART}, old;
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_flags & SA_SIGINFO ? (sighandler_t)(void (*)(void))old.sa_sigaction
	                                 : old.sa_handler;
}
