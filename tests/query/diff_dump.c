/* Test tool of the differential test (diff_test.py): builds the relations of a trace and
 * prints every tuple of the relations named on the command line as one JSON line
 * {"relation","kind","from","to","open","values":{ATTR: VALUE}} ("open": an interval
 * still open at the end of the trace, its "to" the trace's last event), like relations_dump, except
 * that an entity is {"name","id","gen","image"} (name null if never named), so that the
 * test can compare identities as the engine does, and a uint is a string of decimal digits
 * (JSON integers here are signed 64-bit). Empty strings and names are null (docs/tquel.md,
 * *Values*). The last line is {"span":{"first","last","events"}}: the trace's first and
 * last event times (the bounds of Clock and of count's zeros).
 *
 *   diff_dump TRACE RELATION... */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "relations/relation.h"
#ifdef VIGIL_HAVE_DERIVED
#include "derived/derived.h"
#endif

static json_t *value(const struct vgq_relation *r, size_t a, size_t t)
{
	const union vgq_column *c = &r->cols[a];
	switch (r->attrs[a].type) {
	case VGQ_INT:
		return json_integer(c->i[t]);
	case VGQ_UINT: {
		char digits[24];
		snprintf(digits, sizeof digits, "%llu", (unsigned long long)c->u[t]);
		return json_string(digits);
	}
	case VGQ_DOUBLE:
		return json_real(c->d[t]);
	case VGQ_STRING:
		return c->s[t] ? json_string(c->s[t]) : json_null();
	case VGQ_BYTES:
		return json_integer((json_int_t)c->b[t].len);
	case VGQ_ENTITY: {
		const struct vgq_ref *ref = &c->r[t];
		bool named = ref->name != NULL; /* the relations hold NULL for never named */
		return json_pack("{s:o, s:I, s:I, s:I}", "name",
		                 named ? json_string(ref->name) : json_null(), "id",
		                 (json_int_t)ref->id, "gen", (json_int_t)ref->gen, "image",
		                 (json_int_t)ref->image);
	}
	}
	return json_null();
}

static void dump(const struct vgq_relation *r)
{
	for (size_t t = 0; t < r->ntuples; t++) {
		json_t *values = json_object();
		for (size_t a = 0; a < r->nattrs; a++)
			json_object_set_new(values, r->attrs[a].name, value(r, a, t));
		json_t *o =
		    json_pack("{s:s, s:s, s:I, s:o, s:b, s:o}", "relation", r->name, "kind",
		              vgq_rkind_name(r->kind), "from", (json_int_t)r->from[t], "to",
		              r->to ? json_integer(r->to[t]) : json_null(), "open",
		              r->open && r->open[t], "values", values);
		char *s = json_dumps(o, JSON_COMPACT);
		puts(s);
		free(s);
		json_decref(o);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: diff_dump TRACE RELATION...\n");
		return 2;
	}
	char err[512];
	const char *paths[] = {argv[1]};
	struct vgt_trace *tr = vgt_open(paths, 1, err, sizeof err);
	if (!tr) {
		fprintf(stderr, "diff_dump: %s\n", err);
		return 2;
	}
#ifdef VIGIL_HAVE_DERIVED
	vgd_register_all(); /* LogEvent, Transition...: diff_test.py --derived */
#endif
	struct vgq_database *db = vgq_database_build(tr);
	int rc = db->partial ? 1 : 0;
	for (int i = 2; i < argc; i++) {
		const struct vgq_relation *r = vgq_database_find(db, argv[i]);
#ifdef VIGIL_HAVE_DERIVED
		if (!r)
			r = vgq_database_derived(db, argv[i], err, sizeof err);
#endif
		if (!r) {
			fprintf(stderr, "diff_dump: no relation %s\n", argv[i]);
			rc = 1;
			continue;
		}
		dump(r);
		if (r->unmatched_ends) {
			fprintf(stderr, "diff_dump: %s: %llu unmatched ends\n", r->name,
			        (unsigned long long)r->unmatched_ends);
			rc = 1;
		}
	}
	printf("{\"span\":{\"first\":%lld,\"last\":%lld,\"events\":%llu}}\n", (long long)db->first,
	       (long long)db->last, (unsigned long long)db->events);
	vgq_database_free(db);
	vgt_close(tr);
	return rc;
}
