/* TSDL parser for the subset vigil writes (and a little more): typealias, typedef,
 * integer, floating_point, string, struct (named or not), arrays and sequences, and the
 * trace/env/clock/stream/event blocks. Enumerations and variants are refused.
 *
 * The first error stops the parse (longjmp back to vgt_tsdl_parse). Declarations are added
 * to the document only when complete, so a text cut short still yields every
 * declaration before the cut. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "tsdl.h"

#define MAX_NESTING 32

struct named_type {
	const char *name;
	struct ttype *type;
};

struct parser {
	struct lexer lx;
	struct arena *a;
	struct tok cur;
	struct tsdl_error *err;
	size_t prev_end; /* end of the token before `cur` */
	jmp_buf fail;
	struct named_type *aliases, *structs;
	size_t naliases, aliases_cap, nstructs, structs_cap;
	int depth;
};

static const char *describe(const struct tok *t, char *buf, size_t size)
{
	switch (t->kind) {
	case TOK_EOF:
		return "end of metadata";
	case TOK_IDENT:
		snprintf(buf, size, "'%.40s'", t->text);
		break;
	case TOK_INT:
		snprintf(buf, size, "number %llu", (unsigned long long)t->ival);
		break;
	case TOK_STRING:
		snprintf(buf, size, "string \"%.40s\"", t->text);
		break;
	case TOK_PUNCT:
		snprintf(buf, size, "'%s'", t->text);
		break;
	}
	return buf;
}

__attribute__((format(printf, 3, 4))) _Noreturn static void
error_at(struct parser *p, const struct tok *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
	va_end(ap);
	p->err->line = t->line;
	p->err->col = t->col;
	p->err->at_eof = t->kind == TOK_EOF;
	longjmp(p->fail, 1);
}

_Noreturn static void expected(struct parser *p, const char *what)
{
	char buf[80];
	error_at(p, &p->cur, "expected %s, got %s", what, describe(&p->cur, buf, sizeof buf));
}

static void next(struct parser *p)
{
	p->prev_end = p->cur.end;
	if (vgt_lexer_next(&p->lx, &p->cur, p->err) < 0)
		longjmp(p->fail, 1);
}

static bool is_punct(const struct parser *p, const char *s)
{
	return p->cur.kind == TOK_PUNCT && !strcmp(p->cur.text, s);
}

static bool is_ident(const struct parser *p, const char *s)
{
	return p->cur.kind == TOK_IDENT && !strcmp(p->cur.text, s);
}

static void expect_punct(struct parser *p, const char *s)
{
	if (!is_punct(p, s)) {
		char what[16];
		snprintf(what, sizeof what, "'%s'", s);
		expected(p, what);
	}
	next(p);
}

static const char *expect_ident(struct parser *p, const char *what)
{
	if (p->cur.kind != TOK_IDENT)
		expected(p, what);
	const char *s = p->cur.text;
	next(p);
	return s;
}

static struct ttype *lookup(const struct named_type *v, size_t n, const char *name)
{
	for (size_t i = n; i-- > 0;) /* the latest definition wins */
		if (!strcmp(v[i].name, name))
			return v[i].type;
	return NULL;
}

static void define_alias(struct parser *p, const char *name, struct ttype *t)
{
	p->aliases =
	    vgt_arena_grow(p->a, p->aliases, p->naliases, &p->aliases_cap, sizeof *p->aliases);
	p->aliases[p->naliases++] = (struct named_type){name, t};
}

static void define_struct(struct parser *p, const char *name, struct ttype *t)
{
	p->structs =
	    vgt_arena_grow(p->a, p->structs, p->nstructs, &p->structs_cap, sizeof *p->structs);
	p->structs[p->nstructs++] = (struct named_type){name, t};
}

static struct ttype *new_type(struct parser *p, enum ttype_class cls, const struct tok *at)
{
	struct ttype *t = vgt_arena_alloc(p->a, sizeof *t);
	t->cls = cls;
	t->line = at->line;
	t->col = at->col;
	t->base = 10;
	return t;
}

