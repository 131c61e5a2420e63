/* Synthetic subject (b): a cache in front of a slow store; the injected change is a lower
 * hit rate. Logs through vigil's C API (linked with libvigil).
 *
 *   cache_subject run --n N --hit P --seed S
 *
 * Each lookup: "lookup" then "cache hit" (probability P) or "cache miss" -> "store read"
 * -> "cache insert" (and one insert in 10 evicts first: "cache evict"); then "reply", and
 * one reply in 20 is followed by "stats". The decisions come from the seeded generator, so
 * two runs with the same seed differ only where P moves them. */
#include <stdio.h>
#include <string.h>

#include <vigil/log.h>

#include "subject_util.h"

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "run") || argc % 2) {
		fprintf(stderr, "usage: cache_subject run --n N --hit P --seed S\n");
		return 2;
	}
	int n = (int)lm_arg(argc, argv, "--n", 20000);
	double hit = lm_arg(argc, argv, "--hit", 0.9);
	lm_seed((uint64_t)lm_arg(argc, argv, "--seed", 1));
	for (int i = 0; i < n; i++) {
		unsigned key = (unsigned)(lm_uniform() * 100000);
		VG_LOG(VG_LOG_DEBUG, "lookup key %u", key);
		if (lm_uniform() < hit) {
			VG_LOG_NAMED(VG_LOG_DEBUG, "cache.hit", "cache hit key %u", key);
		} else {
			VG_LOG_NAMED(VG_LOG_DEBUG, "cache.miss", "cache miss key %u", key);
			lm_work_us(2);
			VG_LOG(VG_LOG_DEBUG, "store read key %u", key);
			if (lm_uniform() < 0.1)
				VG_LOG(VG_LOG_DEBUG, "cache evict for key %u", key);
			VG_LOG(VG_LOG_DEBUG, "cache insert key %u", key);
		}
		VG_LOG(VG_LOG_DEBUG, "reply %d", i);
		if (lm_uniform() < 0.05)
			VG_LOG(VG_LOG_INFO, "stats after %d lookups", i);
	}
	return 0;
}
