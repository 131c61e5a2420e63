/* The jump path of armed USDT sites (docs/usdt.md, "The jump path").
 *
 * A site armed with int3 costs a signal delivery per hit. Where the vigil CLI has handed
 * us a patch plan for it (it decodes the site's instructions with a disassembler; the
 * runtime depends on libc only), the int3 is replaced by a 5-byte `jmp` into a trampoline
 * that calls the recorder and then runs the displaced instructions (the nop's followers,
 * relocated) and jumps back. The plan's bytes must equal the program's, or the site stays
 * on the int3 path.
 *
 * Rewriting 5 bytes is not atomic for a thread fetching them, so (as the kernel's
 * text_poke_bp does):
 *   1. the int3 is written first (the site is armed): the handler now resumes trapped
 *      threads in the trampoline (path CONVERTING) instead of after the nop; we wait until
 *      no thread is inside the handler with the old decision;
 *   2. a sweep: every other thread gets a (real-time) signal; one stopped at an instruction
 * boundary inside the displaced bytes is moved to the same instruction in the trampoline; the
 *      return from the signal (iret) serialises it, so it sees the int3 from then on.
 *      No thread can enter the displaced bytes any more but through the int3: the CLI
 *      refuses a site whose displaced bytes a branch targets or hold a call before their
 *      end (a return into them);
 *   3. the jump's tail (bytes 1..4, the rest filled with int3) is written, and a second
 *      sweep (or membarrier's SYNC_CORE) serialises every thread;
 *   4. the first byte becomes the jmp.
 * Reverting (disarm) runs the other way: int3 at byte 0 (its handler resumes in the
 * trampoline), serialise, the original bytes 1.., serialise, int3 path again. Trampolines
 * are never freed: a thread may still be running in one. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"
#include "usdt.h"

static char vg__usdt_sweep_tag; /* the sweep's signals carry its address */
/* The sweep's signal: a real-time signal the program left at its default, taken at the
 * first sweep and kept (an answer may come late). Not SIGTRAP: a classic signal does not
 * queue, so ours and the int3's of a thread hitting a site would swallow one another. */
static int sweep_sig;

/* ---- writing code ---- */

int vg__usdt_code_write(uint8_t *at, const void *bytes, size_t n, int prot, char *why,
                        size_t whysize)
{
	long pagesize = sysconf(_SC_PAGESIZE);
	uintptr_t first = (uintptr_t)at & ~(uintptr_t)(pagesize - 1);
	size_t span = (uintptr_t)at + n - first;
	if (mprotect((void *)first, span, prot | PROT_WRITE) == 0) {
		if (n == 1)
			__atomic_store_n(at, *(const uint8_t *)bytes, __ATOMIC_SEQ_CST);
		else
			memcpy(at, bytes, n);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (mprotect((void *)first, span, prot) < 0)
			vg__warn("usdt: cannot restore the protection of the page at %p: %s",
			         (void *)first, strerror(errno));
		return 0;
	}
	/* a W^X policy: write through the protection as a debugger does */
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ssize_t w = fd >= 0 ? pwrite(fd, bytes, n, (off_t)(uintptr_t)at) : -1;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (w != (ssize_t)n) {
		snprintf(why, whysize,
		         "cannot write the code page (mprotect and /proc/self/mem: %s)",
		         strerror(e));
		return -1;
	}
	return 0;
}

/* ---- plans ---- */

struct plan {
	uint64_t dev, ino, pc;
	struct vg_usdt_jump j;
};
static struct plan *plans;
static size_t nplans, plans_cap;

