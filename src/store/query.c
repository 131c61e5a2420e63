/* TQuel over the store: the catalog read from the schema, compiled programs run in one
 * transaction (nothing written unless every statement succeeds), each result turned
 * into a relation for vigil query's writers. Values come back as PostgreSQL's text. */
#include <stdlib.h>
#include <string.h>

#include "query/sql.h"
#include "store/internal.h"

static int server_error(struct vgs_pg *pg, const char *what, char *err, size_t errsize)
{
	char msg[1024];
	vgs_pg_message(pg, msg, sizeof msg);
	return vgs_fail(err, errsize, "%s: %s", what, msg);
}

/* to_regclass of schema.name: whether the table exists. -1 on a server error. */
static int exists(struct vgs_pg *pg, const char *name)
{
	struct vgs_buf q = {0};
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_putc(&q, '.');
	vgs_buf_ident(&q, name);
	const char *p[1] = {q.p};
	PGresult *res =
	    PQexecParams(pg->conn, "SELECT to_regclass($1) IS NOT NULL", 1, NULL, p, NULL, NULL, 0);
	vgs_buf_free(&q);
	int rc = PQresultStatus(res) == PGRES_TUPLES_OK ? PQgetvalue(res, 0, 0)[0] == 't' : -1;
	PQclear(res);
	return rc;
}

static enum vgq_type type_of(const char *s)
{
	static const char *const names[] = {"int", "uint", "double", "string", "bytes", "entity"};
	for (int i = 0; i < 6; i++)
		if (!strcmp(s, names[i]))
			return (enum vgq_type)i;
	return VGQ_STRING;
}

struct vgq_sql_catalog *vgs_pg_catalog(struct vgs_pg *pg, char *err, size_t errsize)
{
	int loads = exists(pg, "loads");
	int cat = loads > 0 ? exists(pg, VGQ_SQL_CATALOG_RELATIONS) : loads;
	if (loads < 0 || cat < 0) {
		server_error(pg, pg->shown, err, errsize);
		return NULL;
	}
	if (!loads) {
		vgs_fail(err, errsize,
		         "%s: no vigil store in schema %s (no table %s.loads; store traces first: "
		         "vigil store TRACE --to URL)",
		         pg->shown, pg->schema, pg->schema);
		return NULL;
	}
	if (!cat) {
		vgs_fail(err, errsize,
		         "%s: schema %s was written by an older vigil (no catalog table "
		         "%s." VGQ_SQL_CATALOG_RELATIONS
		         "): store the traces again with this vigil, into a "
		         "new schema (vigil store --schema NAME)",
		         pg->shown, pg->schema, pg->schema);
		return NULL;
	}
	struct vgs_buf q = {0};
	vgs_buf_puts(&q, "SELECT r.relation, r.table_name, r.kind, r.derived, a.attr, a.type, "
	                 "a.ref_kind, a.col, a.id_col, a.gen_col, a.load_col FROM ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, "." VGQ_SQL_CATALOG_RELATIONS " r LEFT JOIN ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, "." VGQ_SQL_CATALOG_ATTRIBUTES
	                 " a USING (relation) ORDER BY r.relation, a.position");
	PGresult *res = PQexec(pg->conn, q.p);
	vgs_buf_free(&q);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		char msg[1024];
		vgs_fail(msg, sizeof msg, "%s", PQresultErrorMessage(res));
		vgs_fail(err, errsize, "%s: catalog: %s", pg->shown, msg);
		PQclear(res);
		return NULL;
	}
	struct vgq_sql_catalog *c = vgq_sql_catalog_new(pg->schema);
	struct vgq_sql_rel *r = NULL;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *name = PQgetvalue(res, i, 0);
		if (!r || strcmp(r->name, name))
			r = vgq_sql_catalog_add(c, name, PQgetvalue(res, i, 1),
			                        !strcmp(PQgetvalue(res, i, 2), "event"),
			                        PQgetvalue(res, i, 3)[0] == 't');
		if (PQgetisnull(res, i, 4))
			continue;
#define V(k) (PQgetisnull(res, i, k) ? NULL : PQgetvalue(res, i, k))
		struct vgq_sql_attr a = {.name = V(4),
		                         .type = type_of(V(5)),
		                         .ref_kind = V(6),
		                         .col = V(7),
		                         .id_col = V(8),
		                         .gen_col = V(9),
		                         .load_col = V(10)};
#undef V
		vgq_sql_rel_add_attr(c, r, &a);
	}
	PQclear(res);
	return c;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 0;
}

/* A result's rows as a relation of the engine's kind: columns per attribute (an entity
 * from four: name, id, gen, image), then the valid time. Strings point into res. */
