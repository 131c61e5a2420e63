/* "Did you mean": the known names closest to an unknown one, by edit distance ignoring
 * case, for the errors about unknown relations, attributes and variables. */
#include "query/suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 64 || m > 64)
		return (size_t)-1;
	size_t row[65];
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j];
			size_t cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[m];
}

int vgq_suggest(const char *unknown, const char *const *names, size_t n, char *out, size_t outsize)
{
	out[0] = '\0';
	if (!n || !outsize)
		return -1;
	size_t limit = strlen(unknown) / 3 + 2;
	size_t best[3] = {0}, dist[3];
	size_t nbest = 0;
	for (size_t i = 0; i < n; i++) {
		size_t d = distance(unknown, names[i]);
		if (d > limit)
			continue;
		/* insert into the three closest, stable by order of the list */
		size_t k = nbest < 3 ? nbest++ : 3;
		while (k > 0 && dist[k - 1] > d) {
			if (k < 3) {
				best[k] = best[k - 1];
				dist[k] = dist[k - 1];
			}
			k--;
		}
		if (k < 3) {
			best[k] = i;
			dist[k] = d;
		}
	}
	size_t len = 0;
	if (nbest) {
		for (size_t k = 0; k < nbest && len < outsize; k++)
			len += (size_t)snprintf(out + len, outsize - len, "%s%s", k ? ", " : "",
			                        names[best[k]]);
		return 1;
	}
	/* nothing close: list them all, if few */
	if (n > 12)
		return -1;
	for (size_t i = 0; i < n && len < outsize; i++)
		len += (size_t)snprintf(out + len, outsize - len, "%s%s", i ? ", " : "", names[i]);
	return 0;
}
