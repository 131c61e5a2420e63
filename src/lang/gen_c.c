/* The C generator: `vigil gen FILE.vgl --lang c -o DIR` writes DIR/<package>_sensors.h
 * and DIR/<package>_sensors.c.
 *
 * The header holds what fires sensors: one static inline function per event type (an
 * interval sensor: NAME_begin and NAME_end), which checks the sensor's enable flag (one
 * load and one branch when it is off) and writes the record straight into the calling
 * thread's packet with the vg_put_* writers of vigil.h. A sensor with an op (create,
 * enter, acquire, ...: docs/consistency.md) checks vg_tracking() instead and goes through
 * vg_op_begin / vg_enter_begin / vg_leave_begin, which track it even while it is off. It also
 * declares, for every record, a struct and its standalone encoder and decoder (docs/encoding.md).
 *
 * The source holds the schemas, <package>_sensors_register() and the encoders and
 * decoders. Compile it into the program and link libvigil. Until registration each sensor
 * pointer names a disabled dummy, so a sensor fired early records nothing.
 *
 * C mapping: int8..uint64 -> int8_t..uint64_t, float64 -> double, bool -> bool,
 * string -> const char *, bytes -> const void *NAME, uint32_t NAME_len, an entity
 * reference -> const vg_entity * (a vg_ref in a record struct), a struct payload -> const
 * struct NAME *. Inside a subject struct a member of struct or entity type may be a pointer
 * or an embedded object (both work); a bytes member NAME comes with a member NAME_len.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file_io.h"
#include "common/out_file.h"
#include "lang/gen_c_internal.h"
#include "lang/lang.h"

#define NAME_MAX_LEN 128

static const char *const c_keywords[] = {
    "auto",       "break",     "case",           "char",
    "const",      "continue",  "default",        "do",
    "double",     "else",      "enum",           "extern",
    "float",      "for",       "goto",           "if",
    "inline",     "int",       "long",           "register",
    "restrict",   "return",    "short",          "signed",
    "sizeof",     "static",    "struct",         "switch",
    "typedef",    "union",     "unsigned",       "void",
    "volatile",   "while",     "_Alignas",       "_Alignof",
    "_Atomic",    "_Bool",     "_Complex",       "_Generic",
    "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
    "bool",       "true",      "false",          "asm",
    "typeof"};

/* TSDL keywords cannot name a CTF field: the runtime refuses such a schema. */
static const char *const tsdl_keywords[] = {
    "align",   "callsite", "const",          "char",   "clock",   "double",   "enum",
    "env",     "event",    "floating_point", "float",  "integer", "int",      "long",
    "short",   "signed",   "stream",         "string", "struct",  "trace",    "typealias",
    "typedef", "unsigned", "variant",        "void",   "_Bool",   "_Complex", "_Imaginary"};

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

static char *next_buffer(void)
{
	static char bufs[8][NAME_MAX_LEN * 2 + 8];
	static unsigned next;
	return bufs[next++ % 8];
}

const char *cg_member(const char *name)
{
	char *b = next_buffer();
	size_t n = 0;
	for (; name[n] && n < NAME_MAX_LEN * 2; n++)
		b[n] = isalnum((unsigned char)name[n]) ? name[n] : '_';
	b[n] = 0;
	return b;
}

const char *cg_id(const char *name)
{
	char *b = (char *)cg_member(name);
	if (in_list(b, c_keywords, sizeof c_keywords / sizeof *c_keywords))
		strcat(b, "_");
	return b;
}

