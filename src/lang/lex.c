/* The lexer: C-like tokens, `//` and block comments, C escapes in strings. */
#include "lang/lex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lang/arena.h"

void vgl_lex_init(struct vgl_lexer *lx, const struct vgl_source *src, struct vgl_diag *diag,
                  struct vgb_arena *arena)
{
	memset(lx, 0, sizeof *lx);
	lx->src = src;
	lx->p = src->text;
	lx->end = src->text + src->len;
	lx->line = 1;
	lx->line_start = src->text;
	lx->diag = diag;
	lx->arena = arena;
}

const char *vgl_tok_name(enum vgl_tok kind)
{
	switch (kind) {
	case TOK_EOF:
		return "end of file";
	case TOK_IDENT:
		return "a name";
	case TOK_INT:
		return "an integer";
	case TOK_FLOAT:
		return "a number";
	case TOK_STRING:
		return "a string";
	case TOK_SEMI:
		return "';'";
	case TOK_LBRACE:
		return "'{'";
	case TOK_RBRACE:
		return "'}'";
	case TOK_COLON:
		return "':'";
	case TOK_COMMA:
		return "','";
	case TOK_EQUALS:
		return "'='";
	case TOK_DOT:
		return "'.'";
	}
	return "?";
}

static struct vgl_loc here(const struct vgl_lexer *lx, const char *at)
{
	struct vgl_loc l = {lx->src->path, lx->line, (int)(at - lx->line_start) + 1};
	return l;
}

static void newline(struct vgl_lexer *lx, const char *nl)
{
	lx->line++;
	lx->line_start = nl + 1;
}

static bool is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident(int c)
{
	return is_ident_start(c) || is_digit(c);
}

