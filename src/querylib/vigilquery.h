/* libvigilquery.so: the query engine behind a small C interface, for the Python module
 * (python/vigil, ctypes) and other languages' foreign-function interfaces. Results are
 * text in the CLI's JSON formats, so every language reads the same answers as the CLI:
 *   relations: `vigil relations --json` (one object a line, the Clock relation last);
 *   query:     `vigil query --format json` (one tuple a line);
 *   events:    `vigil dump --json` (one event a call).
 * Every call returns 0, or -1 with one line (or a TQuel diagnostic) in *err. Strings
 * handed out (*out, *warnings, *err, events) are freed with vigil_ql_free. A damaged
 * trace answers from what was readable and says so in *warnings. */
#ifndef VIGIL_QUERYLIB_VIGILQUERY_H
#define VIGIL_QUERYLIB_VIGILQUERY_H

#include <stddef.h>

int vigil_ql_relations(const char *const *traces, size_t ntraces, char **out, char **warnings,
                       char **err);
int vigil_ql_query(const char *const *traces, size_t ntraces, const char *tquel, char **out,
                   char **warnings, char **err);
/* vigil_ql_query, and what the build read and passed over in *stats (JSON: "events" read,
 * "cache" (warm, cold, ...), "cache_checked_bytes", "skip", as `vigil query --stats` says
 * them). One trace is opened as `vigil query` opens it: through the relations cache,
 * keyed by the build id of the vigil installed with this library, so both share one
 * cache (docs/query.md "The relations cache"); several traces, or VIGIL_CACHE=off, are
 * built with the query's selections (docs/query.md "How selections reach decoding"). */
int vigil_ql_query_stats(const char *const *traces, size_t ntraces, const char *tquel, char **out,
                         char **warnings, char **err, char **stats);

struct vigil_ql_events;
struct vigil_ql_events *vigil_ql_events_open(const char *const *traces, size_t ntraces, char **err);
/* The next event in time order as a JSON object, or NULL at the end. */
char *vigil_ql_events_next(struct vigil_ql_events *e);
/* Damage and discarded events met so far, as text lines (NULL when none). */
char *vigil_ql_events_close(struct vigil_ql_events *e);

void vigil_ql_free(void *p);
const char *vigil_ql_version(void);

#endif