/* key ( '.' key )* : "packet.header", "model.emf.uri". */
static const char *parse_key(struct parser *p)
{
	const char *key = expect_ident(p, "a name");
	while (is_punct(p, ".")) {
		next(p);
		const char *part = expect_ident(p, "a name after '.'");
		size_t n = strlen(key) + strlen(part) + 2;
		char *k = vgt_arena_alloc(p->a, n);
		snprintf(k, n, "%s.%s", key, part);
		key = k;
	}
	return key;
}

static struct ttype *parse_type(struct parser *p, const char **declarator);

/* value ::= ['-'] INT | STRING | key */
static void parse_value(struct parser *p, struct tattr *at)
{
	if (is_punct(p, "-") || is_punct(p, "+")) {
		at->negative = is_punct(p, "-");
		next(p);
		if (p->cur.kind != TOK_INT)
			expected(p, "a number");
	}
	if (p->cur.kind == TOK_INT) {
		at->kind = TV_INT;
		at->u = p->cur.ival;
		next(p);
	} else if (p->cur.kind == TOK_STRING) {
		at->kind = TV_STRING;
		at->s = p->cur.text;
		next(p);
	} else if (p->cur.kind == TOK_IDENT) {
		at->kind = TV_IDENT;
		at->s = parse_key(p);
	} else {
		expected(p, "a value");
	}
}

static void parse_typealias(struct parser *p);

/* { key = value; | key := type; | typealias ...; }* '}' */
static void parse_attrs(struct parser *p, struct tattr **out, size_t *n, bool allow_types)
{
	size_t cap = 0;
	expect_punct(p, "{");
	while (!is_punct(p, "}")) {
		if (allow_types && is_ident(p, "typealias")) {
			parse_typealias(p);
			continue;
		}
		struct tattr at = {.line = p->cur.line, .col = p->cur.col};
		at.key = parse_key(p);
		if (allow_types && is_punct(p, ":=")) {
			next(p);
			at.kind = TV_TYPE;
			at.type = parse_type(p, NULL);
		} else {
			expect_punct(p, "=");
			parse_value(p, &at);
		}
		expect_punct(p, ";");
		*out = vgt_arena_grow(p->a, *out, *n, &cap, sizeof **out);
		(*out)[(*n)++] = at;
	}
	next(p);
}

static bool attr_bool(struct parser *p, const struct tattr *at, const struct tok *where)
{
	if (at->kind == TV_INT && !at->negative && at->u <= 1)
		return at->u;
	if (at->kind == TV_IDENT && (!strcmp(at->s, "true") || !strcmp(at->s, "TRUE")))
		return true;
	if (at->kind == TV_IDENT && (!strcmp(at->s, "false") || !strcmp(at->s, "FALSE")))
		return false;
	error_at(p, where, "'%s' must be true or false", at->key);
}

static unsigned attr_uint(struct parser *p, const struct tattr *at, const struct tok *where,
                          unsigned max)
{
	if (at->kind != TV_INT || at->negative || at->u > max)
		error_at(p, where, "'%s' must be a number from 0 to %u", at->key, max);
	return (unsigned)at->u;
}

static enum byte_order attr_byte_order(struct parser *p, const struct tattr *at,
                                       const struct tok *where)
{
	const char *s = at->kind == TV_IDENT || at->kind == TV_STRING ? at->s : "";
	if (!strcmp(s, "le") || !strcmp(s, "little"))
		return BO_LE;
	if (!strcmp(s, "be") || !strcmp(s, "big") || !strcmp(s, "network"))
		return BO_BE;
	if (!strcmp(s, "native"))
		return BO_NATIVE;
	error_at(p, where, "byte_order must be le, be, network or native");
}

