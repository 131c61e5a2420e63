/* The Java 17 generator: package vigil.<package>, one file per record class (extends
 * mirrored) plus EntityRef and VglCodec (gen_java_lib.h), under outdir/vigil/<package>/.
 * The encoding is docs/encoding.md. Unsigned types map to the next wider Java type,
 * except uint64: a long holding the two's complement bits. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "lang/gen_java_lib.h"
#include "lang/gen_text.h"
#include "lang/lang.h"

#define JAVA_KEYWORDS                                                                              \
	"abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class",        \
	    "const", "continue", "default", "do", "double", "else", "enum", "extends", "final",    \
	    "finally", "float", "for", "goto", "if", "implements", "import", "instanceof", "int",  \
	    "interface", "long", "native", "new", "package", "private", "protected", "public",     \
	    "return", "short", "static", "strictfp", "super", "switch", "synchronized", "this",    \
	    "throw", "throws", "transient", "try", "void", "volatile", "while", "true", "false",   \
	    "null", "_"

static const char *const java_field_reserved[] = {JAVA_KEYWORDS, "FIELD_NAMES", "FIELD_TYPES",
                                                  NULL};

/* Classes of the package and the java.lang names the generated code uses. */
static const char *const java_class_reserved[] = {JAVA_KEYWORDS, "EntityRef",
                                                  "VglCodec",    "java",
                                                  "String",      "Object",
                                                  "Double",      "Integer",
                                                  "Long",        "Math",
                                                  "System",      "Override",
                                                  "Record",      "IllegalArgumentException",
                                                  "VglWriter",   "VglSensors",
                                                  NULL};

static const char *const java_package_reserved[] = {JAVA_KEYWORDS, NULL};

struct jtype {
	const char *java, *put, *get;
	bool checked; /* put takes the field name for a range check */
};

static struct jtype java_type(enum vgl_type t)
{
	switch (t) {
	case VGL_INT8:
		return (struct jtype){"byte", "i8", "i8", false};
	case VGL_INT16:
		return (struct jtype){"short", "i16", "i16", false};
	case VGL_INT32:
		return (struct jtype){"int", "i32", "i32", false};
	case VGL_INT64:
		return (struct jtype){"long", "i64", "i64", false};
	case VGL_UINT8:
		return (struct jtype){"short", "u8", "u8", true};
	case VGL_UINT16:
		return (struct jtype){"int", "u16", "u16", true};
	case VGL_UINT32:
		return (struct jtype){"long", "u32", "u32", true};
	case VGL_UINT64:
		return (struct jtype){"long", "u64", "u64", false};
	case VGL_FLOAT64:
		return (struct jtype){"double", "f64", "f64", false};
	case VGL_BOOL:
		return (struct jtype){"boolean", "bool", "bool", false};
	case VGL_STRING:
		return (struct jtype){"java.lang.String", "str", "str", true};
	case VGL_BYTES:
		return (struct jtype){"byte[]", "bytes", "bytes", true};
	default:
		return (struct jtype){"EntityRef", "ref", "ref", true};
	}
}

static void java_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		uint32_t c = gt_utf8_next(u, n, &i);
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", (char)c);
		else if (c < 0x20 || c == 0x7F) /* octal: \u000a would end the line */
			fprintf(f, "\\%03o", (unsigned)c);
		else if (c < 0x80)
			fputc((int)c, f);
		else if (c <= 0xFFFF)
			fprintf(f, "\\u%04x", (unsigned)c);
		else
			fprintf(f, "\\u%04x\\u%04x", (unsigned)(0xD800 + ((c - 0x10000) >> 10)),
			        (unsigned)(0xDC00 + ((c - 0x10000) & 0x3FF)));
	}
	fputc('"', f);
}

static void java_double(FILE *f, double d)
{
	if (isnan(d)) {
		fputs("Double.NaN", f);
	} else if (isinf(d)) {
		fputs(d < 0 ? "Double.NEGATIVE_INFINITY" : "Double.POSITIVE_INFINITY", f);
	} else {
		fprintf(f, "%.17gd", d);
	}
}

