/* vigil diff over two query results (diff_results.h). Each side is read as the JSON
 * lines of vigil query (from a file, or written here by running --query over a trace);
 * per result relation, tuples are compared by their values (times differ from run to
 * run), grouped by key attributes, and three reports are ranked, largest first:
 *   tuples   value tuples counted differently (only in one run, or more often)
 *   groups   each key's share of the relation's tuples, by the change of its share
 *   changes  per key and numeric attribute (and an interval's duration), the mean, by
 *            |other - baseline| / max(|baseline|, |other|) */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/word_list.h"
#include "diff_results.h"
#include "query/engine.h"
#include "query/output.h"
#include "query_need.h"
#include "relations/cache.h"
#include "statements.h"
#include "trace/source.h"

#define DURATION "(duration)"

struct row {
	const char *rel; /* the relation's name (the side's own copy) */
	int side;
	json_t *values;
	double duration; /* NAN for events */
	char *key, *all; /* the key values and all values, as compact JSON */
};

struct side {
	const char *path;
	struct row *rows;
	size_t n, cap;
	json_t *lines; /* the parsed lines, owning every row's values */
};

/* ---- reading ---- */

bool vg_is_results_file(const char *path)
{
	FILE *f = fopen(path, "r");
	int c = EOF;
	while (f && (c = getc(f)) != EOF && isspace(c))
		;
	if (f)
		fclose(f);
	return c == '{';
}

static int add_line(struct side *s, int side, const char *text, size_t lineno)
{
	json_error_t je;
	json_t *o = json_loads(text, 0, &je);
	json_t *rel = json_object_get(o, "relation"), *vals = json_object_get(o, "values");
	json_t *kind = json_object_get(o, "kind");
	if (!json_is_object(o) || !json_is_string(rel) || !json_is_object(vals) ||
	    !json_is_string(kind)) {
		fprintf(stderr,
		        "vigil diff: %s:%zu: not a line of vigil query --format json (%s)\n",
		        s->path, lineno, o ? "no relation, kind or values" : je.text);
		json_decref(o);
		return -1;
	}
	json_array_append_new(s->lines, o);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->rows = realloc(s->rows, s->cap * sizeof *s->rows);
		if (!s->rows)
			abort();
	}
	bool event = !strcmp(json_string_value(kind), "event");
	json_t *from = json_object_get(o, "from"), *to = json_object_get(o, "to");
	s->rows[s->n++] = (struct row){
	    .rel = json_string_value(rel),
	    .side = side,
	    .values = vals,
	    /* in integers: ns since the epoch are past a double's precision */
	    .duration = !event && json_is_integer(from) && json_is_integer(to)
	                    ? (double)(json_integer_value(to) - json_integer_value(from))
	                    : NAN};
	return 0;
}

static int read_text(struct side *s, int side, char *text)
{
	size_t lineno = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		const char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (*p && add_line(s, side, p, lineno) < 0)
			return -1;
	}
	return 0;
}

static int read_file(struct side *s, int side)
{
	FILE *f = fopen(s->path, "r");
	char *text = NULL;
	size_t cap = 0;
	int err = errno;
	ssize_t got = f ? getdelim(&text, &cap, '\0', f) : -1;
	bool failed = !f || (got < 0 && ferror(f));
	if (f) {
		err = ferror(f) ? errno : err;
		fclose(f);
	}
	if (failed) {
		fprintf(stderr, "vigil diff: %s: %s\n", s->path, strerror(err));
		free(text);
		return -1;
	}
	int rc = read_text(s, side, text ? text : (char *)"");
	free(text);
	return rc;
}

struct emit_ctx {
	FILE *out;
	int failed;
};

static int emit(void *p, const struct vgq_relation *r)
{
	struct emit_ctx *c = p;
	if (vgq_write_relation(c->out, r, VGQ_FORMAT_JSON, NULL) < 0)
		c->failed = 1;
	return c->failed ? -1 : 0;
}

