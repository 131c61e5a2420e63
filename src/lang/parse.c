/* Recursive descent over the tokens of one file. A syntax error skips to the next
 * declaration (or, inside a body, to the next ';'), so one run reports every error. */
#include "lang/parse.h"

#include <string.h>

#include "lang/arena.h"
#include "lang/lex.h"
#include "lang/names.h"

struct parser {
	struct vgl_lexer lx;
	struct vgl_token tok;
	struct vgl_loc prev_end; /* just after the previous token */
	struct vgl_diag *diag;
	struct vgb_arena *arena;
	struct ast_file *file;
	size_t capimports, capdecls;
	long depth; /* braces opened minus closed, over the tokens consumed */
};

static void advance(struct parser *p)
{
	p->depth += (p->tok.kind == TOK_LBRACE) - (p->tok.kind == TOK_RBRACE);
	p->prev_end = p->tok.end;
	vgl_lex_next(&p->lx, &p->tok);
}

static bool is_word(const struct parser *p, const char *w)
{
	return p->tok.kind == TOK_IDENT && p->tok.len == strlen(w) &&
	       !memcmp(p->tok.start, w, p->tok.len);
}

static bool at_declaration(const struct parser *p)
{
	static const char *const words[] = {"package", "import", "const", "entity",
	                                    "struct",  "record", "sensor"};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (is_word(p, words[i]))
			return true;
	return false;
}

static char *tok_text(struct parser *p)
{
	return vgb_arena_strndup(p->arena, p->tok.start, p->tok.len);
}

/* "expected X WHERE", just after the previous token. */
static bool expected(struct parser *p, const char *what, const char *where)
{
	vgl_error(p->diag, p->prev_end, "expected %s %s", what, where);
	return false;
}

static bool expect(struct parser *p, enum vgl_tok kind, const char *where)
{
	if (p->tok.kind != kind)
		return expected(p, vgl_tok_name(kind), where);
	advance(p);
	return true;
}

/* A name being declared: an identifier that is not reserved (reported, then accepted so
 * that parsing goes on). */
static bool parse_name(struct parser *p, const char *what, const char *where, const char **name,
                       struct vgl_loc *loc)
{
	if (p->tok.kind != TOK_IDENT)
		return expected(p, what, where);
	*name = tok_text(p);
	*loc = p->tok.loc;
	const char *problem = vgl_name_problem(*name);
	if (problem)
		vgl_error(p->diag, p->tok.loc, "'%s' cannot be used as a name: it is %s", *name,
		          problem);
	advance(p);
	return true;
}

/* A reference to something declared elsewhere (a type, a record, a const). */
static bool parse_ref(struct parser *p, const char *what, const char *where, const char **name,
                      struct vgl_loc *loc)
{
	if (p->tok.kind != TOK_IDENT)
		return expected(p, what, where);
	*name = tok_text(p);
	*loc = p->tok.loc;
	advance(p);
	return true;
}

/* NAME { '.' NAME }: the parts are joined once at the end (a long name stays linear). */
static bool parse_dotted(struct parser *p, bool declare, const char *where, const char **name,
                         struct vgl_loc *loc)
{
	const char **parts = NULL;
	size_t n = 0, cap = 0, len = 0;
	struct vgl_loc ploc;
	do {
		if (n)
			advance(p); /* . */
		const char **part = vgl_push(p->arena, &parts, &n, &cap, sizeof *part);
		if (!(declare ? parse_name : parse_ref)(p, "a name", n > 1 ? "after '.'" : where,
		                                        part, &ploc))
			return false;
		if (n == 1)
			*loc = ploc;
		len += strlen(*part) + 1;
	} while (p->tok.kind == TOK_DOT);
	char *joined = vgb_arena_alloc(p->arena, len), *at = joined;
	for (size_t i = 0; i < n; i++) {
		if (i)
			*at++ = '.';
		at = stpcpy(at, parts[i]);
	}
	*name = joined;
	return true;
}

static bool parse_max(struct parser *p, uint32_t *max, struct vgl_loc *loc)
{
	advance(p); /* max */
	*loc = p->tok.loc;
	if (p->tok.kind != TOK_INT)
		return expected(p, "an integer", "after 'max'");
	if (p->tok.neg || p->tok.u == 0 || p->tok.u > UINT32_MAX)
		vgl_error(p->diag, p->tok.loc, "max must be between 1 and %u", UINT32_MAX);
	else
		*max = (uint32_t)p->tok.u;
	advance(p);
	return true;
}

