/* Compiles a TSDL structure type into a layout: flat decode ops and the typed fields
 * they yield. Nested structures are flattened ("outer.inner"); struct vg_ref (uint64 id,
 * uint32 gen) becomes one reference field; byte arrays and byte sequences become one
 * bytes field (a sequence's length field is marked hidden). An enum is its integer. A
 * variant becomes a jump to its options' ops, each option's fields slots of their own,
 * and a hidden slot (named as the variant) saying which option was decoded. Integers
 * that are not whole aligned bytes are bit fields (CTF 1.8 4.1.5): they make the layout
 * `general`, decoded bit by bit; a structure always ends on a byte boundary. */
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
	struct field_place *places;
	const struct ttype **enums; /* per field: its enumeration, or NULL */
	size_t nfields, fields_cap, clocks_cap, places_cap, enums_cap;
	struct variant_map *variants;
	size_t nvariants, variants_cap;
	int cond_slot; /* the innermost variant being compiled (-1: none), its option */
	unsigned cond_option;
	bool general;
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
	case TT_ENUM:
		return type_align(t->elem);
	case TT_VARIANT: /* the option decoded aligns itself */
		return 1;
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
	c->places = vgt_arena_grow(c->a, c->places, c->nfields, &c->places_cap, sizeof *c->places);
	c->enums = vgt_arena_grow(c->a, c->enums, c->nfields, &c->enums_cap, sizeof *c->enums);
	c->fields[c->nfields] =
	    (struct vgt_field){.name = name, .type = type, .size = size, .base = 10};
	c->clocks[c->nfields] = NULL;
	c->places[c->nfields] =
	    (struct field_place){.variant_slot = c->cond_slot, .option = c->cond_option};
	c->enums[c->nfields] = NULL;
	return (int)c->nfields++;
}

/* Is this integer a bit field: not whole bytes, or allowed to start inside a byte? */
static bool is_bit_field(const struct ttype *t)
{
	return t->size % 8 || (t->align && t->align < 8);
}