/* The query's answer over the trace at s->path, as vigil query --format json. */
static int run_query(struct side *s, int side, const struct tquel_query *q)
{
	char err[512];
	struct vgt_trace *tr = vgt_open_readable(&s->path, 1, err, sizeof err);
	if (!tr) {
		fprintf(stderr, "vigil diff: %s\n", err);
		return -1;
	}
	struct vg_query_need need;
	vg_query_need(q, &need);
	struct vgq_cache_request rq = {.trace_path = s->path,
	                               .who = "vigil diff",
	                               .need = need.relations,
	                               .nneed = need.nrelations,
	                               .attrs = need.attrs,
	                               .nattrs = need.nattrs,
	                               .all_attrs = need.all_attrs,
	                               .bounds = need.sel.bounds,
	                               .nbounds = need.sel.nbounds,
	                               .keys = need.sel.keys,
	                               .nkeys = need.sel.nkeys};
	struct vgq_database *db = vgq_database_cached(tr, &rq, NULL);
	vg_query_need_free(&need);
	vgq_database_print_warnings(db, "vigil diff", stderr);
	char *text = NULL;
	size_t len = 0;
	struct emit_ctx c = {.out = open_memstream(&text, &len)};
	if (!c.out)
		abort();
	struct vgq_options o = {0};
	struct vgq_session *sess = vgq_session_new(db, &o);
	size_t errors = vgq_run(sess, q, emit, &c, stderr);
	fclose(c.out);
	int rc = errors || c.failed ? -1 : 0;
	if (c.failed)
		fprintf(stderr, "vigil diff: %s: the answer could not be kept\n", s->path);
	if (rc == 0 && db->partial)
		fprintf(stderr,
		        "vigil diff: %s: answered from what was readable of a damaged trace\n",
		        s->path);
	if (rc == 0)
		rc = read_text(s, side, text ? text : (char *)"");
	free(text);
	vgq_session_free(sess);
	vgq_database_free(db);
	vgt_close(tr);
	return rc;
}

/* ---- a relation's two sides ---- */

struct attrs {
	const char **name;
	bool *key, *numeric;
	size_t n;
};

static void attrs_of(const json_t *values, struct attrs *a)
{
	a->n = json_object_size(values);
	a->name = calloc(a->n + 1, sizeof *a->name);
	a->key = calloc(a->n + 1, sizeof *a->key);
	a->numeric = calloc(a->n + 1, sizeof *a->numeric);
	if (!a->name || !a->key || !a->numeric)
		abort();
	size_t i = 0;
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)values, k, v)
	{
		a->name[i] = k;
		a->numeric[i++] = true;
	}
}

static void attrs_free(struct attrs *a)
{
	free(a->name);
	free(a->key);
	free(a->numeric);
}

/* The same attributes on every row of the relation, both sides; the key decided. */
static int check_attrs(struct row **rows, size_t n, const char *rel, const char *paths[2],
                       const char *by, struct attrs *a)
{
	attrs_of(rows[0]->values, a);
	for (size_t i = 0; i < n; i++) {
		json_t *v = rows[i]->values;
		bool same = json_object_size(v) == a->n;
		for (size_t k = 0; same && k < a->n; k++) {
			json_t *x = json_object_get(v, a->name[k]);
			same = x != NULL;
			if (x && !json_is_number(x) && !json_is_null(x))
				a->numeric[k] = false;
		}
		if (!same) {
			char *one = json_dumps(rows[0]->values, JSON_COMPACT);
			char *two = json_dumps(v, JSON_COMPACT);
			fprintf(
			    stderr,
			    "vigil diff: relation %s has other attributes in %s than in %s (%.80s "
			    "vs %.80s): not the answers of the same statements\n",
			    rel, paths[rows[i]->side], paths[rows[0]->side], one, two);
			free(one);
			free(two);
			return -1;
		}
	}
	for (const char *p = by ? by : ""; *p;) {
		size_t len = strcspn(p, ",");
		bool found = false;
		for (size_t k = 0; k < a->n; k++)
			if (strlen(a->name[k]) == len && !strncasecmp(a->name[k], p, len))
				found = true;
		if (!found) {
			fprintf(stderr,
			        "vigil diff: --by %.*s: relation %s has no such attribute\n",
			        (int)len, p, rel);
			return -1;
		}
		p += len + (p[len] == ',');
	}
	for (size_t k = 0; k < a->n; k++)
		a->key[k] = by ? vgb_word_listed(by, a->name[k]) : !a->numeric[k];
	return 0;
}

static char *dump_key(const json_t *values, const struct attrs *a, bool all)
{
	json_t *o = json_object();
	for (size_t k = 0; k < a->n; k++)
		if (all || a->key[k])
			json_object_set(o, a->name[k], json_object_get(values, a->name[k]));
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!s)
		abort();
	return s;
}

