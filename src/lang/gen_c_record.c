/* The C generator's records: for every record a struct of its flattened fields, and in
 * the source its init (defaults), encoder and decoder of the standalone encoding
 * (docs/encoding.md): uint32 length, then the fields little endian without padding.
 *
 * Decoding follows the schema-evolution rules: fields missing at the end of the data keep
 * their defaults, bytes after the known fields are skipped. A field cut in the middle, a
 * string without its 0 byte or a length beyond the data makes the record malformed. */
#include <string.h>

#include "lang/gen_c_internal.h"

unsigned long long cg_worst_size(const struct vgl_record *r)
{
	unsigned long long n = 0;
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *f = &r->fields[i];
		if ((f->type == VGL_STRING || f->type == VGL_BYTES) && f->max == 0)
			return CG_UNBOUNDED;
		n += cg_fixed_size(f->type);
		if (f->type == VGL_STRING || f->type == VGL_BYTES)
			n += f->max;
	}
	return n;
}

static void declare_record(struct cgen *g, const struct vgl_record *r)
{
	FILE *h = g->h;
	fprintf(h, "/* record %s%s%s: its fields in encoding order. */\nstruct %s_%s {\n", r->name,
	        r->parent ? " extends " : "", r->parent ? r->parent->name : "", g->pkg, r->name);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *f = &r->fields[i];
		const char *n = cg_id(f->name);
		switch (f->type) {
		case VGL_ENTITY:
			fprintf(h, "\tvg_ref %s; /* %s */\n", n, f->entity ? f->entity->name : "?");
			break;
		case VGL_STRING:
			if (f->max)
				fprintf(h, "\tconst char *%s; /* at most %u bytes are encoded */\n",
				        n, f->max);
			else
				fprintf(h, "\tconst char *%s; /* no max: never cut */\n", n);
			break;
		case VGL_BYTES:
			if (f->max)
				fprintf(
				    h,
				    "\tconst uint8_t *%s; /* %s_len bytes, at most %u encoded */\n",
				    n, n, f->max);
			else
				fprintf(h, "\tconst uint8_t *%s; /* %s_len bytes, never cut */\n",
				        n, n);
			fprintf(h, "\tuint32_t %s_len;\n", n);
			break;
		default:
			fprintf(h, "\t%s %s;%s\n", cg_ctype(f->type), n,
			        f->is_struct_id ? " /* the structure's address, as an id */" : "");
		}
	}
	if (!r->nfields)
		fprintf(h, "\tchar vg__empty; /* no field: C has no empty struct */\n");
	fprintf(h, "};\n");
	unsigned long long worst = cg_worst_size(r);
	if (worst <= UINT32_MAX)
		fprintf(
		    h,
		    "/* Largest encoded size, with the length. */\n#define %s_%s_MAX_SIZE %lluu\n",
		    g->PKG, cg_member(r->name), 4 + worst);
	else
		fprintf(h, "/* No largest encoded size: a string or bytes field has no max. */\n");
	fprintf(h,
	        "/* Sets every field to its default. */\n"
	        "void %s_%s_init(struct %s_%s *r);\n"
	        "/* Encodes r into buf if it fits in cap bytes; returns the encoded size either "
	        "way\n * (0: over 4 GiB, more than the encoding can hold). */\n"
	        "size_t %s_%s_encode(const struct %s_%s *r, uint8_t *buf, size_t cap);\n"
	        "/* Decodes one record (length and fields) from the len bytes at buf: 0, or -1 if\n"
	        " * they do not hold a whole record. Strings and bytes point into buf. */\n"
	        "int %s_%s_decode(const uint8_t *buf, size_t len, struct %s_%s *out);\n\n",
	        g->pkg, r->name, g->pkg, r->name, g->pkg, r->name, g->pkg, r->name, g->pkg, r->name,
	        g->pkg, r->name);
}

static void define_init(struct cgen *g, const struct vgl_record *r)
{
	FILE *c = g->c;
	fprintf(c, "void %s_%s_init(struct %s_%s *r)\n{\n\tmemset(r, 0, sizeof *r);\n", g->pkg,
	        r->name, g->pkg, r->name);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *f = &r->fields[i];
		const char *n = cg_id(f->name);
		bool def = f->npath == 0 && !f->is_struct_id && f->prop && f->prop->has_default;
		if (f->type == VGL_STRING) {
			fprintf(c, "\tr->%s = ", n);
			if (def)
				cg_literal(c, VGL_STRING, &f->prop->def);
			else
				fprintf(c, "\"\"");
			fprintf(c, ";\n");
		} else if (f->type == VGL_BYTES && def) {
			fprintf(c, "\tr->%s = (const uint8_t *)", n);
			cg_literal(c, VGL_BYTES, &f->prop->def);
			fprintf(c, ";\n\tr->%s_len = %zuu;\n", n,
			        f->prop->def.kind == VGL_LIT_STRING ? f->prop->def.slen : 0);
		} else if (def && f->type != VGL_ENTITY && f->type != VGL_BYTES) {
			fprintf(c, "\tr->%s = (%s)", n, cg_ctype(f->type));
			cg_literal(c, f->type, &f->prop->def);
			fprintf(c, ";\n");
		}
	}
	fprintf(c, "}\n\n");
}