const char *cg_ctype(enum vgl_type t)
{
	switch (t) {
	case VGL_INT8:
		return "int8_t";
	case VGL_INT16:
		return "int16_t";
	case VGL_INT32:
		return "int32_t";
	case VGL_INT64:
		return "int64_t";
	case VGL_UINT8:
		return "uint8_t";
	case VGL_UINT16:
		return "uint16_t";
	case VGL_UINT32:
		return "uint32_t";
	case VGL_UINT64:
	case VGL_STRUCT: /* an unselected struct: its address as an id */
		return "uint64_t";
	case VGL_FLOAT64:
		return "double";
	case VGL_BOOL:
		return "bool";
	case VGL_STRING:
		return "const char *";
	case VGL_BYTES:
		return "const void *";
	case VGL_ENTITY:
		return "const vg_entity *";
	}
	return "?";
}

unsigned cg_fixed_size(enum vgl_type t)
{
	switch (t) {
	case VGL_INT8:
	case VGL_UINT8:
	case VGL_BOOL:
	case VGL_STRING: /* its 0 byte */
		return 1;
	case VGL_INT16:
	case VGL_UINT16:
		return 2;
	case VGL_INT32:
	case VGL_UINT32:
	case VGL_BYTES: /* its length */
		return 4;
	case VGL_INT64:
	case VGL_UINT64:
	case VGL_FLOAT64:
	case VGL_STRUCT:
		return 8;
	case VGL_ENTITY:
		return 12;
	}
	return 0;
}

void cg_cstring(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\' || c == '?')
			fprintf(f, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, f);
		else
			fprintf(f, "\\%03o", c); /* octal: never swallows a following digit */
	}
	fputc('"', f);
}

void cg_literal(FILE *f, enum vgl_type t, const struct vgl_literal *v)
{
	int64_t i = v->kind == VGL_LIT_BOOL    ? v->b
	            : v->kind == VGL_LIT_FLOAT ? (int64_t)v->d
	                                       : v->i;
	uint64_t u = v->kind == VGL_LIT_INT ? v->u : (uint64_t)i;
	switch (t) {
	case VGL_INT8:
	case VGL_INT16:
	case VGL_INT32:
	case VGL_INT64:
		if (i == INT64_MIN)
			fprintf(f, "(-INT64_C(9223372036854775807) - 1)");
		else
			fprintf(f, "INT64_C(%lld)", (long long)i);
		return;
	case VGL_UINT8:
	case VGL_UINT16:
	case VGL_UINT32:
	case VGL_UINT64:
		fprintf(f, "UINT64_C(%llu)", (unsigned long long)u);
		return;
	case VGL_FLOAT64: {
		double d = v->kind == VGL_LIT_FLOAT ? v->d : (double)v->i;
		if (d != d)
			fprintf(f, "__builtin_nan(\"\")");
		else if (d > 1.7976931348623157e308 || d < -1.7976931348623157e308)
			fprintf(f, "%s__builtin_inf()", d < 0 ? "-" : "");
		else
			fprintf(f, "%a", d); /* hexadecimal: exact */
		return;
	}
	case VGL_BOOL:
		fprintf(f, "%s", (v->kind == VGL_LIT_BOOL ? v->b : i != 0) ? "true" : "false");
		return;
	case VGL_STRING:
	case VGL_BYTES:
		cg_cstring(f, v->s ? v->s : "", v->s ? v->slen : 0);
		return;
	case VGL_ENTITY:
	case VGL_STRUCT:
		fprintf(f, "0");
		return;
	}
}

static int fail(struct cgen *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g->err, g->errsize, fmt, ap);
	va_end(ap);
	return -1;
}

static bool is_identifier(const char *s)
{
	if (!isalpha((unsigned char)s[0]) || strlen(s) > NAME_MAX_LEN)
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.')
			return false;
	return true;
}

/* The names C and CTF need and the front end cannot know about: each flattened field
 * must make a distinct member (NAME and, for bytes, NAME_len) and a CTF field name. */
/* A field's names in the generated code: its C identifier (keywords get a '_') and its
 * CTF member name, each compared with every other field's by sorting. */
struct field_names {
	char id[NAME_MAX_LEN + 8], member[NAME_MAX_LEN * 2 + 8];
	size_t field;
};