/* The initial value of field `fl` as a Java expression. */
static int java_default(FILE *f, const struct vgl_field *fl, char *err, size_t errsize)
{
	const struct vgl_literal *l = gt_field_default(fl);
	enum vgl_type t = fl->type;
	if (gt_is_int(t)) {
		if (l && l->kind != VGL_LIT_INT)
			goto bad;
		int64_t v = !l ? 0 : gt_is_signed(t) ? l->i : (int64_t)l->u;
		if (t == VGL_UINT64 && v < 0)
			fprintf(f, "%" PRId64 "L /* %" PRIu64 " */", v, l->u);
		else
			fprintf(f, "%" PRId64 "%s", v,
			        gt_int_size(t) == 8 || t == VGL_UINT32 ? "L" : "");
		return 0;
	}
	switch (t) {
	case VGL_FLOAT64:
		if (l && l->kind != VGL_LIT_FLOAT && l->kind != VGL_LIT_INT)
			goto bad;
		java_double(f, !l ? 0.0 : l->kind == VGL_LIT_INT ? (double)l->i : l->d);
		return 0;
	case VGL_BOOL:
		if (l && l->kind != VGL_LIT_BOOL)
			goto bad;
		fputs(l && l->b ? "true" : "false", f);
		return 0;
	case VGL_STRING:
		if (l && l->kind != VGL_LIT_STRING)
			goto bad;
		java_string(f, l ? l->s : "", l ? l->slen : 0);
		return 0;
	case VGL_BYTES:
		if (l && l->kind != VGL_LIT_STRING)
			goto bad;
		fputs("new byte[] {", f);
		for (size_t i = 0; l && i < l->slen; i++)
			fprintf(f, "%s%d", i ? ", " : "", (int)(signed char)l->s[i]);
		fputs("}", f);
		return 0;
	case VGL_ENTITY:
		if (l)
			goto bad;
		fputs("EntityRef.NONE", f);
		return 0;
	default:
		goto bad;
	}
bad:
	return gt_err(err, errsize, "field %s: no Java default for this %s value", fl->name,
	              gt_type_name(t));
}

static void java_header(FILE *f, const char *pkg)
{
	fprintf(f, "// Generated by vigil gen. Do not edit.\npackage vigil.%s;\n", pkg);
}

static void java_field_list(FILE *f, const struct vgl_record *r, bool types)
{
	char id[GT_IDENT_MAX];
	for (size_t i = 0; i < r->nfields; i++) {
		gt_ident(id, sizeof id, r->fields[i].name, java_field_reserved);
		fprintf(f, "%s\"%s\"", i ? ", " : "", types ? gt_type_name(r->fields[i].type) : id);
	}
}

static void java_codec_methods(FILE *f, const struct vgl_record *r, const char *cls)
{
	char id[GT_IDENT_MAX];
	size_t own = gt_first_own_field(r);
	size_t hint = 4;
	for (size_t i = 0; i < r->nfields; i++)
		hint += r->fields[i].type == VGL_STRING || r->fields[i].type == VGL_BYTES ? 16 : 12;

	fprintf(f,
	        "\n    /** The standalone encoding: uint32 length, then the fields, little "
	        "endian. */\n"
	        "    public byte[] encode() {\n"
	        "        VglCodec.Writer w = new VglCodec.Writer(%zu);\n"
	        "        encodeFields(w);\n"
	        "        return w.finish();\n"
	        "    }\n\n"
	        "    /** Writes the fields, inherited ones first. */\n"
	        "    protected void encodeFields(VglCodec.Writer w) {\n",
	        hint);
	if (r->parent)
		fputs("        super.encodeFields(w);\n", f);
	for (size_t i = own; i < r->nfields; i++) {
		const struct vgl_field *fl = &r->fields[i];
		struct jtype jt = java_type(fl->type);
		gt_ident(id, sizeof id, fl->name, java_field_reserved);
		fprintf(f, "        w.%s(%s", jt.put, id);
		if ((fl->type == VGL_STRING || fl->type == VGL_BYTES) && fl->max)
			fprintf(f, ", %" PRIu32 "L", fl->max);
		else if (fl->type == VGL_STRING || fl->type == VGL_BYTES)
			fputs(", 0xFFFFFFFFL /* no max */", f);
		if (jt.checked)
			fprintf(f, ", \"%s.%s\"", cls, id);
		fputs(");\n", f);
	}
	fprintf(f,
	        "    }\n\n"
	        "    /**\n"
	        "     * Reads one standalone record at buf's position and moves buf past it. "
	        "Fields\n"
	        "     * missing at the end keep their defaults; bytes after the known fields are\n"
	        "     * skipped. Malformed data: IllegalArgumentException.\n"
	        "     */\n"
	        "    public static %s decode(java.nio.ByteBuffer buf) {\n"
	        "        VglCodec.Reader r = new VglCodec.Reader(buf, \"%s\");\n"
	        "        %s o = new %s();\n"
	        "        o.decodeFields(r);\n"
	        "        r.finish();\n"
	        "        return o;\n"
	        "    }\n\n"
	        "    /** Reads the fields present, inherited ones first. */\n"
	        "    protected void decodeFields(VglCodec.Reader r) {\n",
	        cls, cls, cls, cls);
	if (r->parent)
		fputs("        super.decodeFields(r);\n", f);
	for (size_t i = own; i < r->nfields; i++) {
		gt_ident(id, sizeof id, r->fields[i].name, java_field_reserved);
		fprintf(f, "        if (r.more())\n            %s = r.%s();\n", id,
		        java_type(r->fields[i].type).get);
	}
	fputs("    }\n", f);
}

