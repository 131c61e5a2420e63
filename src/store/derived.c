/* Derived relations into the store (docs/store.md "Derived relations"): Network, Message,
 * Violation, LogEvent... are what an analysis finds in the whole trace, and a network or
 * a deadlock spans processes, so they are not loaded per image: after the images, the
 * whole trace is analysed once (from the relations cache when it fits) and its derived
 * relations go into their tables under one load of their own, keyed by the images it
 * spans and the relations asked for (`derived/` and the SHA-256 of their keys and
 * names), in one transaction.
 *
 * Entity references name threads of the images: each has a fourth column NAME_load, the
 * load of the image that scopes the thread (its process's first), so that they join the
 * primitive relations' references (NAME_id, NAME_gen, vg_load) as on the trace.
 *
 * Storing the same images again adds nothing; an analysis of other images that shares
 * one with this (the trace stored again after it grew) is replaced: its rows, its
 * `derived_images` rows and its load are deleted in the same transaction. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/word_list.h"
#include "query/sql.h"
#include "relations/cache.h"
#include "relations/derived.h"
#include "store/internal.h"
#include "trace/source.h"

#define KEY_MAX 512

static int by_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One bigint of a one-row query, or -1 (none); -2 on a server error (said in err). */
static int64_t one_id(struct vgs_pg *pg, const char *sql, const char *param, char *err,
                      size_t errsize)
{
	const char *p[1] = {param};
	PGresult *res = vgs_query(pg, sql, 1, p);
	if (!res) {
		vgs_server_error(pg, "loads", err, errsize);
		return -2;
	}
	int64_t id = PQntuples(res) > 0 && !PQgetisnull(res, 0, 0)
	                 ? strtoll(PQgetvalue(res, 0, 0), NULL, 10)
	                 : -1;
	PQclear(res);
	return id;
}

struct job {
	struct vgs_pg *pg;
	struct vgt_trace *tr;
	size_t nimages;
	char **keys;         /* per image, in image order */
	int64_t *image_load; /* per image: its load id (-1: not stored) */
	char key[KEY_MAX];   /* the analysis's */
	const struct vgq_relation **rels;
	struct vgs_table *tables;
	size_t nrels;
};

/* The images' keys, the analysis's key from them and the relations asked for (`which`),
 * and each image's load. */
