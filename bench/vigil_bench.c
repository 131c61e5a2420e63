/* bench: the event loop recorded by vigil through the sensor that `vigil gen` generates
 * from bench.vgl (bench_pair: an inline flag check, then the record written straight into
 * the thread's packet). Whether the sensor records is decided by the environment
 * (VIGIL_OUT, VIGIL_SENSORS); setup only checks that it matches the mode. */
#include "bench.h"

#include <stdio.h>

#include "bench_sensors.h"

const char *const bench_tool = "vigil";

void bench_loop(uint64_t n, uint64_t tag)
{
	for (uint64_t i = 0; i < n; i++)
		bench_pair((int64_t)i, (int64_t)tag);
}

int bench_setup(enum bench_mode mode)
{
	bench_sensors_register();
	int on = vg_on(bench__pair);
	if (on != (mode == BENCH_ENABLED)) {
		fprintf(stderr,
		        "vigil-bench: sensor bench.pair is %s but mode %s was asked (recording: "
		        "%d; check VIGIL_OUT and VIGIL_SENSORS)\n",
		        on ? "on" : "off", mode == BENCH_ENABLED ? "enabled" : "disabled",
		        vg_recording());
		return -1;
	}
	return 0;
}

int64_t bench_discarded(void)
{
	return (int64_t)vg_events_discarded();
}
