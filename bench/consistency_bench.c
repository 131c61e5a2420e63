/* consistency-bench: what consistent partial reporting costs per event (docs/consistency.md).
 *
 * For enter+leave, acquire+release and create+reclaim pairs and a plain activity event,
 * through the inline API as generated sensors call it (vg_tracking, vg_enter_begin/commit,
 * vg_leave_begin, vg_op_begin, vg_event_begin) and through vg_emit, in three modes, each in
 * a child process of this one run (the runtime reads VIGIL_CONSISTENCY at start):
 *   baseline  VIGIL_CONSISTENCY=off, sensors disabled: a disabled sensor, one load and a
 *             branch, as before consistency existed;
 *   tracking  consistency on, vg_report_suspend(): nothing is reported, everything tracked;
 *   reporting consistency on, reporting on: every event is written.
 * Prints a markdown table of ns per event (a pair counts two events; median of the
 * repetitions) and writes JSON (--json FILE). The reporting mode writes N/40 events per
 * measurement into a temporary trace (about 0.5 GB in all by default), removed afterwards.
 *
 *   consistency-bench [--events N] [--reps N] [--json FILE]
 *
 * VIGIL_BENCH_SMOKE=1: tiny defaults (bench/README.md, "Smoke run").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vigil/vigil.h>

enum { OP_CALL, OP_LOCK, OP_LIFE, OP_ACT, NOPS };
static const char *const op_names[NOPS] = {"enter+leave", "acquire+release", "create+reclaim",
                                           "activity"};
static const int op_events[NOPS] = {2, 2, 2, 1};
enum { MODE_BASE, MODE_TRACK, MODE_REPORT, NMODES };
static const char *const mode_names[NMODES] = {"baseline", "tracking", "reporting"};

static vg_sensor *s_enter, *s_leave, *s_acq, *s_rel, *s_new, *s_free, *s_act;

static const vg_field_desc call_f[] = {{"fn", VG_UINT32, NULL}};
static const vg_field_desc lock_f[] = {{"lock", VG_ENTITY, "Lock"}};
static const vg_field_desc obj_f[] = {{"obj", VG_ENTITY, "Obj"}, {"n", VG_UINT32, NULL}};

static vg_sensor *reg(const char *name, const char *rel, enum vg_kind kind, const vg_field_desc *f,
                      unsigned n, int target, enum vg_op op)
{
	vg_type_desc d = {.name = name,
	                  .relation = rel,
	                  .kind = kind,
	                  .placement = VG_FLAG_SENSOR,
	                  .fields = f,
	                  .nfields = n,
	                  .performer = -1,
	                  .initiator = -1,
	                  .target = target,
	                  .op = op};
	return vg_sensor_register(&d);
}

/* ---- the sensors, inline as `vigil gen` writes them ---- */

static inline void enter(uint32_t fn)
{
	if (!vg_tracking(s_enter))
		return;
	uint8_t *p = vg_enter_begin(s_enter, 4);
	if (p)
		vg_enter_commit(s_enter, vg_put_u32(p, fn));
}

static inline void leave(void)
{
	if (!vg_tracking(s_leave))
		return;
	uint8_t *p = vg_leave_begin(s_leave, 0);
	if (p)
		vg_event_commit(p);
}

static inline void target_op(vg_sensor *s, vg_entity *e, uint32_t n, int with_n)
{
	if (!vg_tracking(s))
		return;
	uint8_t *p = vg_op_begin(s, e, 16);
	if (p) {
		p = vg_put_ref(p, e);
		if (with_n)
			p = vg_put_u32(p, n);
		vg_event_commit(p);
	}
}

static inline void activity(const vg_entity *e, uint32_t n)
{
	if (!vg_on(s_act))
		return;
	if (vg__tracking && !vg_live(e))
		return;
	uint8_t *p = vg_event_begin(s_act, 16);
	if (!p)
		return;
	p = vg_put_ref(p, e);
	vg_event_commit(vg_put_u32(p, n));
}

static vg_entity lock_ent, obj_ent, live_obj;

static void run_inline(int op, long n)
{
	for (long i = 0; i < n; i++) {
		switch (op) {
		case OP_CALL:
			enter((uint32_t)i);
			leave();
			break;
		case OP_LOCK:
			target_op(s_acq, &lock_ent, 0, 0);
			target_op(s_rel, &lock_ent, 0, 0);
			break;
		case OP_LIFE:
			target_op(s_new, &obj_ent, (uint32_t)i, 1);
			target_op(s_free, &obj_ent, (uint32_t)i, 1);
			break;
		default:
			activity(&live_obj, (uint32_t)i);
			break;
		}
		__asm__ __volatile__("" ::: "memory");
	}
}

