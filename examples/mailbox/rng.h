/* A tiny seeded random generator (splitmix64): the same seed always builds the same system. */
#ifndef MAILBOX_RNG_H
#define MAILBOX_RNG_H

#include <stdint.h>

struct mb_rng {
	uint64_t state;
};

static inline uint64_t mb_rng_next(struct mb_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. The modulo bias is negligible for the small n used here. */
static inline uint32_t mb_rng_below(struct mb_rng *r, uint32_t n)
{
	return (uint32_t)(mb_rng_next(r) % n);
}

#endif