static bool parse_value(struct parser *p, struct ast_value *v, bool literal_only, const char *where)
{
	v->loc = p->tok.loc;
	struct vgl_literal *l = &v->lit;
	switch (p->tok.kind) {
	case TOK_INT:
		l->kind = VGL_LIT_INT;
		l->u = p->tok.neg ? 0 - p->tok.u : p->tok.u;
		l->i = (int64_t)l->u;
		v->neg = p->tok.neg && p->tok.u != 0;
		break;
	case TOK_FLOAT:
		l->kind = VGL_LIT_FLOAT;
		l->d = p->tok.d;
		break;
	case TOK_STRING:
		l->kind = VGL_LIT_STRING;
		l->s = p->tok.s;
		l->slen = p->tok.slen;
		break;
	case TOK_IDENT:
		if (is_word(p, "true") || is_word(p, "false")) {
			l->kind = VGL_LIT_BOOL;
			l->b = is_word(p, "true");
		} else if (literal_only) {
			return expected(p, "a literal", where);
		} else {
			v->name = tok_text(p);
		}
		break;
	default:
		return expected(p, literal_only ? "a literal" : "a literal or a const name", where);
	}
	advance(p);
	return true;
}

/* Skips a balanced { ... } (the current token is its '{'), without recursion. */
static void skip_braces(struct parser *p)
{
	size_t depth = 0;
	do {
		if (p->tok.kind == TOK_LBRACE)
			depth++;
		else if (p->tok.kind == TOK_RBRACE)
			depth--;
		advance(p);
	} while (depth > 0 && p->tok.kind != TOK_EOF);
}

/* '{' item { ',' item } '}' where item = NAME [selection]; `depth` of these braces. */
static bool parse_selection(struct parser *p, int depth, struct ast_sel **items, size_t *n)
{
	size_t cap = 0;
	advance(p); /* { */
	if (p->tok.kind == TOK_RBRACE) {
		vgl_error(p->diag, p->tok.loc,
		          "empty selection: name members, or leave out the braces");
		advance(p);
		return true;
	}
	for (;;) {
		struct ast_sel *s = vgl_push(p->arena, items, n, &cap, sizeof *s);
		if (!parse_ref(p, "a member name", "in selection", &s->name, &s->loc))
			return false;
		if (p->tok.kind == TOK_LBRACE) {
			s->has_sub = true;
			if (depth >= VGL_MAX_DEPTH) {
				vgl_error(p->diag, p->tok.loc,
				          "selection nested deeper than %d levels", VGL_MAX_DEPTH);
				skip_braces(p);
			} else if (!parse_selection(p, depth + 1, &s->sub, &s->nsub)) {
				return false;
			}
		}
		if (p->tok.kind == TOK_RBRACE) {
			advance(p);
			return true;
		}
		if (p->tok.kind != TOK_COMMA)
			return expected(p, "',' or '}'", "in selection");
		advance(p);
	}
}

/* TYPE NAME [max N] [selection] [= value] ; */
static bool parse_member(struct parser *p, struct ast_member *m, const char *what)
{
	char where[64];
	snprintf(where, sizeof where, "after %s", what);
	if (!parse_ref(p, "a type", "or '}'", &m->type, &m->type_loc))
		return false;
	char name_what[64];
	snprintf(name_what, sizeof name_what, "a %s name", what);
	if (!parse_name(p, name_what, "after its type", &m->name, &m->loc))
		return false;
	if (is_word(p, "max")) {
		m->has_max = true;
		if (!parse_max(p, &m->max, &m->max_loc))
			return false;
	}
	if (p->tok.kind == TOK_LBRACE) {
		m->has_sel = true;
		m->sel_loc = p->tok.loc;
		if (!parse_selection(p, 1, &m->sel, &m->nsel))
			return false;
	}
	if (p->tok.kind == TOK_EQUALS) {
		advance(p);
		m->has_def = true;
		if (!parse_value(p, &m->def, false, "after '='"))
			return false;
	}
	return expect(p, TOK_SEMI, where);
}

/* '{' { member } '}' [';']: a bad member skips to its ';'. False: give up the
 * declaration. */
