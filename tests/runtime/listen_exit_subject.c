/* A thread records its last event and then blocks for good while the process exits:
 * several listeners must still get that event (listen.c copies every thread's owed event
 * at the process's end). Thread "blocker" records le.last once; main records le.main
 * once it has, then exits with the blocker still waiting. runtime.listen_exit. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <vigil/vigil.h>

static const vg_field_desc fields[] = {{"n", VG_UINT64, NULL}};
static vg_sensor *last_s, *main_s;
static int done_pipe[2], never_pipe[2];

static void tick(vg_sensor *s, uint64_t n)
{
	uint8_t *p = vg_on(s) ? vg_event_begin(s, 8) : NULL;
	if (p)
		vg_event_commit(vg_put_u64(p, n));
}

static void *blocker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "blocker");
	tick(last_s, 7);
	char c = 1;
	if (write(done_pipe[1], &c, 1) != 1)
		abort();
	(void)!read(never_pipe[0], &c, 1); /* for good: the process exits meanwhile */
	return NULL;
}

int main(void)
{
	static const vg_type_desc last_d = {.name = "le.last",
	                                    .kind = VG_KIND_EVENT,
	                                    .placement = VG_FLAG_SENSOR,
	                                    .fields = fields,
	                                    .nfields = 1,
	                                    .performer = -1,
	                                    .initiator = -1,
	                                    .target = -1};
	vg_type_desc main_d = last_d;
	main_d.name = "le.main";
	last_s = vg_sensor_register(&last_d);
	main_s = vg_sensor_register(&main_d);
	pthread_t t;
	if (pipe(done_pipe) || pipe(never_pipe) || pthread_create(&t, NULL, blocker, NULL))
		return 2;
	char c;
	if (read(done_pipe[0], &c, 1) != 1)
		return 2;
	tick(main_s, 1);
	printf("listen_exit_subject: done\n");
	exit(0);
}
