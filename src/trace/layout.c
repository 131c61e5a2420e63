/* Compiles a TSDL structure type into a layout: flat decode ops and the typed fields
 * they yield. Nested structures are flattened ("outer.inner"); struct vg_ref (uint64 id,
 * uint32 gen) becomes one reference field; byte arrays and byte sequences become one
 * bytes field (a sequence's length field is marked hidden). */
#include <stdio.h>
#include <string.h>

#include "tsdl.h"

#define MAX_OPS 10000

struct compiler {
	struct arena *a;
	bool big_endian; /* the trace's byte order: what `native` means */
	struct op *ops;
	size_t nops, ops_cap;
	struct vgt_field *fields;
	const char **clocks;
	size_t nfields, fields_cap, clocks_cap;
	char *err;
	size_t errsize;
	unsigned *line, *col;
};

static int fail(struct compiler *c, const struct ttype *t, const char *fmt, const char *arg)
{
	snprintf(c->err, c->errsize, fmt, arg);
	*c->line = t->line;
	*c->col = t->col;
	return -1;
}

static unsigned byte_align(unsigned bits)
{
	return bits >= 8 ? bits / 8 : 1;
}

/* Natural alignment in bytes. */
static unsigned type_align(const struct ttype *t)
{
	switch (t->cls) {
	case TT_INT:
	case TT_FLOAT:
		return byte_align(t->align ? t->align : 8);
	case TT_STRING:
		return 1;
	case TT_ARRAY:
	case TT_SEQUENCE:
		return type_align(t->elem);
	case TT_STRUCT: {
		unsigned a = byte_align(t->align);
		for (size_t i = 0; i < t->nfields; i++) {
			unsigned f = type_align(t->fields[i].type);
			if (f > a)
				a = f;
		}
		return a;
	}
	}
	return 1;
}

static bool big_endian(const struct compiler *c, const struct ttype *t)
{
	return t->byte_order == BO_NATIVE ? c->big_endian : t->byte_order == BO_BE;
}

static bool is_uint(const struct ttype *t, unsigned size)
{
	return t->cls == TT_INT && t->size == size && !t->is_signed;
}

static bool is_ref(const struct ttype *t)
{
	return t->cls == TT_STRUCT && t->nfields == 2 && !strcmp(t->fields[0].name, "id") &&
	       !strcmp(t->fields[1].name, "gen") && is_uint(t->fields[0].type, 64) &&
	       is_uint(t->fields[1].type, 32) && type_align(t->fields[0].type) <= 8 &&
	       type_align(t->fields[1].type) <= 8 &&
	       t->fields[0].type->byte_order == t->fields[1].type->byte_order;
}

static bool is_byte(const struct ttype *t)
{
	return t->cls == TT_INT && t->size == 8;
}

static struct op *add_op(struct compiler *c, enum op_kind kind, unsigned align)
{
	c->ops = vgt_arena_grow(c->a, c->ops, c->nops, &c->ops_cap, sizeof *c->ops);
	struct op *op = &c->ops[c->nops++];
	*op = (struct op){.kind = kind,
	                  .align = (uint8_t)(align > 128 ? 128 : align),
	                  .field = -1,
	                  .len_field = -1};
	return op;
}

static int add_field(struct compiler *c, const char *name, enum vgt_vtype type, unsigned size)
{
	c->fields = vgt_arena_grow(c->a, c->fields, c->nfields, &c->fields_cap, sizeof *c->fields);
	c->clocks = vgt_arena_grow(c->a, c->clocks, c->nfields, &c->clocks_cap, sizeof *c->clocks);
	c->fields[c->nfields] =
	    (struct vgt_field){.name = name, .type = type, .size = size, .base = 10};
	c->clocks[c->nfields] = NULL;
	return (int)c->nfields++;
}

static const char *join(struct compiler *c, const char *prefix, const char *name)
{
	if (!*prefix)
		return name;
	size_t n = strlen(prefix) + strlen(name) + 2;
	char *s = vgt_arena_alloc(c->a, n);
	snprintf(s, n, "%s.%s", prefix, name);
	return s;
}

/* A sequence's length field: `ref` relative to the enclosing structures, innermost
 * first. Dynamic scope prefixes ("event.fields.") are ignored. */
static int find_length(struct compiler *c, const char *prefix, const char *ref)
{
	static const char *const scopes[] = {"trace.packet.header.", "stream.packet.context.",
	                                     "stream.event.header.", "stream.event.context.",
	                                     "event.context.",       "event.fields."};
	for (size_t i = 0; i < sizeof scopes / sizeof *scopes; i++)
		if (!strncmp(ref, scopes[i], strlen(scopes[i])))
			ref = ref + strlen(scopes[i]);
	size_t plen = strlen(prefix);
	for (;;) {
		char name[512];
		snprintf(name, sizeof name, "%.*s%s%s", (int)plen, prefix, plen ? "." : "", ref);
		for (size_t i = c->nfields; i-- > 0;)
			if (!strcmp(c->fields[i].name, name))
				return (int)i;
		if (!plen)
			return -1;
		while (plen > 0 && prefix[plen - 1] != '.')
			plen--;
		if (plen)
			plen--; /* drop the '.' */
	}
}

