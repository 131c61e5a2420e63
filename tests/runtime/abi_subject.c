/* Records `abi.tick` events (two int64 fields) through the inline fast path of the vigil.h
 * it is compiled against: today's, or with -DABI0 tests/runtime/abi0/vigil.h (a sensor
 * built before the compact headers). runtime.old_abi (abi_test.py) runs both.
 *
 * usage: abi_subject N */
#include <stdio.h>
#include <stdlib.h>

#ifdef ABI0
#include "abi0/vigil.h"
#define event_begin abi0_event_begin
#define event_commit abi0_event_commit
#else
#include <vigil/vigil.h>
#define event_begin vg_event_begin
#define event_commit vg_event_commit
#endif

static const vg_field_desc fields[] = {{"i", VG_INT64, NULL}, {"square", VG_INT64, NULL}};
static const vg_type_desc tick = {.name = "abi.tick",
                                  .kind = VG_KIND_EVENT,
                                  .placement = VG_FLAG_SENSOR,
                                  .fields = fields,
                                  .nfields = 2,
                                  .performer = -1,
                                  .initiator = -1,
                                  .target = -1};

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	vg_sensor *s = vg_sensor_register(&tick);
	for (long i = 0; i < n; i++) {
		uint8_t *p = vg_on(s) ? event_begin(s, 16) : NULL;
		if (!p)
			continue;
		p = vg_put_u64(p, (uint64_t)i);
		p = vg_put_u64(p, (uint64_t)(i * i));
		event_commit(p);
	}
	printf("abi_subject: %ld events\n", n);
	return 0;
}