static void define_encode(struct cgen *g, const struct vgl_record *r)
{
	FILE *c = g->c;
	unsigned long long fixed = 0;
	for (size_t i = 0; i < r->nfields; i++)
		fixed += cg_fixed_size(r->fields[i].type);
	fprintf(c, "size_t %s_%s_encode(const struct %s_%s *r, uint8_t *buf, size_t cap)\n{\n",
	        g->pkg, r->name, g->pkg, r->name);
	fprintf(c, "\tsize_t size = 4 + %lluu;\n", fixed);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *f = &r->fields[i];
		const char *n = cg_id(f->name);
		if (f->type == VGL_STRING)
			fprintf(c, "\tsize_t n%zu = vgc__cut(r->%s, %uu);\n\tsize += n%zu;\n", i, n,
			        f->max, i);
		else if (f->type == VGL_BYTES)
			fprintf(c,
			        "\tuint32_t n%zu = vgc__cutb(r->%s, r->%s_len, %uu);\n\tsize += "
			        "n%zu;\n",
			        i, n, n, f->max, i);
	}
	if (cg_worst_size(r) > UINT32_MAX - 4) /* the length is a uint32 */
		fprintf(c, "\tif (size - 4 > UINT32_MAX)\n\t\treturn 0; /* cannot be encoded */\n");
	fprintf(c, "\tif (size > cap)\n\t\treturn size;\n");
	fprintf(c, "\tuint8_t *p = vgc__put(buf, size - 4, 4);\n");
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *f = &r->fields[i];
		const char *n = cg_id(f->name);
		switch (f->type) {
		case VGL_STRING:
			fprintf(c, "\tp = vgc__mem(p, r->%s, n%zu);\n\t*p++ = 0;\n", n, i);
			break;
		case VGL_BYTES:
			fprintf(c, "\tp = vgc__put(p, n%zu, 4);\n\tp = vgc__mem(p, r->%s, n%zu);\n",
			        i, n, i);
			break;
		case VGL_ENTITY:
			fprintf(
			    c,
			    "\tp = vgc__put(p, r->%s.id, 8);\n\tp = vgc__put(p, r->%s.gen, 4);\n",
			    n, n);
			break;
		case VGL_FLOAT64:
			fprintf(c, "\tp = vgc__put(p, vgc__f64bits(r->%s), 8);\n", n);
			break;
		case VGL_BOOL:
			fprintf(c, "\tp = vgc__put(p, r->%s ? 1 : 0, 1);\n", n);
			break;
		default:
			fprintf(c, "\tp = vgc__put(p, (uint64_t)r->%s, %u);\n", n,
			        cg_fixed_size(f->type));
		}
	}
	fprintf(c, "\t(void)p;\n%s\treturn size;\n}\n\n", r->nfields ? "" : "\t(void)r;\n");
}

static void define_decode(struct cgen *g, const struct vgl_record *r)
{
	FILE *c = g->c;
	fprintf(c,
	        "int %s_%s_decode(const uint8_t *buf, size_t len, struct %s_%s *out)\n{\n"
	        "\t%s_%s_init(out);\n"
	        "\tif (!buf || len < 4 || vgc__get(buf, 4) > len - 4)\n\t\treturn -1;\n"
	        "\tconst uint8_t *p = buf + 4, *end = p + vgc__get(buf, 4);\n"
	        "\tuint64_t v = 0;\n",
	        g->pkg, r->name, g->pkg, r->name, g->pkg, r->name);
	for (size_t i = 0; i < r->nfields; i++) {
		const struct vgl_field *f = &r->fields[i];
		const char *n = cg_id(f->name);
		fprintf(c, "\tif (p == end)\n\t\treturn 0;\n");
		switch (f->type) {
		case VGL_STRING:
			fprintf(c, "\tif (vgc__take_str(&p, end, &out->%s))\n\t\treturn -1;\n", n);
			break;
		case VGL_BYTES:
			fprintf(c,
			        "\tif (vgc__take_bytes(&p, end, &out->%s, &out->%s_len))\n"
			        "\t\treturn -1;\n",
			        n, n);
			break;
		case VGL_ENTITY:
			fprintf(c,
			        "\tif (vgc__take(&p, end, 8, &out->%s.id) || vgc__take(&p, end, 4, "
			        "&v))\n"
			        "\t\treturn -1;\n\tout->%s.gen = (uint32_t)v;\n",
			        n, n);
			break;
		case VGL_FLOAT64:
			fprintf(c,
			        "\tif (vgc__take(&p, end, 8, &v))\n\t\treturn -1;\n"
			        "\tout->%s = vgc__f64(v);\n",
			        n);
			break;
		case VGL_BOOL:
			fprintf(c,
			        "\tif (vgc__take(&p, end, 1, &v))\n\t\treturn -1;\n\tout->%s = v "
			        "!= 0;\n",
			        n);
			break;
		default: {
			unsigned size = cg_fixed_size(f->type);
			const char *t = cg_ctype(f->type);
			/* Signed: through the unsigned type of the same width (two's complement).
			 */
			fprintf(c,
			        "\tif (vgc__take(&p, end, %u, &v))\n\t\treturn -1;\n"
			        "\tout->%s = (%s)(uint%u_t)v;\n",
			        size, n, t, size * 8);
		}
		}
	}
	fprintf(c,
	        "\t(void)v;\n%s\treturn 0; /* bytes after the known fields: a newer writer's */\n"
	        "}\n\n",
	        r->nfields ? "" : "\t(void)p;\n\t(void)end;\n");
}