struct result {
	struct vgq_relation rel;
	union vgq_column *cols;
	uint8_t **nulls;
	uint8_t *bytes; /* decoded bytea values */
};

static void result_build(struct result *out, const struct vgq_sql_stmt *s, PGresult *res)
{
	struct vgq_relation *r = &out->rel;
	size_t n = (size_t)PQntuples(res);
	*r = (struct vgq_relation){.name = s->name,
	                           .kind = s->event ? VGQ_REL_EVENT : VGQ_REL_INTERVAL,
	                           .nattrs = s->nattrs,
	                           .attrs = s->attrs,
	                           .ntuples = n};
	r->from = calloc(n + 1, sizeof *r->from);
	r->to = s->event ? NULL : calloc(n + 1, sizeof *r->to);
	out->cols = calloc(s->nattrs + 1, sizeof *out->cols);
	out->nulls = calloc(s->nattrs + 1, sizeof *out->nulls);
	size_t nbytes = 0;
	for (int col = 0; col < PQnfields(res); col++)
		if (PQftype(res, col) == 17 /* bytea */)
			for (size_t t = 0; t < n; t++)
				nbytes += (size_t)PQgetlength(res, (int)t, col) / 2;
	out->bytes = malloc(nbytes + 1);
	if (!r->from || (!s->event && !r->to) || !out->cols || !out->nulls || !out->bytes)
		abort();
	size_t used = 0;
	int col = 0;
	for (size_t a = 0; a < s->nattrs; a++) {
		enum vgq_type type = s->attrs[a].type;
		size_t size = type == VGQ_ENTITY  ? sizeof(struct vgq_ref)
		              : type == VGQ_BYTES ? sizeof(struct vgq_bytes)
		                                  : sizeof(int64_t);
		void *p = calloc(n + 1, size);
		uint8_t *nul = calloc(n + 1, 1);
		if (!p || !nul)
			abort();
		out->cols[a].i = p;
		out->nulls[a] = nul;
		for (size_t t = 0; t < n; t++) {
			int row = (int)t;
			bool isnull = PQgetisnull(res, row, col);
			const char *v = PQgetvalue(res, row, col);
			/* an entity without a name is still one; without an id it is none */
			nul[t] = type == VGQ_ENTITY ? PQgetisnull(res, row, col + 1)
			                            : isnull && type != VGQ_STRING;
			switch (type) {
			case VGQ_INT:
				out->cols[a].i[t] = strtoll(v, NULL, 10);
				break;
			case VGQ_UINT:
				out->cols[a].u[t] = strtoull(v, NULL, 10);
				break;
			case VGQ_DOUBLE:
				out->cols[a].d[t] = strtod(v, NULL);
				break;
			case VGQ_STRING:
				out->cols[a].s[t] = isnull ? NULL : v;
				break;
			case VGQ_BYTES: { /* \x hex */
				size_t len = strlen(v) > 2 ? (strlen(v) - 2) / 2 : 0;
				for (size_t k = 0; k < len; k++)
					out->bytes[used + k] = (uint8_t)(hexval(v[2 + 2 * k]) << 4 |
					                                 hexval(v[3 + 2 * k]));
				out->cols[a].b[t] = (struct vgq_bytes){out->bytes + used, len};
				used += len;
				break;
			}
			case VGQ_ENTITY:
				out->cols[a].r[t] = (struct vgq_ref){
				    .name = isnull ? NULL : v,
				    .id = strtoull(PQgetvalue(res, row, col + 1), NULL, 10),
				    .gen =
				        (uint32_t)strtoul(PQgetvalue(res, row, col + 2), NULL, 10),
				    .image =
				        (uint32_t)strtoul(PQgetvalue(res, row, col + 3), NULL, 10)};
				break;
			}
		}
		col += type == VGQ_ENTITY ? 4 : 1;
	}
	for (size_t t = 0; t < n; t++) {
		r->from[t] = strtoll(PQgetvalue(res, (int)t, col), NULL, 10);
		if (r->to)
			r->to[t] = strtoll(PQgetvalue(res, (int)t, col + 1), NULL, 10);
		if (!t || r->from[t] < r->first)
			r->first = r->from[t];
		int64_t end = r->to ? r->to[t] : r->from[t];
		if (!t || end > r->last)
			r->last = end;
	}
	r->cols = out->cols;
	r->nulls = out->nulls;
}

