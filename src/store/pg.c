/* The connection: URL check and redaction, connect, the schema and the loads table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

void vgs_redact_url(const char *url, char *out, size_t size)
{
	struct vgs_buf b = {0};
	const char *scheme = strstr(url, "://");
	const char *auth = scheme ? scheme + 3 : url;
	const char *end = auth + strcspn(auth, "/?#");
	const char *at = NULL;
	for (const char *p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
	if (colon) { /* user:password@ */
		vgs_buf_put(&b, url, (size_t)(colon + 1 - url));
		vgs_buf_puts(&b, "***");
		url = at;
	}
	/* password=... among the parameters */
	for (const char *p = url; *p;) {
		const char *k = strstr(p, "password=");
		if (!k || (k > p && k[-1] != '?' && k[-1] != '&')) {
			size_t n = k ? (size_t)(k - p) + 9 : strlen(p);
			vgs_buf_put(&b, p, n);
			p += n;
			continue;
		}
		vgs_buf_put(&b, p, (size_t)(k - p) + 9);
		vgs_buf_puts(&b, "***");
		p = k + 9 + strcspn(k + 9, "&#");
	}
	snprintf(out, size, "%s", b.p ? b.p : "");
	vgs_buf_free(&b);
}

static void quiet(void *arg, const char *message)
{
	(void)arg; /* NOTICEs ("already exists, skipping") are not news */
	(void)message;
}

void vgs_pg_message(struct vgs_pg *pg, char *out, size_t size)
{
	vgs_fail(out, size, "%s", PQerrorMessage(pg->conn));
}

int vgs_exec(struct vgs_pg *pg, const char *sql, const char *what, char *err, size_t errsize)
{
	PGresult *res = PQexec(pg->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = 0;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		char msg[1024];
		vgs_fail(msg, sizeof msg, "%s", PQresultErrorMessage(res));
		rc = vgs_fail(err, errsize, "%s: %s", what, msg);
	}
	PQclear(res);
	return rc;
}

static int setup(struct vgs_pg *pg, char *err, size_t errsize)
{
	struct vgs_buf q = {0};
	vgs_buf_puts(&q, "CREATE SCHEMA IF NOT EXISTS ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, "; CREATE TABLE IF NOT EXISTS ");
	vgs_buf_ident(&q, pg->schema);
	/* One row per image loaded; its id tags the image's rows in every relation table. */
	vgs_buf_puts(&q, ".loads (id bigserial PRIMARY KEY, image_key text NOT NULL UNIQUE, "
	                 "host text, pid bigint, program text, image_dir text, first_ns bigint, "
	                 "last_ns bigint, events bigint, rows bigint, damaged boolean, "
	                 "loaded_at timestamptz NOT NULL DEFAULT now()); ");
	vgs_catalog_ddl(&q, pg->schema);
	int rc = vgs_exec(pg, q.p, pg->shown, err, errsize);
	if (rc != 0) { /* two loaders creating the schema at once: the loser retries */
		char again[8];
		rc = vgs_exec(pg, q.p, pg->shown, again, sizeof again) == 0 ? 0 : rc;
	}
	vgs_buf_free(&q);
	return rc;
}

struct vgs_pg *vgs_pg_open(const char *url, const struct vgs_options *o, char *err, size_t errsize)
{
	char shown[512];
	vgs_redact_url(url, shown, sizeof shown);
	if (strncmp(url, "postgresql://", 13) != 0 && strncmp(url, "postgres://", 11) != 0) {
		vgs_fail(err, errsize,
		         "%s: not a PostgreSQL URL (postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DB)",
		         shown);
		return NULL;
	}
	const char *schema = o && o->schema ? o->schema : "vigil";
	if (!*schema || strlen(schema) > VGS_IDENT_MAX) {
		vgs_fail(err, errsize, "schema '%s': not 1 to %d bytes", schema, VGS_IDENT_MAX);
		return NULL;
	}
	/* Defaults first: the URL's own parameters override them (expand_dbname). */
	const char *keys[] = {"connect_timeout", "application_name", "dbname", "client_encoding",
	                      NULL};
	const char *vals[] = {"10", "vigil", url, "UTF8", NULL};
	PGconn *conn = PQconnectdbParams(keys, vals, 1);
	if (!conn || PQstatus(conn) != CONNECTION_OK) {
		char msg[1024];
		vgs_fail(msg, sizeof msg, "%s", conn ? PQerrorMessage(conn) : "out of memory");
		vgs_fail(err, errsize, "%s: %s", shown, msg);
		PQfinish(conn);
		return NULL;
	}
	PQsetNoticeProcessor(conn, quiet, NULL);
	struct vgs_pg *pg = calloc(1, sizeof *pg);
	if (!pg)
		abort();
	pg->conn = conn;
	snprintf(pg->schema, sizeof pg->schema, "%s", schema);
	snprintf(pg->shown, sizeof pg->shown, "%s", shown);
	if (o)
		pg->opts = *o;
	if (!(o && o->no_setup) && setup(pg, err, errsize) != 0) {
		vgs_pg_close(pg);
		return NULL;
	}
	return pg;
}

void vgs_pg_close(struct vgs_pg *pg)
{
	if (!pg)
		return;
	PQfinish(pg->conn);
	free(pg);
}