/* Helpers of the encoders and decoders (marked unused: a record set may not need all). */
static const char helpers[] =
    "#define VGC__HELPER static inline __attribute__((unused))\n"
    "VGC__HELPER uint8_t *vgc__put(uint8_t *p, uint64_t v, unsigned n)\n"
    "{\n"
    "\tfor (unsigned i = 0; i < n; i++)\n"
    "\t\tp[i] = (uint8_t)(v >> (8 * i));\n"
    "\treturn p + n;\n"
    "}\n"
    "VGC__HELPER uint64_t vgc__get(const uint8_t *p, unsigned n)\n"
    "{\n"
    "\tuint64_t v = 0;\n"
    "\tfor (unsigned i = 0; i < n; i++)\n"
    "\t\tv |= (uint64_t)p[i] << (8 * i);\n"
    "\treturn v;\n"
    "}\n"
    "VGC__HELPER uint8_t *vgc__mem(uint8_t *p, const void *b, size_t n)\n"
    "{\n"
    "\tif (n)\n"
    "\t\tmemcpy(p, b, n);\n"
    "\treturn p + n;\n"
    "}\n"
    "VGC__HELPER size_t vgc__cut(const char *s, uint32_t max)\n"
    "{\n"
    "\treturn s ? (max ? strnlen(s, max) : strlen(s)) : 0; /* max 0: no max */\n"
    "}\n"
    "VGC__HELPER uint32_t vgc__cutb(const void *b, uint32_t n, uint32_t max)\n"
    "{\n"
    "\treturn b ? (max && n > max ? max : n) : 0;\n"
    "}\n"
    "VGC__HELPER uint64_t vgc__f64bits(double d)\n"
    "{\n"
    "\tuint64_t u;\n"
    "\tmemcpy(&u, &d, 8);\n"
    "\treturn u;\n"
    "}\n"
    "VGC__HELPER double vgc__f64(uint64_t u)\n"
    "{\n"
    "\tdouble d;\n"
    "\tmemcpy(&d, &u, 8);\n"
    "\treturn d;\n"
    "}\n"
    "VGC__HELPER int vgc__take(const uint8_t **p, const uint8_t *end, unsigned n, "
    "uint64_t *v)\n"
    "{\n"
    "\tif ((size_t)(end - *p) < n)\n"
    "\t\treturn -1;\n"
    "\t*v = vgc__get(*p, n);\n"
    "\t*p += n;\n"
    "\treturn 0;\n"
    "}\n"
    "VGC__HELPER int vgc__take_str(const uint8_t **p, const uint8_t *end, const char **s)\n"
    "{\n"
    "\tconst uint8_t *z = memchr(*p, 0, (size_t)(end - *p));\n"
    "\tif (!z)\n"
    "\t\treturn -1;\n"
    "\t*s = (const char *)*p;\n"
    "\t*p = z + 1;\n"
    "\treturn 0;\n"
    "}\n"
    "VGC__HELPER int vgc__take_bytes(const uint8_t **p, const uint8_t *end, "
    "const uint8_t **b,\n"
    "                                  uint32_t *n)\n"
    "{\n"
    "\tuint64_t v;\n"
    "\tif (vgc__take(p, end, 4, &v) || v > (size_t)(end - *p))\n"
    "\t\treturn -1;\n"
    "\t*b = *p;\n"
    "\t*n = (uint32_t)v;\n"
    "\t*p += v;\n"
    "\treturn 0;\n"
    "}\n\n";

void cg_records(struct cgen *g)
{
	if (g->m->nrecords) {
		fprintf(g->h, "/* ---- records ---- */\n\n");
		fputs(helpers, g->c);
	}
	for (size_t i = 0; i < g->m->nrecords; i++) {
		const struct vgl_record *r = &g->m->records[i];
		declare_record(g, r);
		define_init(g, r);
		define_encode(g, r);
		define_decode(g, r);
	}
}