static int by_key(const void *x, const void *y)
{
	const struct row *a = *(struct row *const *)x, *b = *(struct row *const *)y;
	int c = strcmp(a->key, b->key);
	return c ? c : a->side - b->side;
}

static int by_all(const void *x, const void *y)
{
	const struct row *a = *(struct row *const *)x, *b = *(struct row *const *)y;
	int c = strcmp(a->all, b->all);
	return c ? c : a->side - b->side;
}

/* One ranked line of a report. */
struct item {
	const char *text; /* the tuple or key, as JSON (owned by a row) */
	const char *attr; /* changes: the attribute */
	double a, b;      /* counts or means */
	double na, nb;    /* changes: values behind the means */
	double score;
};

static int by_score(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	if (a->score != b->score)
		return a->score < b->score ? 1 : -1;
	int c = strcmp(a->text, b->text);
	return c ? c : strcmp(a->attr ? a->attr : "", b->attr ? b->attr : "");
}

struct report {
	struct item *items;
	size_t n;
};

static void push(struct report *r, struct item it)
{
	r->items = realloc(r->items, (r->n + 1) * sizeof *r->items);
	if (!r->items)
		abort();
	r->items[r->n++] = it;
}

struct rel_diff {
	const char *name;
	struct attrs a;
	size_t count[2];
	struct report tuples, groups, changes;
};

/* Runs of equal `field` in rows sorted by it: counts per side. */
static void tuples_report(struct row **rows, size_t n, struct rel_diff *d)
{
	qsort(rows, n, sizeof *rows, by_all);
	for (size_t i = 0; i < n;) {
		size_t j = i, c[2] = {0, 0};
		while (j < n && !strcmp(rows[j]->all, rows[i]->all))
			c[rows[j++]->side]++;
		if (c[0] != c[1])
			push(&d->tuples,
			     (struct item){rows[i]->all, NULL, (double)c[0], (double)c[1], 0, 0,
			                   fabs((double)c[1] - (double)c[0])});
		i = j;
	}
}

static double relative(double a, double b)
{
	double m = fmax(fabs(a), fabs(b));
	return m > 0 ? fabs(b - a) / m : 0;
}

static void groups_report(struct row **rows, size_t n, struct rel_diff *d,
                          unsigned long long min_support)
{
	qsort(rows, n, sizeof *rows, by_key);
	double total[2] = {(double)d->count[0], (double)d->count[1]};
	for (size_t i = 0; i < n;) {
		size_t j = i, c[2] = {0, 0};
		while (j < n && !strcmp(rows[j]->key, rows[i]->key))
			c[rows[j++]->side]++;
		double sa = total[0] ? (double)c[0] / total[0] : 0;
		double sb = total[1] ? (double)c[1] / total[1] : 0;
		push(&d->groups, (struct item){rows[i]->key, NULL, (double)c[0], (double)c[1], sa,
		                               sb, fabs(sb - sa)});
		/* the means of each measure, where both sides have enough values */
		for (size_t k = 0; k <= d->a.n; k++) {
			if (k < d->a.n && (d->a.key[k] || !d->a.numeric[k]))
				continue;
			const char *attr = k < d->a.n ? d->a.name[k] : DURATION;
			double sum[2] = {0, 0}, cnt[2] = {0, 0};
			for (size_t r = i; r < j; r++) {
				double v = rows[r]->duration;
				if (k < d->a.n) {
					json_t *x = json_object_get(rows[r]->values, attr);
					v = json_is_number(x) ? json_number_value(x) : NAN;
				}
				if (!isnan(v)) {
					sum[rows[r]->side] += v;
					cnt[rows[r]->side]++;
				}
			}
			if (cnt[0] < (double)min_support || cnt[1] < (double)min_support ||
			    !cnt[0] || !cnt[1])
				continue;
			double ma = sum[0] / cnt[0], mb = sum[1] / cnt[1];
			push(&d->changes, (struct item){rows[i]->key, attr, ma, mb, cnt[0], cnt[1],
			                                relative(ma, mb)});
		}
		i = j;
	}
}

/* ---- printing ---- */

static size_t limit(size_t n, size_t top)
{
	return top && top < n ? top : n;
}

static json_t *parsed(const char *text)
{
	json_t *v = json_loads(text, 0, NULL);
	return v ? v : json_null();
}

