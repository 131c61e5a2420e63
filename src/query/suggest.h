/* The names closest to an unknown one, for error messages. */
#ifndef VIGIL_QUERY_SUGGEST_H
#define VIGIL_QUERY_SUGGEST_H

#include <stddef.h>
#include <stdio.h>

/* Writes into `out` up to three of `names` closest to `unknown` (edit distance, ignoring
 * case), comma-separated; when none is close, all of them if there are at most 12, else
 * an empty string. Returns 1 (close names), 0 (all names) or -1 (none written). */
int vgq_suggest(const char *unknown, const char *const *names, size_t n, char *out, size_t outsize);

#endif