const struct vg_usdt_jump *vg__usdt_plan_find(uint64_t dev, uint64_t ino, uint64_t pc)
{
	for (size_t i = nplans; i-- > 0;) /* the latest plan for a site wins */
		if (plans[i].pc == pc && plans[i].ino == ino && plans[i].dev == dev)
			return &plans[i].j;
	return NULL;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* `DEV:INO:PC:HEX:INSNS`, INSNS a comma list of LEN KIND [ARG][/TARGET] (src/cli/usdt_plan.c
 * writes it): 1c (the nop), 3c, 7r3 (its disp32 at offset 3), 2j-40, 6k5/+120, 5l-9000. */
int vg__usdt_plan_add(const char *text, char *err, size_t errsize)
{
	struct plan p = {0};
	const char *s = text;
	char *end;
	p.dev = strtoull(s, &end, 16);
	if (*end != ':')
		goto bad;
	p.ino = strtoull(end + 1, &end, 16);
	if (*end != ':')
		goto bad;
	p.pc = strtoull(end + 1, &end, 16);
	if (*end != ':')
		goto bad;
	for (s = end + 1; *s && *s != ':'; s += 2) {
		int hi = hexval(s[0]), lo = s[1] ? hexval(s[1]) : -1;
		if (hi < 0 || lo < 0 || p.j.len == VG_USDT_JUMP_MAX_BYTES)
			goto bad;
		p.j.orig[p.j.len++] = (uint8_t)(hi << 4 | lo);
	}
	if (*s != ':' || p.j.len < 5)
		goto bad;
	unsigned total = 0;
	for (s++; *s;) {
		unsigned k = p.j.ninsns;
		if (k == VG_USDT_JUMP_MAX_INSNS)
			goto bad;
		unsigned long len = strtoul(s, &end, 10);
		if (!len || len > 15 || !*end)
			goto bad;
		p.j.insn_len[k] = (uint8_t)len;
		p.j.insn_kind[k] = *end++;
		if (strchr("rk", p.j.insn_kind[k])) {
			unsigned long a = strtoul(end, &end, 10);
			if (a >= len + (p.j.insn_kind[k] == 'k' ? 16u : 0u))
				goto bad;
			p.j.insn_arg[k] = (uint8_t)a;
			if (p.j.insn_kind[k] == 'k' && *end++ != '/')
				goto bad;
		}
		if (strchr("jkl", p.j.insn_kind[k]))
			p.j.insn_target[k] = strtoll(end, &end, 10);
		else if (!strchr("cr", p.j.insn_kind[k]))
			goto bad;
		if (p.j.insn_kind[k] == 'r' && p.j.insn_arg[k] + 4ul > len)
			goto bad;
		total += (unsigned)len;
		p.j.ninsns++;
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		s = end;
	}
	/* the nop first, whole instructions covering exactly the bytes, a call only last */
	if (total != p.j.len || p.j.insn_len[0] != 1 || p.j.insn_kind[0] != 'c' ||
	    p.j.orig[0] != VG_USDT_NOP)
		goto bad;
	for (unsigned k = 0; k + 1 < p.j.ninsns; k++)
		if (p.j.insn_kind[k] == 'l')
			goto bad;
	if (nplans == plans_cap) {
		size_t cap = plans_cap ? 2 * plans_cap : 64;
		struct plan *m = realloc(plans, cap * sizeof *m);
		if (!m) {
			snprintf(err, errsize, "usdt plan: out of memory");
			return -1;
		}
		plans = m, plans_cap = cap;
	}
	plans[nplans++] = p;
	vg__usdt_planned(p.dev, p.ino);
	return 0;
bad:
	snprintf(err, errsize, "usdt plan '%.80s': malformed", text);
	return -1;
}

/* ---- trampolines ---- */

/* 256-byte slots in pages within reach of a rel32 jump from their sites; a page's first
 * slot holds the address of the common entry (the slots call it through that). */
#define SLOT 256
#define MAX_PAGES 256
static struct {
	uint8_t *page;
	unsigned used;
} pages[MAX_PAGES];
static size_t npages;

void vg__usdt_tramp_entry(void); /* usdt_tramp.c */

static int reach32(uintptr_t from_end, uintptr_t to)
{
	int64_t d = (int64_t)(to - from_end);
	return d == (int32_t)d;
}

static uint8_t *slot_near(uintptr_t site)
{
	long pagesize = sysconf(_SC_PAGESIZE);
	unsigned per_page = (unsigned)(pagesize / SLOT);
	for (size_t i = 0; i < npages; i++)
		if (pages[i].used < per_page && reach32(site, (uintptr_t)pages[i].page) &&
		    reach32(site, (uintptr_t)pages[i].page + (uintptr_t)pagesize))
			return pages[i].page + SLOT * pages[i].used++;
	if (npages == MAX_PAGES)
		return NULL;
	/* a free page within ±1.5 GiB of the site, tried outwards in 64 MiB steps */
	for (int64_t step = 1; step <= 24; step++)
		for (int sign = -1; sign <= 1; sign += 2) {
			uintptr_t want =
			    (site & ~(uintptr_t)0xFFFFF) + (uintptr_t)(sign * (step << 26));
			void *m = mmap((void *)want, (size_t)pagesize, PROT_READ | PROT_WRITE,
			               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (m == MAP_FAILED)
				continue;
			if (m != (void *)want) { /* an old kernel ignoring the flag */
				munmap(m, (size_t)pagesize);
				continue;
			}
			void (*entry)(void) = vg__usdt_tramp_entry;
			memcpy(m, &entry, sizeof entry);
			memset((uint8_t *)m + sizeof entry, VG_USDT_INT3, SLOT - sizeof entry);
			mprotect(m, (size_t)pagesize, PROT_READ | PROT_EXEC);
			pages[npages].page = m;
			pages[npages++].used = 2; /* slot 0 holds the entry's address */
			return (uint8_t *)m + SLOT;
		}
	return NULL;
}

/* ---- control-flow enforcement (CET, docs/usdt.md "IBT and shadow stacks") ---- */

/* Does this process run with a shadow stack (CET's SHSTK, which the kernel enables per
 * process on request of the loader)? VIGIL_USDT_ASSUME_SHSTK=1 says yes, for testing the
 * refusals on a machine without shadow stacks. */
static int shadow_stack_on(void)
{
	static int on = -1;
	if (on < 0) {
		unsigned long features = 0;
		const char *assume = getenv("VIGIL_USDT_ASSUME_SHSTK");
		/* ARCH_SHSTK_STATUS (0x5005), bit 0: ARCH_SHSTK_SHSTK; EINVAL before Linux 6.6 */
		on = (assume && !strcmp(assume, "1")) ||
		     (syscall(SYS_arch_prctl, 0x5005, &features) == 0 && (features & 1));
	}
	return on;
}

/* Does the code at `to` begin with endbr64, i.e. may an indirect branch land there? */
static int lands_endbr(uintptr_t to)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	return memcmp((const void *)to, endbr64, sizeof endbr64) == 0;
}

/* jmp to `to` from `at`: e9 rel32, or ff 25 0 + the absolute address, which only a target
 * beginning with endbr64 may receive (an indirect jump elsewhere faults under IBT; the
 * page is within reach of its site, so only a far target of a displaced jump is so).
 * Its length, or 0: out of reach. */
static size_t emit_jmp(uint8_t *at, uintptr_t at_addr, uintptr_t to)
{
	if (reach32(at_addr + 5, to)) {
		int32_t d = (int32_t)(to - (at_addr + 5));
		at[0] = 0xe9;
		memcpy(at + 1, &d, 4);
		return 5;
	}
	if (!lands_endbr(to))
		return 0;
	static const uint8_t ind[] = {0xff, 0x25, 0, 0, 0, 0};
	memcpy(at, ind, sizeof ind);
	memcpy(at + sizeof ind, &to, 8);
	return sizeof ind + 8;
}

/* The trampoline of site s into buf (whose run-time address is at): the call of the
 * common entry with the site in rax (below the red zone, flags untouched), the displaced
 * instructions relocated, the jump back. Its length, or 0 with why. */
static size_t emit_tramp(const struct vg_usdt_site *s, struct vg_usdt_jump *j, uint8_t *buf,
                         uintptr_t at, uintptr_t entry_ptr, char *why, size_t whysize)
{
	uintptr_t site = atomic_load(&s->addr);
	size_t n = 0, step;
	static const uint8_t below_red_zone[] = {0x48, 0x8d, 0x64, 0x24, 0x80}; /* lea -128(%rsp) */
	memcpy(buf + n, below_red_zone, 5), n += 5;
	buf[n++] = 0x50;                  /* push %rax */
	buf[n++] = 0x48, buf[n++] = 0xb8; /* movabs $site, %rax */
	const struct vg_usdt_site *sp = s;
	memcpy(buf + n, &sp, 8), n += 8;
	buf[n++] = 0xff, buf[n++] = 0x15; /* call *entry_ptr(%rip) */
	int32_t d = (int32_t)(entry_ptr - (at + n + 4));
	memcpy(buf + n, &d, 4), n += 4;
	buf[n++] = 0x58;                                                       /* pop %rax */
	static const uint8_t back[] = {0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0}; /* lea 128(%rsp) */
	memcpy(buf + n, back, sizeof back), n += sizeof back;
	j->resume = (uint8_t *)(at + n);
	size_t off = 0;
	for (unsigned k = 0; k < j->ninsns; off += j->insn_len[k++]) {
		j->tramp_off[k] = (uint8_t)n;
		const uint8_t *insn = j->orig + off;
		uintptr_t orig_end = site + off + j->insn_len[k];
		uintptr_t target = site + (uintptr_t)j->insn_target[k];
		if (n + 32 > SLOT) {
			snprintf(why, whysize,
			         "its displaced instructions do not fit a trampoline");
			return 0;
		}
		switch (j->insn_kind[k]) {
		case 'c':
			if (k == 0)
				break; /* the nop */
			memcpy(buf + n, insn, j->insn_len[k]), n += j->insn_len[k];
			break;
		case 'r': { /* rip-relative: the same address from the new place */
			memcpy(buf + n, insn, j->insn_len[k]);
			int32_t disp;
			memcpy(&disp, insn + j->insn_arg[k], 4);
			int64_t nd =
			    (int64_t)disp + (int64_t)(orig_end - (at + n + j->insn_len[k]));
			if (nd != (int32_t)nd) {
				snprintf(why, whysize,
				         "a rip-relative operand is out of the "
				         "trampoline's reach");
				return 0;
			}
			disp = (int32_t)nd;
			memcpy(buf + n + j->insn_arg[k], &disp, 4);
			n += j->insn_len[k];
			break;
		}
		case 'k': /* jcc: rel32, or the inverse condition over an absolute jmp */
			if (reach32(at + n + 6, target)) {
				int32_t r = (int32_t)(target - (at + n + 6));
				buf[n] = 0x0f, buf[n + 1] = (uint8_t)(0x80 | j->insn_arg[k]);
				memcpy(buf + n + 2, &r, 4), n += 6;
			} else {
				buf[n] = (uint8_t)(0x70 | (j->insn_arg[k] ^ 1)), buf[n + 1] = 14,
				n += 2;
				if (!(step = emit_jmp(buf + n, at + n, target)))
					goto far;
				n += step;
			}
			break;
		case 'l': { /* call (last): the return address pushed is the original one */
			if (shadow_stack_on()) { /* the callee's ret would not match it */
				snprintf(why, whysize,
				         "a displaced call would return through a pushed address, "
				         "which the shadow stack refuses");
				return 0;
			}
			uintptr_t ret = orig_end;
			uint32_t lo = (uint32_t)ret, hi = (uint32_t)(ret >> 32);
			static const uint8_t down8[] = {0x48, 0x8d, 0x64, 0x24, 0xf8};
			memcpy(buf + n, down8, 5), n += 5;
			buf[n++] = 0xc7, buf[n++] = 0x04, buf[n++] = 0x24; /* movl $lo,(%rsp) */
			memcpy(buf + n, &lo, 4), n += 4;
			buf[n++] = 0xc7, buf[n++] = 0x44, buf[n++] = 0x24, buf[n++] = 4;
			memcpy(buf + n, &hi, 4), n += 4;
			if (!(step = emit_jmp(buf + n, at + n, target))) /* then to the callee */
				goto far;
			n += step;
			break;
		}
		case 'j':
			if (!(step = emit_jmp(buf + n, at + n, target)))
				goto far;
			n += step;
			break;
		}
	}
	if (!(step = emit_jmp(buf + n, at + n, site + j->len)))
		goto far;
	return n + step;
far:
	snprintf(why, whysize,
	         "a displaced jump's target is beyond a direct jump's reach from the trampoline "
	         "and is no endbr64 (an indirect jump there faults under IBT)");
	return 0;
}

/* ---- the sweep: every other thread runs the int3 handler once ---- */

static struct vg_usdt_site **sweeping;
static size_t nsweeping;
/* the threads signalled, and which of them answered (set by their handler) */
static pid_t *sweep_tids;
static _Atomic uint8_t *sweep_acked;
static size_t nsweep_tids;

/* In each thread, from the sweep's signal: moves the thread out of the displaced bytes of
 * the sites being converted (to the same instruction in the trampoline), answers. */
static void vg__usdt_sweep_here(void *ucontext)
{
	greg_t *g = ((ucontext_t *)ucontext)->uc_mcontext.gregs;
	uintptr_t rip = (uintptr_t)g[REG_RIP];
	for (size_t i = 0; i < nsweeping; i++) {
		struct vg_usdt_site *s = sweeping[i];
		uintptr_t site = atomic_load(&s->addr);
		if (rip <= site || rip >= site + s->jump->len)
			continue;
		size_t off = 0;
		for (unsigned k = 0; k < s->jump->ninsns; off += s->jump->insn_len[k++])
			if (rip == site + off)
				g[REG_RIP] = (greg_t)(s->jump->tramp + s->jump->tramp_off[k]);
	}
	pid_t self = (pid_t)syscall(SYS_gettid);
	for (size_t i = 0; i < nsweep_tids; i++)
		if (sweep_tids[i] == self)
			atomic_store(&sweep_acked[i], 1);
}

/* Is the sweep's signal blocked in the thread tid, and is it one of vigil's own (named vigil-*)?
 * -1: the thread is gone. */
static int thread_state(pid_t tid, int *blocked, int *ours)
{
	char path[64], buf[4096];
	*blocked = *ours = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*ours = !strncmp(buf, "Name:\tvigil-", 12);
	const char *b = strstr(buf, "\nSigBlk:\t");
	if (b)
		*blocked = (strtoull(b + 9, NULL, 16) >> (sweep_sig - 1)) & 1;
	return 0;
}

static void on_sweep(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	int saved = errno;
	if (si && si->si_code == SI_QUEUE && si->si_value.sival_ptr == &vg__usdt_sweep_tag)
		vg__usdt_sweep_here(ctx);
	errno = saved;
}

static int sweep_signal_take(void)
{
	struct sigaction cur;
	if (sweep_sig && sigaction(sweep_sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_sweep)
		return sweep_sig; /* still ours */
	for (int sig = SIGRTMAX; sig > SIGRTMIN + 4; sig--) {
		if (sigaction(sig, NULL, &cur) < 0 || (cur.sa_flags & SA_SIGINFO) ||
		    cur.sa_handler != SIG_DFL)
			continue;
		struct sigaction ours = {.sa_sigaction = on_sweep,
		                         .sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK};
		sigemptyset(&ours.sa_mask);
		if (sigaction(sig, &ours, NULL) == 0)
			return sweep_sig = sig;
	}
	return -1;
}

static int signal_thread(pid_t pid, pid_t tid)
{
	siginfo_t si = {.si_signo = sweep_sig, .si_code = SI_QUEUE};
	si.si_pid = pid;
	si.si_uid = getuid();
	si.si_value.sival_ptr = &vg__usdt_sweep_tag;
	return (int)syscall(SYS_rt_tgsigqueueinfo, pid, tid, sweep_sig, &si);
}

static int sweep_threads(struct vg_usdt_site **sites, size_t n, int strict, char *why,
                         size_t whysize)
{
	DIR *d = opendir("/proc/self/task");
	if (!d) {
		snprintf(why, whysize, "cannot list the threads: %s", strerror(errno));
		return -1;
	}
	size_t cap = 0, nt = 0;
	pid_t *tids = NULL;
	pid_t self = (pid_t)syscall(SYS_gettid), pid = getpid();
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		int blocked, ours;
		if (tid <= 0 || tid == self || thread_state(tid, &blocked, &ours) < 0)
			continue;
		/* A thread blocks every signal for a moment at times (a new one until its
		 * start has set its mask, one inside fork or a handler): looked at again for
		 * up to 50 ms before the sweep is given up for it. */
		struct timespec ms = {0, 1000000};
		for (int again = 0; strict && blocked && !ours && again < 50; again++) {
			nanosleep(&ms, NULL);
			if (thread_state(tid, &blocked, &ours) < 0)
				break; /* gone: blocked is 0, its signal then finds no thread */
		}
		if (blocked) {
			if (strict && !ours) {
				snprintf(why, whysize, "thread %d blocks the sweep's signal (%d)",
				         (int)tid, sweep_sig);
				rc = -1;
				break;
			}
			continue;
		}
		if (nt == cap) {
			pid_t *m = realloc(tids, (cap = cap ? 2 * cap : 64) * sizeof *m);
			if (!m) {
				snprintf(why, whysize, "out of memory");
				rc = -1;
				break;
			}
			tids = m;
		}
		tids[nt++] = tid;
	}
	closedir(d);
	_Atomic uint8_t *acked = rc == 0 && nt ? calloc(nt, sizeof *acked) : NULL;
	if (rc == 0 && nt && !acked) {
		snprintf(why, whysize, "out of memory");
		rc = -1;
	}
	if (rc == 0 && nt) {
		sweeping = sites, nsweeping = n;
		sweep_tids = tids, sweep_acked = acked, nsweep_tids = nt;
		struct timespec t0, now, nap = {0, 20000};
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (size_t i = 0; i < nt; i++) /* real-time signals queue: sent once */
			if (signal_thread(pid, tids[i]) < 0)
				atomic_store(&acked[i], 1); /* it has exited */
		for (;;) {
			size_t silent = 0;
			for (size_t i = 0; i < nt; i++)
				if (!atomic_load(&acked[i]) &&
				    !(syscall(SYS_tgkill, pid, tids[i], 0) < 0 && errno == ESRCH))
					silent++; /* neither answered nor exited */
			if (!silent)
				break;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec > 2) {
				snprintf(why, whysize,
				         "%zu of %zu threads did not answer the sweep", silent, nt);
				rc = strict ? -1 : 0;
				break;
			}
			nanosleep(&nap, NULL);
		}
		/* a late answer may still come: it finds no tid of its own in an empty list */
		nsweep_tids = 0;
		sweep_tids = NULL, sweep_acked = NULL;
		sweeping = NULL, nsweeping = 0;
	}
	free((void *)acked);
	free(tids);
	return rc;
}