static void result_free(struct result *out)
{
	for (size_t a = 0; a < out->rel.nattrs; a++) {
		free(out->cols[a].i);
		free(out->nulls[a]);
	}
	free(out->cols);
	free(out->nulls);
	free(out->bytes);
	free(out->rel.from);
	free(out->rel.to);
}

/* The server's message without its "ERROR:  " prefix, naming the result. */
static int statement_error(PGresult *res, const struct vgq_sql_stmt *s, char *err, size_t errsize)
{
	const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	char msg[1024];
	vgs_fail(msg, sizeof msg, "%s", primary ? primary : PQresultErrorMessage(res));
	/* numeric_value_out_of_range of a bigint: integer arithmetic past int8, where the
	 * engine fails the statement naming the expression (docs/tquel.md "Values") */
	if (state && !strcmp(state, "22003") && strstr(msg, "bigint"))
		return vgs_fail(err, errsize,
		                "%s (line %u): integer overflow: a value is past the 64-bit "
		                "integers (PostgreSQL: %s; run it on the trace to see which "
		                "expression)",
		                s->name, s->line, msg);
	return vgs_fail(err, errsize, "%s (line %u): PostgreSQL: %s", s->name, s->line, msg);
}

static void rollback(struct vgs_pg *pg)
{
	if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE) {
		char ignore[8];
		vgs_exec(pg, "ROLLBACK", "rollback", ignore, sizeof ignore);
	}
}

/* One statement's text, failing with the result's name in the message. */
static int exec_named(struct vgs_pg *pg, const struct vgq_sql_stmt *s, const char *sql, char *err,
                      size_t errsize)
{
	PGresult *res = PQexec(pg->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK
	             ? 0
	             : statement_error(res, s, err, errsize);
	PQclear(res);
	return rc;
}

int vgs_pg_run(struct vgs_pg *pg, const struct vgq_sql_program *p, FILE *show_sql, vgs_emit_fn emit,
               void *ctx, char *err, size_t errsize)
{
	int rc = vgs_exec(pg, "BEGIN", "begin", err, errsize);
	for (size_t i = 0; i < p->nstmts && rc == 0; i++) {
		const struct vgq_sql_stmt *s = &p->stmts[i];
		if (show_sql && s->into)
			fprintf(show_sql, "-- %s (line %u)\n%s;\n%s;\n%s;\n", s->name, s->line,
			        s->create, s->catalog, s->from_table);
		else if (show_sql)
			fprintf(show_sql, "-- %s (line %u)\n%s;\n", s->name, s->line, s->select);
		if (s->into && (rc = exec_named(pg, s, s->create, err, errsize)) == 0)
			rc = exec_named(pg, s, s->catalog, err, errsize);
		if (rc)
			break;
		PGresult *res = PQexec(pg->conn, s->into ? s->from_table : s->select);
		if (PQresultStatus(res) != PGRES_TUPLES_OK) {
			rc = statement_error(res, s, err, errsize);
			PQclear(res);
			break;
		}
		struct result r;
		result_build(&r, s, res);
		if (emit(ctx, &r.rel) < 0)
			rc = vgs_fail(err, errsize, "%s: writing the result failed", s->name);
		result_free(&r);
		PQclear(res);
	}
	if (rc == 0)
		rc = vgs_exec(pg, "COMMIT", "commit", err, errsize);
	if (rc)
		rollback(pg);
	return rc;
}

int vgs_pg_explain(struct vgs_pg *pg, const struct vgq_sql_program *p, FILE *out, char *err,
                   size_t errsize)
{
	int rc = vgs_exec(pg, "BEGIN", "begin", err, errsize);
	for (size_t i = 0; i < p->nstmts && rc == 0; i++) {
		const struct vgq_sql_stmt *s = &p->stmts[i];
		fprintf(out, "%s-- %s (line %u)\n%s;\n", i ? "\n" : "", s->name, s->line,
		        s->select);
		struct vgs_buf q = {0};
		vgs_buf_printf(&q, "EXPLAIN %s", s->select);
		PGresult *res = PQexec(pg->conn, q.p);
		vgs_buf_free(&q);
		if (PQresultStatus(res) != PGRES_TUPLES_OK) {
			rc = statement_error(res, s, err, errsize);
			PQclear(res);
			break;
		}
		fprintf(out, "-- PostgreSQL's plan:\n");
		for (int k = 0; k < PQntuples(res); k++)
			fprintf(out, "--   %s\n", PQgetvalue(res, k, 0));
		PQclear(res);
		if (s->into && (rc = exec_named(pg, s, s->create, err, errsize)) == 0)
			rc = exec_named(pg, s, s->catalog, err, errsize);
	}
	rollback(pg); /* explain writes nothing */
	return rc;
}
