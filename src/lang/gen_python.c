/* The Python 3 generator: one module <package>_records.py (standard library only) with a
 * dataclass per record, its encode() and decode(), EntityRef, and stream helpers. The
 * encoding is docs/encoding.md; the fixed helpers are in gen_python_lib.h. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "lang/gen_python_lib.h"
#include "lang/gen_text.h"
#include "lang/lang.h"

#define PY_KEYWORDS                                                                                \
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",        \
	    "continue", "def", "del", "elif", "else", "except", "finally", "for", "from",          \
	    "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass",       \
	    "raise", "return", "try", "while", "with", "yield"

/* Attribute names taken by the generated class, or evaluated in its body. */
static const char *const py_field_reserved[] = {
    PY_KEYWORDS, "encode", "decode", "FIELDS", "EntityRef", "classmethod", "_INF", "_NAN", NULL};

/* Module-level names of the generated module and the builtins its helpers use. */
static const char *const py_class_reserved[] = {
    PY_KEYWORDS, "EntityRef", "RECORDS", "write_records", "read_record", "read_records", "int",
    "float", "bool", "str", "bytes", "bytearray", "memoryview", "isinstance", "len", "type",
    "ValueError", "TypeError", "object", "classmethod", "_dc", "_struct", "_LEN", "_I8", "_I16",
    "_I32", "_I64", "_U8", "_U16", "_U32", "_U64", "_F64", "_REF", "_INF", "_NAN", "_int", "_float",
    "_bool", "_str", "_bytes", "_ref", "_end", "_Reader",
    /* the writer (gen_python_writer) */
    "Writer", "SENSORS", "_SENSOR_NAMES", "_RECORD_FIELDS", "_PACKAGE", "_collections", "_os",
    "_select", "_socket", "_threading", "_time", "_FRAME", "_HELLO", "_WELCOME", "_SCHEMA",
    "_RECORDS", "_ACK", "_CONTROL", "_REPLY", "_NOTE", "_BYE", "_REC", "_sstr", "_frame",
    "_process_start", NULL};

static void py_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		uint32_t c = gt_utf8_next(u, n, &i);
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", (char)c);
		else if (c < 0x20 || c == 0x7F)
			fprintf(f, "\\x%02x", (unsigned)c);
		else if (c < 0x80)
			fputc((int)c, f);
		else if (c <= 0xFFFF)
			fprintf(f, "\\u%04x", (unsigned)c);
		else
			fprintf(f, "\\U%08x", (unsigned)c);
	}
	fputc('"', f);
}

