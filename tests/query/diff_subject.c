/* Subject of the differential test of the TQuel engine (tests/query/diff_test.py):
 * records a random trace with small value domains, so that joins hit.
 *
 *   diff_subject SEED N
 *
 * Two threads emit N events between them: interval relations A (key, val, tag, owner, u) and
 * B (key, val) from begin/end pairs, and the event relation E (key, val, tag, u). An end
 * carries the same values as the begin it closes; some intervals stay open at the end.
 * Owners are entities of kind Owner: O1, O2, O3 and one never named. u is a uint64 from
 * {0, 1, 5, 2^63, 2^64 - 1}, to compare unsigned with (negative) signed values. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "../test_rand.h"
#include "vigil/vigil.h"

static const vg_field_desc a_fields[] = {{"key", VG_INT32, NULL},
                                         {"val", VG_INT64, NULL},
                                         {"tag", VG_STRING, NULL},
                                         {"owner", VG_ENTITY, "Owner"},
                                         {"u", VG_UINT64, NULL}};
static const vg_field_desc b_fields[] = {{"key", VG_INT32, NULL}, {"val", VG_INT64, NULL}};
static const vg_field_desc e_fields[] = {{"key", VG_INT32, NULL},
                                         {"val", VG_INT64, NULL},
                                         {"tag", VG_STRING, NULL},
                                         {"u", VG_UINT64, NULL}};

/* Every sensor on its own flag, the recording thread as performer. */
#define DESC(name, relation, kind, fields, n)                                                      \
	{                                                                                          \
		name, relation, kind, VG_FLAG_SENSOR, 0, fields, n, -1, -1, -1, VG_OP_ACTIVITY     \
	}
static const vg_type_desc a_begin = DESC("diff.A.begin", "A", VG_KIND_BEGIN, a_fields, 5);
static const vg_type_desc a_end = DESC("diff.A.end", "A", VG_KIND_END, a_fields, 5);
static const vg_type_desc b_begin = DESC("diff.B.begin", "B", VG_KIND_BEGIN, b_fields, 2);
static const vg_type_desc b_end = DESC("diff.B.end", "B", VG_KIND_END, b_fields, 2);
static const vg_type_desc e_event = DESC("diff.E", "E", VG_KIND_EVENT, e_fields, 4);

static vg_sensor *sa_begin, *sa_end, *sb_begin, *sb_end, *se;
static vg_entity owners[4];
static const char *const tags[] = {"x", "y", "z", ""};
static const uint64_t uints[] = {0, 1, 5, 1ull << 63, ~0ull};
static unsigned long long seed;
static long per_thread;

#define MAX_OPEN 64

/* One open interval: the values its end must repeat. */
struct open_tuple {
	vg_value v[5];
};

static int64_t pick(uint64_t *s, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(test_splitmix64(s) % (uint64_t)(hi - lo + 1));
}

static void random_values(uint64_t *s, vg_value *v, int with_owner)
{
	v[0].i = pick(s, 0, 3);
	v[1].i = pick(s, -20, 20);
	v[2].s = tags[pick(s, 0, 3)];
	if (with_owner)
		v[3].e = &owners[pick(s, 0, 3)];
}

/* v[u_at].u: a random uint */
static void random_uint(uint64_t *s, vg_value *v, int u_at)
{
	v[u_at].u = uints[pick(s, 0, 4)];
}

/* Closes a random open tuple of `open` (n of them) with `end`. */
static void close_one(uint64_t *s, vg_sensor *end, struct open_tuple *open, int *n)
{
	int k = (int)pick(s, 0, *n - 1);
	vg_emit(end, open[k].v);
	open[k] = open[--*n];
}

static void *worker(void *arg)
{
	uint64_t s = seed * 2 + (uint64_t)(uintptr_t)arg + 1;
	struct open_tuple a[MAX_OPEN], b[MAX_OPEN];
	int na = 0, nb = 0;
	for (long i = 0; i < per_thread; i++) {
		int r = (int)pick(&s, 0, 99);
		if (r < 25 && na < MAX_OPEN) {
			random_values(&s, a[na].v, 1);
			random_uint(&s, a[na].v, 4);
			vg_emit(sa_begin, a[na++].v);
		} else if (r < 45 && na > 0) {
			close_one(&s, sa_end, a, &na);
		} else if (r < 63 && nb < MAX_OPEN) {
			vg_value v[4];
			random_values(&s, v, 0);
			b[nb].v[0] = v[0];
			b[nb].v[1] = v[1];
			vg_emit(sb_begin, b[nb++].v);
		} else if (r < 78 && nb > 0) {
			close_one(&s, sb_end, b, &nb);
		} else {
			vg_value v[4];
			random_values(&s, v, 0);
			random_uint(&s, v, 3);
			vg_emit(se, v);
		}
		/* a random pause, so that the two threads' events interleave */
		int spin = (int)pick(&s, 0, 3000);
		for (volatile int j = 0; j < spin; j++)
			;
		if (pick(&s, 0, 9) == 0)
			sched_yield();
	}
	/* close about half of what is still open; the rest stays open */
	while (na > 1 && pick(&s, 0, 1))
		close_one(&s, sa_end, a, &na);
	while (nb > 1 && pick(&s, 0, 1))
		close_one(&s, sb_end, b, &nb);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: diff_subject SEED N\n");
		return 2;
	}
	seed = strtoull(argv[1], NULL, 10);
	per_thread = atol(argv[2]) / 2;
	sa_begin = vg_sensor_register(&a_begin);
	sa_end = vg_sensor_register(&a_end);
	sb_begin = vg_sensor_register(&b_begin);
	sb_end = vg_sensor_register(&b_end);
	se = vg_sensor_register(&e_event);
	static const char *const names[] = {"O1", "O2", "O3", NULL};
	for (int i = 0; i < 4; i++)
		vg_entity_create(&owners[i], "Owner", (uint64_t)i + 1, names[i]);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