static int by_id(const void *a, const void *b)
{
	const struct field_names *x = a, *y = b;
	int c = strcmp(x->id, y->id);
	return c ? c : (x->field > y->field) - (x->field < y->field);
}

static int by_member(const void *a, const void *b)
{
	const struct field_names *x = a, *y = b;
	int c = strcmp(x->member, y->member);
	return c ? c : (x->field > y->field) - (x->field < y->field);
}

static int clash(struct cgen *g, const struct vgl_record *r, size_t i, size_t j, const char *as)
{
	const struct vgl_field *fi = &r->fields[i], *fj = &r->fields[j];
	const struct vgl_loc *at = fi->prop ? &fi->prop->loc : &r->loc;
	return fail(g, "%s:%d:%d: record %s: fields '%s' and '%s' both become '%s' in C",
	            at->file ? at->file : "?", at->line, at->col, r->name, fi->name, fj->name, as);
}

/* Fields that would share a name in C or in the trace, or take the name of a bytes
 * field's length: O(n log n) in the fields (a record may have thousands). */
static int check_record(struct cgen *g, const struct vgl_record *r)
{
	size_t n = r->nfields;
	struct field_names *v = calloc(n ? n : 1, sizeof *v);
	if (!v)
		return fail(g, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct vgl_field *fi = &r->fields[i];
		const struct vgl_loc *at = fi->prop ? &fi->prop->loc : &r->loc;
		const char *where = at->file ? at->file : "?";
		if (!is_identifier(fi->name)) {
			rc = fail(g, "%s:%d:%d: record %s: field '%s' cannot be a C name", where,
			          at->line, at->col, r->name, fi->name);
			break;
		}
		snprintf(v[i].id, sizeof v[i].id, "%s", cg_id(fi->name));
		snprintf(v[i].member, sizeof v[i].member, "%s", cg_member(fi->name));
		v[i].field = i;
		if (in_list(v[i].member, tsdl_keywords,
		            sizeof tsdl_keywords / sizeof *tsdl_keywords))
			rc =
			    fail(g,
			         "%s:%d:%d: record %s: field '%s' is a CTF keyword and cannot name "
			         "a trace field",
			         where, at->line, at->col, r->name, fi->name);
	}
	/* The first field in order that meets a later one reports it, as before. */
	size_t bad_i = SIZE_MAX, bad_j = 0;
	if (!rc && n > 1) {
		qsort(v, n, sizeof *v, by_member);
		for (size_t k = 1; k < n; k++)
			if (!strcmp(v[k - 1].member, v[k].member) && v[k - 1].field < bad_i)
				bad_i = v[k - 1].field, bad_j = v[k].field;
		qsort(v, n, sizeof *v, by_id);
		for (size_t k = 1; k < n; k++)
			if (!strcmp(v[k - 1].id, v[k].id) && v[k - 1].field < bad_i)
				bad_i = v[k - 1].field, bad_j = v[k].field;
		if (bad_i != SIZE_MAX) {
			char as[NAME_MAX_LEN + 8];
			snprintf(as, sizeof as, "%s", cg_id(r->fields[bad_i].name));
			rc = clash(g, r, bad_i, bad_j, as);
		}
	}
	/* A bytes field F carries F_len: no other field may be called that. */
	for (size_t j = 0; j < n && !rc; j++) {
		const struct vgl_field *fj = &r->fields[j];
		if (fj->type != VGL_BYTES)
			continue;
		struct field_names key = {.field = 0};
		snprintf(key.id, sizeof key.id, "%s_len", cg_id(fj->name));
		size_t lo = 0, hi = n;
		while (lo < hi) { /* the first entry with that id */
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(v[mid].id, key.id) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && !strcmp(v[lo].id, key.id)) {
			const struct vgl_field *fi = &r->fields[v[lo].field];
			const struct vgl_loc *at = fi->prop ? &fi->prop->loc : &r->loc;
			rc =
			    fail(g,
			         "%s:%d:%d: record %s: field '%s' clashes with the length of bytes "
			         "field '%s' in C",
			         at->file ? at->file : "?", at->line, at->col, r->name, fi->name,
			         fj->name);
		}
	}
	free(v);
	return rc;
}

