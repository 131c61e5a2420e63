/* The subject of sample_test.py: intervals of a sampled sensor on two entities, with
 * busy waits of pseudo-random length in between, each bracketed by clock readings.
 *
 * usage: lang_c_sample N TRUTH_FILE [wait]
 * With `wait`: once its sensors are registered it prints "ready" and waits for a line on
 * stdin (the monitor's commands then meet registered sensors). Writes one line per interval to
 * TRUTH_FILE: "cpu b0 b1 e0 e1", where the interval's begin was called between b0 and b1 (vg_now)
 * and its end between e0 and e1. */
#include <stdio.h>
#include <stdlib.h>

#include "samp_sensors.h"

static struct {
	vg_entity entity;
} cpus[2];
static struct {
	vg_entity entity;
} task;

static void spin(uint64_t ns)
{
	uint64_t until = vg_now() + ns;
	while (vg_now() < until)
		;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: lang_c_sample N TRUTH_FILE [wait]\n");
		return 2;
	}
	long n = atol(argv[1]);
	FILE *truth = fopen(argv[2], "w");
	if (!truth || n < 1) {
		fprintf(stderr, "lang_c_sample: bad arguments\n");
		return 2;
	}
	samp_sensors_register();
	vg_entity_create(&cpus[0].entity, "Cpu", 1, "cpu0");
	vg_entity_create(&cpus[1].entity, "Cpu", 2, "cpu1");
	vg_entity_create(&task.entity, "Task", 1, "task");
	if (argc == 4) {
		char line[16];
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof line, stdin))
			return 2;
	}
	uint32_t rng = 12345;
	for (long i = 0; i < n; i++) {
		int c = (int)(i & 1);
		rng = rng * 1103515245u + 12345u;
		uint64_t len = (rng >> 8) % 400000; /* up to 0.4 ms */
		uint64_t b0 = vg_now();
		samp_Running_begin(&task.entity, &cpus[c].entity);
		samp_Traced_begin(&task.entity, &cpus[c].entity);
		uint64_t b1 = vg_now();
		spin(len);
		uint64_t e0 = vg_now();
		samp_Traced_end(&task.entity, &cpus[c].entity);
		samp_Running_end(&task.entity, &cpus[c].entity);
		samp_Touched(&task.entity, &cpus[c].entity);
		uint64_t e1 = vg_now();
		fprintf(truth, "%d %llu %llu %llu %llu\n", c, (unsigned long long)b0,
		        (unsigned long long)b1, (unsigned long long)e0, (unsigned long long)e1);
		spin(((rng >> 4) & 0xFF) * 100);
	}
	vg_entity_reclaim(&task.entity);
	vg_entity_reclaim(&cpus[0].entity);
	vg_entity_reclaim(&cpus[1].entity);
	return fclose(truth) == 0 ? 0 : 1;
}
