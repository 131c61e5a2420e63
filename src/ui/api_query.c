/* /api/query and /api/explain: the statements as vigil query -e and vigil explain -e take
 * them, errors with the same messages at line:col, results as JSON for the page or as
 * the CLI's outputs (CSV, JSON lines, an SQLite file) for download. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query/output.h"
#include "tquel/tquel.h"
#include "ui/ui.h"

json_t *vgu_errors_from_text(const char *text)
{
	json_t *list = json_array();
	json_t *cur = NULL;
	const char *p = text;
	size_t sl = strlen(VGU_QUERY_SOURCE);
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		unsigned line, col;
		int used = 0;
		if (!strncmp(p, VGU_QUERY_SOURCE ":", sl + 1) &&
		    sscanf(p + sl + 1, "%u:%u: error: %n", &line, &col, &used) == 2 && used) {
			size_t head = sl + 1 + (size_t)used;
			cur = json_pack("{s:i,s:i,s:s%,s:s%}", "line", (int)line, "col", (int)col,
			                "message", p + head, n - head, "text", p, n);
			json_array_append_new(list, cur);
		} else if (cur) {
			const char *t = json_string_value(json_object_get(cur, "text"));
			char *joined;
			if (asprintf(&joined, "%s\n%.*s", t, (int)n, p) >= 0) {
				json_object_set_new(cur, "text", json_string(joined));
				free(joined);
			}
		} else {
			cur = json_pack("{s:i,s:i,s:s%,s:s%}", "line", 0, "col", 0, "message", p, n,
			                "text", p, n);
			json_array_append_new(list, cur);
		}
		p = eol ? eol + 1 : NULL;
	}
	return list;
}

struct tquel_query *vgu_parse(const char *text, json_t **errors)
{
	struct tquel_query *q = tquel_parse(VGU_QUERY_SOURCE, text, strlen(text));
	if (q->nerrors) {
		char *t = tquel_errors_string(q);
		*errors = vgu_errors_from_text(t ? t : "");
		free(t);
		tquel_free(q);
		return NULL;
	}
	size_t retrieves = 0;
	for (size_t i = 0; i < q->nstmts; i++)
		retrieves += q->stmts[i].kind == TQ_RETRIEVE;
	if (!retrieves) {
		*errors = json_pack("[{s:i,s:i,s:s}]", "line", 0, "col", 0, "message",
		                    "no retrieve statement, nothing to answer (see docs/tquel.md)");
		tquel_free(q);
		return NULL;
	}
	return q;
}

/* One run of the statements: its session holds its results. */
struct run {
	struct vgq_session *session;
	const struct vgq_relation **results;
	size_t n;
};

static int collect(void *ctx, const struct vgq_relation *rel)
{
	struct run *u = ctx;
	const struct vgq_relation **p = realloc(u->results, (u->n + 1) * sizeof *p);
	if (!p)
		return -1;
	u->results = p;
	u->results[u->n++] = rel;
	return 0;
}

/* Runs q; NULL, or the error list (the run is then freed). */
static json_t *run(struct vgu_app *a, const struct tquel_query *q, struct run *u)
{
	struct vgq_options o = {.tick_ns = a->tick_ns};
	memset(u, 0, sizeof *u);
	u->session = vgq_session_new(a->db, &o);
	char *etext = NULL;
	size_t elen = 0;
	FILE *ef = open_memstream(&etext, &elen);
	if (!ef)
		return json_pack("[{s:i,s:i,s:s}]", "line", 0, "col", 0, "message",
		                 "out of memory");
	size_t nerr = vgq_run(u->session, q, collect, u, ef);
	fclose(ef);
	json_t *errors = NULL;
	if (nerr) {
		errors = vgu_errors_from_text(etext ? etext : "");
		vgq_session_free(u->session);
		free(u->results);
		memset(u, 0, sizeof *u);
	}
	free(etext);
	return errors;
}

