/* The Perl 5 generator: one module <package>_records.pm (core modules only) with a class
 * per record (a blessed hash of its fields), its encode() and decode(), EntityRef, stream
 * helpers and a Writer to a collector. The encoding is docs/encoding.md; the fixed parts
 * are in gen_perl_lib.h. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "lang/gen_perl_lib.h"
#include "lang/gen_text.h"
#include "lang/lang.h"

/* Classes of the module's own namespace. */
static const char *const pl_class_reserved[] = {"EntityRef", "Writer", "_Reader", "_Record", NULL};

/* `text` with every "@PKG@" replaced by the module's package. */
static void pl_put(FILE *f, const char *text, const char *pkg)
{
	for (const char *p; (p = strstr(text, "@PKG@"));) {
		fwrite(text, 1, (size_t)(p - text), f);
		fputs(pkg, f);
		text = p + 5;
	}
	fputs(text, f);
}

/* A Perl string literal of character text s (UTF-8; invalid bytes as U+FFFD). */
static void pl_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		uint32_t c = gt_utf8_next(u, n, &i);
		if (c == '"' || c == '\\' || c == '$' || c == '@')
			fprintf(f, "\\%c", (char)c);
		else if (c < 0x20 || c >= 0x7F)
			fprintf(f, "\\x{%" PRIx32 "}", c);
		else
			fputc((int)c, f);
	}
	fputc('"', f);
}

