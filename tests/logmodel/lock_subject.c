/* Synthetic subject (a): a server whose requests take a lock; the injected change is a
 * longer hold of that lock. Logs through vigil's C API (linked with libvigil).
 *
 *   lock_subject run --n N --hold US --seed S
 *
 * Each request: "request received" -> (parse 15 us) "request parsed" -> (30 us) "lock
 * acquired" -> (US: the held section) "lock released" -> (20 us) "response sent"; one
 * request in 8 also reads a file first ("file read", 40 us). Only the held section's
 * length depends on --hold, so the transition time "lock acquired" -> "lock released" is
 * what a diff of two runs with different --hold must rank first by EMD. */
#include <stdio.h>
#include <string.h>

#include <vigil/log.h>

#include "subject_util.h"

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "run") || argc % 2) {
		fprintf(stderr, "usage: lock_subject run --n N --hold US --seed S\n");
		return 2;
	}
	int n = (int)lm_arg(argc, argv, "--n", 2000);
	double hold = lm_arg(argc, argv, "--hold", 50);
	lm_seed((uint64_t)lm_arg(argc, argv, "--seed", 1));
	for (int i = 0; i < n; i++) {
		VG_LOG(VG_LOG_DEBUG, "request %d received", i);
		if (lm_uniform() < 0.125) {
			lm_work_us(40);
			VG_LOG(VG_LOG_DEBUG, "file read for request %d", i);
		}
		lm_work_us(15);
		VG_LOG(VG_LOG_DEBUG, "request %d parsed", i);
		lm_work_us(30);
		VG_LOG_NAMED(VG_LOG_DEBUG, "lock.acquired", "lock %d acquired", 1);
		lm_work_us(hold);
		VG_LOG_NAMED(VG_LOG_DEBUG, "lock.released", "lock %d released", 1);
		lm_work_us(20);
		VG_LOG(VG_LOG_INFO, "response %d sent", i);
	}
	return 0;
}
