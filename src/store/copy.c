/* Rows into PostgreSQL by COPY ... FROM STDIN in text format, sent in batches of about
 * 1 MiB. Text values are sent as UTF-8: a byte that is not part of well-formed UTF-8
 * becomes U+FFFD (a UTF8 database refuses it; the trace keeps the original). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "store/internal.h"
#include "trace/trace.h"

#define BATCH (1u << 20)

/* COPY text: backslash, tab, newline and carriage return escaped. */
static void text(struct vgs_buf *b, const char *s)
{
	size_t len = strlen(s);
	for (size_t i = 0; i < len;) {
		size_t n = vgb_utf8_len(s + i, len - i);
		if (!n) {
			vgs_buf_put(b, "\xEF\xBF\xBD", 3);
			i++;
			continue;
		}
		char c = s[i];
		if (n == 1 && (c == '\\' || c == '\t' || c == '\n' || c == '\r')) {
			vgs_buf_putc(b, '\\');
			vgs_buf_putc(b, c == '\\' ? '\\' : c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
		} else {
			vgs_buf_put(b, s + i, n);
		}
		i += n;
	}
}

static void value(struct vgs_buf *b, const struct vgs_table *tab, const struct vgq_relation *r,
                  size_t a, size_t t)
{
	static const char hex[] = "0123456789abcdef";
	const union vgq_column *c = &r->cols[a];
	bool null = r->nulls && r->nulls[a] && r->nulls[a][t];
	switch (r->attrs[a].type) {
	case VGQ_INT:
		if (null)
			vgs_buf_puts(b, "\\N");
		else
			vgs_buf_printf(b, "%" PRId64, c->i[t]);
		return;
	case VGQ_UINT:
		if (null)
			vgs_buf_puts(b, "\\N");
		else
			vgs_buf_printf(b, "%" PRIu64, c->u[t]);
		return;
	case VGQ_DOUBLE:
		if (null)
			vgs_buf_puts(b, "\\N");
		else if (isnan(c->d[t]))
			vgs_buf_puts(b, "NaN");
		else if (isinf(c->d[t]))
			vgs_buf_puts(b, c->d[t] < 0 ? "-Infinity" : "Infinity");
		else
			vgs_buf_printf(b, "%.17g", c->d[t]);
		return;
	case VGQ_STRING:
		if (null || !c->s[t])
			vgs_buf_puts(b, "\\N");
		else
			text(b, c->s[t]);
		return;
	case VGQ_BYTES:
		if (null) {
			vgs_buf_puts(b, "\\N");
			return;
		}
		vgs_buf_puts(b, "\\\\x"); /* bytea hex input, its backslash escaped for COPY */
		for (size_t i = 0; i < c->b[t].len; i++) {
			vgs_buf_putc(b, hex[c->b[t].ptr[i] >> 4]);
			vgs_buf_putc(b, hex[c->b[t].ptr[i] & 15]);
		}
		return;
	case VGQ_ENTITY:
		if (null) {
			vgs_buf_puts(b, tab->ref_loads ? "\\N\t\\N\t\\N\t\\N" : "\\N\t\\N\t\\N");
			return;
		}
		if (c->r[t].name)
			text(b, c->r[t].name);
		else
			vgs_buf_puts(b, "\\N");
		vgs_buf_printf(b, "\t%" PRIu64 "\t%" PRIu32, c->r[t].id, c->r[t].gen);
		if (!tab->ref_loads)
			return;
		if (c->r[t].image < tab->nimage_loads && tab->image_loads[c->r[t].image] >= 0)
			vgs_buf_printf(b, "\t%" PRId64, tab->image_loads[c->r[t].image]);
		else
			vgs_buf_puts(b, "\t\\N");
		return;
	}
}

void vgs_buf_copytext(struct vgs_buf *b, const char *s)
{
	text(b, s);
}

int vgs_copy_rows(struct vgs_pg *pg, const char *table, const char *cols,
                  const struct vgs_buf *rows, uint64_t *bytes, char *err, size_t errsize)
{
	char what[200];
	snprintf(what, sizeof what, "table %s.%s", pg->schema, table);
	struct vgs_buf q = {0};
	vgs_buf_puts(&q, "COPY ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_putc(&q, '.');
	vgs_buf_ident(&q, table);
	vgs_buf_printf(&q, " (%s) FROM STDIN", cols);
	PGresult *res = PQexec(pg->conn, q.p);
	bool ok = PQresultStatus(res) == PGRES_COPY_IN;
	PQclear(res);
	vgs_buf_free(&q);
	char msg[1024] = "";
	if (!ok) {
		vgs_pg_message(pg, msg, sizeof msg);
		return vgs_fail(err, errsize, "%s: %s", what, msg);
	}
	int rc = 0;
	for (size_t off = 0; off < rows->n && rc == 0;) {
		size_t n = rows->n - off < BATCH ? rows->n - off : BATCH;
		if (PQputCopyData(pg->conn, rows->p + off, (int)n) != 1)
			rc = -1;
		off += n;
		*bytes += n;
	}
	PQputCopyEnd(pg->conn, rc == 0 ? NULL : "vigil: sending failed");
	while ((res = PQgetResult(pg->conn))) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK && !msg[0]) {
			vgs_fail(msg, sizeof msg, "%s", PQresultErrorMessage(res));
			rc = -1;
		}
		PQclear(res);
	}
	if (rc != 0) {
		if (!msg[0])
			vgs_pg_message(pg, msg, sizeof msg);
		return vgs_fail(err, errsize, "%s: %s", what, msg);
	}
	return 0;
}

