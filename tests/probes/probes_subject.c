/* A subject for `vigil probes` (tests/probes/probes_test.py, bench/probes_bench.py):
 * linked with libvigil, it registers sensors when stdin says so (so some register after
 * a pattern was given) and fires them; it answers "done ..." on stdout after each line:
 *   reg NAME...        register sensors NAME (schema: one int64 field n)
 *   regn PREFIX N      register PREFIX0000 .. PREFIX<N-1>
 *   fire NAME N        fire NAME once with n = N
 *   fireall N          fire every sensor registered here once with n = N
 *   ison NAME          "done 1" if NAME is on now, else "done 0" (tests/probes/
 *                      probes_file_test.py: when a pattern file took effect)
 *   loop NAME [GAP]    a thread fires NAME in a loop, n = 1, 2, ..., GAP ns apart
 *                      (spinning; default 0: a tight loop)
 *   stop               stop the loop; "done <firings>"
 *   cost NAME N        (bench/probes_bench.py) N firings of NAME, and N turns of the
 *                      same loop without the sensor: "done <ns> <ns_empty>"
 *   boxes N            create entities B0 .. B<N-1> of kind Box (ids 1000 + i)
 *   regbox NAME [once] register NAME with its flag on its target, a Box (schema: the
 *                      entity box, int64 n); `once`: traced once (vg_once_take)
 *   firebox N          fire every Box sensor on every box, in registration order
 *   quit
 * Sensors are fired as generated code fires them: one load and a branch when off. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vigil/vigil.h"

#define MAX_SENSORS 4096

static const vg_field_desc fields[] = {{"n", VG_INT64, NULL}};
static vg_sensor *sensors[MAX_SENSORS];
static size_t nsensors;

static vg_sensor *reg(const char *name)
{
	vg_type_desc d = {name, NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, fields, 1, -1,
	                  -1,   -1,   VG_OP_ACTIVITY};
	vg_sensor *s = vg_sensor_register(&d);
	if (nsensors < MAX_SENSORS)
		sensors[nsensors++] = s;
	return s;
}

static vg_sensor *find(const char *name)
{
	for (size_t i = 0; i < nsensors; i++)
		if (!strcmp(sensors[i]->name, name))
			return sensors[i];
	return NULL;
}

static inline void fire(vg_sensor *s, int64_t n)
{
	if (!vg_on(s))
		return;
	uint8_t *p = vg_event_begin(s, 8);
	if (!p)
		return;
	p = vg_put_u64(p, (uint64_t)n);
	vg_event_commit(p);
}

/* Sensors placed on an entity (their flag is the box's): docs/control.md "Probes". */
static const vg_field_desc box_fields[] = {{"box", VG_ENTITY, "Box"}, {"n", VG_INT64, NULL}};
static vg_sensor *box_sensors[64];
static int box_once[64];
static size_t nbox_sensors;
static vg_entity boxes[16];
static size_t nboxes;

static void fire_box(size_t k, const vg_entity *box, int64_t n)
{
	vg_sensor *s = box_sensors[k];
	if (!vg_on_entity(s, box))
		return;
	if (box_once[k] && !vg_once_take(s, box))
		return;
	uint8_t *p = vg_event_begin(s, 20);
	if (!p)
		return;
	p = vg_put_ref(p, box);
	p = vg_put_u64(p, (uint64_t)n);
	vg_event_commit(p);
}

static atomic_int stop;
static vg_sensor *loop_sensor;
static int64_t loop_count;
static uint64_t loop_gap;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *loop_main(void *arg)
{
	(void)arg;
	int64_t n = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		fire(loop_sensor, ++n);
		if (loop_gap)
			for (uint64_t t = mono_ns() + loop_gap; mono_ns() < t;)
				;
	}
	loop_count = n;
	return NULL;
}

