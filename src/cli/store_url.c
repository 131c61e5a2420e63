/* Is a query's source a PostgreSQL store (query_store.h)? */
#include <string.h>

#include "cli/query_store.h"

bool vg_is_store_url(const char *s)
{
	return s && (!strncmp(s, "postgresql://", 13) || !strncmp(s, "postgres://", 11));
}