static int keys(struct job *j, const char *which, char *err, size_t errsize)
{
	struct vgs_pg *pg = j->pg;
	j->keys = calloc(j->nimages + 1, sizeof *j->keys);
	j->image_load = calloc(j->nimages + 1, sizeof *j->image_load);
	const char **sorted = calloc(j->nimages + 1, sizeof *sorted);
	if (!j->keys || !j->image_load || !sorted)
		abort();
	struct vgs_buf all = {0}, q = {0};
	for (size_t i = 0; i < j->nimages; i++) {
		if (!(j->keys[i] = malloc(KEY_MAX)))
			abort();
		vgs_image_key(vgt_image_at(j->tr, i), j->keys[i], KEY_MAX);
		sorted[i] = j->keys[i];
	}
	qsort(sorted, j->nimages, sizeof *sorted, by_key);
	for (size_t i = 0; i < j->nimages; i++) {
		vgs_buf_puts(&all, sorted[i]);
		vgs_buf_putc(&all, '\n');
	}
	free(sorted);
	/* and the relations asked for: storing others later is another analysis (which
	 * then replaces this one) */
	for (size_t i = 0; vgq_derived_registered(i); i++)
		if (!*which || vgb_word_listed(which, vgq_derived_registered(i)))
			vgs_buf_printf(&all, "relation %s\n", vgq_derived_registered(i));
	const char *p[1] = {all.p ? all.p : ""};
	PGresult *res = vgs_query(pg,
	                          "SELECT 'derived/' || encode(sha256(convert_to($1, 'UTF8')), "
	                          "'hex')",
	                          1, p);
	int rc = res ? 0 : vgs_server_error(pg, "the analysis's key", err, errsize);
	if (res)
		snprintf(j->key, sizeof j->key, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	vgs_buf_puts(&q, "SELECT id FROM ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, ".loads WHERE image_key = $1");
	for (size_t i = 0; i < j->nimages && rc == 0; i++)
		if ((j->image_load[i] = one_id(pg, q.p, j->keys[i], err, errsize)) == -2)
			rc = -1;
	vgs_buf_free(&all);
	vgs_buf_free(&q);
	return rc;
}

/* The derived relations asked for, built over the whole trace (an analysis that fails
 * is said on stderr and left out: the images are stored). */
static struct vgq_database *analyse(struct job *j, const char *const *paths, size_t npaths,
                                    const char *which)
{
	struct vgq_cache_request rq = {.trace_path = paths[0], .who = "vigil store"};
	struct vgq_database *db =
	    npaths == 1 ? vgq_database_cached(j->tr, &rq, NULL) : vgq_database_build(j->tr);
	const char **names = NULL;
	size_t n = vgq_derived_names(db, &names);
	j->rels = calloc(n + 1, sizeof *j->rels);
	j->tables = calloc(n + 1, sizeof *j->tables);
	if (!j->rels || !j->tables)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (*which && !vgb_word_listed(which, names[i]))
			continue;
		char why[1024];
		const struct vgq_relation *r = vgq_database_derived(db, names[i], why, sizeof why);
		if (!r) {
			if (why[0])
				fprintf(stderr, "vigil store: %s not stored: %s\n", names[i], why);
			continue;
		}
		vgs_table_plan_derived(&j->tables[j->nrels], r);
		j->tables[j->nrels].image_loads = j->image_load;
		j->tables[j->nrels].nimage_loads = j->nimages;
		j->rels[j->nrels++] = r;
	}
	free(names);
	return db;
}

/* Deletes the analyses sharing an image with this one (their rows, images and loads). */
static int replace_older(struct job *j, char *err, size_t errsize)
{
	struct vgs_pg *pg = j->pg;
	struct vgs_buf q = {0}, ids = {0};
	vgs_buf_puts(&q, "SELECT DISTINCT load FROM ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, ".derived_images WHERE image_key = $1");
	int rc = 0;
	for (size_t i = 0; i < j->nimages && rc == 0; i++) {
		const char *p[1] = {j->keys[i]};
		PGresult *res = vgs_query(pg, q.p, 1, p);
		if (!res) {
			rc = vgs_server_error(pg, "derived_images", err, errsize);
			break;
		}
		for (int k = 0; k < PQntuples(res); k++) {
			char word[40];
			snprintf(word, sizeof word, ",%s,", PQgetvalue(res, k, 0));
			if (!ids.p || !strstr(ids.p, word)) /* "," first, "," after each */
				vgs_buf_printf(&ids, "%s%s,", ids.n ? "" : ",",
				               PQgetvalue(res, k, 0));
		}
		PQclear(res);
	}
	if (rc != 0 || !ids.n) {
		vgs_buf_free(&q);
		vgs_buf_free(&ids);
		return rc;
	}
	ids.p[ids.n - 1] = '\0'; /* ",1,2" -> "1,2" */
	const char *list = ids.p + 1;
	q.n = 0;
	vgs_buf_puts(&q, "SELECT table_name FROM ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, "." VGQ_SQL_CATALOG_RELATIONS " WHERE relation = $1");
	struct vgs_buf del = {0};
	for (size_t i = 0; vgq_derived_registered(i) && rc == 0; i++) {
		const char *p[1] = {vgq_derived_registered(i)};
		PGresult *res = vgs_query(pg, q.p, 1, p);
		if (!res) {
			rc = vgs_server_error(pg, "catalog", err, errsize);
			break;
		}
		if (PQntuples(res) == 1) {
			vgs_buf_puts(&del, "DELETE FROM ");
			vgs_buf_ident(&del, pg->schema);
			vgs_buf_putc(&del, '.');
			vgs_buf_ident(&del, PQgetvalue(res, 0, 0));
			vgs_buf_printf(&del, " WHERE vg_load IN (%s); ", list);
		}
		PQclear(res);
	}
	if (rc == 0) {
		vgs_buf_puts(&del, "DELETE FROM ");
		vgs_buf_ident(&del, pg->schema);
		vgs_buf_printf(&del, ".derived_images WHERE load IN (%s); DELETE FROM ", list);
		vgs_buf_ident(&del, pg->schema);
		vgs_buf_printf(&del, ".loads WHERE id IN (%s)", list);
		rc = vgs_exec(pg, del.p, "replacing an earlier analysis", err, errsize);
	}
	vgs_buf_free(&del);
	vgs_buf_free(&q);
	vgs_buf_free(&ids);
	return rc;
}

/* The load row, the images it spans, the rows: in the open transaction. *load -1: stored
 * meanwhile by another loader. */
static int write_rows(struct job *j, const struct vgq_database *db, const char *dir,
                      struct vgs_stats *st, int64_t *load, uint64_t *rows, char *err,
                      size_t errsize)
{
	struct vgs_pg *pg = j->pg;
	struct vgs_buf q = {0};
	vgs_buf_puts(&q, "INSERT INTO ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, ".loads (image_key, program, image_dir, events, damaged) VALUES ($1, "
	                 "'vigil derived relations', $2, $3, $4) ON CONFLICT (image_key) DO "
	                 "NOTHING RETURNING id");
	char events[32];
	snprintf(events, sizeof events, "%" PRIu64, db->events);
	const char *p[4] = {j->key, dir, events, db->partial ? "t" : "f"};
	PGresult *res = vgs_query(pg, q.p, 4, p);
	int rc = res ? 0 : vgs_server_error(pg, "loads", err, errsize);
	*load = res && PQntuples(res) == 1 ? strtoll(PQgetvalue(res, 0, 0), NULL, 10) : -1;
	PQclear(res);
	if (rc == 0 && *load >= 0)
		rc = replace_older(j, err, errsize);
	if (rc == 0 && *load >= 0 && j->nimages) {
		q.n = 0;
		vgs_buf_puts(&q, "INSERT INTO ");
		vgs_buf_ident(&q, pg->schema);
		vgs_buf_puts(&q, ".derived_images (load, image_key) VALUES ");
		for (size_t i = 0; i < j->nimages; i++) {
			vgs_buf_printf(&q, "%s(%" PRId64 ", ", i ? ", " : "", *load);
			vgs_buf_literal(&q, j->keys[i]);
			vgs_buf_putc(&q, ')');
		}
		rc = vgs_exec(pg, q.p, "derived_images", err, errsize);
	}
	for (size_t i = 0; i < j->nrels && rc == 0 && *load >= 0; i++) {
		if (!j->rels[i]->ntuples)
			continue;
		rc = vgs_copy_relation(pg, &j->tables[i], j->rels[i], *load, NULL, -1, rows,
		                       &st->bytes, err, errsize);
		st->relations++;
	}
	if (rc == 0 && *load >= 0) {
		q.n = 0;
		vgs_buf_puts(&q, "UPDATE ");
		vgs_buf_ident(&q, pg->schema);
		vgs_buf_printf(&q, ".loads SET rows = %" PRIu64 " WHERE id = %" PRId64, *rows,
		               *load);
		rc = vgs_exec(pg, q.p, "loads", err, errsize);
	}
	vgs_buf_free(&q);
	return rc;
}

static int store(struct job *j, const char *const *paths, size_t npaths, struct vgs_stats *st,
                 char *err, size_t errsize)
{
	struct vgs_pg *pg = j->pg;
	struct vgs_buf q = {0};
	vgs_buf_puts(&q, "SELECT id FROM ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, ".loads WHERE image_key = $1");
	int64_t there = one_id(pg, q.p, j->key, err, errsize);
	vgs_buf_free(&q);
	if (there == -2)
		return -1;
	if (there >= 0) { /* these images' analysis is stored: nothing to build */
		st->derived_skipped = 1;
		if (pg->opts.progress)
			pg->opts.progress(pg->opts.progress_arg, NULL, false, 0);
		return 0;
	}
	struct vgq_database *db = analyse(j, paths, npaths, pg->opts.derived);
	vgs_buf_puts(&q, "CREATE TABLE IF NOT EXISTS ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, ".derived_images (load bigint NOT NULL, image_key text NOT NULL)");
	int rc = vgs_exec(pg, q.p, "derived_images", err, errsize);
	vgs_buf_free(&q);
	for (size_t i = 0; i < j->nrels && rc == 0; i++) { /* DDL first, as for images */
		rc = vgs_table_ensure(pg, &j->tables[i], err, errsize);
		if (rc == 0)
			rc = vgs_catalog_note(pg, &j->tables[i], err, errsize);
	}
	int64_t t0 = vgs_now_ns(), load = -1;
	uint64_t rows = 0;
	if (rc == 0)
		rc = vgs_exec(pg, "BEGIN", "begin", err, errsize);
	if (rc == 0)
		rc = write_rows(j, db, paths[0], st, &load, &rows, err, errsize);
	if (rc == 0 && load >= 0)
		rc = vgs_exec(pg, "COMMIT", "commit", err, errsize);
	else if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE) {
		char ignore[8];
		vgs_exec(pg, "ROLLBACK", "rollback", ignore, sizeof ignore);
	}
	st->copy_ns += vgs_now_ns() - t0;
	if (rc == 0 && load >= 0) {
		st->derived = j->nrels;
		st->derived_rows = rows;
		st->rows += rows;
	} else if (rc == 0) {
		st->derived_skipped = 1;
	}
	if (rc == 0 && pg->opts.progress)
		pg->opts.progress(pg->opts.progress_arg, NULL, load >= 0, rows);
	for (size_t i = 0; i < j->nrels; i++)
		vgs_table_free(&j->tables[i]);
	vgq_database_free(db);
	return rc;
}

int vgs_load_derived(struct vgs_pg *pg, const char *const *paths, size_t npaths,
                     struct vgs_stats *st, char *err, size_t errsize)
{
	char terr[512];
	struct vgt_trace *tr = vgt_open_readable(paths, npaths, terr, sizeof terr);
	if (!tr)
		return vgs_fail(err, errsize, "%s", terr);
	struct job j = {.pg = pg, .tr = tr, .nimages = vgt_image_count(tr)};
	int rc = keys(&j, pg->opts.derived, err, errsize);
	if (rc == 0)
		rc = store(&j, paths, npaths, st, err, errsize);
	if (rc != 0) {
		char msg[1024];
		snprintf(msg, sizeof msg, "%s", err);
		vgs_fail(err, errsize, "derived relations: %s", msg);
	}
	for (size_t i = 0; i < j.nimages; i++)
		free(j.keys[i]);
	free(j.keys);
	free(j.image_load);
	free(j.rels);
	free(j.tables);
	vgt_close(tr);
	return rc;
}