/* Signals every other thread (the sweep's signal, queued with our tag) and waits until
 * each has run vg__usdt_sweep_here, whose return from the signal serialises it (2 s at
 * most; a thread that exits meanwhile is not waited for). strict: a thread that
 * cannot take the signal (blocked, not vigil's) or does not answer fails the sweep; else
 * it is passed over. 0, or -1 with why. */
static int sweep(struct vg_usdt_site **sites, size_t n, int strict, char *why, size_t whysize)
{
	if (sweep_signal_take() < 0) {
		snprintf(why, whysize, "no real-time signal is free for the sweep");
		return -1;
	}
	return sweep_threads(sites, n, strict, why, whysize);
}
/* ---- converting ---- */

static int wait_handlers_out(struct vg_usdt_site *s)
{
	struct timespec t0, now, nap = {0, 20000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load(&s->in_flight)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 2)
			return -1;
		nanosleep(&nap, NULL);
	}
	return 0;
}

static int write_tramp(struct vg_usdt_site *s, char *why, size_t whysize)
{
	struct vg_usdt_jump *j = s->jump;
	if (j->tramp)
		return 0;
	uintptr_t site = atomic_load(&s->addr);
	uint8_t *slot = slot_near(site);
	if (!slot) {
		snprintf(why, whysize, "no trampoline space within reach of the site");
		return -1;
	}
	long pagesize = sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(pagesize - 1);
	uint8_t buf[SLOT];
	memset(buf, VG_USDT_INT3, sizeof buf);
	size_t n = emit_tramp(s, j, buf, (uintptr_t)slot, page, why, whysize);
	if (!n || vg__usdt_code_write(slot, buf, n, PROT_READ | PROT_EXEC, why, whysize))
		return -1;
	j->tramp = slot;
	return 0;
}

