/* vigil diff over two query results (docs/query.md "Comparing two runs"): the answers
 * of the same TQuel statements in two runs (vigil query --format json files, or two
 * traces and --query), their differences ranked as the models' diff ranks its own. */
#ifndef VIGIL_CLI_DIFF_RESULTS_H
#define VIGIL_CLI_DIFF_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

struct vg_results_diff_opts {
	const char *query; /* TQuel text run on both traces; NULL: the paths are results */
	const char *by;    /* key attributes, comma-separated; NULL: the non-numeric ones */
	size_t top;        /* rows per report, 0: all */
	bool json;
	unsigned long long min_support; /* tuples per group on each side for a change */
};

/* Whether path holds query results (its first byte that is not white space is '{') and
 * not a behaviour model. */
bool vg_is_results_file(const char *path);

/* The report: 0 printed, 2 after one line on stderr. */
int vg_diff_results(const char *base, const char *other, const struct vg_results_diff_opts *o);

#endif
