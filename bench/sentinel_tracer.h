/* bench/sentinel_tracer.h: the peer of log capture in logcap-bench, an in-memory tracer
 * built as Sentinel's is described (Glasbergen et al., PVLDB 13(11) 2020, sections 2.2
 * and 3): each thread keeps its own event table, a hash map keyed by the call's file and
 * line with a hit counter per event and per transition to the next event. The transition
 * out of an event is timed with probability min(N / k, 1), k the times the event was
 * seen, N = 1000, the reservoir's size: then a nanosecond timestamp is taken from the OS
 * there and at the next event, and the difference kept in the transition's reservoir,
 * in place of a random sample when full. Nothing is written; bench/README.md, "Log
 * capture". */
#ifndef VIGIL_BENCH_SENTINEL_TRACER_H
#define VIGIL_BENCH_SENTINEL_TRACER_H

#include <stdint.h>

/* record_event(): what the logging library calls first for every log call. */
void sentinel_record_event(const char *file, int line);

/* Events and transitions counted so far by this thread (to check it did count). */
uint64_t sentinel_events(void);
uint64_t sentinel_transitions(void);

#define SENTINEL_LOG(...) sentinel_record_event(__FILE__, __LINE__)

#endif