/* A Perl byte string literal. */
static void pl_bytes(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\' || c == '$' || c == '@')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7F)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void pl_float(FILE *f, double d)
{
	if (!isfinite(d) || (d == 0 && signbit(d))) { /* exactly, from its bits */
		uint64_t bits;
		memcpy(&bits, &d, sizeof bits);
		fprintf(f, "unpack('d<', pack('Q<', 0x%016" PRIx64 "))", bits);
		return;
	}
	char buf[64];
	snprintf(buf, sizeof buf, "%.17g", d);
	fputs(buf, f);
	if (!strpbrk(buf, ".e"))
		fputs(".0", f);
}

/* The default value of field `fl` as a Perl expression. */
static int pl_default(FILE *f, const char *pkg, const struct vgl_field *fl, char *err,
                      size_t errsize)
{
	const struct vgl_literal *l = gt_field_default(fl);
	enum vgl_type t = fl->type;
	if (gt_is_int(t)) {
		if (l && l->kind != VGL_LIT_INT)
			goto bad;
		if (!l)
			fputs("0", f);
		else if (gt_is_signed(t) && l->i == INT64_MIN)
			fputs("(-9223372036854775807 - 1)", f);
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
		pl_float(f, !l ? 0.0 : l->kind == VGL_LIT_INT ? (double)l->i : l->d);
		return 0;
	case VGL_BOOL:
		if (l && l->kind != VGL_LIT_BOOL)
			goto bad;
		fputs(l && l->b ? "1" : "0", f);
		return 0;
	case VGL_STRING:
	case VGL_BYTES:
		if (l && l->kind != VGL_LIT_STRING)
			goto bad;
		(t == VGL_STRING ? pl_string : pl_bytes)(f, l ? l->s : "", l ? l->slen : 0);
		return 0;
	case VGL_ENTITY:
		if (l)
			goto bad;
		fprintf(f, "%s::EntityRef->new", pkg);
		return 0;
	default:
		goto bad;
	}
bad:
	return gt_err(err, errsize, "field %s: no Perl default for this %s value", fl->name,
	              gt_type_name(t));
}

/* pack/unpack template and size of an integer type. */
static const char *pl_int_tmpl(enum vgl_type t)
{
	static const char *const tmpl[] = {"c", "s<", "l<", "q<", "C", "S<", "L<", "Q<"};
	return tmpl[t - VGL_INT8];
}

/* One statement appending field `fl` (hash key `id`) to $o. */
static void pl_encode_field(FILE *f, const char *pkg, const char *rec, const struct vgl_field *fl,
                            const char *id)
{
	fputs("    $o .= ", f);
	if (gt_is_int(fl->type)) {
		fprintf(f,
		        "pack('%s', %s::_int($s->{%s}, '%" PRId64 "', '%" PRIu64 "', '%s.%s'));\n",
		        pl_int_tmpl(fl->type), pkg, id, gt_int_lo(fl->type), gt_int_hi(fl->type),
		        rec, id);
		return;
	}
	switch (fl->type) {
	case VGL_FLOAT64:
		fprintf(f, "%s::_float($s->{%s}, '%s.%s');\n", pkg, id, rec, id);
		break;
	case VGL_BOOL:
		fprintf(f, "%s::_bool($s->{%s}, '%s.%s');\n", pkg, id, rec, id);
		break;
	case VGL_STRING:
	case VGL_BYTES:
		fprintf(f, "%s::%s($s->{%s}, ", pkg, fl->type == VGL_STRING ? "_str" : "_bytes",
		        id);
		if (fl->max) /* 0: no max */
			fprintf(f, "%" PRIu32, fl->max);
		else
			fputs("undef", f);
		fprintf(f, ", '%s.%s');\n", rec, id);
		break;
	default:
		fprintf(f, "%s::_ref($s->{%s}, '%s.%s');\n", pkg, id, rec, id);
		break;
	}
}

static void pl_decode_field(FILE *f, const struct vgl_field *fl, const char *id)
{
	fprintf(f, "    $o->{%s} = ", id);
	if (gt_is_int(fl->type))
		fprintf(f, "$r->num('%s', %d)", pl_int_tmpl(fl->type), gt_int_size(fl->type));
	else if (fl->type == VGL_FLOAT64)
		fputs("$r->num('d<', 8)", f);
	else if (fl->type == VGL_BOOL)
		fputs("$r->flag", f);
	else if (fl->type == VGL_STRING)
		fputs("$r->text", f);
	else if (fl->type == VGL_BYTES)
		fputs("$r->blob", f);
	else
		fputs("$r->entity", f);
	fputs(" if $r->more;\n", f);
}

static int pl_record(FILE *f, const char *pkg, const struct vgl_record *r, char *err,
                     size_t errsize)
{
	char cls[GT_IDENT_MAX], id[GT_IDENT_MAX];
	if (gt_ident(cls, sizeof cls, r->name, pl_class_reserved) != 0)
		return gt_err(err, errsize, "record %s: the name is too long", r->name);
	if (gt_check_unique(r, NULL, "Perl", err, errsize) != 0)
		return -1;
	fprintf(f, "\npackage %s::%s;\n\n# record %s (%s:%d)\nour @ISA = ('%s::", pkg, cls, r->name,
	        r->loc.file ? r->loc.file : "?", r->loc.line, pkg);
	if (r->parent) {
		char base[GT_IDENT_MAX];
		gt_ident(base, sizeof base, r->parent->name, pl_class_reserved);
		fprintf(f, "%s');\n", base);
	} else {
		fputs("_Record');\n", f);
	}
	fputs("our @FIELDS = (", f);
	for (size_t i = 0; i < r->nfields; i++) {
		gt_ident(id, sizeof id, r->fields[i].name, NULL);
		fprintf(f, "%s['%s', '%s', %" PRIu32 "]", i ? ", " : "", id,
		        gt_type_name(r->fields[i].type), r->fields[i].max);
	}
	fputs(");\n\nsub _defaults {\n    return {\n", f);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *fl = &r->fields[i];
		gt_ident(id, sizeof id, fl->name, NULL);
		fprintf(f, "        '%s' => ", id);
		if (pl_default(f, pkg, fl, err, errsize) != 0)
			return -1;
		fputs(",\n", f);
	}
	fputs("    };\n}\n\n# The standalone encoding: uint32 length, then the fields.\n"
	      "sub encode {\n    my ($s) = @_;\n    my $o = \"\\x00\" x 4;\n",
	      f);
	for (size_t i = 0; i < r->nfields; i++) {
		gt_ident(id, sizeof id, r->fields[i].name, NULL);
		pl_encode_field(f, pkg, cls, &r->fields[i], id);
	}
	fprintf(f, "    return %s::_end($o, '%s');\n}\n\n", pkg, cls);
	fprintf(f,
	        "# ($record, bytes used) from the standalone encoding at byte $offset of $data\n"
	        "# (the record alone in scalar context). Fields missing at the end keep their\n"
	        "# defaults; bytes after the known fields are skipped.\n"
	        "sub decode {\n    my ($class, $data, $offset) = @_;\n"
	        "    my $r = %s::_Reader->new($data, $offset, '%s');\n"
	        "    my $o = $class->new;\n",
	        pkg, cls);
	for (size_t i = 0; i < r->nfields; i++) {
		gt_ident(id, sizeof id, r->fields[i].name, NULL);
		pl_decode_field(f, &r->fields[i], id);
	}
	fputs("    return wantarray ? ($o, $r->used) : $o;\n}\n", f);
	return 0;
}