static int compile(struct compiler *c, const char *prefix, const char *name, const struct ttype *t,
                   int depth);

static int compile_struct(struct compiler *c, const char *prefix, const struct ttype *t, int depth)
{
	unsigned align = type_align(t);
	if (align > 1)
		add_op(c, OP_ALIGN, align);
	for (size_t i = 0; i < t->nfields; i++)
		if (compile(c, prefix, t->fields[i].name, t->fields[i].type, depth + 1) < 0)
			return -1;
	return 0;
}

static int compile(struct compiler *c, const char *prefix, const char *name, const struct ttype *t,
                   int depth)
{
	const char *full = join(c, prefix, name);
	if (depth > 64)
		return fail(c, t, "%s: types nested too deeply", full);
	/* Aliases of aliases can describe exponentially many fields in a few lines. */
	if (c->nops >= MAX_OPS)
		return fail(c, t, "%s: structure with too many fields", full);
	switch (t->cls) {
	case TT_INT: {
		if (t->size % 8)
			return fail(c, t, "field '%s': integers must be whole bytes", full);
		struct op *op = add_op(c, OP_INT, type_align(t));
		op->size = (uint8_t)(t->size / 8);
		op->is_signed = t->is_signed;
		op->big_endian = big_endian(c, t);
		op->field = add_field(c, full, t->is_signed ? VGT_INT : VGT_UINT, op->size);
		c->fields[op->field].base = t->base;
		c->clocks[op->field] = t->map;
		return 0;
	}
	case TT_FLOAT: {
		if (!(t->exp_dig == 8 && t->mant_dig == 24) &&
		    !(t->exp_dig == 11 && t->mant_dig == 53))
			return fail(c, t, "field '%s': only 32- and 64-bit floats are supported",
			            full);
		struct op *op = add_op(c, OP_FLOAT, type_align(t));
		op->size = (uint8_t)(t->size / 8);
		op->big_endian = big_endian(c, t);
		op->field = add_field(c, full, VGT_DOUBLE, op->size);
		return 0;
	}
	case TT_STRING: {
		struct op *op = add_op(c, OP_STRING, 1);
		op->field = add_field(c, full, VGT_STRING, 0);
		return 0;
	}
	case TT_STRUCT:
		if (is_ref(t)) {
			struct op *op = add_op(c, OP_REF, type_align(t));
			op->size = 12;
			op->big_endian = big_endian(c, t->fields[0].type);
			op->field = add_field(c, full, VGT_REF, 12);
			return 0;
		}
		return compile_struct(c, full, t, depth);
	case TT_ARRAY: {
		if (!is_byte(t->elem))
			return fail(c, t, "field '%s': only arrays of bytes are supported", full);
		if (t->length > (1u << 30))
			return fail(c, t, "field '%s': array too long", full);
		struct op *op = add_op(c, OP_BYTES, type_align(t->elem));
		op->len = (uint32_t)t->length;
		op->field = add_field(c, full, VGT_BYTES, op->len);
		return 0;
	}
	case TT_SEQUENCE: {
		if (!is_byte(t->elem))
			return fail(c, t, "field '%s': only sequences of bytes are supported",
			            full);
		int len = find_length(c, prefix, t->length_ref);
		if (len < 0)
			return fail(c, t, "sequence length '%s' is not an earlier field",
			            t->length_ref);
		if (c->fields[len].type != VGT_UINT && c->fields[len].type != VGT_INT)
			return fail(c, t, "sequence length '%s' is not an integer", t->length_ref);
		c->fields[len].hidden = true;
		struct op *op = add_op(c, OP_SEQ, type_align(t->elem));
		op->len_field = len;
		op->field = add_field(c, full, VGT_BYTES, 0);
		return 0;
	}
	}
	return fail(c, t, "field '%s': unsupported type", full);
}

int vgt_layout_compile(struct arena *a, const struct ttype *t, bool trace_big_endian,
                       struct layout *out, char *err, size_t errsize, unsigned *line, unsigned *col)
{
	*out = (struct layout){0};
	if (t->cls != TT_STRUCT) {
		snprintf(err, errsize, "expected a struct type");
		*line = t->line;
		*col = t->col;
		return -1;
	}
	struct compiler c = {.a = a,
	                     .big_endian = trace_big_endian,
	                     .err = err,
	                     .errsize = errsize,
	                     .line = line,
	                     .col = col};
	if (compile_struct(&c, "", t, 0) < 0)
		return -1;
	out->ops = c.ops;
	out->nops = (unsigned)c.nops;
	out->fields = c.fields;
	out->nfields = (unsigned)c.nfields;
	out->clock = c.clocks;
	return 0;
}

int vgt_layout_field(const struct layout *l, const char *name)
{
	for (unsigned i = 0; i < l->nfields; i++)
		if (!strcmp(l->fields[i].name, name))
			return (int)i;
	return -1;
}
