/* Calls the collector's entry point: store_image URL TRACE_DIR IMAGE_DIR. */
#include <stdio.h>

#include "store/store.h"

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: store_image URL TRACE_DIR IMAGE_DIR\n");
		return 2;
	}
	char err[1024];
	if (vgs_pg_store_image(argv[1], argv[2], argv[3], err, sizeof err) != 0) {
		fprintf(stderr, "store_image: %s\n", err);
		return 1;
	}
	return 0;
}