static int check_sensor(struct cgen *g, const struct vgl_sensor *s)
{
	const char *where = s->loc.file ? s->loc.file : "?";
	const int roles[3] = {s->performer, s->initiator, s->target};
	for (int k = 0; k < 3; k++)
		if (roles[k] < -1 || roles[k] >= (int)s->record->nfields ||
		    (roles[k] >= 0 && s->record->fields[roles[k]].type != VGL_ENTITY))
			return fail(g, "%s:%d:%d: sensor %s: a role is not an entity field", where,
			            s->loc.line, s->loc.col, s->name);
	if ((s->flag == VGL_FLAG_INITIATOR && s->initiator < 0) ||
	    (s->flag == VGL_FLAG_TARGET && s->target < 0))
		return fail(g, "%s:%d:%d: sensor %s: its flag is on a role it does not have", where,
		            s->loc.line, s->loc.col, s->name);
	/* The checker guarantees these; the generated code relies on them. */
	const enum vgl_op ops[2] = {s->op, s->end_op};
	for (int k = 0; k < 2; k++) {
		bool needs_target = ops[k] >= VGL_OP_CREATE && ops[k] <= VGL_OP_RESUME &&
		                    ops[k] != VGL_OP_ENTER && ops[k] != VGL_OP_LEAVE;
		if ((unsigned)ops[k] >= VGL_OP_COUNT || (needs_target && s->target < 0) ||
		    ((ops[k] == VGL_OP_ENTER || ops[k] == VGL_OP_LEAVE) &&
		     s->relation != VGL_REL_INTERVAL))
			return fail(g, "%s:%d:%d: sensor %s: op %d does not fit the sensor", where,
			            s->loc.line, s->loc.col, s->name, (int)ops[k]);
	}
	return 0;
}

/* The main file's name without its directories: the output does not depend on where the
 * build runs. */
static const char *source_name(const struct vgl_model *m)
{
	const char *f = m->nfiles && m->files[0] ? m->files[0] : "?";
	const char *slash = strrchr(f, '/');
	return slash ? slash + 1 : f;
}