/* Alignment in bits (CTF 1.8: integers of whole bytes 8 by default, bit fields 1). */
static unsigned bit_align(const struct ttype *t)
{
	switch (t->cls) {
	case TT_INT:
		return t->align ? t->align : t->size % 8 ? 1 : 8;
	case TT_FLOAT:
		return t->align ? t->align : 8;
	case TT_ARRAY:
	case TT_SEQUENCE:
	case TT_ENUM:
		return bit_align(t->elem);
	case TT_STRUCT: {
		unsigned a = t->align ? t->align : 1;
		for (size_t i = 0; i < t->nfields; i++) {
			unsigned f = bit_align(t->fields[i].type);
			if (f > a)
				a = f;
		}
		return a;
	}
	case TT_VARIANT:
		return 1;
	case TT_STRING:
		break;
	}
	return 8;
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
static int compile_variant(struct compiler *c, const char *prefix, const char *full,
                           const struct ttype *t, int depth);

static int compile_struct(struct compiler *c, const char *prefix, const struct ttype *t, int depth)
{
	unsigned align = type_align(t);
	/* A byte-aligned structure after bit fields starts at the next byte. */
	if (align > 1 || (c->general && bit_align(t) >= 8))
		add_op(c, OP_ALIGN, align);
	for (size_t i = 0; i < t->nfields; i++)
		if (compile(c, prefix, t->fields[i].name, t->fields[i].type, depth + 1) < 0)
			return -1;
	return 0;
}

/* The variant's tag: an earlier enum field. Its labels select the options of the same
 * name; a value no label covers, or a label no option has, selects none (bad data). */
static int compile_variant(struct compiler *c, const char *prefix, const char *full,
                           const struct ttype *t, int depth)
{
	if (!t->length_ref)
		return fail(c, t, "variant '%s' has no tag", full);
	int tag = find_length(c, prefix, t->length_ref);
	if (tag < 0 || !c->enums[tag])
		return fail(c, t, "variant tag '%s' is not an earlier enum field", t->length_ref);
	if (!t->nfields)
		return fail(c, t, "variant '%s' has no options", full);
	const struct ttype *e = c->enums[tag];
	struct variant_map vm = {.noptions = (unsigned)t->nfields,
	                         .is_signed = e->elem->is_signed,
	                         .slot = add_field(c, full, VGT_UINT, 1)};
	c->fields[vm.slot].hidden = true;
	vm.ranges = vgt_arena_alloc(c->a, (e->nentries + 1) * sizeof *vm.ranges);
	for (size_t i = 0; i < e->nentries; i++)
		for (size_t o = 0; o < t->nfields; o++)
			if (!strcmp(e->entries[i].label, t->fields[o].name))
				vm.ranges[vm.nranges++] = (struct variant_range){
				    e->entries[i].lo, e->entries[i].hi, (unsigned)o};
	vm.start = vgt_arena_alloc(c->a, t->nfields * sizeof *vm.start);
	c->variants =
	    vgt_arena_grow(c->a, c->variants, c->nvariants, &c->variants_cap, sizeof *c->variants);
	size_t index = c->nvariants++;
	struct op *op = add_op(c, OP_VARIANT, 1);
	op->len = (uint32_t)index;
	op->len_field = tag;
	op->field = vm.slot;
	c->general = true;
	size_t *jumps = vgt_arena_alloc(c->a, t->nfields * sizeof *jumps);
	int saved_slot = c->cond_slot;
	unsigned saved_option = c->cond_option;
	for (size_t o = 0; o < t->nfields; o++) {
		vm.start[o] = (uint32_t)c->nops;
		c->cond_slot = vm.slot;
		c->cond_option = (unsigned)o + 1;
		if (compile(c, full, t->fields[o].name, t->fields[o].type, depth + 1) < 0)
			return -1;
		jumps[o] = c->nops;
		add_op(c, OP_JUMP, 1);
	}
	c->cond_slot = saved_slot;
	c->cond_option = saved_option;
	for (size_t o = 0; o < t->nfields; o++)
		c->ops[jumps[o]].len = (uint32_t)c->nops;
	c->variants[index] = vm;
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
		if (is_bit_field(t)) {
			struct op *op = add_op(c, OP_BITS, 1);
			op->size = (uint8_t)t->size;
			op->is_signed = t->is_signed;
			op->big_endian = big_endian(c, t);
			op->field = add_field(c, full, t->is_signed ? VGT_INT : VGT_UINT,
			                      (t->size + 7) / 8);
			c->fields[op->field].base = t->base;
			c->clocks[op->field] = t->map;
			c->places[op->field].bits = (uint8_t)t->size;
			c->general = true;
			return 0;
		}
		struct op *op = add_op(c, OP_INT, type_align(t));
		op->size = (uint8_t)(t->size / 8);
		op->is_signed = t->is_signed;
		op->big_endian = big_endian(c, t);
		op->field = add_field(c, full, t->is_signed ? VGT_INT : VGT_UINT, op->size);
		c->fields[op->field].base = t->base;
		c->clocks[op->field] = t->map;
		c->places[op->field].bits = (uint8_t)t->size;
		return 0;
	}
	case TT_ENUM: {
		if (compile(c, prefix, name, t->elem, depth + 1) < 0)
			return -1;
		c->enums[c->nfields - 1] = t;
		return 0;
	}
	case TT_VARIANT:
		return compile_variant(c, prefix, full, t, depth);
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
	                     .col = col,
	                     .cond_slot = -1};
	if (compile_struct(&c, "", t, 0) < 0)
		return -1;
	out->ops = c.ops;
	out->nops = (unsigned)c.nops;
	out->fields = c.fields;
	out->nfields = (unsigned)c.nfields;
	out->clock = c.clocks;
	out->place = c.places;
	out->variants = c.variants;
	out->nvariants = (unsigned)c.nvariants;
	out->general = c.general;
	return 0;
}

int vgt_layout_field(const struct layout *l, const char *name)
{
	for (unsigned i = 0; i < l->nfields; i++)
		if (!strcmp(l->fields[i].name, name))
			return (int)i;
	return -1;
}
