/* The trace clock and its hand-off: nanoseconds of CLOCK_MONOTONIC, read through the TSC
 * when the TSC is invariant and the kernel itself trusts it (rdtsc costs ~10 ns here,
 * clock_gettime ~24).
 *
 * The TSC-to-ns mapping is calibrated once per recording: `vigil record` calibrates and
 * passes the mapping to every process of the subject in VIGIL_CLOCK, so that all of
 * them convert identically and their streams merge exactly. One copy for both ends:
 * compiled into libvigil (hidden, but for vg__clock and vg__clock_fallback, which the
 * inline vg_now of vigil.h reads) and linked into vigil from vigil_wire. libc only.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vigil/vigil.h"
#include "wire/clock.h"
#include "wire/small_file.h"

struct vg_clock vg__clock;
static int64_t realtime_offset_ns;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t vg__clock_fallback(void)
{
	return mono_ns();
}

int64_t vgw_clock_realtime_offset_ns(void)
{
	return realtime_offset_ns;
}

#if defined(__x86_64__)
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static int tsc_is_invariant(void)
{
	uint32_t a, b, c, d;
	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u));
	if (a < 0x80000007u)
		return 0;
	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u));
	if (!(d & (1u << 8)))
		return 0;
	/* The kernel may have found the TSC unstable (e.g. across sockets): then so do we. */
	char src[64];
	if (vgw_read_small_file("/sys/devices/system/clocksource/clocksource0/current_clocksource",
	                        src, sizeof src) > 0)
		return strncmp(src, "tsc", 3) == 0;
	return 1;
}

/* One (tsc, ns) pair, taken where the two TSC reads around clock_gettime are closest. */
static void sample_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 32; i++) {
		uint64_t t0 = rdtsc(), n = mono_ns(), t1 = rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}

static int calibrate_tsc(void)
{
	uint64_t tsc0 = 0, ns0 = 0, tsc1 = 0,
	         ns1 = 0; /* a sample never taken fails the check below */
	sample_pair(&tsc0, &ns0);
	struct timespec pause = {0, 20 * 1000 * 1000}; /* 20 ms: error ~ 1e-6 */
	nanosleep(&pause, NULL);
	sample_pair(&tsc1, &ns1);
	if (tsc1 <= tsc0 || ns1 <= ns0)
		return -1;
	vg__clock.mult = (uint64_t)(((unsigned __int128)(ns1 - ns0) << 32) / (tsc1 - tsc0));
	vg__clock.base_tsc = tsc1;
	vg__clock.base_ns = ns1;
	return 0;
}
#endif

static void measure_realtime_offset(void)
{
	struct timespec r, m;
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	realtime_offset_ns = ((int64_t)r.tv_sec - (int64_t)m.tv_sec) * 1000000000 +
	                     ((int64_t)r.tv_nsec - (int64_t)m.tv_nsec);
}

void vgw_clock_init(void)
{
	measure_realtime_offset();
	vg__clock.use_tsc = 0;
#if defined(__x86_64__)
	if (tsc_is_invariant() && calibrate_tsc() == 0)
		vg__clock.use_tsc = 1;
#endif
}

/* Text form: "tsc,MULT,BASE_TSC,BASE_NS,REALTIME_OFFSET" or "mono,0,0,0,REALTIME_OFFSET". */
int vgw_clock_export(char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64,
	                 vg__clock.use_tsc ? "tsc" : "mono", vg__clock.mult, vg__clock.base_tsc,
	                 vg__clock.base_ns, realtime_offset_ns);
	return n > 0 && (size_t)n < len ? 0 : -1;
}

int vgw_clock_import(const char *text)
{
	char kind[8];
	uint64_t mult, base_tsc, base_ns;
	int64_t offset;
	int used = 0;
	if (sscanf(text, "%7[a-z],%" SCNu64 ",%" SCNu64 ",%" SCNu64 ",%" SCNd64 "%n", kind, &mult,
	           &base_tsc, &base_ns, &offset, &used) != 5 ||
	    text[used] != 0)
		return -1;
	if (!strcmp(kind, "mono")) {
		vg__clock.use_tsc = 0;
	} else if (!strcmp(kind, "tsc")) {
#if defined(__x86_64__)
		/* A mapping from another machine (or a bogus one) must not be trusted. */
		if (mult == 0 || mult > (20ull << 32) || !tsc_is_invariant())
			return -1;
		vg__clock.use_tsc = 1;
		vg__clock.mult = mult;
		vg__clock.base_tsc = base_tsc;
		vg__clock.base_ns = base_ns;
		uint64_t a = vg_now(), b = mono_ns();
		if ((a > b ? a - b : b - a) > 1000000) { /* stale: another boot or host */
			vg__clock.use_tsc = 0;
			return -1;
		}
#else
		return -1;
#endif
	} else {
		return -1;
	}
	realtime_offset_ns = offset;
	return 0;
}