static void write_header_top(struct cgen *g)
{
	const struct vgl_model *m = g->m;
	FILE *h = g->h;
	fprintf(h,
	        "/* Generated by `vigil gen --lang c` from %s: do not edit.\n"
	        " *\n"
	        " * Fire sensors with the inline functions below. Compile %s_sensors.c into the\n"
	        " * program, link libvigil, and call %s_sensors_register() once at start: until\n"
	        " * then every sensor is off. Records also have standalone encoders and decoders\n"
	        " * (docs/encoding.md); decoded strings and bytes point into the decoded buffer.\n"
	        " */\n",
	        source_name(m), g->pkg, g->pkg);
	fprintf(h, "#ifndef %s_SENSORS_H\n#define %s_SENSORS_H\n\n", g->PKG, g->PKG);
	fprintf(h, "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
	           "#include <string.h>\n\n#include \"vigil/vigil.h\"\n");
	for (size_t i = 0; i < m->nstructs; i++) {
		const char *hd = m->structs[i].header;
		bool seen = false;
		for (size_t j = 0; hd && j < i; j++)
			seen = seen || (m->structs[j].header && !strcmp(m->structs[j].header, hd));
		if (hd && !seen)
			fprintf(h, "#include \"%s\"\n", hd);
	}
	fprintf(h, "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	if (m->nconsts)
		fprintf(h, "/* Constants. */\n");
	for (size_t i = 0; i < m->nconsts; i++) {
		const struct vgl_const *k = &m->consts[i];
		fprintf(h, "#define %s_%s ", g->PKG, cg_member(k->name));
		if (k->type == VGL_STRING || k->type == VGL_BYTES) {
			cg_literal(h, k->type, &k->value);
		} else {
			fprintf(h, "((%s)", cg_ctype(k->type));
			cg_literal(h, k->type, &k->value);
			fprintf(h, ")");
		}
		fprintf(h, "\n");
	}
	if (m->nentities)
		fprintf(h, "%s/* Entity kinds (vg_entity_create). */\n", m->nconsts ? "\n" : "");
	for (size_t i = 0; i < m->nentities; i++)
		fprintf(h, "#define %s_KIND_%s \"%s\"\n", g->PKG, cg_member(m->entities[i].name),
		        m->entities[i].name);
	/* A subject struct's member of struct or entity type: embedded or a pointer. */
	if (m->nstructs)
		fprintf(
		    h,
		    "\n/* The address of a member that is an embedded T, or the member itself if "
		    "it\n"
		    " * is a pointer. */\n"
		    "#define %s__ADDR(T, x) _Generic((x), T: &(x), const T: &(x), default: (x))\n",
		    g->PKG);
	fprintf(h, "\n");
}

static void write_source_top(struct cgen *g)
{
	fprintf(g->c,
	        "/* Generated by `vigil gen --lang c` from %s: do not edit. */\n"
	        "#ifndef _DEFAULT_SOURCE\n#define _DEFAULT_SOURCE /* strnlen, also under -std=c11 "
	        "*/\n#endif\n"
	        "#include \"%s_sensors.h\"\n\n",
	        source_name(g->m), g->pkg);
}

static int open_out(struct cgen *g, const char *outdir, const char *ext, struct vg_out *o)
{
	char path[4096], why[4200];
	snprintf(path, sizeof path, "%s/%s_sensors.%s", outdir, g->pkg, ext);
	if (vg_out_open(o, path, why, sizeof why) < 0)
		return fail(g, "cannot write %s", why);
	return 0;
}

static int finish_out(struct cgen *g, struct vg_out *o)
{
	char why[4200];
	if (vg_out_commit(o, why, sizeof why) < 0)
		return fail(g, "cannot write %s", why);
	return 0;
}

int vgl_gen_c(const struct vgl_model *m, const char *outdir, char *err, size_t errsize)
{
	struct cgen g = {.m = m, .err = err, .errsize = errsize};
	const char *pkg = m->package && *m->package ? m->package : "vigil";
	if (strlen(pkg) > NAME_MAX_LEN)
		return fail(&g, "package name '%s' is too long for C", pkg);
	snprintf(g.pkg, sizeof g.pkg, "%s", cg_member(pkg));
	for (size_t i = 0; g.pkg[i]; i++)
		g.PKG[i] = (char)toupper((unsigned char)g.pkg[i]);
	for (size_t i = 0; i < m->nrecords; i++)
		if (check_record(&g, &m->records[i]))
			return -1;
	for (size_t i = 0; i < m->nsensors; i++)
		if (check_sensor(&g, &m->sensors[i]))
			return -1;
	if (vgb_mkdirs(outdir, 0777))
		return fail(&g, "cannot create %s: %s", outdir, strerror(errno));

	struct vg_out h, c;
	if (open_out(&g, outdir, "h", &h))
		return -1;
	if (open_out(&g, outdir, "c", &c)) {
		vg_out_abort(&h);
		return -1;
	}
	g.h = h.f;
	g.c = c.f;
	write_header_top(&g);
	write_source_top(&g);
	cg_records(&g);
	cg_sensors(&g);
	fprintf(g.h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
	if (cg_embed(&g)) {
		vg_out_abort(&h);
		vg_out_abort(&c);
		return -1;
	}

	if (finish_out(&g, &h)) {
		vg_out_abort(&c);
		return -1;
	}
	return finish_out(&g, &c);
}
