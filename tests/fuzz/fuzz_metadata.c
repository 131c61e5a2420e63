/* libFuzzer target: the TSDL metadata parser and checker. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly the input: reads past it are caught by the sanitizer. */
	char *text = malloc(size ? size : 1);
	memcpy(text, data, size);
	struct damage_list diag = {0};
	struct metadata *md = vgt_metadata_parse(text, size, "fuzz", &diag);
	if (!md && !diag.n)
		abort(); /* an unusable metadata always says why */
	if (md && md->complete_len > size)
		abort();
	for (size_t i = 0; i < diag.n; i++)
		if (!diag.items[i].message || !*diag.items[i].message)
			abort();
	vgt_metadata_free(md);
	vgt_damage_clear(&diag);
	free(text);
	return 0;
}