static void py_bytes(FILE *f, const char *s, size_t n)
{
	fputs("b\"", f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7F)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void py_float(FILE *f, double d)
{
	if (isnan(d)) {
		fputs("_NAN", f);
	} else if (isinf(d)) {
		fputs(d < 0 ? "-_INF" : "_INF", f);
	} else {
		char buf[64];
		snprintf(buf, sizeof buf, "%.17g", d);
		fputs(buf, f);
		if (!strpbrk(buf, ".e"))
			fputs(".0", f);
	}
}

/* The default value of field `fl` as a Python expression. */
static int py_default(FILE *f, const struct vgl_field *fl, char *err, size_t errsize)
{
	const struct vgl_literal *l = gt_field_default(fl);
	enum vgl_type t = fl->type;
	if (gt_is_int(t)) {
		if (l && l->kind != VGL_LIT_INT)
			goto bad;
		if (!l)
			fputs("0", f);
		else if (gt_is_signed(t))
			fprintf(f, "%" PRId64, l->i);
		else
			fprintf(f, "%" PRIu64, l->u);
		return 0;
	}
	switch (t) {
	case VGL_FLOAT64:
		if (l && l->kind != VGL_LIT_FLOAT && l->kind != VGL_LIT_INT)
			goto bad;
		py_float(f, !l ? 0.0 : l->kind == VGL_LIT_INT ? (double)l->i : l->d);
		return 0;
	case VGL_BOOL:
		if (l && l->kind != VGL_LIT_BOOL)
			goto bad;
		fputs(l && l->b ? "True" : "False", f);
		return 0;
	case VGL_STRING:
	case VGL_BYTES:
		if (l && l->kind != VGL_LIT_STRING)
			goto bad;
		(t == VGL_STRING ? py_string : py_bytes)(f, l ? l->s : "", l ? l->slen : 0);
		return 0;
	case VGL_ENTITY:
		if (l)
			goto bad;
		fputs("EntityRef()", f);
		return 0;
	default:
		goto bad;
	}
bad:
	return gt_err(err, errsize, "field %s: no Python default for this %s value", fl->name,
	              gt_type_name(t));
}

static const char *py_annotation(enum vgl_type t)
{
	if (gt_is_int(t))
		return "int";
	switch (t) {
	case VGL_FLOAT64:
		return "float";
	case VGL_BOOL:
		return "bool";
	case VGL_STRING:
		return "str";
	case VGL_BYTES:
		return "bytes";
	default:
		return "EntityRef";
	}
}

static const char *py_struct_name(enum vgl_type t)
{
	static const char *const names[] = {"_I8", "_I16", "_I32", "_I64",
	                                    "_U8", "_U16", "_U32", "_U64"};
	return names[t - VGL_INT8];
}

/* One statement appending field `fl` (attribute `id`) to bytearray `out`. */
static void py_encode_field(FILE *f, const char *rec, const struct vgl_field *fl, const char *id)
{
	fputs("        out += ", f);
	if (gt_is_int(fl->type)) {
		fprintf(f, "%s.pack(_int(self.%s, %" PRId64 ", %" PRIu64 ", \"%s.%s\"))\n",
		        py_struct_name(fl->type), id, gt_int_lo(fl->type), gt_int_hi(fl->type), rec,
		        id);
		return;
	}
	switch (fl->type) {
	case VGL_FLOAT64:
		fprintf(f, "_F64.pack(_float(self.%s, \"%s.%s\"))\n", id, rec, id);
		break;
	case VGL_BOOL:
		fprintf(f, "_bool(self.%s, \"%s.%s\")\n", id, rec, id);
		break;
	case VGL_STRING:
	case VGL_BYTES:
		fprintf(f, "%s(self.%s, ", fl->type == VGL_STRING ? "_str" : "_bytes", id);
		if (fl->max) /* 0: no max */
			fprintf(f, "%" PRIu32, fl->max);
		else
			fputs("None", f);
		fprintf(f, ", \"%s.%s\")\n", rec, id);
		break;
	default:
		fprintf(f, "_ref(self.%s, \"%s.%s\")\n", id, rec, id);
		break;
	}
}

static void py_decode_field(FILE *f, const struct vgl_field *fl, const char *id)
{
	fprintf(f, "        if r.more():\n            o.%s = ", id);
	if (gt_is_int(fl->type)) {
		fprintf(f, "r.num(%s)\n", py_struct_name(fl->type));
		return;
	}
	switch (fl->type) {
	case VGL_FLOAT64:
		fputs("r.num(_F64)\n", f);
		break;
	case VGL_BOOL:
		fputs("r.bool()\n", f);
		break;
	case VGL_STRING:
		fputs("r.str()\n", f);
		break;
	case VGL_BYTES:
		fputs("r.bytes()\n", f);
		break;
	default:
		fputs("r.ref()\n", f);
		break;
	}
}

static int py_record(FILE *f, const struct vgl_record *r, char *err, size_t errsize)
{
	char cls[GT_IDENT_MAX], id[GT_IDENT_MAX];
	if (gt_ident(cls, sizeof cls, r->name, py_class_reserved) != 0)
		return gt_err(err, errsize, "record %s: the name is too long", r->name);
	if (gt_check_unique(r, py_field_reserved, "Python", err, errsize) != 0)
		return -1;
	fprintf(f, "\n\n@_dc.dataclass\nclass %s", cls);
	if (r->parent) {
		char base[GT_IDENT_MAX];
		gt_ident(base, sizeof base, r->parent->name, py_class_reserved);
		fprintf(f, "(%s)", base);
	}
	fprintf(f,
	        ":\n    \"\"\"record %s (%s:%d). Fields in encoding order: FIELDS, as (name, "
	        "type, max); max 0: none.\"\"\"\n\n    FIELDS = (",
	        r->name, r->loc.file ? r->loc.file : "?", r->loc.line);
	for (size_t i = 0; i < r->nfields; i++) {
		gt_ident(id, sizeof id, r->fields[i].name, py_field_reserved);
		fprintf(f, "%s(\"%s\", \"%s\", %" PRIu32 ")", i ? ", " : "", id,
		        gt_type_name(r->fields[i].type), r->fields[i].max);
	}
	fputs(r->nfields == 1 ? ",)\n" : ")\n", f);
	for (size_t i = gt_first_own_field(r); i < r->nfields; i++) {
		const struct vgl_field *fl = &r->fields[i];
		gt_ident(id, sizeof id, fl->name, py_field_reserved);
		fprintf(f, "    %s: %s = ", id, py_annotation(fl->type));
		if (py_default(f, fl, err, errsize) != 0)
			return -1;
		fputc('\n', f);
	}

	fputs("\n    def encode(self) -> bytes:\n"
	      "        \"\"\"The standalone encoding: uint32 length, then the fields.\"\"\"\n"
	      "        out = bytearray(4)\n",
	      f);
	for (size_t i = 0; i < r->nfields; i++) {
		gt_ident(id, sizeof id, r->fields[i].name, py_field_reserved);
		py_encode_field(f, cls, &r->fields[i], id);
	}
	fprintf(f, "        return _end(out, \"%s\")\n", cls);

	fprintf(f,
	        "\n    @classmethod\n"
	        "    def decode(cls, data, offset=0):\n"
	        "        \"\"\"(record, bytes consumed) from the standalone encoding at "
	        "data[offset:].\n\n"
	        "        Fields missing at the end keep their defaults; bytes after the known "
	        "fields\n"
	        "        are skipped.\"\"\"\n"
	        "        r = _Reader(data, offset, \"%s\")\n"
	        "        o = cls()\n",
	        cls);
	for (size_t i = 0; i < r->nfields; i++) {
		gt_ident(id, sizeof id, r->fields[i].name, py_field_reserved);
		py_decode_field(f, &r->fields[i], id);
	}
	fputs("        return o, r.end - offset\n", f);
	return 0;
}

/* enum vg_field_type of each language type, as the C sensors declare them (bool is a
 * uint8, an unselected struct reference its uint64 id). */
static const int vg_field_types[] = {
    [VGL_INT8] = 0,   [VGL_INT16] = 1,  [VGL_INT32] = 2,   [VGL_INT64] = 3,   [VGL_UINT8] = 4,
    [VGL_UINT16] = 5, [VGL_UINT32] = 6, [VGL_UINT64] = 7,  [VGL_FLOAT64] = 8, [VGL_BOOL] = 4,
    [VGL_STRING] = 9, [VGL_BYTES] = 10, [VGL_ENTITY] = 11, [VGL_STRUCT] = 7,
};

/* The schema's fields of record r, as a tuple of (name, vg type, entity kind): names as
 * the C sensors write them into the trace (each character not a letter or digit: '_'),
 * led by vg_since for the ends of sampled interval sensors. */
static void py_schema_fields(FILE *f, const struct vgl_record *r, bool since)
{
	fputc('(', f);
	if (since)
		fputs("(\"vg_since\", 7, \"\"), ", f);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *fl = &r->fields[i];
		fputs("(\"", f);
		for (const char *c = fl->name; *c && c - fl->name < 256; c++)
			fputc(isalnum((unsigned char)*c) ? *c : '_', f);
		fprintf(f, "\", %d, ", vg_field_types[fl->type]);
		py_string(f, fl->type == VGL_ENTITY && fl->entity ? fl->entity->name : "",
		          fl->type == VGL_ENTITY && fl->entity ? strlen(fl->entity->name) : 0);
		fputs("), ", f);
	}
	fputc(')', f);
}

