/* A program with SDT probes (systemtap-sdt-dev's <sys/sdt.h>) covering the operand
 * forms compilers emit: registers of each size, stack and heap memory with offsets,
 * constants, rip-relative globals (at -O0 and -O2, gcc and clang), negative values, and
 * 1/2/4/8-byte signed and unsigned arguments; plus probes written in assembly for the
 * forms compilers rarely pick (sub-registers %ah/%r9d/%r10w/%r11b, base + index *
 * scale). tests/usdt/usdt_test.py builds it several ways and compares each event vigil
 * records with the line this program prints for it: "provider.probe v1 v2 ...".
 *
 * vt:joined's nop is followed by a branch target (a jump over the probe lands right after
 * it), so vigil keeps that site on the int3 path (docs/usdt.md, "The jump path").
 *
 * usage: sdt_subject [N] [--trap]   (--trap: also raise SIGTRAP handled by its own
 * handler, which must still run while vigil's is installed). SDT_PACE_US=U: sleep U µs
 * per round; SIGUSR1 ends the loop (run-time switching tests). SDT_HOT=K: K more threads
 * run vt:hot as fast as they can (arg1: the thread's number, arg2: its count, rising by
 * one) while sites are switched; each prints "vt.hot K COUNT" at the end. SDT_MASKER: one
 * more thread blocks every signal for 4 ms at a time, 1 ms apart (vigil's sweep finds a
 * thread blocking its signal for a moment, as a new thread does). SDT_LOG: a
 * log line per round on stderr (a recording with log models and probe events). */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* Every probe has a semaphore (sys/sdt.h then names PROVIDER_PROBE_semaphore in each
 * note); vt:sema's guards its own site, as PostgreSQL's TRACE_..._ENABLED() do. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#define SEMA(name) unsigned short vt_##name##_semaphore __attribute__((section(".probes")))
SEMA(ints);
SEMA(fields);
SEMA(regs);
SEMA(consts);
SEMA(globals);
SEMA(sema);
SEMA(statics);
SEMA(work__start);
SEMA(work__done);
SEMA(joined);
SEMA(hot);

struct rec {
	int32_t a;
	int64_t b;
	uint16_t c;
	int8_t d;
};

int32_t g_i32 = -7;
uint64_t g_u64 = 1;
static int16_t s_count; /* a static: its symbol is local */
struct rec g_recs[4];
int64_t g_table[8];
static volatile sig_atomic_t traps, stop;

