/* vigil query / vigil explain on postgresql://...: TQuel compiled to SQL and run by
 * PostgreSQL over the store's tables (docs/tquel-sql.md). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/query_store.h"
#include "query/output.h"
#include "query/sql.h"
#ifdef VIGIL_HAVE_STORE
#include "store/store.h"
#endif

#ifdef VIGIL_HAVE_STORE
struct emit_ctx {
	enum vgq_format format;
	size_t written;
};

static int emit(void *p, const struct vgq_relation *r)
{
	struct emit_ctx *c = p;
	if (c->written++ && c->format != VGQ_FORMAT_JSON && putchar('\n') == EOF)
		return -1;
	if (vgq_write_relation(stdout, r, c->format, NULL) < 0) {
		fprintf(stderr, "vigil query: writing the result: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int vg_query_store(const struct vg_store_query *o)
{
	char err[1024];
	struct vgs_options opts = {.schema = o->schema, .no_setup = true};
	struct vgs_pg *pg = vgs_pg_open(o->url, &opts, err, sizeof err);
	if (!pg) {
		fprintf(stderr, "vigil %s: %s\n", o->cmd, err);
		return 2;
	}
	int rc = 2;
	struct vgq_sql_program prog = {0};
	struct vgq_sql_catalog *cat = vgs_pg_catalog(pg, err, sizeof err);
	if (!cat) {
		fprintf(stderr, "vigil %s: %s\n", o->cmd, err);
		goto out;
	}
	cat->tick_ns = o->tick_ns;
	if (vgq_sql_compile(cat, o->q, &prog, stderr))
		goto out;
	struct emit_ctx ctx = {.format = o->format};
	int r = o->explain ? vgs_pg_explain(pg, &prog, stdout, err, sizeof err)
	                   : vgs_pg_run(pg, &prog, o->show_sql ? stderr : NULL, emit, &ctx, err,
	                                sizeof err);
	if (r < 0)
		fprintf(stderr, "vigil %s: %s\n", o->cmd, err);
	else
		rc = 0;
out:
	vgq_sql_program_free(&prog);
	vgq_sql_catalog_free(cat);
	vgs_pg_close(pg);
	return rc;
}
#else
int vg_query_store(const struct vg_store_query *o)
{
	fprintf(stderr, "vigil %s: this vigil was built without libpq: no PostgreSQL store\n",
	        o->cmd);
	return 2;
}
#endif
