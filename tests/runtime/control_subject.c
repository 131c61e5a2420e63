/* A subject for the control channel's tests (tests/runtime/control_test.py): linked with
 * libvigil, it registers its sensors in main (after the monitor's handshake), then does
 * what stdin says, one line at a time, answering "done" on stdout after each:
 *   tick N | deliver I N | link I J N        fire ctl.tick / ctl.deliver / ctl.link
 *   create I NAME | rename I NAME | reclaim I box I (kind Box, raw id 1000+I)
 *   info I                                    "done <id> <gen>" of box I
 *   fork N                                    a child fires tick N and exits; "done <status>"
 *   quit
 * The sensors are written as `vigil gen` writes them, with the vg_sensor_fired call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vigil/vigil.h"

static const vg_field_desc tick_fields[] = {{"n", VG_INT64, NULL}};
static const vg_field_desc deliver_fields[] = {{"box", VG_ENTITY, "Box"}, {"n", VG_INT64, NULL}};
static const vg_field_desc link_fields[] = {
    {"from", VG_ENTITY, "Box"}, {"to", VG_ENTITY, "Box"}, {"n", VG_INT64, NULL}};
static const vg_type_desc tick_desc = {
    "ctl.tick", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, tick_fields, 1, -1, -1, -1, VG_OP_ACTIVITY};
static const vg_type_desc deliver_desc = {
    "ctl.deliver", NULL, VG_KIND_EVENT, VG_FLAG_TARGET, 0, deliver_fields, 2, -1, -1, 0,
    VG_OP_ACTIVITY};
static const vg_type_desc link_desc = {
    "ctl.link", NULL, VG_KIND_EVENT, VG_FLAG_SENSOR, 0, link_fields, 3, 0, -1, 1, VG_OP_ACTIVITY};

static vg_sensor *s_tick, *s_deliver, *s_link;
static vg_entity boxes[8];

static void fire_tick(int64_t n)
{
	if (!vg_on(s_tick))
		return;
	uint8_t *p = vg_event_begin(s_tick, 8);
	if (!p)
		return;
	p = vg_put_u64(p, (uint64_t)n);
	vg_event_commit(p);
}

static void fire_deliver(const vg_entity *box, int64_t n)
{
	if (!vg_on_entity(s_deliver, box))
		return;
	uint8_t *p = vg_event_begin(s_deliver, 20);
	if (!p)
		return;
	p = vg_put_ref(p, box);
	p = vg_put_u64(p, (uint64_t)n);
	vg_event_commit(p);
	if (VG_UNLIKELY(atomic_load_explicit(&s_deliver->react, memory_order_relaxed)))
		vg_sensor_fired(s_deliver, (const vg_entity *const[]){box}, 1);
}

static void fire_link(const vg_entity *from, const vg_entity *to, int64_t n)
{
	if (!vg_on(s_link))
		return;
	uint8_t *p = vg_event_begin(s_link, 32);
	if (!p)
		return;
	p = vg_put_ref(p, from);
	p = vg_put_ref(p, to);
	p = vg_put_u64(p, (uint64_t)n);
	vg_event_commit(p);
	if (VG_UNLIKELY(atomic_load_explicit(&s_link->react, memory_order_relaxed)))
		vg_sensor_fired(s_link, (const vg_entity *const[]){from, to}, 2);
}

static vg_entity *box(long i)
{
	return &boxes[(unsigned long)i % 8];
}

int main(void)
{
	s_tick = vg_sensor_register(&tick_desc);
	s_deliver = vg_sensor_register(&deliver_desc);
	s_link = vg_sensor_register(&link_desc);
	char line[256], name[128];
	long i, j, n;
	while (fgets(line, sizeof line, stdin)) {
		if (sscanf(line, "tick %ld", &n) == 1) {
			fire_tick(n);
		} else if (sscanf(line, "deliver %ld %ld", &i, &n) == 2) {
			fire_deliver(box(i), n);
		} else if (sscanf(line, "link %ld %ld %ld", &i, &j, &n) == 3) {
			fire_link(box(i), box(j), n);
		} else if (sscanf(line, "create %ld %127s", &i, name) == 2) {
			vg_entity_create(box(i), "Box", 1000 + (uint64_t)(i % 8), name);
		} else if (sscanf(line, "rename %ld %127s", &i, name) == 2) {
			vg_entity_rename(box(i), name);
		} else if (sscanf(line, "reclaim %ld", &i) == 1) {
			vg_entity_reclaim(box(i));
		} else if (sscanf(line, "info %ld", &i) == 1) {
			printf("done %llu %u\n", (unsigned long long)box(i)->id, box(i)->gen);
			fflush(stdout);
			continue;
		} else if (sscanf(line, "fork %ld", &n) == 1) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid == 0) {
				fire_tick(n);
				/* exit, not _exit: under LeakSanitizer this also checks that
				 * the child frees the parent's thread stream it forgets. */
				exit(0);
			}
			int status = -1;
			if (pid > 0)
				waitpid(pid, &status, 0);
			printf("done %d\n", status);
			fflush(stdout);
			continue;
		} else if (!strncmp(line, "quit", 4)) {
			return 0;
		} else {
			fprintf(stderr, "control_subject: what is %s", line);
			return 2;
		}
		printf("done\n");
		fflush(stdout);
	}
	return 0;
}