static int java_record(const struct vgl_record *r, const char *dir, const char *pkg, char *err,
                       size_t errsize)
{
	char cls[GT_IDENT_MAX], id[GT_IDENT_MAX], file[GT_IDENT_MAX + 8];
	if (gt_ident(cls, sizeof cls, r->name, java_class_reserved) != 0)
		return gt_err(err, errsize, "record %s: the name is too long", r->name);
	if (gt_check_unique(r, java_field_reserved, "Java", err, errsize) != 0)
		return -1;
	snprintf(file, sizeof file, "%s.java", cls);
	struct gt_out o;
	if (gt_open(&o, dir, file, err, errsize) != 0)
		return -1;
	FILE *f = o.f;
	java_header(f, pkg);
	fprintf(f, "\n/** record %s (%s:%d). */\npublic class %s", r->name,
	        r->loc.file ? r->loc.file : "?", r->loc.line, cls);
	if (r->parent) {
		char base[GT_IDENT_MAX];
		gt_ident(base, sizeof base, r->parent->name, java_class_reserved);
		fprintf(f, " extends %s", base);
	}
	fputs(" {\n    /** All fields in encoding order, inherited first. */\n"
	      "    public static final java.lang.String[] FIELD_NAMES = {",
	      f);
	java_field_list(f, r, false);
	fputs("};\n    /** Their types in the language: \"uint32\", \"string\", ... */\n"
	      "    public static final java.lang.String[] FIELD_TYPES = {",
	      f);
	java_field_list(f, r, true);
	fputs("};\n\n", f);

	int rc = 0;
	for (size_t i = gt_first_own_field(r); i < r->nfields && rc == 0; i++) {
		const struct vgl_field *fl = &r->fields[i];
		gt_ident(id, sizeof id, fl->name, java_field_reserved);
		fprintf(f, "    /** %s %s", gt_type_name(fl->type), fl->name);
		if ((fl->type == VGL_STRING || fl->type == VGL_BYTES) && fl->max)
			fprintf(f, " max %" PRIu32, fl->max);
		fprintf(f, " */\n    public %s %s = ", java_type(fl->type).java, id);
		rc = java_default(f, fl, err, errsize);
		fputs(";\n", f);
	}
	if (rc == 0)
		java_codec_methods(f, r, cls);
	fputs("}\n", f);
	if (rc != 0) { /* the old file, if any, stays as it was */
		gt_abort(&o);
		return -1;
	}
	return gt_close(&o, err, errsize);
}

static int java_fixed(const char *dir, const char *pkg, const char *file, const char *text,
                      char *err, size_t errsize)
{
	struct gt_out o;
	if (gt_open(&o, dir, file, err, errsize) != 0)
		return -1;
	java_header(o.f, pkg);
	fputs(text, o.f);
	return gt_close(&o, err, errsize);
}

/* enum vg_field_type of each language type, as the C sensors declare them (bool is a
 * uint8, an unselected struct reference its uint64 id). */
static const int vg_field_types[] = {
    [VGL_INT8] = 0,   [VGL_INT16] = 1,  [VGL_INT32] = 2,   [VGL_INT64] = 3,   [VGL_UINT8] = 4,
    [VGL_UINT16] = 5, [VGL_UINT32] = 6, [VGL_UINT64] = 7,  [VGL_FLOAT64] = 8, [VGL_BOOL] = 4,
    [VGL_STRING] = 9, [VGL_BYTES] = 10, [VGL_ENTITY] = 11, [VGL_STRUCT] = 7,
};