static unsigned attr_base(struct parser *p, const struct tattr *at, const struct tok *where)
{
	if (at->kind == TV_INT && !at->negative &&
	    (at->u == 2 || at->u == 8 || at->u == 10 || at->u == 16))
		return (unsigned)at->u;
	static const struct {
		const char *name;
		unsigned base;
	} names[] = {{"decimal", 10},     {"dec", 10}, {"d", 10}, {"i", 10},     {"u", 10},
	             {"hexadecimal", 16}, {"hex", 16}, {"x", 16}, {"X", 16},     {"p", 16},
	             {"octal", 8},        {"oct", 8},  {"o", 8},  {"binary", 2}, {"b", 2}};
	for (size_t i = 0; at->kind == TV_IDENT && i < sizeof names / sizeof *names; i++)
		if (!strcmp(at->s, names[i].name))
			return names[i].base;
	error_at(p, where, "base must be 2, 8, 10 or 16");
}

static bool is_power_of_two(unsigned v)
{
	return v && !(v & (v - 1));
}

/* integer / floating_point / string { attrs } */
static struct ttype *parse_basic(struct parser *p, enum ttype_class cls)
{
	struct tok start = p->cur;
	struct ttype *t = new_type(p, cls, &start);
	next(p);
	if (cls == TT_STRING && !is_punct(p, "{"))
		return t;
	struct tattr *attrs = NULL;
	size_t n = 0;
	parse_attrs(p, &attrs, &n, false);
	for (size_t i = 0; i < n; i++) {
		const struct tattr *at = &attrs[i];
		struct tok where = {.line = at->line, .col = at->col, .kind = TOK_IDENT};
		const char *k = at->key;
		if (!strcmp(k, "size") && cls == TT_INT) {
			t->size = attr_uint(p, at, &where, 64);
			if (!t->size)
				error_at(p, &where, "integer size must be 1 to 64");
		} else if (!strcmp(k, "align") && cls != TT_STRING) {
			t->align = attr_uint(p, at, &where, 1u << 20);
			if (!is_power_of_two(t->align))
				error_at(p, &where, "align must be a power of two");
		} else if (!strcmp(k, "signed") && cls == TT_INT) {
			t->is_signed = attr_bool(p, at, &where);
		} else if (!strcmp(k, "byte_order") && cls != TT_STRING) {
			t->byte_order = attr_byte_order(p, at, &where);
		} else if (!strcmp(k, "base") && cls == TT_INT) {
			t->base = attr_base(p, at, &where);
		} else if (!strcmp(k, "encoding")) {
			t->text_encoding = at->kind == TV_IDENT && strcmp(at->s, "none");
		} else if (!strcmp(k, "map") && cls == TT_INT) {
			/* clock.NAME.value */
			size_t len = at->kind == TV_IDENT ? strlen(at->s) : 0;
			if (len < 13 || strncmp(at->s, "clock.", 6) ||
			    strcmp(at->s + len - 6, ".value"))
				error_at(p, &where, "map must be clock.NAME.value");
			t->map = vgt_arena_strndup(p->a, at->s + 6, len - 12);
		} else if (!strcmp(k, "exp_dig") && cls == TT_FLOAT) {
			t->exp_dig = attr_uint(p, at, &where, 64);
		} else if (!strcmp(k, "mant_dig") && cls == TT_FLOAT) {
			t->mant_dig = attr_uint(p, at, &where, 64);
		}
		/* Other attributes do not change how values are read. */
	}
	if (cls == TT_INT && !t->size)
		error_at(p, &start, "integer without a size");
	if (cls == TT_FLOAT && (!t->exp_dig || !t->mant_dig))
		error_at(p, &start, "floating_point needs exp_dig and mant_dig");
	if (cls == TT_FLOAT)
		t->size = t->exp_dig + t->mant_dig;
	return t;
}

static void parse_field(struct parser *p, struct ttype *st, size_t *cap);