/* enum vg_field_type of each language type, as the C sensors declare them (bool is a
 * uint8, an unselected struct reference its uint64 id). */
static const int vg_field_types[] = {
    [VGL_INT8] = 0,   [VGL_INT16] = 1,  [VGL_INT32] = 2,   [VGL_INT64] = 3,   [VGL_UINT8] = 4,
    [VGL_UINT16] = 5, [VGL_UINT32] = 6, [VGL_UINT64] = 7,  [VGL_FLOAT64] = 8, [VGL_BOOL] = 4,
    [VGL_STRING] = 9, [VGL_BYTES] = 10, [VGL_ENTITY] = 11, [VGL_STRUCT] = 7,
};

/* The schema's fields of record r as [[name, vg type, entity kind], ...]: names as the C
 * sensors write them into the trace, led by vg_since for sampled interval ends. */
static void pl_schema_fields(FILE *f, const struct vgl_record *r, bool since)
{
	fputc('[', f);
	if (since)
		fputs("['vg_since', 7, ''], ", f);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *fl = &r->fields[i];
		fputs("['", f);
		for (const char *c = fl->name; *c && c - fl->name < 256; c++)
			fputc(isalnum((unsigned char)*c) ? *c : '_', f);
		fprintf(f, "', %d, ", vg_field_types[fl->type]);
		const char *ek = fl->type == VGL_ENTITY && fl->entity ? fl->entity->name : "";
		pl_string(f, ek, strlen(ek));
		fputs("], ", f);
	}
	fputc(']', f);
}

/* %SENSORS: event name -> [relation, kind, placement, strategy, record class, since,
 * fields]; @SENSOR_ORDER: their ids' order; %SENSOR_NAMES: the sensors' own names to
 * event names; %RECORD_FIELDS: each record class's name and schema fields. The same
 * tables as the Python module's. */
static void pl_sensors(FILE *f, const char *pkg, const struct vgl_model *m)
{
	static const char *const suffix[] = {"", ".begin", ".end"};
	fprintf(f,
	        "\npackage %s;\n\n# Schemas of the sensors (docs/protocol.md SCHEMA), as the C "
	        "sensors declare them.\n%%SENSORS = (\n",
	        pkg);
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		bool interval = s->relation == VGL_REL_INTERVAL;
		char cls[GT_IDENT_MAX];
		gt_ident(cls, sizeof cls, s->record->name, pl_class_reserved);
		for (int half = interval ? 1 : 0; half <= (interval ? 2 : 0); half++) {
			int kind = s->relation == VGL_REL_STATE ? 3 : half;
			bool since = half == 2 && vgl_sensor_sampled_interval(s);
			fprintf(f, "    '%s%s' => ['%s', %d, %d, %d, '%s::%s', %d, ", s->event_name,
			        suffix[half], s->name, kind, (int)s->flag,
			        s->once      ? 2
			        : s->sampled ? 1
			                     : 0,
			        pkg, cls, since ? 1 : 0);
			pl_schema_fields(f, s->record, since);
			fputs("],\n", f);
		}
	}
	fputs(");\n@SENSOR_ORDER = (\n", f);
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		bool interval = s->relation == VGL_REL_INTERVAL;
		for (int half = interval ? 1 : 0; half <= (interval ? 2 : 0); half++)
			fprintf(f, "    '%s%s',\n", s->event_name, suffix[half]);
	}
	fputs(");\n%SENSOR_NAMES = (\n", f);
	for (size_t i = 0; i < m->nsensors; i++) {
		const struct vgl_sensor *s = &m->sensors[i];
		bool interval = s->relation == VGL_REL_INTERVAL;
		for (int half = interval ? 1 : 0; half <= (interval ? 2 : 0); half++)
			fprintf(f, "    '%s%s' => '%s%s',\n", s->name, suffix[half], s->event_name,
			        suffix[half]);
	}
	fputs(");\n%RECORD_FIELDS = (\n", f);
	for (size_t i = 0; i < m->nrecords; i++) {
		char cls[GT_IDENT_MAX];
		gt_ident(cls, sizeof cls, m->records[i].name, pl_class_reserved);
		fprintf(f, "    '%s::%s' => ['%s', ", pkg, cls, m->records[i].name);
		pl_schema_fields(f, &m->records[i], false);
		fputs("],\n", f);
	}
	fputs(");\n$PACKAGE = ", f);
	const char *p = m->package ? m->package : "";
	pl_string(f, p, strlen(p));
	fputs(";\n", f);
}