/* Members of VglSensors besides the sensors' emitters. */
static const char *const java_sensor_reserved[] = {JAVA_KEYWORDS, "record",     "exact",
                                                   "ALL",         "VglSensors", NULL};

/* `new VglWriter.Schema(...)` of one event type: its fields named as the C sensors write
 * them into the trace (each character not a letter or digit: '_'), led by vg_since for
 * the ends of sampled interval sensors. */
static void java_schema(FILE *f, const char *event, const char *suffix, const char *relation,
                        int kind, int place, int strategy, bool since, const struct vgl_record *r)
{
	fprintf(f,
	        " = new VglWriter.Schema(\n        \"%s%s\", \"%s\", %d, %d, %d, %s,\n"
	        "        new java.lang.String[] {",
	        event, suffix, relation, kind, place, strategy, since ? "true" : "false");
	if (since)
		fputs("\"vg_since\"", f);
	for (size_t i = 0; i < r->nfields; i++) {
		fputs(i || since ? ", \"" : "\"", f);
		for (const char *c = r->fields[i].name; *c && c - r->fields[i].name < 256; c++)
			fputc(isalnum((unsigned char)*c) ? *c : '_', f);
		fputc('"', f);
	}
	fputs("},\n        new int[] {", f);
	if (since)
		fputs("7", f);
	for (size_t i = 0; i < r->nfields; i++)
		fprintf(f, "%s%d", i || since ? ", " : "", vg_field_types[r->fields[i].type]);
	fputs("},\n        new java.lang.String[] {", f);
	if (since)
		fputs("null", f);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *fl = &r->fields[i];
		fputs(i || since ? ", " : "", f);
		if (fl->type == VGL_ENTITY && fl->entity)
			java_string(f, fl->entity->name, strlen(fl->entity->name));
		else
			fputs("null", f);
	}
	fputs("});\n", f);
}

/* VglSensors.java: a Schema per event type of each sensor (an interval's begin and end)
 * and per record (emitted alone), with typed emitters: VglSensors.SendMessage(w, rec),
 * VglSensors.Waiting_begin(w, rec), VglSensors.record(w, rec). */
