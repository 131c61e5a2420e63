/* bench/duckdb/duck_e2e.c: DuckDB's command line, the part the end-to-end benchmark needs
 * (bench/scale_bench.py): a process that opens a database file, runs statements and prints
 * the last one's rows as CSV, as `duckdb FILE -csv -c SQL` would, linked against the
 * libduckdb.so of the npm package pinned in bench/duckdb/package-lock.json (Debian has no
 * DuckDB and the package ships no header: the few C API declarations are below, from
 * DuckDB's stable C API, duckdb.h of 1.x).
 *
 *   duck-e2e --version
 *   duck-e2e DBFILE THREADS SQL...   (each SQL run in turn; the last one's rows on stdout)
 *
 * Built by bench/benchlib.py (duckdb_e2e) at benchmark time. Exit 1 with one line on
 * stderr when DuckDB reports an error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t idx_t;
typedef struct _duckdb_database {
	void *internal_ptr;
} * duckdb_database;
typedef struct _duckdb_connection {
	void *internal_ptr;
} * duckdb_connection;
typedef enum { DuckDBSuccess = 0, DuckDBError = 1 } duckdb_state;
/* duckdb_result is 48 bytes in 1.x; the union leaves room should it grow */
typedef union {
	struct {
		idx_t column_count, row_count, rows_changed;
		void *columns;
		char *error;
		void *internal_data;
	} r;
	char room[256];
} duckdb_result;

duckdb_state duckdb_open(const char *path, duckdb_database *out);
duckdb_state duckdb_connect(duckdb_database db, duckdb_connection *out);
duckdb_state duckdb_query(duckdb_connection c, const char *sql, duckdb_result *out);
const char *duckdb_result_error(duckdb_result *r);
idx_t duckdb_column_count(duckdb_result *r);
idx_t duckdb_row_count(duckdb_result *r);
char *duckdb_value_varchar(duckdb_result *r, idx_t col, idx_t row);
void duckdb_free(void *p);
void duckdb_destroy_result(duckdb_result *r);
void duckdb_disconnect(duckdb_connection *c);
void duckdb_close(duckdb_database *db);
const char *duckdb_library_version(void);

static int run(duckdb_connection con, const char *sql, int print)
{
	duckdb_result res;
	memset(&res, 0, sizeof res);
	if (duckdb_query(con, sql, &res) != DuckDBSuccess) {
		fprintf(stderr, "duck-e2e: %s\n", duckdb_result_error(&res));
		duckdb_destroy_result(&res);
		return 1;
	}
	if (print) {
		idx_t cols = duckdb_column_count(&res), rows = duckdb_row_count(&res);
		for (idx_t i = 0; i < rows; i++)
			for (idx_t c = 0; c < cols; c++) {
				char *v = duckdb_value_varchar(&res, c, i);
				fputs(v ? v : "", stdout);
				putchar(c + 1 < cols ? ',' : '\n');
				duckdb_free(v);
			}
	}
	duckdb_destroy_result(&res);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("%s\n", duckdb_library_version());
		return 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: duck-e2e DBFILE THREADS SQL... | --version\n");
		return 2;
	}
	duckdb_database db;
	duckdb_connection con;
	if (duckdb_open(argv[1], &db) != DuckDBSuccess) {
		fprintf(stderr, "duck-e2e: cannot open %s\n", argv[1]);
		return 1;
	}
	if (duckdb_connect(db, &con) != DuckDBSuccess) {
		fprintf(stderr, "duck-e2e: cannot connect to %s\n", argv[1]);
		duckdb_close(&db);
		return 1;
	}
	char set[64];
	snprintf(set, sizeof set, "SET threads = %d", atoi(argv[2]));
	int rc = run(con, set, 0);
	for (int i = 3; i < argc && !rc; i++)
		rc = run(con, argv[i], i == argc - 1);
	duckdb_disconnect(&con);
	duckdb_close(&db);
	return rc;
}