int main(void)
{
	char line[8192];
	pthread_t th;
	int looping = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		char *save = NULL, *cmd = strtok_r(line, " ", &save);
		if (!cmd)
			continue;
		if (!strcmp(cmd, "quit"))
			break;
		if (!strcmp(cmd, "reg")) {
			for (char *name; (name = strtok_r(NULL, " ", &save));)
				reg(name);
		} else if (!strcmp(cmd, "regn")) {
			char *prefix = strtok_r(NULL, " ", &save), *n = strtok_r(NULL, " ", &save);
			for (long i = 0; prefix && n && i < atol(n); i++) {
				char name[256];
				snprintf(name, sizeof name, "%s%04ld", prefix, i);
				reg(name);
			}
		} else if (!strcmp(cmd, "boxes")) {
			char *n = strtok_r(NULL, " ", &save);
			for (long i = 0; n && i < atol(n) && nboxes < 16; i++) {
				char name[16];
				snprintf(name, sizeof name, "B%zu", nboxes);
				vg_entity_create(&boxes[nboxes], "Box", 1000 + nboxes, name);
				nboxes++;
			}
		} else if (!strcmp(cmd, "regbox")) {
			char *name = strtok_r(NULL, " ", &save), *once = strtok_r(NULL, " ", &save);
			if (!name || nbox_sensors == 64) {
				printf("error cannot register\n");
				continue;
			}
			int o = once && !strcmp(once, "once");
			vg_type_desc d = {
			    name, NULL, VG_KIND_EVENT, VG_FLAG_TARGET, o ? 2 : 0, box_fields, 2, -1,
			    -1,   0,    VG_OP_ACTIVITY};
			box_once[nbox_sensors] = o;
			box_sensors[nbox_sensors++] = vg_sensor_register(&d);
		} else if (!strcmp(cmd, "firebox")) {
			char *n = strtok_r(NULL, " ", &save);
			for (size_t k = 0; n && k < nbox_sensors; k++)
				for (size_t i = 0; i < nboxes; i++)
					fire_box(k, &boxes[i], atol(n));
		} else if (!strcmp(cmd, "fire")) {
			char *name = strtok_r(NULL, " ", &save), *n = strtok_r(NULL, " ", &save);
			vg_sensor *s = name ? find(name) : NULL;
			if (!s || !n) {
				printf("error no such sensor\n");
				continue;
			}
			fire(s, atol(n));
		} else if (!strcmp(cmd, "ison")) {
			char *name = strtok_r(NULL, " ", &save);
			vg_sensor *s = name ? find(name) : NULL;
			if (!s) {
				printf("error no such sensor\n");
				continue;
			}
			printf("done %d\n", vg_on(s) ? 1 : 0);
			continue;
		} else if (!strcmp(cmd, "fireall")) {
			char *n = strtok_r(NULL, " ", &save);
			for (size_t i = 0; n && i < nsensors; i++)
				fire(sensors[i], atol(n));
		} else if (!strcmp(cmd, "loop")) {
			char *name = strtok_r(NULL, " ", &save), *gap = strtok_r(NULL, " ", &save);
			loop_sensor = name ? find(name) : NULL;
			loop_gap = gap ? strtoull(gap, NULL, 10) : 0;
			if (!loop_sensor || looping) {
				printf("error cannot loop\n");
				continue;
			}
			atomic_store(&stop, 0);
			looping = pthread_create(&th, NULL, loop_main, NULL) == 0;
		} else if (!strcmp(cmd, "cost")) {
			char *name = strtok_r(NULL, " ", &save), *n = strtok_r(NULL, " ", &save);
			vg_sensor *s = name ? find(name) : NULL;
			if (!s || !n) {
				printf("error no such sensor\n");
				continue;
			}
			long long k = atoll(n);
			uint64_t t0 = mono_ns();
			for (long long i = 0; i < k; i++) {
				fire(s, i);
				__asm__ __volatile__("" ::: "memory"); /* one firing per turn */
			}
			uint64_t t1 = mono_ns();
			for (long long i = 0; i < k; i++)
				__asm__ __volatile__("" ::: "memory");
			uint64_t t2 = mono_ns();
			printf("done %llu %llu\n", (unsigned long long)(t1 - t0),
			       (unsigned long long)(t2 - t1));
			continue;
		} else if (!strcmp(cmd, "stop")) {
			if (looping) {
				atomic_store(&stop, 1);
				pthread_join(th, NULL);
				looping = 0;
			}
			printf("done %lld\n", (long long)loop_count);
			continue;
		} else {
			printf("error unknown command\n");
			continue;
		}
		printf("done\n");
	}
	if (looping) {
		atomic_store(&stop, 1);
		pthread_join(th, NULL);
	}
	return 0;
}