int vgl_gen_perl(const struct vgl_model *m, const char *outdir, char *err, size_t errsize)
{
	char pkg[GT_IDENT_MAX], name[GT_IDENT_MAX + 16];
	if (gt_ident(pkg, sizeof pkg, m->package ? m->package : "vigil", NULL) != 0 ||
	    strlen(pkg) + 8 >= GT_IDENT_MAX)
		return gt_err(err, errsize, "package name too long");
	strcat(pkg, "_records");
	snprintf(name, sizeof name, "%s.pm", pkg);
	if (gt_mkdirs(outdir, err, errsize) != 0)
		return -1;
	struct gt_out o;
	if (gt_open(&o, outdir, name, err, errsize) != 0)
		return -1;
	FILE *f = o.f;
	fprintf(f, "# Generated by vigil gen from %s (package %s). Do not edit.\n",
	        m->nfiles ? m->files[0] : "?", m->package ? m->package : "");
	fprintf(f,
	        "#\n# Records of package %s, with writers and readers of vigil's record encoding\n"
	        "# (docs/encoding.md): a standalone record is a uint32 length, then its fields in\n"
	        "# order, little endian, no padding. Readers follow the evolution rules: fields\n"
	        "# missing at the end take their defaults; bytes after the known fields are "
	        "skipped.\n#\n"
	        "# A record is a blessed hash of its fields: %s::Job->new(name => 'x'), "
	        "$rec->{name}.\n"
	        "# Integers are range-checked when encoding (die, never a silent wrap); strings "
	        "are\n"
	        "# Perl character strings, encoded as UTF-8, cut at their first NUL, then to their "
	        "max\n"
	        "# bytes; bytes are byte strings, cut to their max. Decoding replaces invalid "
	        "UTF-8\n# (a cut inside a character) with U+FFFD. Needs Perl 5.20 or later, core "
	        "modules only.\n",
	        m->package ? m->package : "", pkg);
	fprintf(f, "package %s;\n\n", pkg);
	pl_put(f, gen_perl_prelude, pkg);
	int rc = 0;
	for (size_t i = 0; i < m->nrecords && rc == 0; i++)
		rc = pl_record(f, pkg, gt_record_in_order(m, i), err, errsize);
	if (rc == 0) {
		fprintf(f, "\npackage %s;\n\n%%RECORDS = (", pkg);
		for (size_t i = 0; i < m->nrecords; i++) {
			char cls[GT_IDENT_MAX];
			gt_ident(cls, sizeof cls, m->records[i].name, pl_class_reserved);
			fprintf(f, "%s'%s' => '%s::%s'", i ? ", " : "", m->records[i].name, pkg,
			        cls);
		}
		fputs(");\n", f);
		pl_put(f, gen_perl_streams, pkg);
		pl_sensors(f, pkg, m);
		pl_put(f, gen_perl_writer, pkg);
	}
	if (rc != 0) { /* the old file, if any, stays as it was */
		gt_abort(&o);
		return -1;
	}
	return gt_close(&o, err, errsize);
}
