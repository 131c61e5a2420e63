/* Words [A-Za-z_][A-Za-z0-9_]*, numbers 12 and 1.5, strings "..." with \" \\ \n \t,
 * comments from "/" "*" to "*" "/", and the punctuation of the grammar. */
#include "tquel/lex.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const kw_names[] = {
    [KW_RANGE] = "range",     [KW_OF] = "of",
    [KW_IS] = "is",           [KW_RETRIEVE] = "retrieve",
    [KW_INTO] = "into",       [KW_VALID] = "valid",
    [KW_AT] = "at",           [KW_FROM] = "from",
    [KW_TO] = "to",           [KW_WHERE] = "where",
    [KW_WHEN] = "when",       [KW_AND] = "and",
    [KW_OR] = "or",           [KW_NOT] = "not",
    [KW_PRECEDE] = "precede", [KW_OVERLAP] = "overlap",
    [KW_EQUAL] = "equal",     [KW_BEGIN] = "begin",
    [KW_END] = "end",         [KW_EXTEND] = "extend",
    [KW_BY] = "by",           [KW_FOR] = "for",
    [KW_EACH] = "each",       [KW_INSTANT] = "instant",
    [KW_EVER] = "ever",       [KW_COUNT] = "count",
    [KW_COUNTU] = "countU",   [KW_SUM] = "sum",
    [KW_SUMU] = "sumU",       [KW_AVG] = "avg",
    [KW_AVGU] = "avgU",       [KW_MIN] = "min",
    [KW_MAX] = "max",         [KW_UNIQUE] = "unique",
};

const char *tquel_kw_name(enum tquel_kw kw)
{
	return kw > KW_NONE && kw <= KW_LAST ? kw_names[kw] : "";
}

static enum tquel_kw keyword(const char *s, size_t len)
{
	for (int k = KW_NONE + 1; k <= KW_LAST; k++)
		if (strlen(kw_names[k]) == len && !strncasecmp(kw_names[k], s, len))
			return (enum tquel_kw)k;
	return KW_NONE;
}

struct lexer {
	struct tquel_arena *a;
	const char *text;
	size_t len, pos;
	uint32_t line;
	size_t line_start;
	struct tquel_tokens *out;
	size_t cap;
};

static struct tquel_token *push(struct lexer *lx, enum tquel_tok kind, size_t start)
{
	struct tquel_tokens *t = lx->out;
	if (t->n == lx->cap) {
		lx->cap = lx->cap ? lx->cap * 2 : 64;
		t->v = realloc(t->v, lx->cap * sizeof *t->v);
		if (!t->v) {
			fputs("vigil: out of memory\n", stderr);
			abort();
		}
	}
	struct tquel_token *tok = &t->v[t->n++];
	memset(tok, 0, sizeof *tok);
	tok->kind = kind;
	tok->start = lx->text + start;
	tok->len = lx->pos - start;
	tok->loc.line = lx->line;
	tok->loc.col = (uint32_t)(start - lx->line_start + 1);
	tok->loc.off = start;
	tok->loc.end = lx->pos;
	return tok;
}

