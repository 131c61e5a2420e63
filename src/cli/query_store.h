/* vigil query / explain over the PostgreSQL store (query_store.c). */
#ifndef VIGIL_CLI_QUERY_STORE_H
#define VIGIL_CLI_QUERY_STORE_H

#include <stdbool.h>

#include "query/output.h"
#include "tquel/tquel.h"

struct vg_store_query {
	const char *cmd; /* "query" or "explain", for messages */
	const char *url, *schema;
	const struct tquel_query *q;
	enum vgq_format format;
	bool explain, show_sql;
	int64_t tick_ns; /* the base tick of Clock */
};

/* A postgresql:// or postgres:// URL. */
bool vg_is_store_url(const char *s);
/* Compiles and runs (or explains) the statements on the store; the exit status. */
int vg_query_store(const struct vg_store_query *o);

#endif
