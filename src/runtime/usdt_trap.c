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
/* A site hit while this thread records one (a probe inside what recording calls): not
 * recorded again, so the handler never re-enters itself. */
static __thread int in_trap __attribute__((tls_model("initial-exec")));

static sigaction_fn resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return real_sigaction;
}

/* ---- operands ---- */

static const int greg_of[VG_SDT_NREGS] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
                                          REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                          REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};

static uint64_t reg_value(const long long *gregs, struct vg_sdt_regpart r)
{
	uint64_t v = (uint64_t)gregs[greg_of[r.reg]] >> r.shift;
	return r.width == 8 ? v : v & ((1ull << (8 * r.width)) - 1);
}

/* Fixed-size copies: a memcpy of a variable size became `rep movs`, which alone cost more
 * than the rest of a jump-path hit. */
static uint64_t load(uint64_t at, unsigned size)
{
	const void *p = (const void *)(uintptr_t)at;
	switch (size) {
	case 1:
		return *(const uint8_t *)p;
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	default: {
		uint64_t v;
		memcpy(&v, p, 8);
		return v;
	}
	}
}

static uint8_t *store(uint8_t *p, uint64_t v, unsigned size)
{
	switch (size) {
	case 1:
		*p = (uint8_t)v;
		break;
	case 2:
		memcpy(p, &(uint16_t){(uint16_t)v}, 2);
		break;
	case 4:
		memcpy(p, &(uint32_t){(uint32_t)v}, 4);
		break;
	default:
		memcpy(p, &v, 8);
	}
	return p + size;
}

/* The value of one argument, truncated to its size and sign- or zero-extended. */
static uint64_t arg_value(const struct vg_sdt_arg *a, const long long *uc, uint64_t bias)
{
	uint64_t v = 0;
	if (a->loc == VG_SDT_LOC_CONST) {
		v = (uint64_t)a->value;
	} else if (a->loc == VG_SDT_LOC_REG) {
		v = reg_value(uc, a->reg);
	} else {
		uint64_t at = (uint64_t)a->value + (a->relocate ? bias : 0);
		if (a->reg.reg >= 0)
			at += reg_value(uc, a->reg);
		if (a->index.reg >= 0)
			at += reg_value(uc, a->index) * a->scale;
		/* The compiler named this operand as the argument's home at the site: it is
		 * mapped there (the note says so), as any load of the program's would be. */
		v = load(at, a->size);
	}
	if (a->size < 8) {
		unsigned bits = 8u * a->size;
		v &= (1ull << bits) - 1;
		if (a->is_signed && (v >> (bits - 1)))
			v |= ~0ull << bits;
	}
	return v;
}

/* Each thread's open starts of the pairs it is inside (x__start .. x__done), innermost
 * last: a few pairs at a time, nested up to DEPTH deep. A start past that, or of a pair
 * whose slot another pair holds, is not remembered: its done then carries vg_since 0
 * (an end whose begin is unknown, counted as unmatched by the reader). */
#define SLOTS 8
#define DEPTH 16
struct open_starts {
	uint16_t pair[SLOTS];
	uint8_t depth[SLOTS]; /* may exceed DEPTH: starts beyond it were not kept */
	uint64_t since[SLOTS][DEPTH];
};
/* Made on a thread's first pair, by mmap (the trap handler runs in a signal handler, where
 * malloc may not be called), and unmapped when the thread ends. Only a pointer is in TLS:
 * libvigil is also loaded by dlopen (a PostgreSQL module linked with it), where glibc
 * gives initial-exec TLS only a small surplus of the static TLS block. */
static __thread struct open_starts *open_starts __attribute__((tls_model("initial-exec")));

static struct open_starts *starts(void)
{
	if (!open_starts) {
		void *m = mmap(NULL, sizeof *open_starts, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED)
			open_starts = m; /* zero-filled */
	}
	return open_starts;
}

void vg__usdt_thread_exit(void)
{
	if (open_starts) {
		munmap(open_starts, sizeof *open_starts);
		open_starts = NULL;
	}
}

static void pair_open(uint16_t pair, uint64_t t)
{
	struct open_starts *o = starts();
	unsigned k = pair % SLOTS;
	if (!o || (o->depth[k] && o->pair[k] != pair))
		return;
	o->pair[k] = pair;
	if (o->depth[k] < DEPTH)
		o->since[k][o->depth[k]] = t;
	if (o->depth[k] < 255)
		o->depth[k]++;
}

static uint64_t pair_close(uint16_t pair)
{
	struct open_starts *o = open_starts;
	unsigned k = pair % SLOTS;
	if (!o || !o->depth[k] || o->pair[k] != pair)
		return 0;
	uint8_t d = --o->depth[k];
	return d < DEPTH ? o->since[k][d] : 0;
}

void vg__usdt_record(const struct vg_usdt_site *s, const long long *gregs)
{
	vg_sensor *sensor = s->sensor;
	uint64_t since = s->pair_role == VG_USDT_CLOSE ? pair_close(s->pair) : 0;
	if (!vg_on(sensor)) {
		if (s->pair_role == VG_USDT_OPEN)
			pair_open(s->pair, vg_now());
		return;
	}
	uint8_t *p = vg_event_begin(sensor, s->payload);
	if (s->pair_role == VG_USDT_OPEN) /* the start's own time when it was recorded */
		pair_open(s->pair, p ? vg_event_time() : vg_now());
	if (!p)
		return;
	if (s->pair_role == VG_USDT_CLOSE) {
		memcpy(p, &since, 8);
		p += 8;
	}
	for (unsigned i = 0; i < s->nargs; i++) {
		uint64_t v = arg_value(&s->arg[i], gregs, s->bias);
		p = store(p, v, s->arg[i].size); /* little-endian: the low bytes */
	}
	vg_event_commit(p);
}

/* A trampoline's call (usdt_tramp.c): gregs as the int3 path's ucontext has them. */
__attribute__((used)) void vg__usdt_jump_hit(const struct vg_usdt_site *s, long long *gregs);
__attribute__((used)) void vg__usdt_jump_hit(const struct vg_usdt_site *s, long long *gregs)
{
	if (in_trap || !atomic_load_explicit(&s->armed, memory_order_relaxed))
		return;
	int saved = errno;
	gregs[REG_RIP] = (long long)(atomic_load_explicit(&s->addr, memory_order_relaxed) + 1);
	in_trap = 1;
	vg__usdt_record(s, gregs);
	in_trap = 0;
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
		/* the loader's empty r_brk function: return from it (pop rip), then, the link
		 * maps being consistent, arm the sites of what was just mapped */
		greg_t *g = uc->uc_mcontext.gregs;
		g[REG_RIP] = *(greg_t *)g[REG_RSP];
		g[REG_RSP] += 8;
		if (_r_debug.r_state == RT_CONSISTENT && atomic_load(&s->armed) && !in_trap) {
			in_trap = 1;
			vg__usdt_loaded();
			in_trap = 0;
		}
	} else if (!s) {
		chain(sig, si, ctx);
	} else {
		/* counted, so that usdt_jump.c knows when no thread still acts on an older path */
		atomic_fetch_add(&s->in_flight, 1);
		if (!in_trap && atomic_load_explicit(&s->armed, memory_order_relaxed)) {
			in_trap = 1;
			vg__usdt_record(s, uc->uc_mcontext.gregs);
			in_trap = 0;
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
