/* bench: the event loop recorded by vigil through the inline fast path of vigil.h, as a
 * generated sensor would write it. Whether the sensor records is decided by the
 * environment (VIGIL_OUT, VIGIL_SENSORS); setup only checks that it matches the mode. */
#include "bench.h"

#include <stdio.h>

#include "vigil/vigil.h"

const char *const bench_tool = "vigil";

static const vg_field_desc pair_fields[] = {
    {"a", VG_INT64, NULL},
    {"b", VG_INT64, NULL},
};
static const vg_type_desc pair_desc = {
    .name = "bench.pair",
    .kind = VG_KIND_EVENT,
    .placement = VG_FLAG_SENSOR,
    .fields = pair_fields,
    .nfields = 2,
    .performer = -1,
    .initiator = -1,
    .target = -1,
};
static vg_sensor *pair;

void bench_loop(uint64_t n, uint64_t tag)
{
	for (uint64_t i = 0; i < n; i++) {
		if (vg_on(pair)) {
			uint8_t *p = vg_event_begin(pair, 16);
			if (p) {
				p = vg_put_u64(p, i);
				p = vg_put_u64(p, tag);
				vg_event_commit(p);
			}
		}
	}
}

int bench_setup(enum bench_mode mode)
{
	pair = vg_sensor_register(&pair_desc);
	int on = vg_on(pair);
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
