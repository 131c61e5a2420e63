/* The tests' reproducible pseudo-random numbers, on a state the caller keeps (a seed gives
 * the same sequence on every run and machine): xorshift64 (the state must not be 0) and
 * splitmix64 (any state). Included by tests as "../test_rand.h". */
#ifndef VIGIL_TESTS_TEST_RAND_H
#define VIGIL_TESTS_TEST_RAND_H

#include <stdint.h>

static inline uint64_t test_xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static inline uint64_t test_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