/* SENSORS: event name -> (relation, kind, placement, strategy, record class, since,
 * fields), one entry per event type (an interval's .begin and .end); _SENSOR_NAMES: the
 * sensor's own names ("Waiting.begin") to event names; _RECORD_FIELDS: each record's name
 * and schema fields, for records emitted alone. The values are those of the C sensors' schemas. */
static void py_sensors(FILE *f, const struct vgl_model *m)
{
	static const char *const suffix[] = {"", ".begin", ".end"};
	fputs("\n\n# Schemas of the sensors (docs/protocol.md SCHEMA), as the C sensors declare "
	      "them.\nSENSORS = {\n",
	      f);
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		bool interval = s->relation == VGL_REL_INTERVAL;
		char cls[GT_IDENT_MAX];
		gt_ident(cls, sizeof cls, s->record->name, py_class_reserved);
		for (int half = interval ? 1 : 0; half <= (interval ? 2 : 0); half++) {
			int kind = s->relation == VGL_REL_STATE ? 3 : half;
			bool since = half == 2 && vgl_sensor_sampled_interval(s);
			fprintf(f, "    \"%s%s\": (\"%s\", %d, %d, %d, %s, %s, ", s->event_name,
			        suffix[half], s->name, kind, (int)s->flag,
			        s->once      ? 2
			        : s->sampled ? 1
			                     : 0,
			        cls, since ? "True" : "False");
			py_schema_fields(f, s->record, since);
			fputs("),\n", f);
		}
	}
	fputs("}\n_SENSOR_NAMES = {\n", f);
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		bool interval = s->relation == VGL_REL_INTERVAL;
		for (int half = interval ? 1 : 0; half <= (interval ? 2 : 0); half++)
			fprintf(f, "    \"%s%s\": \"%s%s\",\n", s->name, suffix[half],
			        s->event_name, suffix[half]);
	}
	fputs("}\n_RECORD_FIELDS = {\n", f);
	for (size_t i = 0; i < m->nrecords; i++) {
		char cls[GT_IDENT_MAX];
		gt_ident(cls, sizeof cls, m->records[i].name, py_class_reserved);
		fprintf(f, "    %s: (\"%s\", ", cls, m->records[i].name);
		py_schema_fields(f, &m->records[i], false);
		fputs("),\n", f);
	}
	fputs("}\n_PACKAGE = ", f);
	const char *pkg = m->package ? m->package : "";
	py_string(f, pkg, strlen(pkg));
	fputc('\n', f);
}