/* struct [NAME] [{ fields }] [align(N)] */
static struct ttype *parse_struct(struct parser *p)
{
	struct tok start = p->cur;
	next(p);
	const char *name = NULL;
	if (p->cur.kind == TOK_IDENT)
		name = expect_ident(p, "a struct name");
	if (!is_punct(p, "{")) {
		if (!name)
			expected(p, "'{' or a struct name");
		struct ttype *t = lookup(p->structs, p->nstructs, name);
		if (!t)
			error_at(p, &start, "unknown struct '%s'", name);
		return t;
	}
	if (++p->depth > MAX_NESTING)
		error_at(p, &p->cur, "structures nested too deeply");
	struct ttype *t = new_type(p, TT_STRUCT, &start);
	size_t cap = 0;
	next(p);
	while (!is_punct(p, "}"))
		parse_field(p, t, &cap);
	next(p);
	p->depth--;
	if (is_ident(p, "align")) {
		next(p);
		expect_punct(p, "(");
		if (p->cur.kind != TOK_INT || p->cur.ival > 1u << 20 ||
		    !is_power_of_two((unsigned)p->cur.ival))
			expected(p, "a power of two");
		t->align = (unsigned)p->cur.ival;
		next(p);
		expect_punct(p, ")");
	}
	if (name)
		define_struct(p, name, t);
	return t;
}

/* A type: a keyword type, or a type name made of one or more identifiers. With
 * `declarator`, the last identifier of a name is the declared field, not the type. */
static struct ttype *parse_type(struct parser *p, const char **declarator)
{
	struct tok start = p->cur;
	struct ttype *t;
	if (is_ident(p, "integer"))
		t = parse_basic(p, TT_INT);
	else if (is_ident(p, "floating_point"))
		t = parse_basic(p, TT_FLOAT);
	else if (is_ident(p, "string"))
		t = parse_basic(p, TT_STRING);
	else if (is_ident(p, "struct"))
		t = parse_struct(p);
	else if (is_ident(p, "enum") || is_ident(p, "variant"))
		error_at(p, &start, "%s types are not supported by vigil", p->cur.text);
	else if (p->cur.kind != TOK_IDENT)
		expected(p, "a type");
	else {
		/* Collect the identifiers: "unsigned long", "uint32_t". */
		char name[256] = "";
		const char *last = NULL;
		while (p->cur.kind == TOK_IDENT) {
			if (last) {
				if (strlen(name) + strlen(last) + 2 > sizeof name)
					error_at(p, &start, "type name too long");
				if (*name)
					strcat(name, " ");
				strcat(name, last);
			}
			last = p->cur.text;
			next(p);
		}
		if (!declarator) {
			/* the space, the last identifier and the NUL must fit */
			if (strlen(name) + (*name ? 1 : 0) + strlen(last) + 1 > sizeof name)
				error_at(p, &start, "type name too long");
			if (*name)
				strcat(name, " ");
			strcat(name, last);
		} else if (!*name) {
			error_at(p, &p->cur, "missing field name after type '%s'", last);
		}
		t = lookup(p->aliases, p->naliases, name);
		if (!t)
			error_at(p, &start, "unknown type '%s'", name);
		if (declarator)
			*declarator = last;
		return t;
	}
	if (declarator)
		*declarator = expect_ident(p, "a field name");
	return t;
}

/* Array and sequence suffixes: x[16], x[_x_len]. */
static struct ttype *parse_suffixes(struct parser *p, struct ttype *elem)
{
	if (!is_punct(p, "["))
		return elem;
	struct tok start = p->cur;
	next(p);
	struct ttype *t;
	if (p->cur.kind == TOK_INT) {
		t = new_type(p, TT_ARRAY, &start);
		t->length = p->cur.ival;
		next(p);
	} else if (p->cur.kind == TOK_IDENT) {
		t = new_type(p, TT_SEQUENCE, &start);
		t->length_ref = parse_key(p);
	} else {
		expected(p, "an array length or a length field");
	}
	expect_punct(p, "]");
	/* x[a][b] is an array of a arrays of b. */
	if (++p->depth > MAX_NESTING)
		error_at(p, &start, "arrays nested too deeply");
	t->elem = parse_suffixes(p, elem);
	p->depth--;
	return t;
}

