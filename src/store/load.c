/* Loading process images: one transaction per image, recorded in the loads table under
 * the image's key, so that loading an image again does nothing. */
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/internal.h"
#include "trace/source.h"

int64_t vgs_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The image's identity across reloads: its uuid (every image's metadata has its own)
 * and directory name; without a uuid, host, pid, process generation and exec. */
void vgs_image_key(const struct vgt_image *img, char *out, size_t size)
{
	char path[4096];
	snprintf(path, sizeof path, "%s", img->path);
	const char *dir = basename(path);
	if (img->has_uuid) {
		char hex[33];
		for (int i = 0; i < 16; i++)
			snprintf(hex + 2 * i, 3, "%02x", img->uuid[i]);
		snprintf(out, size, "%s/%s", hex, dir);
	} else {
		snprintf(out, size, "%s/%" PRId64 "/%" PRIu64 "/%" PRIu64 "/%s",
		         img->hostname ? img->hostname : "", img->pid, img->process_gen,
		         img->exec_index, dir);
	}
}

PGresult *vgs_query(struct vgs_pg *pg, const char *sql, int n, const char *const *params)
{
	PGresult *res = PQexecParams(pg->conn, sql, n, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		PQclear(res);
		return NULL;
	}
	return res;
}

int vgs_server_error(struct vgs_pg *pg, const char *what, char *err, size_t errsize)
{
	char msg[1024];
	vgs_pg_message(pg, msg, sizeof msg);
	return vgs_fail(err, errsize, "%s: %s", what, msg);
}

/* Loads one image, `tr` (the image alone, as opening its directory gives it; closed
 * here). *loaded: false if it was stored already. */
static int load_image(struct vgs_pg *pg, struct vgt_trace *tr, struct vgs_stats *st, bool *loaded,
                      uint64_t *nrows, char *err, size_t errsize)
{
	*loaded = false;
	const struct vgt_image *img = vgt_image_at(tr, 0);
	const char *dir = img->path;
	char terr[512];
	if (!vgt_readable_or_say(tr, dir, terr, sizeof terr)) {
		vgt_close(tr);
		return vgs_fail(err, errsize, "%s", terr);
	}
	char key[512];
	vgs_image_key(img, key, sizeof key);
	struct vgs_buf q = {0};
	vgs_buf_puts(&q, "SELECT 1 FROM ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, ".loads WHERE image_key = $1");
	const char *kp[1] = {key};
	PGresult *res = vgs_query(pg, q.p, 1, kp);
	int rc = res ? 0 : vgs_server_error(pg, "loads", err, errsize);
	bool there = res && PQntuples(res) > 0;
	PQclear(res);
	if (rc != 0 || there) { /* stored by an earlier load: nothing to build */
		vgs_buf_free(&q);
		vgt_close(tr);
		return rc;
	}

	struct vgq_database *db = vgq_database_build(tr);
	vgq_database_print_warnings(db, "vigil store", stderr);
	struct vgs_table *tables = calloc(db->nrelations + 1, sizeof *tables);
	if (!tables)
		abort();
	for (size_t i = 0; i < db->nrelations; i++)
		vgs_table_plan(&tables[i], db->relations[i]);
	/* Tables first, each in a transaction of its own (DDL a dashboard's reads would
	 * otherwise wait on for the whole load). */
	for (size_t i = 0; i < db->nrelations && rc == 0; i++) {
		rc = vgs_table_ensure(pg, &tables[i], err, errsize);
		if (rc == 0)
			rc = vgs_catalog_note(pg, &tables[i], err, errsize);
	}

	int64_t t0 = vgs_now_ns();
	if (rc == 0)
		rc = vgs_exec(pg, "BEGIN", "begin", err, errsize);
	int64_t load = -1;
	if (rc == 0) {
		q.n = 0;
		vgs_buf_puts(&q, "INSERT INTO ");
		vgs_buf_ident(&q, pg->schema);
		vgs_buf_puts(&q,
		             ".loads (image_key, host, pid, program, image_dir, first_ns, "
		             "last_ns, events, damaged) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
		             "$9) ON CONFLICT (image_key) DO NOTHING RETURNING id");
		char pid[32], first[32], last[32], events[32];
		snprintf(pid, sizeof pid, "%" PRId64, img->pid);
		snprintf(first, sizeof first, "%" PRId64, db->first);
		snprintf(last, sizeof last, "%" PRId64, db->last);
		snprintf(events, sizeof events, "%" PRIu64, db->events);
		const char *p[9] = {key,   img->hostname, pid,    img->procname,          img->path,
		                    first, last,          events, db->partial ? "t" : "f"};
		res = vgs_query(pg, q.p, 9, p);
		if (!res)
			rc = vgs_server_error(pg, "loads", err, errsize);
		else if (PQntuples(res) == 1)
			load = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
	}
	uint64_t rows = 0;
	if (rc == 0 && load >= 0) { /* else another loader stored it meanwhile */
		for (size_t i = 0; i < db->nrelations && rc == 0; i++) {
			const struct vgq_relation *r = db->relations[i];
			if (!r->ntuples)
				continue;
			rc = vgs_copy_relation(pg, &tables[i], r, load, img->hostname, img->pid,
			                       &rows, &st->bytes, err, errsize);
			st->relations++;
		}
		if (rc == 0) {
			q.n = 0;
			vgs_buf_puts(&q, "UPDATE ");
			vgs_buf_ident(&q, pg->schema);
			vgs_buf_printf(&q, ".loads SET rows = %" PRIu64 " WHERE id = %" PRId64,
			               rows, load);
			rc = vgs_exec(pg, q.p, "loads", err, errsize);
		}
	}
	if (rc == 0 && load >= 0) {
		rc = vgs_exec(pg, "COMMIT", "commit", err, errsize);
		if (rc == 0) {
			*loaded = true;
			st->rows += rows;
			*nrows = rows;
			st->damaged += db->partial;
		}
	} else if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE) {
		char ignore[8];
		vgs_exec(pg, "ROLLBACK", "rollback", ignore, sizeof ignore);
	}
	st->copy_ns += vgs_now_ns() - t0;
	if (rc != 0) { /* name the image in the message */
		char msg[1024];
		snprintf(msg, sizeof msg, "%s", err);
		vgs_fail(err, errsize, "%s: %s", dir, msg);
	}
	for (size_t i = 0; i < db->nrelations; i++)
		vgs_table_free(&tables[i]);
	free(tables);
	vgq_database_free(db);
	vgs_buf_free(&q);
	vgt_close(tr);
	return rc;
}

