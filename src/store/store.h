/* The PostgreSQL store (docs/store.md): every primitive relation of a trace written into
 * PostgreSQL tables with valid-time columns, by batched COPY through libpq.
 *
 * The unit of loading is one process image: its relations are built from that image
 * alone (vgq_database_build over the image directory), so that every row carries the
 * image's host and pid, and a load is recorded in the `loads` table under the image's
 * key (its uuid and directory name) in the same transaction as its rows. Loading an
 * image that is already there does nothing, so reruns never duplicate; two loaders of
 * the same image serialize on that key.
 *
 * Errors are one line in `err` (libpq's multi-line messages flattened, the URL's password
 * never shown). */
#ifndef VIGIL_STORE_STORE_H
#define VIGIL_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What one call loaded. */
struct vgs_stats {
	uint64_t images;          /* images seen */
	uint64_t loaded;          /* images loaded now */
	uint64_t skipped;         /* images already stored by an earlier load */
	uint64_t damaged;         /* images loaded from a damaged trace (what was readable) */
	uint64_t relations;       /* relation tables written to (one per relation per image) */
	uint64_t rows;            /* rows sent by COPY */
	uint64_t bytes;           /* COPY data sent */
	int64_t copy_ns;          /* time spent in COPY (sending and committing) */
	uint64_t models;          /* model files seen */
	uint64_t models_loaded;   /* models stored now */
	uint64_t models_skipped;  /* models stored by an earlier load (same bytes) */
	uint64_t derived;         /* derived relations stored now (one analysis of the trace) */
	uint64_t derived_rows;    /* their rows (also counted in rows) */
	uint64_t derived_skipped; /* 1: the same images' analysis was stored already */
};

struct vgs_options {
	const char *schema; /* the PostgreSQL schema of the tables; NULL: "vigil" */
	/* Called after each image: its path and whether it was loaded (false: skipped). */
	void (*progress)(void *arg, const char *image, bool loaded, uint64_t rows);
	void *progress_arg;
	bool no_setup; /* connect only: create neither the schema nor its tables */
	/* vgs_pg_load then stores the derived relations of the whole trace too (the
	 * providers registered with relations/derived.h; docs/store.md "Derived relations").
	 * Called after them with image NULL: derived relations stored (loaded) or skipped.
	 * NULL: none; "": all; else names separated by commas (case-insensitive). */
	const char *derived;
};

/* An open connection to the store (one per loader; not thread-safe). */
struct vgs_pg;

/* Connects to `url` (postgresql://... or postgres://...) and creates the schema and the
 * loads table if missing. NULL with one line in `err` if the URL is not one or the
 * server refuses. */
struct vgs_pg *vgs_pg_open(const char *url, const struct vgs_options *o, char *err, size_t errsize);
void vgs_pg_close(struct vgs_pg *pg);

/* Loads every process image under each path (a trace directory, or image directories),
 * then (options.derived) the derived relations of all of them as one analysis. 0 on
 * success; -1 with one line in `err` (images loaded before the failure stay). */
int vgs_pg_load(struct vgs_pg *pg, const char *const *paths, size_t npaths, struct vgs_stats *st,
                char *err, size_t errsize);

/* Stores behaviour models (.vgm files, docs/model.md) into the tables `models`,
 * `model_events`, `model_transitions` and `model_transition_times` (docs/store.md). Every
 * file is read and checked before anything is sent (a damaged one: -1 with its
 * "FILE:LINE: what", nothing stored); then each model goes in one transaction, recorded
 * under the SHA-256 of its bytes, so storing the same file again adds nothing. */
int vgs_pg_store_models(struct vgs_pg *pg, const char *const *paths, size_t npaths,
                        struct vgs_stats *st, char *err, size_t errsize);

/* For the collector: stores one completed image (`image_dir`, a directory of `trace_dir`
 * holding `metadata`) through a connection of its own. Idempotent: 0 if stored now or
 * earlier; -1 with one line in `err`. Blocking (connects, builds, copies): call it from a
 * thread other than the event loop. */
int vgs_pg_store_image(const char *url, const char *trace_dir, const char *image_dir, char *err,
                       size_t errsize);

/* ---- TQuel compiled to SQL over the store (query.c; docs/tquel-sql.md) ---- */
struct vgq_sql_catalog;
struct vgq_sql_program;
struct vgq_relation;

/* The store's catalog of the connection's schema (its relations, their tables, columns
 * and types). NULL with one line in `err`: no store in the schema, or a schema written
 * by an older vigil (without the catalog). */
struct vgq_sql_catalog *vgs_pg_catalog(struct vgs_pg *pg, char *err, size_t errsize);

/* Runs a compiled program in one transaction: each retrieve's SELECT (retrieve into:
 * its table and catalog rows made first), each result passed to emit as a relation
 * (valid during the call). `show_sql`: each statement's SQL is printed there first.
 * 0, or -1 with one line in `err`: then nothing was written (rolled back). */
typedef int (*vgs_emit_fn)(void *ctx, const struct vgq_relation *r);
int vgs_pg_run(struct vgs_pg *pg, const struct vgq_sql_program *p, FILE *show_sql, vgs_emit_fn emit,
               void *ctx, char *err, size_t errsize);

/* vigil store --index: B-tree indexes on every relation table's valid time, entity
 * identities and strings (docs/tquel-sql.md, "Indexes"), then ANALYZE; idempotent.
 * Adds the indexes asked for to *made (existing ones included). */
int vgs_pg_index(struct vgs_pg *pg, uint64_t *made, char *err, size_t errsize);

/* Prints each retrieve's SQL and the plan PostgreSQL chooses for it (EXPLAIN); retrieve
 * into tables are made for the later statements' plans and rolled back. */
int vgs_pg_explain(struct vgs_pg *pg, const struct vgq_sql_program *p, FILE *out, char *err,
                   size_t errsize);

/* `url` with its password (in user:password@ or password=) replaced by "***". */
void vgs_redact_url(const char *url, char *out, size_t size);

#endif