static json_t *number(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *rel_json(const struct rel_diff *d, size_t top)
{
	json_t *key = json_array(), *measures = json_array();
	for (size_t k = 0; k < d->a.n; k++)
		if (d->a.key[k])
			json_array_append_new(key, json_string(d->a.name[k]));
		else if (d->a.numeric[k])
			json_array_append_new(measures, json_string(d->a.name[k]));
	json_array_append_new(measures, json_string(DURATION));
	json_t *t = json_array(), *g = json_array(), *c = json_array();
	for (size_t i = 0; i < limit(d->tuples.n, top); i++) {
		const struct item *x = &d->tuples.items[i];
		json_array_append_new(t, json_pack("{s:o,s:I,s:I}", "values", parsed(x->text),
		                                   "baseline", (json_int_t)x->a, "other",
		                                   (json_int_t)x->b));
	}
	for (size_t i = 0; i < limit(d->groups.n, top); i++) {
		const struct item *x = &d->groups.items[i];
		json_array_append_new(g, json_pack("{s:o,s:I,s:I,s:o,s:o,s:o}", "key",
		                                   parsed(x->text), "baseline", (json_int_t)x->a,
		                                   "other", (json_int_t)x->b, "share_baseline",
		                                   number(x->na), "share_other", number(x->nb),
		                                   "change", number(x->nb - x->na)));
	}
	for (size_t i = 0; i < limit(d->changes.n, top); i++) {
		const struct item *x = &d->changes.items[i];
		json_array_append_new(c, json_pack("{s:o,s:s,s:o,s:o,s:I,s:I,s:o,s:o}", "key",
		                                   parsed(x->text), "attr", x->attr,
		                                   "baseline_mean", number(x->a), "other_mean",
		                                   number(x->b), "baseline_n", (json_int_t)x->na,
		                                   "other_n", (json_int_t)x->nb, "ratio",
		                                   x->a != 0 ? number(x->b / x->a) : json_null(),
		                                   "score", number(x->score)));
	}
	return json_pack("{s:s,s:o,s:o,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o}", "relation", d->name,
	                 "key", key, "measures", measures, "baseline_tuples",
	                 (json_int_t)d->count[0], "other_tuples", (json_int_t)d->count[1],
	                 "tuples_differing", (json_int_t)d->tuples.n, "groups_total",
	                 (json_int_t)d->groups.n, "changes_total", (json_int_t)d->changes.n,
	                 "tuples", t, "groups", g, "changes", c);
}

static void print_text(const struct rel_diff *d, size_t top)
{
	printf("\nrelation %s: %zu tuples in the baseline, %zu in the other; key:", d->name,
	       d->count[0], d->count[1]);
	size_t nk = 0;
	for (size_t k = 0; k < d->a.n; k++)
		if (d->a.key[k])
			printf("%s %s", nk++ ? "," : "", d->a.name[k]);
	printf("%s\n", nk ? "" : " (none: one group)");
	printf("\ntuples counted differently (%zu of %zu, by the difference of counts)\n",
	       limit(d->tuples.n, top), d->tuples.n);
	printf("%4s  %-9s %-9s %s\n", "#", "baseline", "other", "values");
	for (size_t i = 0; i < limit(d->tuples.n, top); i++) {
		const struct item *x = &d->tuples.items[i];
		printf("%4zu  %-9.0f %-9.0f %s\n", i + 1, x->a, x->b, x->text);
	}
	printf("\ngroups (%zu of %zu, by the change of their share)\n", limit(d->groups.n, top),
	       d->groups.n);
	printf("%4s  %-11s %-22s %-22s %s\n", "#", "change", "baseline", "other", "key");
	for (size_t i = 0; i < limit(d->groups.n, top); i++) {
		const struct item *x = &d->groups.items[i];
		char a[40], b[40];
		snprintf(a, sizeof a, "%.3f%% (%.0f)", 100 * x->na, x->a);
		snprintf(b, sizeof b, "%.3f%% (%.0f)", 100 * x->nb, x->b);
		printf("%4zu  %+9.3f%%  %-22s %-22s %s\n", i + 1, 100 * (x->nb - x->na), a, b,
		       x->text);
	}
	printf("\nchanges of the mean (%zu of %zu, by |other - baseline| / max)\n",
	       limit(d->changes.n, top), d->changes.n);
	printf("%4s  %-8s %-16s %-16s %-13s %s\n", "#", "change", "baseline", "other", "values",
	       "key.attribute");
	for (size_t i = 0; i < limit(d->changes.n, top); i++) {
		const struct item *x = &d->changes.items[i];
		char n[40];
		snprintf(n, sizeof n, "%.0f/%.0f", x->na, x->nb);
		printf("%4zu  %-8.3f %-16.6g %-16.6g %-13s %s.%s\n", i + 1, x->score, x->a, x->b, n,
		       x->text, x->attr);
	}
}

/* ---- the command ---- */

static int by_rel(const void *x, const void *y)
{
	return strcmp((*(struct row *const *)x)->rel, (*(struct row *const *)y)->rel);
}

static int compare(struct side s[2], const struct vg_results_diff_opts *o)
{
	size_t n = s[0].n + s[1].n;
	struct row **all = calloc(n + 1, sizeof *all);
	if (!all)
		abort();
	for (size_t i = 0; i < s[0].n; i++)
		all[i] = &s[0].rows[i];
	for (size_t i = 0; i < s[1].n; i++)
		all[s[0].n + i] = &s[1].rows[i];
	qsort(all, n, sizeof *all, by_rel);
	const char *paths[2] = {s[0].path, s[1].path};
	json_t *doc = json_pack("{s:{s:s,s:I},s:{s:s,s:I},s:[]}", "baseline", "source", s[0].path,
	                        "tuples", (json_int_t)s[0].n, "other", "source", s[1].path,
	                        "tuples", (json_int_t)s[1].n, "relations");
	if (!o->json)
		printf("baseline %s: %zu tuples; other %s: %zu tuples\n", s[0].path, s[0].n,
		       s[1].path, s[1].n);
	int rc = 0;
	bool same = true;
	for (size_t i = 0; i < n && rc == 0;) {
		size_t j = i;
		while (j < n && !strcmp(all[j]->rel, all[i]->rel))
			j++;
		struct rel_diff d = {.name = all[i]->rel};
		rc = check_attrs(all + i, j - i, d.name, paths, o->by, &d.a);
		for (size_t r = i; r < j && rc == 0; r++) {
			all[r]->key = dump_key(all[r]->values, &d.a, false);
			all[r]->all = dump_key(all[r]->values, &d.a, true);
			d.count[all[r]->side]++;
		}
		if (rc == 0) {
			tuples_report(all + i, j - i, &d);
			groups_report(all + i, j - i, &d, o->min_support);
			if (d.tuples.n)
				qsort(d.tuples.items, d.tuples.n, sizeof *d.tuples.items, by_score);
			if (d.groups.n)
				qsort(d.groups.items, d.groups.n, sizeof *d.groups.items, by_score);
			if (d.changes.n)
				qsort(d.changes.items, d.changes.n, sizeof *d.changes.items,
				      by_score);
			same = same && !d.tuples.n;
			if (o->json)
				json_array_append_new(json_object_get(doc, "relations"),
				                      rel_json(&d, o->top));
			else
				print_text(&d, o->top);
		}
		free(d.tuples.items);
		free(d.groups.items);
		free(d.changes.items);
		attrs_free(&d.a);
		i = j;
	}
	if (rc == 0 && o->json) {
		json_object_set_new(doc, "same_tuples", json_boolean(same));
		if (json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_ENSURE_ASCII) < 0)
			rc = -1;
		putchar('\n');
	}
	json_decref(doc);
	for (size_t i = 0; i < n; i++) {
		free(all[i]->key);
		free(all[i]->all);
	}
	free(all);
	return rc;
}

int vg_diff_results(const char *base, const char *other, const struct vg_results_diff_opts *o)
{
	struct side s[2] = {{.path = base, .lines = json_array()},
	                    {.path = other, .lines = json_array()}};
	struct tquel_query *q = o->query ? vg_cli_statements("diff", o->query, NULL) : NULL;
	int rc = o->query && !q ? -1 : 0;
	for (int i = 0; i < 2 && rc == 0; i++)
		rc = q ? run_query(&s[i], i, q) : read_file(&s[i], i);
	if (rc == 0)
		rc = compare(s, o);
	if (rc == 0 && fflush(stdout) != 0) {
		fprintf(stderr, "vigil diff: cannot write the report: %s\n", strerror(errno));
		rc = -1;
	}
	for (int i = 0; i < 2; i++) {
		free(s[i].rows);
		json_decref(s[i].lines);
	}
	if (q)
		tquel_free(q);
	return rc == 0 ? 0 : 2;
}
