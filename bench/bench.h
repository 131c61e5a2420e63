/* bench: the driver shared by the vigil and LTTng-UST benchmark programs.
 *
 * Each program supplies the four hooks below; the driver parses the command line, pins
 * the threads, times the loop with CLOCK_MONOTONIC and prints one JSON line on stdout.
 * The loop of events lives in each program (bench_loop), so that the tracer's inline
 * fast path is compiled into it exactly as in a subject program.
 */
#ifndef VIGIL_BENCH_BENCH_H
#define VIGIL_BENCH_BENCH_H

#include <stdint.h>

enum bench_mode {
	BENCH_ENABLED,  /* the event is recorded */
	BENCH_DISABLED, /* the event's sensor/tracepoint is off */
	BENCH_BASELINE, /* the same loop with no instrumentation at all */
};

/* The tool's name in the output ("vigil", "lttng-ust"). */
extern const char *const bench_tool;

/* Prepares the tool for `mode` before any thread starts. Returns 0, or -1 after one
 * line on stderr (e.g. enabled mode asked but the sensor is off). */
int bench_setup(enum bench_mode mode);

/* Writes `n` events with fields (i, tag) for i in 0..n-1. Not inlined, so that callgrind
 * can count it alone (--toggle-collect=bench_loop). */
void bench_loop(uint64_t n, uint64_t tag);

/* Events the tool itself knows it dropped in this process (-1: it cannot tell). */
int64_t bench_discarded(void);

/* The loop with no instrumentation, shared by both programs. */
void bench_loop_baseline(uint64_t n, uint64_t tag);

/* Keeps a value alive without emitting any instruction. */
#define BENCH_KEEP(x) __asm__ __volatile__("" : : "r"(x))

#endif