static bool parse_body(struct parser *p, struct ast_decl *d, const char *what, const char *where)
{
	if (!expect(p, TOK_LBRACE, where))
		return false;
	size_t cap = 0;
	long body = p->depth;
	while (p->tok.kind != TOK_RBRACE) {
		if (p->tok.kind == TOK_EOF || at_declaration(p))
			return expected(p, "'}'", "at the end of the declaration");
		if (vgl_diag_full(p->diag))
			return false;
		struct ast_member *m =
		    vgl_push(p->arena, &d->members, &d->nmembers, &cap, sizeof *m);
		if (parse_member(p, m, what))
			continue;
		d->nmembers--;
		/* On to the member's ';' or the body's '}', past any braces the member opened. */
		while (
		    p->tok.kind != TOK_EOF && !at_declaration(p) &&
		    !(p->depth <= body && (p->tok.kind == TOK_SEMI || p->tok.kind == TOK_RBRACE)))
			advance(p);
		if (p->tok.kind == TOK_SEMI)
			advance(p);
		else if (p->tok.kind != TOK_RBRACE)
			return false; /* reported with the member */
	}
	advance(p);
	if (p->tok.kind == TOK_SEMI)
		advance(p);
	return true;
}

static bool parse_const(struct parser *p, struct ast_decl *d)
{
	d->kind = AST_CONST;
	return parse_ref(p, "a type", "after 'const'", &d->type, &d->type_loc) &&
	       parse_name(p, "a const name", "after its type", &d->name, &d->loc) &&
	       expect(p, TOK_EQUALS, "after the const's name") &&
	       parse_value(p, &d->value, true, "after '='") && expect(p, TOK_SEMI, "after const");
}

static bool parse_entity(struct parser *p, struct ast_decl *d)
{
	d->kind = AST_ENTITY;
	if (!parse_name(p, "an entity name", "after 'entity'", &d->name, &d->loc))
		return false;
	if (p->tok.kind == TOK_SEMI) {
		advance(p);
		return true;
	}
	if (p->tok.kind != TOK_LBRACE)
		return expected(p, "'{' or ';'", "after the entity's name");
	return parse_body(p, d, "attribute", "");
}

static bool parse_struct(struct parser *p, struct ast_decl *d)
{
	d->kind = AST_STRUCT;
	if (!parse_name(p, "a struct name", "after 'struct'", &d->name, &d->loc))
		return false;
	if (is_word(p, "from")) {
		advance(p);
		if (p->tok.kind != TOK_STRING)
			return expected(p, "a header name in quotes", "after 'from'");
		d->header = p->tok.s;
		advance(p);
	}
	return parse_body(p, d, "member", "after the struct's name");
}

static bool parse_record(struct parser *p, struct ast_decl *d)
{
	d->kind = AST_RECORD;
	if (!parse_name(p, "a record name", "after 'record'", &d->name, &d->loc))
		return false;
	if (is_word(p, "extends")) {
		advance(p);
		if (!parse_ref(p, "a record name", "after 'extends'", &d->parent, &d->parent_loc))
			return false;
	}
	if (is_word(p, "max")) {
		d->has_max = true;
		if (!parse_max(p, &d->max, &d->max_loc))
			return false;
	}
	return parse_body(p, d, "property", "after the record's name");
}

static bool parse_clause(struct parser *p, struct ast_clause *c)
{
	static const char *const words[CL_COUNT] = {"traced", "sampled", "performer", "initiator",
	                                            "target", "flag",    "entity",    "activity"};
	c->loc = p->tok.loc;
	size_t k = 0;
	while (k < CL_COUNT && !is_word(p, words[k]))
		k++;
	if (k == CL_COUNT)
		return expected(p,
		                "traced, sampled, performer, initiator, target, flag, entity, "
		                "activity or '}'",
		                "in sensor");
	c->kind = (enum ast_clause_kind)k;
	advance(p);
	if (c->kind == CL_PERFORMER || c->kind == CL_INITIATOR || c->kind == CL_TARGET) {
		if (!parse_dotted(p, false, "after the role", &c->arg, &c->arg_loc))
			return false;
	} else if (c->kind == CL_FLAG) {
		if (!parse_ref(p, "sensor, performer, initiator or target", "after 'flag'", &c->arg,
		               &c->arg_loc))
			return false;
		if (is_word(p, "counter")) {
			c->counter = true;
			advance(p);
		}
	} else if (c->kind == CL_TRACED && is_word(p, "once")) {
		c->once = true;
		advance(p);
	} else if (c->kind == CL_ENTITY) {
		/* The op is checked by the checker (which knows the relation and can suggest). */
		if (!parse_ref(p, "create, load, reclaim, rename or invocation", "after 'entity'",
		               &c->arg, &c->arg_loc))
			return false;
	} else if (c->kind == CL_ACTIVITY && p->tok.kind == TOK_IDENT) {
		c->arg = tok_text(p);
		c->arg_loc = p->tok.loc;
		advance(p);
	}
	return expect(p, TOK_SEMI, "after sensor clause");
}