/* A download: the results written by the CLI's writers into memory (or a file). */
static void download(const struct run *u, const char *format, struct vgu_reply *r)
{
	char *buf = NULL;
	size_t len = 0;
	if (!strcmp(format, "sqlite")) {
		char path[] = "/tmp/vigil-ui-XXXXXX.db";
		int fd = mkstemps(path, 3);
		if (fd < 0)
			return vgu_reply_error(r, 500, "temporary file: %s", strerror(errno));
		close(fd);
		char err[512] = "";
		struct vgq_sqlite *db = vgq_sqlite_open(path, err, sizeof err);
		int bad = !db;
		for (size_t i = 0; db && !bad && i < u->n; i++)
			bad = vgq_sqlite_write(db, u->results[i], err, sizeof err) < 0;
		char err2[512];
		if (db && vgq_sqlite_close(db, err2, sizeof err2) < 0 && !bad) {
			bad = 1;
			memcpy(err, err2, sizeof err);
		}
		if (bad) {
			unlink(path);
			return vgu_reply_error(r, 500, "%s", err);
		}
		FILE *f = fopen(path, "rb");
		FILE *m = open_memstream(&buf, &len);
		char chunk[65536];
		size_t k;
		while (f && m && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
			fwrite(chunk, 1, k, m);
		if (f)
			fclose(f);
		if (m)
			fclose(m);
		unlink(path);
		r->type = "application/vnd.sqlite3";
		r->disposition = "attachment; filename=\"results.db\"";
	} else {
		enum vgq_format f = !strcmp(format, "csv") ? VGQ_FORMAT_CSV : VGQ_FORMAT_JSON;
		FILE *m = open_memstream(&buf, &len);
		if (!m)
			return vgu_reply_error(r, 500, "out of memory");
		for (size_t i = 0; i < u->n; i++) {
			if (i && f == VGQ_FORMAT_CSV)
				fputc('\n', m);
			vgq_write_relation(m, u->results[i], f, NULL);
		}
		fclose(m);
		r->type = f == VGQ_FORMAT_CSV ? "text/csv; charset=utf-8" : "application/x-ndjson";
		r->disposition = f == VGQ_FORMAT_CSV ? "attachment; filename=\"results.csv\""
		                                     : "attachment; filename=\"results.jsonl\"";
	}
	r->status = 200;
	r->body = buf;
	r->len = len;
}

void vgu_api_query(struct vgu_app *a, const char *text, const char *format, struct vgu_reply *r)
{
	if (format && strcmp(format, "csv") && strcmp(format, "jsonl") && strcmp(format, "sqlite"))
		return vgu_reply_error(r, 400, "format '%.40s' is not csv, jsonl or sqlite",
		                       format);
	/* Errors in the statements are an answer (200 with "errors"), not a bad request. */
	json_t *errors = NULL;
	struct tquel_query *q = vgu_parse(text, &errors);
	if (!q)
		return vgu_reply_json(r, 200, json_pack("{s:o,s:[]}", "errors", errors, "results"));
	struct run u;
	if ((errors = run(a, q, &u))) {
		tquel_free(q);
		return vgu_reply_json(r, 200, json_pack("{s:o,s:[]}", "errors", errors, "results"));
	}
	if (format) { /* a download leaves the page's results as they are */
		download(&u, format, r);
		vgq_session_free(u.session);
		free(u.results);
		tquel_free(q);
		return;
	}
	vgu_app_forget_results(a);
	a->query = q;
	a->session = u.session;
	a->results = u.results;
	a->nresults = u.n;
	json_t *results = json_array();
	for (size_t i = 0; i < a->nresults; i++) {
		const struct vgq_relation *rel = a->results[i];
		json_t *h = vgu_relation_head(rel);
		json_t *tuples = json_array();
		size_t n =
		    rel->ntuples < VGU_MAX_RESULT_TUPLES ? rel->ntuples : VGU_MAX_RESULT_TUPLES;
		for (size_t t = 0; t < n; t++)
			json_array_append_new(tuples, vgu_tuple_json(rel, t, a->db->first));
		json_object_set_new(h, "rows", json_integer((json_int_t)a->tl.nrows));
		char group[256];
		snprintf(group, sizeof group, "query: %s", rel->name);
		vgu_timeline_add_relation(&a->tl, rel, group, "result");
		json_object_set_new(h, "rows_end", json_integer((json_int_t)a->tl.nrows));
		json_object_set_new(h, "values", tuples);
		json_object_set_new(h, "truncated", json_boolean(n < rel->ntuples));
		json_array_append_new(results, h);
	}
	vgu_reply_json(r, 200,
	               json_pack("{s:o,s:o,s:b}", "results", results, "errors", json_array(),
	                         "partial", a->db->partial));
}

void vgu_api_explain(struct vgu_app *a, const char *text, struct vgu_reply *r)
{
	json_t *errors = NULL;
	struct tquel_query *q = vgu_parse(text, &errors);
	if (!q)
		return vgu_reply_json(r, 200, json_pack("{s:o,s:s}", "errors", errors, "text", ""));
	struct vgq_options o = {.tick_ns = a->tick_ns};
	struct vgq_session *s = vgq_session_new(a->db, &o);
	char *out = NULL, *etext = NULL;
	size_t olen = 0, elen = 0;
	FILE *of = open_memstream(&out, &olen), *ef = open_memstream(&etext, &elen);
	size_t nerr = of && ef ? vgq_explain(s, q, of, ef) : 1;
	if (of)
		fclose(of);
	if (ef)
		fclose(ef);
	vgq_session_free(s);
	tquel_free(q);
	if (nerr)
		vgu_reply_json(
		    r, 400, json_pack("{s:o}", "errors", vgu_errors_from_text(etext ? etext : "")));
	else
		vgu_reply_json(r, 200, json_pack("{s:s,s:[]}", "text", out ? out : "", "errors"));
	free(out);
	free(etext);
}