static void parse_field(struct parser *p, struct ttype *st, size_t *cap)
{
	if (is_ident(p, "typealias")) {
		parse_typealias(p);
		return;
	}
	struct tok start = p->cur;
	const char *name;
	struct ttype *t = parse_type(p, &name);
	t = parse_suffixes(p, t);
	expect_punct(p, ";");
	for (size_t i = 0; i < st->nfields; i++)
		if (!strcmp(st->fields[i].name, name))
			error_at(p, &start, "duplicate field '%s'", name);
	st->fields = vgt_arena_grow(p->a, st->fields, st->nfields, cap, sizeof *st->fields);
	st->fields[st->nfields++] = (struct tfield){name, t, start.line, start.col};
}

/* typealias TYPE := NAME ; */
static void parse_typealias(struct parser *p)
{
	next(p);
	struct ttype *t = parse_type(p, NULL);
	expect_punct(p, ":=");
	char name[256] = "";
	if (p->cur.kind != TOK_IDENT)
		expected(p, "a type name");
	while (p->cur.kind == TOK_IDENT) {
		if (strlen(name) + strlen(p->cur.text) + 2 > sizeof name)
			error_at(p, &p->cur, "type name too long");
		if (*name)
			strcat(name, " ");
		strcat(name, p->cur.text);
		next(p);
	}
	expect_punct(p, ";");
	define_alias(p, vgt_arena_strdup(p->a, name), t);
}

/* typedef TYPE NAME ; */
static void parse_typedef(struct parser *p)
{
	next(p);
	const char *name;
	struct ttype *t = parse_type(p, &name);
	t = parse_suffixes(p, t);
	expect_punct(p, ";");
	define_alias(p, name, t);
}

static void add_block(struct parser *p, struct tsdl_doc *doc, const struct tblock *b)
{
	doc->blocks =
	    vgt_arena_grow(p->a, doc->blocks, doc->nblocks, &doc->cap, sizeof *doc->blocks);
	doc->blocks[doc->nblocks++] = *b;
}

static void parse_top(struct parser *p, struct tsdl_doc *doc)
{
	static const struct {
		const char *name;
		enum tblock_kind kind;
	} blocks[] = {{"trace", TB_TRACE},   {"env", TB_ENV},     {"clock", TB_CLOCK},
	              {"stream", TB_STREAM}, {"event", TB_EVENT}, {"callsite", TB_OTHER}};
	while (p->cur.kind != TOK_EOF) {
		if (is_ident(p, "typealias")) {
			parse_typealias(p);
		} else if (is_ident(p, "typedef")) {
			parse_typedef(p);
		} else if (is_ident(p, "struct")) {
			parse_struct(p);
			expect_punct(p, ";");
		} else {
			size_t i = 0;
			while (i < sizeof blocks / sizeof *blocks && !is_ident(p, blocks[i].name))
				i++;
			if (i == sizeof blocks / sizeof *blocks)
				expected(p, "a declaration (trace, env, clock, stream, event, "
				            "typealias or struct)");
			struct tblock b = {
			    .kind = blocks[i].kind, .line = p->cur.line, .col = p->cur.col};
			next(p);
			parse_attrs(p, &b.attrs, &b.nattrs, true);
			expect_punct(p, ";");
			add_block(p, doc, &b);
		}
		doc->complete_len = p->prev_end;
	}
}

int vgt_tsdl_parse(struct arena *a, const char *text, size_t len, struct tsdl_doc *doc,
                   struct tsdl_error *err)
{
	struct parser *p = vgt_arena_alloc(a, sizeof *p);
	p->a = a;
	p->err = err;
	vgt_lexer_init(&p->lx, a, text, len);
	*doc = (struct tsdl_doc){0};
	*err = (struct tsdl_error){0};
	if (setjmp(p->fail))
		return -1;
	next(p);
	parse_top(p, doc);
	return 0;
}

const struct tattr *vgt_tblock_attr(const struct tblock *b, const char *key)
{
	const struct tattr *found = NULL;
	for (size_t i = 0; i < b->nattrs; i++)
		if (!strcmp(b->attrs[i].key, key))
			found = &b->attrs[i]; /* the last one wins */
	return found;
}