static void run_emit(int op, long n)
{
	vg_value v[2];
	for (long i = 0; i < n; i++) {
		switch (op) {
		case OP_CALL:
			v[0].u = (uint64_t)i;
			vg_emit(s_enter, v);
			vg_emit(s_leave, v);
			break;
		case OP_LOCK:
			v[0].e = &lock_ent;
			vg_emit(s_acq, v);
			vg_emit(s_rel, v);
			break;
		case OP_LIFE:
			v[0].e = &obj_ent;
			v[1].u = (uint64_t)i;
			vg_emit(s_new, v);
			vg_emit(s_free, v);
			break;
		default:
			v[0].e = &live_obj;
			v[1].u = (uint64_t)i;
			vg_emit(s_act, v);
			break;
		}
	}
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The child: measures every op both ways in `mode`, one JSON line per result on stdout. */
static int child(int mode, long events, int reps)
{
	s_enter = reg("cb.call.begin", "cb.call", VG_KIND_BEGIN, call_f, 1, -1, VG_OP_ENTER);
	s_leave = reg("cb.call.end", "cb.call", VG_KIND_END, NULL, 0, -1, VG_OP_LEAVE);
	s_acq = reg("cb.lock.acquire", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_ACQUIRE);
	s_rel = reg("cb.lock.release", NULL, VG_KIND_EVENT, lock_f, 1, 0, VG_OP_RELEASE);
	s_new = reg("cb.obj.new", NULL, VG_KIND_EVENT, obj_f, 2, 0, VG_OP_CREATE);
	s_free = reg("cb.obj.free", NULL, VG_KIND_EVENT, obj_f, 2, 0, VG_OP_RECLAIM);
	s_act = reg("cb.use", NULL, VG_KIND_EVENT, obj_f, 2, -1, VG_OP_ACTIVITY);
	if (!vg_recording()) {
		fprintf(stderr, "consistency-bench: the runtime is not recording\n");
		return 1;
	}
	vg_entity_create(&lock_ent, "Lock", 1, "lock");
	vg_entity_create(&live_obj, "Obj", 2, "obj");
	if (mode == MODE_BASE && vg_report_sensors("cb.*", 0) != 7) {
		fprintf(stderr, "consistency-bench: cannot disable the sensors\n");
		return 1;
	}
	if (mode == MODE_TRACK)
		vg_report_suspend();
	if ((mode == MODE_BASE) != (vg__tracking == 0)) {
		fprintf(stderr, "consistency-bench: tracking is %s in mode %s\n",
		        vg__tracking ? "on" : "off", mode_names[mode]);
		return 1;
	}
	for (int api = 0; api < 2; api++)
		for (int op = 0; op < NOPS; op++) {
			long n = events / op_events[op];
			double t[64];
			uint64_t lost = vg_events_discarded();
			for (int r = 0; r < reps; r++) {
				(api ? run_emit : run_inline)(op, n / 100); /* warm up */
				double t0 = now_ns();
				(api ? run_emit : run_inline)(op, n);
				t[r] = (now_ns() - t0) / ((double)n * op_events[op]);
			}
			qsort(t, (size_t)reps, sizeof t[0], cmp_double);
			printf(
			    "{\"mode\":\"%s\",\"api\":\"%s\",\"op\":\"%s\",\"ns_per_event\":%.2f,"
			    "\"min\":%.2f,\"max\":%.2f,\"events\":%ld,\"discarded\":%llu}\n",
			    mode_names[mode], api ? "vg_emit" : "inline", op_names[op], t[reps / 2],
			    t[0], t[reps - 1], n * op_events[op],
			    (unsigned long long)(vg_events_discarded() - lost));
		}
	fflush(stdout);
	return 0;
}

/* ---- the parent: one child per mode, then the table ---- */

static double results[NMODES][2][NOPS];
static int json_lines;

static int run_child(const char *self, int mode, long events, int reps, const char *dir, FILE *json)
{
	char out[4096], cmd[8192];
	snprintf(out, sizeof out, "%s/%s", dir, mode_names[mode]);
	setenv("VIGIL_OUT", out, 1);
	if (mode == MODE_BASE)
		setenv("VIGIL_CONSISTENCY", "off", 1);
	else
		unsetenv("VIGIL_CONSISTENCY");
	snprintf(cmd, sizeof cmd, "'%s' --child %d --events %ld --reps %d", self, mode, events,
	         reps);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char line[1024];
	int got = 0;
	while (fgets(line, sizeof line, p)) {
		char api[32], op[32];
		double ns;
		const char *a = strstr(line, "\"api\":\""), *o = strstr(line, "\"op\":\""),
		           *v = strstr(line, "\"ns_per_event\":");
		if (!a || !o || !v || sscanf(a + 7, "%31[^\"]", api) != 1 ||
		    sscanf(o + 6, "%31[^\"]", op) != 1 || sscanf(v + 15, "%lf", &ns) != 1)
			continue;
		for (int i = 0; i < NOPS; i++)
			if (!strcmp(op, op_names[i])) {
				results[mode][strcmp(api, "inline") != 0][i] = ns;
				got++;
			}
		if (json) {
			fputs(json_lines++ ? ",\n  " : "  ", json);
			fputs(strtok(line, "\n"), json);
		}
	}
	int rc = pclose(p);
	char rm[4200];
	snprintf(rm, sizeof rm, "rm -rf '%s'", out);
	if (system(rm) != 0)
		fprintf(stderr, "consistency-bench: could not remove %s\n", out);
	return rc == 0 && got == 2 * NOPS ? 0 : -1;
}

int main(int argc, char **argv)
{
	long events = 20000000;
	int reps = 5, mode = -1;
	const char *json_path = NULL;
	const char *smoke = getenv("VIGIL_BENCH_SMOKE"); /* bench/README.md, "Smoke run" */
	if (smoke && !strcmp(smoke, "1"))
		events = 200000, reps = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--child") && i + 1 < argc)
			mode = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--events") && i + 1 < argc)
			events = atol(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json_path = argv[++i];
		else {
			int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
			fprintf(help ? stdout : stderr,
			        "usage: consistency-bench [--events N] [--reps N] [--json FILE]\n"
			        "  ns per event of consistent partial reporting: baseline (no "
			        "tracking,\n"
			        "  sensors off), tracking (reporting suspended), reporting (on).\n"
			        "  --events N  events per measurement (20000000; reporting mode: "
			        "N/40,\n"
			        "              written to a temporary trace removed afterwards)\n"
			        "  --reps N    repetitions, the median is shown (5)\n"
			        "example: build/bench/consistency-bench --json consistency.json\n");
			return help ? 0 : 2;
		}
	}
	if (events < 1000 || reps < 1 || reps > 64) {
		fprintf(stderr, "consistency-bench: --events must be >= 1000 and --reps 1..64\n");
		return 2;
	}
	if (mode >= 0)
		return child(mode, events, reps);
	char dir[] = "/tmp/consistency-bench-XXXXXX";
	if (!mkdtemp(dir)) {
		fprintf(stderr, "consistency-bench: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	FILE *json = json_path ? fopen(json_path, "w") : NULL;
	if (json_path && !json) {
		fprintf(stderr, "consistency-bench: %s: %s\n", json_path, strerror(errno));
		return 1;
	}
	if (json)
		fputs("{\"results\": [\n", json);
	int failed = 0;
	for (int m = 0; m < NMODES && !failed; m++) {
		fprintf(stderr, "consistency-bench: %s...\n", mode_names[m]);
		failed = run_child(argv[0], m, m == MODE_REPORT ? events / 40 : events, reps, dir,
		                   json) < 0;
	}
	rmdir(dir);
	if (failed) {
		fprintf(stderr, "consistency-bench: a measurement failed\n");
		return 1;
	}
	printf("| ns per event | api | baseline (off, no tracking) | tracking (suspended) | "
	       "reporting (on) | tracking - baseline |\n|---|---|---:|---:|---:|---:|\n");
	double over = 0;
	for (int api = 0; api < 2; api++)
		for (int op = 0; op < NOPS; op++) {
			double b = results[MODE_BASE][api][op], t = results[MODE_TRACK][api][op];
			printf("| %s | %s | %.2f | %.2f | %.2f | %+.2f |\n", op_names[op],
			       api ? "vg_emit" : "inline", b, t, results[MODE_REPORT][api][op],
			       t - b);
			if (!api && op != OP_LIFE)
				over = t - b > over ? t - b : over;
		}
	printf("\ntracking while off costs at most %.2f ns per event over the baseline (inline; "
	       "enter/leave, acquire/release, activity); create+reclaim: %.2f ns\n",
	       over, results[MODE_TRACK][0][OP_LIFE] - results[MODE_BASE][0][OP_LIFE]);
	if (json) {
		fprintf(json,
		        "\n],\n\"tracking_over_baseline_ns\": %.2f,\n"
		        "\"create_reclaim_tracking_over_baseline_ns\": %.2f}\n",
		        over, results[MODE_TRACK][0][OP_LIFE] - results[MODE_BASE][0][OP_LIFE]);
		fclose(json);
	}
	return 0;
}
