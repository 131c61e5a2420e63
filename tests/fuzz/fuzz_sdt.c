/* libFuzzer target of the SDT note reader (src/common/sdt.c): an input starting with 'A'
 * is an argument list ("-4@%eax 8@-16(%rbp)"), any other an ELF file. Any bytes open or
 * fail with a reason, never read out of the buffer; every probe found is walked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/sdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	if (size && data[0] == 'A') {
		char *args = malloc(size); /* NUL-terminated, as the notes' strings are */
		memcpy(args, data + 1, size - 1);
		args[size - 1] = 0;
		struct vg_sdt_probe p;
		vg_sdt_parse_args(NULL, &p, args);
		if (p.arg_error && (p.arg_bad < 1 || p.arg_bad > p.nargs))
			abort();
		free(args);
		return 0;
	}
	/* An exact-size copy, so that ASan sees any read past the end. */
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	struct vg_sdt_file f;
	if (vg_sdt_open(&f, copy, size, err, sizeof err) == 0) {
		size_t cursor = 0, n = 0;
		struct vg_sdt_probe p;
		while (vg_sdt_next(&f, &cursor, &p, err, sizeof err) == 1) {
			if (strlen(p.provider) + strlen(p.name) + strlen(p.args) > size ||
			    p.nargs > VG_SDT_MAX_ARGS)
				abort();
			n++;
		}
		(void)n;
	}
	free(copy);
	return 0;
}
