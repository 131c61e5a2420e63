/* The subject of export.sampled (tests/export/export_test.py): two CPUs whose load is
 * reported by sampled sensors (a state, an interval) and a traced one, with values that
 * vary (queued, delta, util), so that vigil export's counter tracks can be compared with
 * vigil dump. usage: export_sampled [N] */
#include <stdlib.h>

#include "smp_sensors.h"

static struct {
	vg_entity entity;
} cpus[2];

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50;
	smp_sensors_register();
	vg_entity_create(&cpus[0].entity, "Cpu", 1, "cpu0");
	vg_entity_create(&cpus[1].entity, "Cpu", 2, "cpu1");
	uint32_t rng = 2026;
	for (long i = 0; i < n; i++) {
		const vg_entity *cpu = &cpus[i & 1].entity;
		rng = rng * 1103515245u + 12345u;
		uint32_t queued = (rng >> 8) % 17;
		int32_t delta = (int32_t)((rng >> 12) % 9) - 4;
		double util = (double)((rng >> 4) % 1000) / 1000.0;
		smp_CpuLoad(cpu, queued, delta, util, "load");
		smp_Busy_begin(cpu, queued, delta, util, "busy");
		smp_Tick(cpu, queued, delta, util, "tick");
		smp_Busy_end(cpu, queued, delta, util, "busy"); /* closes the begin: same fields */
	}
	smp_Busy_begin(&cpus[0].entity, 99, 0, 1.0, "left"); /* never closed */
	vg_entity_reclaim(&cpus[0].entity);
	vg_entity_reclaim(&cpus[1].entity);
	return 0;
}