int vgs_pg_load(struct vgs_pg *pg, const char *const *paths, size_t npaths, struct vgs_stats *st,
                char *err, size_t errsize)
{
	/* Which images: the reader finds every directory holding metadata, and cuts a
	 * shared-layout folder into its writers' images once for all of them. */
	struct vgt_trace *tr = vgt_open(paths, npaths, err, errsize);
	if (!tr)
		return -1;
	struct vgt_trace **images;
	size_t n = vgt_split_images(tr, &images);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (rc != 0) {
			vgt_close(images[i]);
			continue;
		}
		char *dir = strdup(vgt_image_at(images[i], 0)->path);
		if (!dir)
			abort();
		bool loaded;
		uint64_t rows = 0;
		st->images++;
		rc = load_image(pg, images[i], st, &loaded, &rows, err, errsize);
		if (rc == 0) {
			if (loaded)
				st->loaded++;
			else
				st->skipped++;
			if (pg->opts.progress)
				pg->opts.progress(pg->opts.progress_arg, dir, loaded, rows);
		}
		free(dir);
	}
	free(images);
	if (rc == 0 && pg->opts.derived)
		rc = vgs_load_derived(pg, paths, npaths, st, err, errsize);
	return rc;
}

int vgs_pg_store_image(const char *url, const char *trace_dir, const char *image_dir, char *err,
                       size_t errsize)
{
	char path[4096];
	if (image_dir[0] == '/' || !trace_dir || !trace_dir[0])
		snprintf(path, sizeof path, "%s", image_dir);
	else
		snprintf(path, sizeof path, "%s/%s", trace_dir, image_dir);
	struct vgs_pg *pg = vgs_pg_open(url, NULL, err, errsize);
	if (!pg)
		return -1;
	struct vgs_stats st = {0};
	const char *paths[1] = {path};
	int rc = vgs_pg_load(pg, paths, 1, &st, err, errsize);
	vgs_pg_close(pg);
	return rc;
}
