/* The common room's threads (common/pool.h): vg_threads_run and vg_pool_run each run
 * every piece of a job exactly once whatever the threads asked for (more than the
 * pieces, none, one, past VG_THREADS_MAX), the caller as worker 0 and every worker
 * number below the threads asked for; vg_threads_run starts every thread it can. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/pool.h"

#define PIECES 1000

struct job {
	size_t next, npieces; /* next: atomic */
	unsigned done[PIECES];
	unsigned workers_seen[VG_THREADS_MAX]; /* by worker number */
	unsigned bad_worker;                   /* a worker number >= the limit */
	unsigned limit;
};

static void work(void *p, unsigned worker)
{
	struct job *j = p;
	if (worker >= j->limit)
		__atomic_fetch_add(&j->bad_worker, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&j->workers_seen[worker], 1, __ATOMIC_RELAXED);
	for (;;) {
		size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->npieces)
			return;
		__atomic_fetch_add(&j->done[i], 1, __ATOMIC_RELAXED);
	}
}

static void check_once(const struct job *j)
{
	for (size_t i = 0; i < j->npieces; i++)
		assert_int_equal(j->done[i], 1);
	assert_int_equal(j->bad_worker, 0);
	assert_int_equal(j->workers_seen[0], 1); /* the caller, once */
}

static void threads_run(void **state)
{
	(void)state;
	const struct {
		unsigned threads;
		size_t pieces;
		unsigned expect; /* threads that must have run */
	} cases[] = {{4, PIECES, 4}, {8, 3, 3}, {0, 5, 1},
	             {1, PIECES, 1}, {2, 0, 1}, {VG_THREADS_MAX + 40, PIECES, 0}};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		struct job *j = calloc(1, sizeof *j);
		assert_non_null(j);
		j->npieces = cases[c].pieces;
		j->limit = cases[c].threads < 1 ? 1 : cases[c].threads;
		if (j->limit > VG_THREADS_MAX)
			j->limit = VG_THREADS_MAX;
		vg_threads_run(cases[c].threads, cases[c].pieces, work, j);
		check_once(j);
		unsigned ran = 0;
		for (unsigned w = 0; w < VG_THREADS_MAX; w++)
			ran += j->workers_seen[w];
		if (cases[c].expect) /* threads start here unless the system refuses them */
			assert_int_equal(ran, cases[c].expect);
		else
			assert_true(ran >= 1 && ran <= VG_THREADS_MAX);
		free(j);
	}
}

static void pool_run(void **state)
{
	(void)state;
	struct vg_pool *p = vg_pool_new(3);
	for (int round = 0; round < 20; round++) {
		struct job *j = calloc(1, sizeof *j);
		assert_non_null(j);
		j->npieces = PIECES;
		j->limit = vg_pool_threads(p);
		vg_pool_run(p, work, j);
		check_once(j);
		free(j);
	}
	vg_pool_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(threads_run),
	                                   cmocka_unit_test(pool_run)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
