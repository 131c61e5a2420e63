/* bench: the event loop traced by LTTng-UST. Whether the tracepoint records is decided
 * by the session daemon (bench/run.sh enables vigil_bench:pair, or not), so setup only
 * checks that the state matches the mode asked for. */
#include "bench.h"

#include <stdio.h>

#include "lttng_tp.h"

const char *const bench_tool = "lttng-ust";

void bench_loop(uint64_t n, uint64_t tag)
{
	for (uint64_t i = 0; i < n; i++)
		lttng_ust_tracepoint(vigil_bench, pair, (int64_t)i, (int64_t)tag);
}

int bench_setup(enum bench_mode mode)
{
	/* liblttng-ust's constructor waits for the session daemon's registration (up to
	 * LTTNG_UST_REGISTER_TIMEOUT), after which the tracepoint state is final. */
	int on = lttng_ust_tracepoint_enabled(vigil_bench, pair) ? 1 : 0;
	if (on != (mode == BENCH_ENABLED)) {
		fprintf(stderr,
		        "lttng-ust-bench: tracepoint vigil_bench:pair is %s but mode %s was asked "
		        "(is the session started and lttng-sessiond reachable?)\n",
		        on ? "enabled" : "disabled",
		        mode == BENCH_ENABLED ? "enabled" : "disabled");
		return -1;
	}
	return 0;
}

/* LTTng counts its discarded events in the ring buffer, read by `lttng stop`. */
int64_t bench_discarded(void)
{
	return -1;
}