static void error_at(struct lexer *lx, size_t start, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void error_at(struct lexer *lx, size_t start, const char *fmt, ...)
{
	char buf[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	struct tquel_token *tok = push(lx, TT_ERROR, start);
	tok->error = tquel_strndup(lx->a, buf, strlen(buf));
}

static void newline(struct lexer *lx)
{
	lx->line++;
	lx->line_start = lx->pos;
}

/* Skips white space and comments; false after an unterminated comment (reported). */
static void skip_blank(struct lexer *lx)
{
	while (lx->pos < lx->len) {
		char c = lx->text[lx->pos];
		if (c == '\n') {
			lx->pos++;
			newline(lx);
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			lx->pos++;
		} else if (c == '/' && lx->pos + 1 < lx->len && lx->text[lx->pos + 1] == '*') {
			size_t start = lx->pos;
			uint32_t line = lx->line;
			size_t line_start = lx->line_start;
			lx->pos += 2;
			while (lx->pos < lx->len &&
			       !(lx->text[lx->pos] == '*' && lx->pos + 1 < lx->len &&
			         lx->text[lx->pos + 1] == '/')) {
				if (lx->text[lx->pos++] == '\n')
					newline(lx);
			}
			if (lx->pos >= lx->len) {
				/* report at the opening, then stop: the rest is comment */
				uint32_t eline = lx->line;
				size_t estart = lx->line_start;
				lx->line = line;
				lx->line_start = line_start;
				size_t end = lx->pos;
				lx->pos = start + 2;
				error_at(lx, start, "unterminated comment");
				lx->pos = end;
				lx->line = eline;
				lx->line_start = estart;
				return;
			}
			lx->pos += 2;
		} else {
			return;
		}
	}
}

/* The bytes of the string starting at `start` up to its closing quote (or its line's end),
 * quotes counted: its value is shorter. (Allocating the rest of the text instead made a file
 * of many strings quadratic: 30,000 strings on a 700 KB line took minutes.) */
static size_t string_extent(const struct lexer *lx, size_t start)
{
	size_t p = start + 1;
	while (p < lx->len && lx->text[p] != '"' && lx->text[p] != '\n')
		p += lx->text[p] == '\\' && p + 1 < lx->len && lx->text[p + 1] != '\n' ? 2 : 1;
	return p - start;
}

static void lex_string(struct lexer *lx)
{
	size_t start = lx->pos++;
	char *buf = tquel_alloc(lx->a, string_extent(lx, start));
	size_t n = 0;
	for (;;) {
		if (lx->pos >= lx->len || lx->text[lx->pos] == '\n') {
			error_at(lx, start, "unterminated string (a string ends on its line)");
			return;
		}
		unsigned char c = (unsigned char)lx->text[lx->pos];
		if (c == '"') {
			lx->pos++;
			break;
		}
		if (c == '\\') {
			char e = lx->pos + 1 < lx->len ? lx->text[lx->pos + 1] : '\0';
			char v = e == '"'    ? '"'
			         : e == '\\' ? '\\'
			         : e == 'n'  ? '\n'
			         : e == 't'  ? '\t'
			                     : 0;
			if (!v) {
				size_t at = lx->pos;
				lx->pos += e && e != '\n' ? 2 : 1;
				error_at(lx, at,
				         "unknown escape in string (use \\\" \\\\ \\n \\t)");
				/* go on to the end of the string so its rest is not lexed as code
				 */
				while (lx->pos < lx->len && lx->text[lx->pos] != '"' &&
				       lx->text[lx->pos] != '\n')
					lx->pos++;
				if (lx->pos < lx->len && lx->text[lx->pos] == '"')
					lx->pos++;
				return;
			}
			buf[n++] = v;
			lx->pos += 2;
			continue;
		}
		if (c < 0x20 && c != '\t') {
			size_t at = lx->pos++;
			error_at(lx, at, "control byte 0x%02x in string", c);
			while (lx->pos < lx->len && lx->text[lx->pos] != '"' &&
			       lx->text[lx->pos] != '\n')
				lx->pos++;
			if (lx->pos < lx->len && lx->text[lx->pos] == '"')
				lx->pos++;
			return;
		}
		buf[n++] = (char)c;
		lx->pos++;
	}
	buf[n] = '\0';
	push(lx, TT_STRING, start)->str = buf;
}

static bool is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static void lex_number(struct lexer *lx)
{
	size_t start = lx->pos;
	while (lx->pos < lx->len && isdigit((unsigned char)lx->text[lx->pos]))
		lx->pos++;
	if (lx->pos + 1 < lx->len && lx->text[lx->pos] == '.' &&
	    isdigit((unsigned char)lx->text[lx->pos + 1])) {
		lx->pos++;
		while (lx->pos < lx->len && isdigit((unsigned char)lx->text[lx->pos]))
			lx->pos++;
	}
	if (lx->pos < lx->len && is_word_char(lx->text[lx->pos])) {
		while (lx->pos < lx->len && is_word_char(lx->text[lx->pos]))
			lx->pos++;
		int n = (int)(lx->pos - start > 40 ? 40 : lx->pos - start);
		error_at(lx, start, "malformed number '%.*s'", n, lx->text + start);
		return;
	}
	push(lx, TT_NUMBER, start);
}

static void lex_word(struct lexer *lx)
{
	size_t start = lx->pos;
	while (lx->pos < lx->len && is_word_char(lx->text[lx->pos]))
		lx->pos++;
	if (lx->pos - start > TQUEL_MAX_NAME) {
		error_at(lx, start, "name longer than %d characters", TQUEL_MAX_NAME);
		return;
	}
	struct tquel_token *t = push(lx, TT_WORD, start);
	t->kw = keyword(t->start, t->len);
}

static bool punct(struct lexer *lx)
{
	static const struct {
		const char *s;
		enum tquel_tok t;
	} p[] = {
	    {"!=", TT_NE},    {"<=", TT_LE},    {">=", TT_GE},    {"(", TT_LPAREN},
	    {")", TT_RPAREN}, {"[", TT_LBRACK}, {"]", TT_RBRACK}, {",", TT_COMMA},
	    {".", TT_DOT},    {"=", TT_EQ},     {"<", TT_LT},     {">", TT_GT},
	    {"+", TT_PLUS},   {"-", TT_MINUS},  {"*", TT_STAR},   {"/", TT_SLASH},
	};
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
		size_t n = strlen(p[i].s);
		if (lx->len - lx->pos >= n && !memcmp(lx->text + lx->pos, p[i].s, n)) {
			size_t start = lx->pos;
			lx->pos += n;
			push(lx, p[i].t, start);
			return true;
		}
	}
	return false;
}

/* What a character that is not TQuel may have meant. */
static const char *hint(char c)
{
	switch (c) {
	case '!':
		return " (not-equal is '!=')";
	case '&':
		return " (write 'and')";
	case '|':
		return " (write 'or')";
	case '\'':
		return " (strings are in double quotes)";
	case ';':
		return " (statements need no separator)";
	default:
		return "";
	}
}

void tquel_lex(struct tquel_arena *a, const char *text, size_t len, struct tquel_tokens *out)
{
	struct lexer lx = {.a = a, .text = text, .len = len, .line = 1, .out = out};
	out->v = NULL;
	out->n = 0;
	for (;;) {
		skip_blank(&lx);
		if (lx.pos >= lx.len)
			break;
		char c = text[lx.pos];
		if (c == '"') {
			lex_string(&lx);
		} else if (isdigit((unsigned char)c)) {
			lex_number(&lx);
		} else if (isalpha((unsigned char)c) || c == '_') {
			lex_word(&lx);
		} else if (!punct(&lx)) {
			size_t at = lx.pos++;
			unsigned char u = (unsigned char)c;
			if (u > 0x20 && u < 0x7f)
				error_at(&lx, at,
				         c == '\'' ? "unexpected character \"%c\"%s"
				                   : "unexpected character '%c'%s",
				         c, hint(c));
			else
				error_at(&lx, at, "unexpected byte 0x%02x%s", u,
				         u >= 0x80
				             ? " (names are ASCII letters, digits and '_'; other "
				               "text goes in strings)"
				             : "");
		}
	}
	push(&lx, TT_EOF, lx.pos);
}

void tquel_tokens_free(struct tquel_tokens *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}