static int java_sensors(const struct vgl_model *m, const char *dir, const char *pkg, char *err,
                        size_t errsize)
{
	static const char *const suffix[] = {"", ".begin", ".end"};
	static const char *const jsuffix[] = {"", "_begin", "_end"};
	struct gt_out o;
	if (gt_open(&o, dir, "VglSensors.java", err, errsize) != 0)
		return -1;
	FILE *f = o.f;
	java_header(f, pkg);
	fprintf(f,
	        "\n/**\n * The schemas of package %s's sensors and records as VglWriter sends "
	        "them (the\n * same as the C sensors declare), and an emitter for each.\n */\n"
	        "public final class VglSensors {\n    private VglSensors() {}\n\n"
	        "    /** A subclass encodes more fields than the schema declares. */\n"
	        "    private static void exact(Object r, Class<?> c) {\n"
	        "        if (r.getClass() != c)\n"
	        "            throw new IllegalArgumentException(r.getClass().getSimpleName()\n"
	        "                + \" is not \" + c.getSimpleName() + \": emit it with its own "
	        "schema\");\n"
	        "    }\n",
	        m->package ? m->package : "");
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		bool interval = s->relation == VGL_REL_INTERVAL;
		char cls[GT_IDENT_MAX], id[GT_IDENT_MAX + 8], name[GT_IDENT_MAX];
		gt_ident(cls, sizeof cls, s->record->name, java_class_reserved);
		for (int half = interval ? 1 : 0; half <= (interval ? 2 : 0); half++) {
			snprintf(name, sizeof name, "%s%s", s->name, jsuffix[half]);
			gt_ident(id, sizeof id, name, java_sensor_reserved);
			fprintf(f,
			        "\n    /** sensor %s (%s:%d): event %s%s. */\n"
			        "    public static final VglWriter.Schema SENSOR_%s",
			        s->name, s->loc.file ? s->loc.file : "?", s->loc.line,
			        s->event_name, suffix[half], id);
			java_schema(f, s->event_name, suffix[half], s->name,
			            s->relation == VGL_REL_STATE ? 3 : half, (int)s->flag,
			            s->once      ? 2
			            : s->sampled ? 1
			                         : 0,
			            half == 2 && vgl_sensor_sampled_interval(s), s->record);
			fprintf(f,
			        "    public static boolean %s(VglWriter w, %s r) {\n"
			        "        exact(r, %s.class);\n"
			        "        return w.emit(SENSOR_%s, r.encode());\n    }\n",
			        id, cls, cls, id);
		}
	}
	fputs("\n    /** Every sensor's event types, in order: the writer's probe table. */\n"
	      "    public static final VglWriter.Schema[] ALL = {",
	      f);
	int k = 0;
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		bool interval = s->relation == VGL_REL_INTERVAL;
		for (int half = interval ? 1 : 0; half <= (interval ? 2 : 0); half++) {
			char name[GT_IDENT_MAX], id[GT_IDENT_MAX + 8];
			snprintf(name, sizeof name, "%s%s", s->name, jsuffix[half]);
			gt_ident(id, sizeof id, name, java_sensor_reserved);
			fprintf(f, "%sSENSOR_%s", k++ ? ", " : "", id);
		}
	}
	fputs("};\n", f);
	const char *pk = m->package ? m->package : "";
	for (size_t i = 0; i < m->nrecords; i++) {
		const struct vgl_record *r = &m->records[i];
		char cls[GT_IDENT_MAX], ev[GT_IDENT_MAX * 2 + 2];
		gt_ident(cls, sizeof cls, r->name, java_class_reserved);
		snprintf(ev, sizeof ev, "%s%s%s", pk, *pk ? "." : "", r->name);
		fprintf(f,
		        "\n    /** record %s emitted alone: event %s. */\n"
		        "    public static final VglWriter.Schema RECORD_%s",
		        r->name, ev, cls);
		java_schema(f, ev, "", r->name, 0, 0, 0, false, r);
		fprintf(f,
		        "    public static boolean record(VglWriter w, %s r) {\n"
		        "        exact(r, %s.class);\n"
		        "        return w.emit(RECORD_%s, r.encode());\n    }\n",
		        cls, cls, cls);
	}
	fputs("}\n", f);
	return gt_close(&o, err, errsize);
}

/* The Java package below `vigil.`: each dot-separated part an identifier. */
static int java_package(const struct vgl_model *m, char *pkg, size_t n)
{
	const char *p = m->package ? m->package : "records";
	size_t k = 0;
	while (*p) {
		size_t len = strcspn(p, ".");
		char part[GT_IDENT_MAX];
		if (len + 2 > sizeof part)
			return -1;
		memcpy(part, p, len);
		part[len] = '\0';
		gt_ident(part, sizeof part, part, java_package_reserved);
		size_t plen = strlen(part);
		if (k + plen + 2 > n)
			return -1;
		if (k)
			pkg[k++] = '.';
		memcpy(pkg + k, part, plen + 1);
		k += plen;
		p += len;
		if (*p == '.')
			p++;
	}
	return k ? 0 : -1;
}

int vgl_gen_java(const struct vgl_model *m, const char *outdir, char *err, size_t errsize)
{
	char pkg[GT_IDENT_MAX], dir[4096];
	if (java_package(m, pkg, sizeof pkg) != 0)
		return gt_err(err, errsize, "package name '%s' is not usable in Java",
		              m->package ? m->package : "");
	int n = snprintf(dir, sizeof dir, "%s/vigil/%s", outdir, pkg);
	if (n < 0 || (size_t)n >= sizeof dir)
		return gt_err(err, errsize, "output path too long");
	for (char *c = dir + strlen(outdir) + 7; *c; c++)
		if (*c == '.')
			*c = '/';
	if (gt_mkdirs(dir, err, errsize) != 0 ||
	    java_fixed(dir, pkg, "EntityRef.java", gen_java_entityref, err, errsize) != 0 ||
	    java_fixed(dir, pkg, "VglCodec.java", gen_java_codec, err, errsize) != 0 ||
	    java_fixed(dir, pkg, "VglWriter.java", gen_java_writer, err, errsize) != 0 ||
	    java_sensors(m, dir, pkg, err, errsize) != 0)
		return -1;
	for (size_t i = 0; i < m->nrecords; i++)
		if (java_record(&m->records[i], dir, pkg, err, errsize) != 0)
			return -1;
	return 0;
}
