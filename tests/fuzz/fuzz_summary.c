/* libFuzzer target: packet summary files (trace/summary.c), as a reader finds them beside
 * a stream. The input's checksum is made to hold and its file identity taken as the
 * stream's (else nearly every input stops there): then every entry is checked, and a
 * summary read is written again byte for byte; its positions (the third format) are
 * walked packet by packet as a reader takes them (vgt_positions_group): each group must
 * be of an id the packet holds, ids increasing, no more records than events; and a
 * group's records, when they decode (vgt_positions_decode, as a reader visiting them),
 * must lie inside the packet, in order. */
#include <stdbool.h>
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
			const uint64_t *e = sum.v + i * (SUM_FIXED + sum.words);
			struct vgt_pos_group g;
			size_t at = 0;
			uint64_t prev_id = 0, records = 0;
			for (bool first = true; vgt_positions_group(&sum, i, &at, &g);
			     first = false) {
				if ((!first && g.id <= prev_id) || g.id >= sum.words * 64 ||
				    !(e[SUM_FIXED + g.id / 64] >> (g.id % 64) & 1) || !g.count ||
				    (records += g.count) > e[SUM_EVENTS] || g.count > g.len / 2)
					abort(); /* a group the checks let through */
				prev_id = g.id;
				uint64_t *out = malloc(2 * g.count * sizeof *out);
				if (vgt_positions_decode(&g, e[SUM_END] - e[SUM_START], out))
					for (uint64_t j = 0; j < g.count; j++)
						if (out[2 * j] >= e[SUM_END] - e[SUM_START] ||
						    (j && out[2 * j] <= out[2 * j - 2]))
							abort(); /* a position decoded out of its
							            packet */
				free(out);
			}
		}
	}
	free(buf);
	return 0;
}
