/* Test tool: builds the relations of a trace and prints every tuple as one JSON line
 * {"relation","kind","from","to","open","values":{ATTR: VALUE}} (times in ns; entity
 * values as their names, or null), for the checks of relations_truth.py. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "relations/relation.h"

static json_t *value(const struct vgq_relation *r, size_t a, size_t t)
{
	const union vgq_column *c = &r->cols[a];
	switch (r->attrs[a].type) {
	case VGQ_INT:
		return json_integer(c->i[t]);
	case VGQ_UINT:
		return json_integer((json_int_t)c->u[t]);
	case VGQ_DOUBLE:
		return json_real(c->d[t]);
	case VGQ_STRING:
		return c->s[t] ? json_string(c->s[t]) : json_null();
	case VGQ_BYTES:
		return json_integer((json_int_t)c->b[t].len);
	case VGQ_ENTITY:
		return c->r[t].name ? json_string(c->r[t].name) : json_null();
	}
	return json_null();
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: relations_dump TRACE\n");
		return 2;
	}
	char err[512];
	const char *paths[] = {argv[1]};
	struct vgt_trace *tr = vgt_open(paths, 1, err, sizeof err);
	if (!tr) {
		fprintf(stderr, "relations_dump: %s\n", err);
		return 2;
	}
	struct vgq_database *db = vgq_database_build(tr);
	for (size_t i = 0; i < db->nrelations; i++) {
		const struct vgq_relation *r = db->relations[i];
		for (size_t t = 0; t < r->ntuples; t++) {
			json_t *values = json_object();
			for (size_t a = 0; a < r->nattrs; a++)
				json_object_set_new(values, r->attrs[a].name, value(r, a, t));
			json_t *o =
			    json_pack("{s:s, s:s, s:I, s:o, s:o, s:o}", "relation", r->name, "kind",
			              vgq_rkind_name(r->kind), "from", (json_int_t)r->from[t], "to",
			              r->to ? json_integer(r->to[t]) : json_null(), "open",
			              json_boolean(r->open && r->open[t]), "values", values);
			char *s = json_dumps(o, JSON_COMPACT);
			puts(s);
			free(s);
			json_decref(o);
		}
		if (r->unmatched_ends)
			fprintf(stderr, "relations_dump: %s: %llu unmatched ends\n", r->name,
			        (unsigned long long)r->unmatched_ends);
	}
	int rc = db->partial ? 1 : 0;
	vgq_database_free(db);
	vgt_close(tr);
	return rc;
}