static int hex_value(int c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Skips white space and comments; reports an unterminated block comment. */
static void skip_space(struct vgl_lexer *lx)
{
	while (lx->p < lx->end) {
		char c = *lx->p;
		if (c == '\n') {
			newline(lx, lx->p);
			lx->p++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			lx->p++;
		} else if (c == '/' && lx->p + 1 < lx->end && lx->p[1] == '/') {
			const char *nl = memchr(lx->p, '\n', (size_t)(lx->end - lx->p));
			lx->p = nl ? nl : lx->end;
		} else if (c == '/' && lx->p + 1 < lx->end && lx->p[1] == '*') {
			struct vgl_loc start = here(lx, lx->p);
			lx->p += 2;
			for (;;) {
				if (lx->p >= lx->end) {
					vgl_error(lx->diag, start, "unterminated comment");
					return;
				}
				if (*lx->p == '*' && lx->p + 1 < lx->end && lx->p[1] == '/') {
					lx->p += 2;
					break;
				}
				if (*lx->p == '\n')
					newline(lx, lx->p);
				lx->p++;
			}
		} else {
			return;
		}
	}
}

static void lex_number(struct vgl_lexer *lx, struct vgl_token *t)
{
	const char *p = lx->p;
	t->neg = *p == '-';
	if (t->neg)
		p++;
	const char *digits = p;
	bool hex = p + 1 < lx->end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	bool is_float = false;
	if (hex) {
		p += 2;
		while (p < lx->end && hex_value(*p) >= 0)
			p++;
	} else {
		while (p < lx->end && is_digit(*p))
			p++;
		if (p + 1 < lx->end && *p == '.' && is_digit(p[1])) {
			is_float = true;
			p++;
			while (p < lx->end && is_digit(*p))
				p++;
		}
		if (p < lx->end && (*p == 'e' || *p == 'E')) {
			const char *q = p + 1;
			if (q < lx->end && (*q == '+' || *q == '-'))
				q++;
			if (q < lx->end && is_digit(*q)) {
				is_float = true;
				p = q;
				while (p < lx->end && is_digit(*p))
					p++;
			}
		}
	}
	while (p < lx->end && (is_ident(*p) || *p == '.'))
		p++; /* "12abc", "0x", "1.2.3": one bad token, reported below */
	t->len = (size_t)(p - lx->p);
	lx->p = p;
	t->kind = is_float ? TOK_FLOAT : TOK_INT;
	char buf[64];
	if (t->len >= sizeof buf) {
		vgl_error(lx->diag, t->loc, "number too long");
		return;
	}
	memcpy(buf, t->start, t->len);
	buf[t->len] = 0;
	char *endp;
	errno = 0;
	if (is_float) {
		t->d = strtod(buf, &endp);
		if (*endp || errno == ERANGE)
			vgl_error(lx->diag, t->loc, "invalid number '%s'", buf);
		return;
	}
	const char *q = hex ? digits + 2 : digits;
	int base = hex ? 16 : 10;
	uint64_t v = 0;
	bool overflow = false, bad = q == t->start + t->len;
	for (; q < t->start + t->len; q++) {
		int d = hex_value(*q);
		if (d < 0 || d >= base) {
			bad = true;
			break;
		}
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			overflow = true;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (bad)
		vgl_error(lx->diag, t->loc, "invalid number '%s'", buf);
	else if (overflow || (t->neg && v > (uint64_t)INT64_MAX + 1))
		vgl_error(lx->diag, t->loc, "integer %s is out of range of 64 bits", buf);
	t->u = v;
}

/* One escape after a backslash at lx->p; appends its byte to out. */
static void lex_escape(struct vgl_lexer *lx, char *out, size_t *n)
{
	struct vgl_loc at = here(lx, lx->p);
	lx->p++; /* the backslash */
	if (lx->p >= lx->end)
		return;
	char c = *lx->p++;
	switch (c) {
	case 'n':
		out[(*n)++] = '\n';
		return;
	case 't':
		out[(*n)++] = '\t';
		return;
	case 'r':
		out[(*n)++] = '\r';
		return;
	case 'a':
		out[(*n)++] = '\a';
		return;
	case 'b':
		out[(*n)++] = '\b';
		return;
	case 'f':
		out[(*n)++] = '\f';
		return;
	case 'v':
		out[(*n)++] = '\v';
		return;
	case '\\':
	case '\'':
	case '"':
	case '?':
		out[(*n)++] = c;
		return;
	case 'x': {
		int v = 0, k = 0;
		while (k < 2 && lx->p < lx->end && hex_value(*lx->p) >= 0)
			v = v * 16 + hex_value(*lx->p++), k++;
		if (k == 0)
			vgl_error(lx->diag, at, "'\\x' without hex digits");
		out[(*n)++] = (char)v;
		return;
	}
	default:
		if (c >= '0' && c <= '7') {
			int v = c - '0', k = 1;
			while (k < 3 && lx->p < lx->end && *lx->p >= '0' && *lx->p <= '7')
				v = v * 8 + (*lx->p++ - '0'), k++;
			if (v > 255)
				vgl_error(lx->diag, at, "octal escape out of range");
			out[(*n)++] = (char)v;
			return;
		}
		if ((unsigned char)c >= 32 && c != 127)
			vgl_error(lx->diag, at, "unknown escape '\\%c'", c);
		else
			vgl_error(lx->diag, at, "unknown escape");
		if (c == '\n') {
			lx->p--; /* the caller ends the string there */
		}
	}
}

static void lex_string(struct vgl_lexer *lx, struct vgl_token *t)
{
	lx->p++; /* the quote */
	const char *nl = memchr(lx->p, '\n', (size_t)(lx->end - lx->p));
	const char *limit = nl ? nl : lx->end;
	char *out = vgb_arena_alloc(lx->arena, (size_t)(limit - lx->p) + 1);
	size_t n = 0;
	for (;;) {
		if (lx->p >= limit) {
			vgl_error(lx->diag, t->loc, "unterminated string");
			break;
		}
		if (*lx->p == '"') {
			lx->p++;
			break;
		}
		if (*lx->p == '\\')
			lex_escape(lx, out, &n);
		else
			out[n++] = *lx->p++;
	}
	t->kind = TOK_STRING;
	t->s = out;
	t->slen = n;
	t->len = (size_t)(lx->p - t->start);
}

void vgl_lex_next(struct vgl_lexer *lx, struct vgl_token *t)
{
	for (;;) {
		skip_space(lx);
		memset(t, 0, sizeof *t);
		t->start = lx->p;
		t->loc = here(lx, lx->p);
		if (lx->p >= lx->end) {
			t->kind = TOK_EOF;
			break;
		}
		char c = *lx->p;
		if (is_ident_start(c)) {
			while (lx->p < lx->end && is_ident(*lx->p))
				lx->p++;
			t->kind = TOK_IDENT;
			t->len = (size_t)(lx->p - t->start);
			if (t->len > VGL_MAX_NAME)
				vgl_error(lx->diag, t->loc, "name longer than %d bytes",
				          VGL_MAX_NAME);
			break;
		}
		if (is_digit(c) || (c == '-' && lx->p + 1 < lx->end && is_digit(lx->p[1]))) {
			lex_number(lx, t);
			break;
		}
		if (c == '"') {
			lex_string(lx, t);
			break;
		}
		static const char punct[] = ";{}:,=.";
		const char *k = c ? strchr(punct, c) : NULL;
		if (k) {
			static const enum vgl_tok kinds[] = {TOK_SEMI,  TOK_LBRACE, TOK_RBRACE,
			                                     TOK_COLON, TOK_COMMA,  TOK_EQUALS,
			                                     TOK_DOT};
			t->kind = kinds[k - punct];
			t->len = 1;
			lx->p++;
			break;
		}
		unsigned char uc = (unsigned char)c;
		if (uc >= 33 && uc < 127)
			vgl_error(lx->diag, t->loc, "unexpected character '%c'", c);
		else
			vgl_error(lx->diag, t->loc, "unexpected byte 0x%02x", uc);
		/* Skip a run of bad bytes at once: one error for a block of garbage. */
		lx->p++;
		while (lx->p < lx->end && !is_ident(*lx->p) && !strchr("\"; {}:,=.\n\t-/", *lx->p))
			lx->p++;
		if (vgl_diag_full(lx->diag)) {
			lx->p = lx->end;
		}
	}
	t->end = here(lx, lx->p);
}