static int flush_batch(struct vgs_pg *pg, struct vgs_buf *b, uint64_t *bytes)
{
	if (!b->n)
		return 0;
	if (PQputCopyData(pg->conn, b->p, (int)b->n) != 1)
		return -1;
	*bytes += b->n;
	b->n = 0;
	return 0;
}

int vgs_copy_relation(struct vgs_pg *pg, const struct vgs_table *t, const struct vgq_relation *r,
                      int64_t load, const char *host, int64_t pid, uint64_t *rows, uint64_t *bytes,
                      char *err, size_t errsize)
{
	char what[200];
	snprintf(what, sizeof what, "table %s.%s", pg->schema, t->name);
	struct vgs_buf b = {0};
	vgs_buf_puts(&b, "COPY ");
	vgs_buf_ident(&b, pg->schema);
	vgs_buf_putc(&b, '.');
	vgs_buf_ident(&b, t->name);
	vgs_buf_puts(&b, " (");
	for (size_t i = 0; i < t->ncols; i++) {
		vgs_buf_puts(&b, i ? ", " : "");
		vgs_buf_ident(&b, t->cols[i].name);
	}
	vgs_buf_puts(&b, ") FROM STDIN");
	PGresult *res = PQexec(pg->conn, b.p);
	bool ok = PQresultStatus(res) == PGRES_COPY_IN;
	PQclear(res);
	if (!ok) {
		char msg[1024];
		vgs_pg_message(pg, msg, sizeof msg);
		vgs_buf_free(&b);
		return vgs_fail(err, errsize, "%s: %s", what, msg);
	}
	/* The meta columns are the same on every row: encode them once. */
	struct vgs_buf meta = {0};
	vgs_buf_printf(&meta, "%" PRId64 "\t", load);
	if (host)
		text(&meta, host);
	else
		vgs_buf_puts(&meta, "\\N");
	if (pid >= 0)
		vgs_buf_printf(&meta, "\t%" PRId64, pid);
	else
		vgs_buf_puts(&meta, "\t\\N");
	b.n = 0;
	bool event = r->kind == VGQ_REL_EVENT;
	int rc = 0;
	for (size_t i = 0; i < r->ntuples && rc == 0; i++) {
		vgs_buf_put(&b, meta.p, meta.n);
		for (size_t a = 0; a < r->nattrs; a++) {
			vgs_buf_putc(&b, '\t');
			value(&b, t, r, a, i);
		}
		vgs_buf_printf(&b, "\t%" PRId64, r->from[i]);
		if (!event)
			vgs_buf_printf(&b, "\t%" PRId64 "\t%s", r->to[i],
			               r->open && r->open[i] ? "t" : "f");
		vgs_buf_putc(&b, '\n');
		if (b.n >= BATCH)
			rc = flush_batch(pg, &b, bytes);
	}
	if (rc == 0)
		rc = flush_batch(pg, &b, bytes);
	/* End the COPY (aborted if sending failed) and read its outcome. */
	PQputCopyEnd(pg->conn, rc == 0 ? NULL : "vigil: sending failed");
	char msg[1024] = "";
	while ((res = PQgetResult(pg->conn))) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK && !msg[0]) {
			vgs_fail(msg, sizeof msg, "%s", PQresultErrorMessage(res));
			rc = -1;
		}
		PQclear(res);
	}
	if (rc != 0) {
		if (!msg[0])
			vgs_pg_message(pg, msg, sizeof msg);
		vgs_fail(err, errsize, "%s: %s", what, msg);
	} else {
		*rows += r->ntuples;
	}
	vgs_buf_free(&meta);
	vgs_buf_free(&b);
	return rc;
}
