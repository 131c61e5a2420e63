/* The front end's vigil query / explain over a postgresql:// store: the store's client
 * (libpq) is vigil-full's, which is run with the same arguments (front_end.c). */
#include "cli/front_end.h"
#include "cli/query_store.h"

int vg_query_store(const struct vg_store_query *o)
{
	(void)o;
	return vg_run_full(vg_front_end_argv);
}
