/* Behaviour models (.vgm, docs/model.md) into PostgreSQL beside the traces
 * (docs/store.md, "Models"): per model a row in `models` keyed by the SHA-256 of the
 * file's bytes, its events, its transitions with their probability, and the quantiles of
 * the timed transitions' sketches. Every file is read and checked before anything is
 * sent, and each model goes in one transaction, so a damaged file stores nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_io.h"
#include "model/model.h"
#include "store/internal.h"

/* Model files beyond this are refused rather than read into memory. */
#define MODEL_MAX (1u << 30)

struct model_file {
	const char *path;
	char *data;
	size_t size;
	struct vgm_model *m;
};

/* Reads the whole regular file (a FIFO or device is refused, never blocked on). */
static int slurp(struct model_file *f, char *err, size_t errsize)
{
	f->data = vgb_read_file(f->path, MODEL_MAX, VGB_READ_REGULAR, &f->size);
	if (f->data)
		return 0;
	if (errno == EINVAL || errno == EISDIR || errno == EFBIG)
		return vgs_fail(err, errsize, "%s: not a regular model file (of at most 1 GiB)",
		                f->path);
	return vgs_fail(err, errsize, "%s: %s", f->path, strerror(errno));
}

static int read_model(struct model_file *f, char *err, size_t errsize)
{
	if (slurp(f, err, errsize) != 0)
		return -1;
	f->m = vgm_model_new();
	if (!f->m)
		abort();
	if (vgm_read_buffer(f->m, f->path, f->data, f->size, err, errsize) != 0)
		return -1; /* "FILE:LINE: what" */
	vgm_model_update_out(f->m);
	return 0;
}

static int setup(struct vgs_pg *pg, char *err, size_t errsize)
{
	static const char *const ddl[] = {
	    /* One row per model stored; its id tags the model's rows in the other tables. */
	    "models (id bigserial PRIMARY KEY, model_key text NOT NULL UNIQUE, path text, "
	    "sources text, events bigint, transitions bigint, event_count numeric(20,0), "
	    "transition_count numeric(20,0), bytes bigint, loaded_at timestamptz NOT NULL "
	    "DEFAULT now())",
	    "model_events (vg_model bigint NOT NULL, event bigint NOT NULL, site text, fmt text, "
	    "name text, count numeric(20,0), out numeric(20,0))",
	    "model_transitions (vg_model bigint NOT NULL, from_event bigint NOT NULL, to_event "
	    "bigint NOT NULL, count numeric(20,0), probability double precision, sum_ns "
	    "numeric(20,0), timed numeric(20,0))",
	    "model_transition_times (vg_model bigint NOT NULL, from_event bigint NOT NULL, "
	    "to_event bigint NOT NULL, timed numeric(20,0), mean_ns double precision, min_ns "
	    "double precision, p50_ns double precision, p90_ns double precision, p99_ns double "
	    "precision, max_ns double precision)"};
	int rc = 0;
	for (size_t i = 0; i < sizeof ddl / sizeof *ddl && rc == 0; i++) {
		struct vgs_buf q = {0};
		vgs_buf_puts(&q, "CREATE TABLE IF NOT EXISTS ");
		vgs_buf_ident(&q, pg->schema);
		vgs_buf_printf(&q, ".%s", ddl[i]);
		rc = vgs_exec(pg, q.p, "models", err, errsize);
		if (rc != 0) { /* two loaders creating it at once: the loser retries */
			char again[8];
			rc = vgs_exec(pg, q.p, "models", again, sizeof again) == 0 ? 0 : rc;
		}
		vgs_buf_free(&q);
	}
	return rc;
}

static void put_double(struct vgs_buf *b, double v)
{
	if (isnan(v))
		vgs_buf_puts(b, "\\N");
	else
		vgs_buf_printf(b, "%.17g", v);
}

/* The rows of m's three tables, as COPY text. Events are numbered from 1 in the model's
 * order, which for a file written by `vigil model` is the file's own numbering. */
static void encode(const struct vgm_model *m, int64_t id, struct vgs_buf *ev, struct vgs_buf *tr,
                   struct vgs_buf *tt)
{
	for (size_t i = 0; i < m->nevents; i++) {
		const struct vgm_event *e = &m->events[i];
		vgs_buf_printf(ev, "%" PRId64 "\t%zu\t", id, i + 1);
		vgs_buf_copytext(ev, e->site);
		vgs_buf_putc(ev, '\t');
		vgs_buf_copytext(ev, e->fmt);
		vgs_buf_putc(ev, '\t');
		if (e->name)
			vgs_buf_copytext(ev, e->name);
		else
			vgs_buf_puts(ev, "\\N");
		vgs_buf_printf(ev, "\t%" PRIu64 "\t%" PRIu64 "\n", e->count, e->out);
	}
	for (size_t i = 0; i < m->ntrans; i++) {
		const struct vgm_trans *t = &m->trans[i];
		uint64_t out = m->events[t->from].out;
		vgs_buf_printf(tr, "%" PRId64 "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu64 "\t", id,
		               t->from + 1, t->to + 1, t->count);
		put_double(tr, out ? (double)t->count / (double)out : NAN);
		vgs_buf_printf(tr, "\t%" PRIu64 "\t%" PRIu64 "\n", t->sum_ns, t->sk.total);
		if (!t->sk.total)
			continue;
		vgs_buf_printf(tt, "%" PRId64 "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu64, id,
		               t->from + 1, t->to + 1, t->sk.total);
		const double v[] = {
		    vgm_sketch_mean(&t->sk),           vgm_sketch_quantile(&t->sk, 0),
		    vgm_sketch_quantile(&t->sk, 0.5),  vgm_sketch_quantile(&t->sk, 0.9),
		    vgm_sketch_quantile(&t->sk, 0.99), vgm_sketch_quantile(&t->sk, 1)};
		for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
			vgs_buf_putc(tt, '\t');
			put_double(tt, v[k]);
		}
		vgs_buf_putc(tt, '\n');
	}
}