static void on_usr1(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_trap(int sig)
{
	(void)sig;
	traps++;
}

/* A probe in a function that is not inlined, arguments in the caller's registers. */
__attribute__((noinline)) static void ints(int i)
{
	int8_t a8 = (int8_t)(-i - 1);
	uint8_t b8 = (uint8_t)(200 + i);
	int16_t a16 = (int16_t)(-1000 * i - 1);
	uint16_t b16 = (uint16_t)(60000 + i);
	int32_t a32 = -100000 * i - 7;
	uint32_t b32 = 3000000000u + (uint32_t)i;
	int64_t a64 = -(int64_t)i * 10000000000 - 3;
	uint64_t b64 = 0xF000000000000000ull + (uint64_t)i;
	DTRACE_PROBE8(vt, ints, a8, b8, a16, b16, a32, b32, a64, b64);
	printf("vt.ints %d %u %d %u %" PRId32 " %" PRIu32 " %" PRId64 " %" PRIu64 "\n", a8, b8, a16,
	       b16, a32, b32, a64, b64);
}

__attribute__((noinline)) static void fields(struct rec *r)
{
	DTRACE_PROBE4(vt, fields, r->a, r->b, r->c, r->d);
	printf("vt.fields %" PRId32 " %" PRId64 " %u %d\n", r->a, r->b, r->c, r->d);
}

/* Globals read where they live: at -O2 the operands are rip-relative symbols
 * ("-4@g_i32(%rip)", "8@g_recs+32(%rip)"), which a stripped copy no longer resolves. */
__attribute__((noinline)) static void statics(void)
{
	DTRACE_PROBE4(vt, statics, g_i32, s_count, g_recs[2].b, g_u64);
	printf("vt.statics %" PRId32 " %d %" PRId64 " %" PRIu64 "\n", g_i32, s_count, g_recs[2].b,
	       g_u64);
}

/* A start/done pair, nested three deep: vigil makes the interval relation vt.work of
 * them, each done closing the same thread's innermost open start. */
__attribute__((noinline)) static long work(int level)
{
	DTRACE_PROBE1(vt, work__start, level);
	printf("vt.work__start %d\n", level);
	long r = level < 2 ? work(level + 1) + level : level;
	DTRACE_PROBE2(vt, work__done, level, r);
	printf("vt.work__done %d %ld\n", level, r);
	return r;
}

/* Hand-written operands: %rax's parts, r9d/r10w/r11b, base + index * scale, a negative
 * displacement from a base register. */
__attribute__((noinline)) static void regs(uint64_t x, int64_t *table, long k)
{
	/* clang-format off: the probe's arguments are stringized token by token */
	// clang-format off
	__asm__ __volatile__("movq %0, %%rax\n\t"
	                     "movq %0, %%r9\n\t"
	                     "movq %0, %%r10\n\t"
	                     "movq %0, %%r11\n\t"
	                     "movq %1, %%rdx\n\t"
	                     "movq %2, %%rcx\n\t"
	                     "leaq 16(%%rdx), %%rsi\n\t"
	                     STAP_PROBE_ASM(vt, regs, 8@%%rax -4@%%eax -2@%%ax 1@%%ah 1@%%al -4@%%r9d 2@%%r10w -1@%%r11b -8@(%%rdx,%%rcx,8) -8@-16(%%rsi))
	                     :
	                     : "r"(x), "r"(table), "r"(k)
	                     : "rax", "rcx", "rdx", "rsi", "r9", "r10", "r11", "memory");
	// clang-format on
	uint64_t ah = (x >> 8) & 0xff;
	printf("vt.regs %" PRIu64 " %" PRId32 " %d %" PRIu64 " %u %" PRId32 " %u %d %" PRId64
	       " %" PRId64 "\n",
	       x, (int32_t)x, (int16_t)x, ah, (unsigned)(uint8_t)x, (int32_t)x,
	       (unsigned)(uint16_t)x, (int8_t)x, table[k], table[0]);
}

/* A branch over the probe lands on the byte after its nop. */
__attribute__((noinline)) static int joined(int v)
{
	int out;
	// clang-format off
	__asm__ __volatile__("movl %1, %%eax\n\t"
	                     "testl %%eax, %%eax\n\t"
	                     "js 1f\n\t"
	                     STAP_PROBE_ASM(vt, joined, -4@%%eax)
	                     "1:\n\t"
	                     "leal 1(%%rax), %0\n\t"
	                     "leal -1(%0), %0\n\t"
	                     : "=r"(out)
	                     : "r"(v)
	                     : "rax", "cc");
	// clang-format on
	printf("vt.joined %d\n", out);
	return out;
}

static void *hot(void *arg)
{
	long k = (long)arg;
	uint64_t count = 0;
	while (!stop) {
		DTRACE_PROBE2(vt, hot, k, count);
		count++;
		for (volatile int spin = 0; spin < 20000; spin++) /* fewer events to read back */
			;
	}
	printf("vt.hot %ld %" PRIu64 "\n", k, count);
	return NULL;
}

static void *masker(void *arg)
{
	(void)arg;
	sigset_t all, none;
	sigfillset(&all);
	sigemptyset(&none);
	struct timespec held = {0, 4000000}, apart = {0, 1000000};
	while (!stop) {
		pthread_sigmask(SIG_SETMASK, &all, NULL);
		nanosleep(&held, NULL);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
		nanosleep(&apart, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int trap = argc > 2 && !strcmp(argv[2], "--trap");
	if (trap)
		signal(SIGTRAP, on_trap);
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *pace = getenv("SDT_PACE_US");
	struct timespec nap = {0, pace ? atol(pace) * 1000 : 0};
	signal(SIGUSR1, on_usr1);
	int log_rounds = getenv("SDT_LOG") != NULL;
	const char *hot_env = getenv("SDT_HOT");
	long nhot = hot_env ? atol(hot_env) : 0;
	pthread_t hots[8];
	for (long k = 0; k < nhot && k < 8; k++)
		pthread_create(&hots[k], NULL, hot, (void *)k);
	pthread_t mask_thread;
	int masking = getenv("SDT_MASKER") && !pthread_create(&mask_thread, NULL, masker, NULL);
	for (int i = 0; i < n && !stop; i++) {
		if (pace)
			nanosleep(&nap, NULL);
		ints(i);
		DTRACE_PROBE3(vt, consts, 42, -42, -1);
		printf("vt.consts 42 -42 -1\n");
		g_i32 = -100 * i - 5;
		g_u64 = 0x8000000000000000ull | (uint64_t)i;
		s_count = (int16_t)(-i);
		DTRACE_PROBE3(vt, globals, g_i32, g_u64, s_count);
		printf("vt.globals %" PRId32 " %" PRIu64 " %d\n", g_i32, g_u64, s_count);
		struct rec *r = &g_recs[i & 3];
		r->a = -i * 3 - 1;
		r->b = (int64_t)i * -7000000000;
		r->c = (uint16_t)(65535 - i);
		r->d = (int8_t)(-128 + i);
		fields(r);
		statics();
		work(0);
		for (int k = 0; k < 8; k++)
			g_table[k] = -(int64_t)(i + 1) * 1000 - k;
		regs(0x8123456789ab8cdeull + (uint64_t)i * 0x10101, g_table, (i % 7) + 1);
		if (vt_sema_semaphore) { /* only while a tool has armed vt:sema */
			DTRACE_PROBE1(vt, sema, i);
			printf("vt.sema %d\n", i);
		}
		joined(i);
		if (log_rounds) /* a log statement: vigil record counts it into a log model */
			fprintf(stderr, "LOG:  round %d done\n", i);
		if (trap)
			raise(SIGTRAP);
	}
	stop = 1;
	for (long k = 0; k < nhot && k < 8; k++)
		pthread_join(hots[k], NULL);
	if (masking)
		pthread_join(mask_thread, NULL);
	if (trap)
		printf("traps %d\n", (int)traps);
	return 0;
}
