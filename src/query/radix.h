/* The least-significant-digit radix sorts of the result path (result.c's keys,
 * result_direct.c's rows, exec_semijoin_result.c's packed rows): one digit size and one
 * pass preparation, written once. */
#ifndef VIGIL_QUERY_RADIX_H
#define VIGIL_QUERY_RADIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)
#define RADIX_DIGITS ((64 + RADIX_BITS - 1) / RADIX_BITS) /* digits of a 64-bit word */

/* A digit's counts of n items made its buckets' first places: false (the pass can be
 * skipped, the order is kept) when one bucket holds every item. */
static inline bool vgq_radix_places(size_t count[RADIX], size_t n)
{
	for (uint32_t v = 0; v < RADIX; v++)
		if (count[v] == n)
			return false;
	size_t pos = 0;
	for (uint32_t v = 0; v < RADIX; v++) {
		size_t c = count[v];
		count[v] = pos;
		pos += c;
	}
	return true;
}

#endif