static int server_error(struct vgs_pg *pg, const char *what, char *err, size_t errsize)
{
	char msg[1024];
	vgs_pg_message(pg, msg, sizeof msg);
	return vgs_fail(err, errsize, "%s: %s", what, msg);
}

/* Stores one model in one transaction; *loaded false when its key was there already. */
static int store_one(struct vgs_pg *pg, const struct model_file *f, struct vgs_stats *st,
                     bool *loaded, char *err, size_t errsize)
{
	*loaded = false;
	struct vgs_buf q = {0}, src = {0};
	for (size_t i = 0; i < f->m->nsources; i++) {
		vgs_buf_puts(&src, i ? "\n" : "");
		vgs_buf_puts(&src, f->m->sources[i]);
	}
	/* The key: the SHA-256 of the file's bytes, computed by the server (binary param). */
	vgs_buf_puts(&q, "INSERT INTO ");
	vgs_buf_ident(&q, pg->schema);
	vgs_buf_puts(&q, ".models (model_key, path, sources, events, transitions, event_count, "
	                 "transition_count, bytes) VALUES (encode(sha256($1::bytea), 'hex'), $2, "
	                 "$3, $4, $5, $6, $7, $8) ON CONFLICT (model_key) DO NOTHING RETURNING id");
	char ne[32], nt[32], ce[32], ct[32], nb[32];
	snprintf(ne, sizeof ne, "%zu", f->m->nevents);
	snprintf(nt, sizeof nt, "%zu", f->m->ntrans);
	snprintf(ce, sizeof ce, "%" PRIu64, vgm_total_events(f->m));
	snprintf(ct, sizeof ct, "%" PRIu64, vgm_total_transitions(f->m));
	snprintf(nb, sizeof nb, "%zu", f->size);
	char *abs = realpath(f->path, NULL);
	const char *p[8] = {f->data, abs ? abs : f->path, src.n ? src.p : NULL, ne, nt, ce, ct, nb};
	int lens[8] = {(int)f->size}, fmts[8] = {1};
	int rc = vgs_exec(pg, "BEGIN", "begin", err, errsize);
	int64_t id = -1;
	if (rc == 0) {
		PGresult *res = PQexecParams(pg->conn, q.p, 8, NULL, p, lens, fmts, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			rc = server_error(pg, "models", err, errsize);
		else if (PQntuples(res) == 1)
			id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
	}
	free(abs);
	if (rc == 0 && id >= 0) { /* else stored before (or by another loader meanwhile) */
		struct vgs_buf ev = {0}, tr = {0}, tt = {0};
		encode(f->m, id, &ev, &tr, &tt);
		rc = vgs_copy_rows(pg, "model_events",
		                   "vg_model, event, site, fmt, name, count, out", &ev, &st->bytes,
		                   err, errsize);
		if (rc == 0)
			rc = vgs_copy_rows(pg, "model_transitions",
			                   "vg_model, from_event, to_event, count, probability, "
			                   "sum_ns, timed",
			                   &tr, &st->bytes, err, errsize);
		if (rc == 0)
			rc =
			    vgs_copy_rows(pg, "model_transition_times",
			                  "vg_model, from_event, to_event, timed, mean_ns, min_ns, "
			                  "p50_ns, p90_ns, p99_ns, max_ns",
			                  &tt, &st->bytes, err, errsize);
		vgs_buf_free(&ev);
		vgs_buf_free(&tr);
		vgs_buf_free(&tt);
	}
	if (rc == 0 && id >= 0) {
		rc = vgs_exec(pg, "COMMIT", "commit", err, errsize);
		*loaded = rc == 0;
		if (rc == 0)
			st->rows += f->m->nevents + f->m->ntrans;
	} else if (PQtransactionStatus(pg->conn) != PQTRANS_IDLE) {
		char ignore[8];
		vgs_exec(pg, rc == 0 ? "COMMIT" : "ROLLBACK", "rollback", ignore, sizeof ignore);
	}
	vgs_buf_free(&q);
	vgs_buf_free(&src);
	return rc;
}

int vgs_pg_store_models(struct vgs_pg *pg, const char *const *paths, size_t npaths,
                        struct vgs_stats *st, char *err, size_t errsize)
{
	struct model_file *files = calloc(npaths + 1, sizeof *files);
	if (!files)
		abort();
	int rc = 0;
	/* Every file read and checked first: one damaged model stores nothing at all. */
	for (size_t i = 0; i < npaths && rc == 0; i++) {
		files[i].path = paths[i];
		rc = read_model(&files[i], err, errsize);
	}
	if (rc == 0 && npaths)
		rc = setup(pg, err, errsize);
	for (size_t i = 0; i < npaths && rc == 0; i++) {
		bool loaded = false;
		st->models++;
		rc = store_one(pg, &files[i], st, &loaded, err, errsize);
		if (rc != 0) {
			char msg[1024];
			snprintf(msg, sizeof msg, "%s", err);
			vgs_fail(err, errsize, "%s: %s", paths[i], msg);
			break;
		}
		if (loaded)
			st->models_loaded++;
		else
			st->models_skipped++;
		if (pg->opts.progress)
			pg->opts.progress(pg->opts.progress_arg, paths[i], loaded,
			                  loaded ? files[i].m->nevents + files[i].m->ntrans : 0);
	}
	for (size_t i = 0; i < npaths; i++) {
		free(files[i].data);
		vgm_model_free(files[i].m);
	}
	free(files);
	return rc;
}