static bool parse_sensor(struct parser *p, struct ast_decl *d)
{
	d->kind = AST_SENSOR;
	if (!parse_name(p, "a sensor name", "after 'sensor'", &d->name, &d->loc) ||
	    !expect(p, TOK_COLON, "after the sensor's name") ||
	    !parse_ref(p, "event, interval or state", "after ':'", &d->relation,
	               &d->relation_loc) ||
	    !parse_ref(p, "a record name", "after the relation", &d->record, &d->record_loc) ||
	    !expect(p, TOK_LBRACE, "after the sensor's record"))
		return false;
	size_t cap = 0;
	while (p->tok.kind != TOK_RBRACE) {
		/* `entity` in a sensor body starts the category clause, not a declaration. */
		if (p->tok.kind == TOK_EOF || (at_declaration(p) && !is_word(p, "entity")))
			return expected(p, "'}'", "at the end of the sensor");
		struct ast_clause *c =
		    vgl_push(p->arena, &d->clauses, &d->nclauses, &cap, sizeof *c);
		if (!parse_clause(p, c))
			return false;
	}
	advance(p);
	if (p->tok.kind == TOK_SEMI)
		advance(p);
	return true;
}

/* After a syntax error: on to the next declaration keyword. */
static void sync(struct parser *p)
{
	while (p->tok.kind != TOK_EOF && !at_declaration(p))
		advance(p);
}

static void parse_toplevel(struct parser *p)
{
	struct ast_file *f = p->file;
	bool ok;
	if (is_word(p, "package")) {
		f->package_loc = p->tok.loc;
		advance(p);
		ok = parse_dotted(p, true, "after 'package'", &f->package, &f->package_loc) &&
		     expect(p, TOK_SEMI, "after package");
	} else if (is_word(p, "import")) {
		advance(p);
		struct ast_import *im =
		    vgl_push(p->arena, &f->imports, &f->nimports, &p->capimports, sizeof *im);
		im->loc = p->tok.loc;
		if (p->tok.kind == TOK_STRING) {
			im->path = p->tok.s;
			if (strlen(im->path) != p->tok.slen || !*im->path)
				vgl_error(p->diag, im->loc, "bad file name in import");
			advance(p);
			ok = expect(p, TOK_SEMI, "after import");
		} else {
			f->nimports--;
			ok = expected(p, "a file name in quotes", "after 'import'");
		}
	} else if (at_declaration(p)) {
		struct ast_decl *d =
		    vgl_push(p->arena, &f->decls, &f->ndecls, &p->capdecls, sizeof *d);
		bool (*parse)(struct parser *, struct ast_decl *) =
		    is_word(p, "const")    ? parse_const
		    : is_word(p, "entity") ? parse_entity
		    : is_word(p, "struct") ? parse_struct
		    : is_word(p, "record") ? parse_record
		                           : parse_sensor;
		advance(p);
		ok = parse(p, d);
		if (!ok && d->name)
			d->broken = true; /* its name is known, so uses of it are not errors */
		else if (!ok)
			f->ndecls--;
	} else {
		vgl_error(p->diag, p->tok.loc,
		          "expected a declaration (package, import, const, entity, struct, record, "
		          "sensor)");
		ok = false;
	}
	if (!ok)
		sync(p);
}

struct ast_file *vgl_parse(const struct vgl_source *src, struct vgl_diag *diag,
                           struct vgb_arena *arena)
{
	struct parser p = {.diag = diag, .arena = arena};
	p.file = vgb_arena_alloc(arena, sizeof *p.file);
	p.file->path = src->path;
	vgl_lex_init(&p.lx, src, diag, arena);
	vgl_lex_next(&p.lx, &p.tok);
	p.prev_end = p.tok.loc;
	bool first = true;
	while (p.tok.kind != TOK_EOF && !vgl_diag_full(diag)) {
		if (is_word(&p, "package") && !first) {
			vgl_error(diag, p.tok.loc,
			          "'package' must be the first declaration of a file");
			advance(&p);
			sync(&p);
			continue;
		}
		first = false;
		parse_toplevel(&p);
	}
	for (size_t i = 0; i < p.file->ndecls; i++)
		p.file->decls[i].package = p.file->package;
	return p.file;
}