long vg__usdt_jump_convert(struct vg_usdt_site **sites, size_t n, char *err, size_t errsize)
{
	static int cpu_ok = -1;
	if (cpu_ok < 0)
		cpu_ok = vg__usdt_tramp_init();
	if (!cpu_ok) {
		snprintf(err, errsize, "this processor has no XSAVE (the jump path needs it)");
		return 0;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) { /* trampolines first; failures stay on int3 */
		char why[200];
		if (write_tramp(sites[i], why, sizeof why) == 0)
			sites[k++] = sites[i];
		else
			snprintf(err, errsize, "%s", why);
	}
	n = k;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		atomic_store(&sites[i]->path, VG_USDT_PATH_CONVERTING);
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (wait_handlers_out(sites[i]) == 0)
			sites[k++] = sites[i];
	n = k; /* a site left CONVERTING still works: its int3 resumes in the trampoline */
	if (sweep(sites, n, 1, err, errsize) < 0) {
		for (size_t i = 0; i < n; i++)
			atomic_store(&sites[i]->path, VG_USDT_PATH_INT3);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct vg_usdt_site *s = sites[i];
		uintptr_t site = atomic_load(&s->addr);
		uint8_t tail[VG_USDT_JUMP_MAX_BYTES];
		int32_t rel = (int32_t)((uintptr_t)s->jump->tramp - (site + 5));
		memcpy(tail, &rel, 4);
		memset(tail + 4, VG_USDT_INT3, sizeof tail - 4);
		char why[200];
		if (vg__usdt_code_write((uint8_t *)site + 1, tail, s->jump->len - 1u,
		                        PROT_READ | PROT_EXEC, why, sizeof why))
			snprintf(err, errsize, "%s",
			         why); /* int3 stays; it resumes in the trampoline */
	}
	char why[200];
	sweep(sites, n, 0, why, sizeof why); /* the tails seen before the jmp */
	long converted = 0;
	for (size_t i = 0; i < n; i++) {
		struct vg_usdt_site *s = sites[i];
		uint8_t *site = (uint8_t *)atomic_load(&s->addr);
		if (memcmp(site + 1,
		           &(int32_t){(int32_t)((uintptr_t)s->jump->tramp - ((uintptr_t)site + 5))},
		           4))
			continue;
		uint8_t jmp = VG_USDT_JMP;
		if (vg__usdt_code_write(site, &jmp, 1, PROT_READ | PROT_EXEC, why, sizeof why) ==
		    0) {
			atomic_store(&s->path, VG_USDT_PATH_JUMP);
			converted++;
		}
	}
	return converted;
}

int vg__usdt_jump_revert(struct vg_usdt_site *s, char *err, size_t errsize)
{
	uint8_t *site = (uint8_t *)atomic_load(&s->addr);
	uint8_t int3 = VG_USDT_INT3;
	if (atomic_load(&s->path) == VG_USDT_PATH_JUMP &&
	    vg__usdt_code_write(site, &int3, 1, PROT_READ | PROT_EXEC, err, errsize))
		return -1;
	atomic_store(&s->path, VG_USDT_PATH_CONVERTING); /* its int3 resumes in the trampoline */
	char why[200];
	sweep(&s, 1, 0, why, sizeof why);
	if (vg__usdt_code_write(site + 1, s->jump->orig + 1, s->jump->len - 1u,
	                        PROT_READ | PROT_EXEC, err, errsize))
		return -1;
	sweep(&s, 1, 0, why, sizeof why);
	atomic_store(&s->path, VG_USDT_PATH_INT3);
	return 0;
}