/* A module name: the package with dots as underscores. */
static int py_module(const struct vgl_model *m, char *out, size_t n)
{
	char pkg[GT_IDENT_MAX];
	if (gt_ident(pkg, sizeof pkg, m->package ? m->package : "vigil", NULL) != 0)
		return -1;
	int k = snprintf(out, n, "%s_records.py", pkg);
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

int vgl_gen_python(const struct vgl_model *m, const char *outdir, char *err, size_t errsize)
{
	char name[GT_IDENT_MAX + 16];
	if (py_module(m, name, sizeof name) != 0)
		return gt_err(err, errsize, "package name too long");
	if (gt_mkdirs(outdir, err, errsize) != 0)
		return -1;
	struct gt_out o;
	if (gt_open(&o, outdir, name, err, errsize) != 0)
		return -1;
	FILE *f = o.f;
	fprintf(f, "# Generated by vigil gen from %s (package %s). Do not edit.\n",
	        m->nfiles ? m->files[0] : "?", m->package ? m->package : "");
	fprintf(f,
	        "\"\"\"Records of package %s, with writers and readers of vigil's record "
	        "encoding\n"
	        "(docs/encoding.md): a standalone record is a uint32 length, then its fields in "
	        "order,\n"
	        "little endian, no padding. Readers follow the evolution rules: fields missing "
	        "at the\n"
	        "end take their defaults; bytes after the known fields are skipped.\n\n"
	        "Integers are range-checked when encoding (ValueError, never a silent wrap); "
	        "strings\n"
	        "are encoded as UTF-8, cut at their first NUL, then to their max bytes; bytes "
	        "are cut\n"
	        "to their max. Decoding replaces invalid UTF-8 (a cut inside a character) with "
	        "U+FFFD.\n"
	        "Names that are Python keywords or taken by the generated code get a trailing "
	        "'_'.\"\"\"\n\n",
	        m->package ? m->package : "");
	fputs(gen_python_prelude, f);
	int rc = 0;
	for (size_t i = 0; i < m->nrecords && rc == 0; i++)
		rc = py_record(f, gt_record_in_order(m, i), err, errsize);
	if (rc == 0) {
		fputs("\n\nRECORDS = {", f);
		for (size_t i = 0; i < m->nrecords; i++) {
			char cls[GT_IDENT_MAX];
			gt_ident(cls, sizeof cls, m->records[i].name, py_class_reserved);
			fprintf(f, "%s\"%s\": %s", i ? ", " : "", m->records[i].name, cls);
		}
		fputs("}\n", f);
		fputs(gen_python_streams, f);
		py_sensors(f, m);
		fputs(gen_python_writer, f);
	}
	if (rc != 0) { /* the old file, if any, stays as it was */
		gt_abort(&o);
		return -1;
	}
	return gt_close(&o, err, errsize);
}
