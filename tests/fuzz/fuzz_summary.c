/* libFuzzer target: packet summary files (trace/summary.c), as a reader finds them beside
 * a stream. The input's checksum is made to hold and its file identity taken as the
 * stream's (else nearly every input stops there): then every entry is checked, and a
 * summary read is written again byte for byte. */
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
		free(sum.v);
	}
	free(buf);
	return 0;
}
