/* libFuzzer target: packet summary files (trace/summary.c), as a reader finds them beside
 * a stream. The input's checksum is made to hold and its file identity taken as the
 * stream's (else nearly every input stops there): then every entry is checked, and a
 * summary read is written again byte for byte; its positions (the second format) are
 * walked packet by packet as a reader takes them (vgt_positions_of), each record read,
 * and each must lie inside its packet, in order, of an id the packet positions. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + 8);
	memcpy(buf, data, size);
	struct stream_summary of = {0}, sum;
	if (size >= 64 && size % 8 == 0) {
		uint64_t h = 1469598103934665603ull, w;
		for (size_t i = 64; i < size; i += 8) {
			memcpy(&w, buf + i, 8);
			h = (h ^ w) * 1099511628211ull;
		}
		memcpy(buf + 48, &h, 8);
		memcpy(&of.file_size, buf + 8, 8);
		memcpy(&of.mtime_ns, buf + 16, 8);
		memcpy(&of.ino, buf + 24, 8);
	}
	char why[200];
	if (vgt_summary_parse(buf, size, &of, &sum, why, sizeof why) > 0) {
		size_t len;
		uint8_t *again = vgt_summary_bytes(&sum, &len);
		if (len != size || memcmp(again, buf, size))
			abort(); /* read, then written: not the same bytes */
		free(again);
		for (size_t i = 0; i < sum.n; i++) {
			const uint64_t *bitmap, *rec, *e = sum.v + i * (SUM_FIXED + sum.words);
			size_t k;
			if (!vgt_positions_of(&sum, i, &bitmap, &rec, &k))
				continue;
			uint64_t prev = 0;
			for (size_t j = 0; j < k; j++) {
				uint64_t off = rec[2 * j] & ((1ull << POS_OFFSET_BITS) - 1);
				uint64_t id = rec[2 * j] >> POS_OFFSET_BITS;
				if (off >= e[SUM_END] - e[SUM_START] || (j && off <= prev) ||
				    id >= sum.words * 64 || !(bitmap[id / 64] >> (id % 64) & 1))
					abort(); /* a position the checks let through */
				prev = off;
			}
		}
		free(sum.v);
	}
	free(buf);
	return 0;
}
