/* TSDL tokenizer: identifiers, integers, string literals, punctuation; C comments. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tsdl.h"

void vgt_lexer_init(struct lexer *lx, struct arena *a, const char *src, size_t len)
{
	*lx = (struct lexer){.arena = a, .src = src, .len = len, .line = 1, .col = 1};
}

static int peek(const struct lexer *lx, size_t ahead)
{
	return lx->pos + ahead < lx->len ? (unsigned char)lx->src[lx->pos + ahead] : -1;
}

static void advance(struct lexer *lx)
{
	if (lx->src[lx->pos] == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->pos++;
}

static int fail(struct tsdl_error *err, unsigned line, unsigned col, bool at_eof, const char *fmt,
                const char *arg)
{
	err->line = line;
	err->col = col;
	err->at_eof = at_eof;
	snprintf(err->msg, sizeof err->msg, fmt, arg);
	return -1;
}

static const char *char_name(int c, char *buf, size_t size)
{
	if (c >= 0x21 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", (unsigned)c);
	return buf;
}

/* Skips blanks and comments; -1 on an unterminated comment. */
static int skip_space(struct lexer *lx, struct tsdl_error *err)
{
	for (;;) {
		int c = peek(lx, 0);
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			advance(lx);
		} else if (c == '/' && peek(lx, 1) == '*') {
			unsigned line = lx->line, col = lx->col;
			advance(lx);
			advance(lx);
			while (!(peek(lx, 0) == '*' && peek(lx, 1) == '/')) {
				if (peek(lx, 0) < 0)
					return fail(err, line, col, true, "%s",
					            "unterminated comment");
				advance(lx);
			}
			advance(lx);
			advance(lx);
		} else if (c == '/' && peek(lx, 1) == '/') {
			while (peek(lx, 0) >= 0 && peek(lx, 0) != '\n')
				advance(lx);
		} else {
			return 0;
		}
	}
}

static int lex_number(struct lexer *lx, struct tok *t, struct tsdl_error *err)
{
	unsigned base = 10;
	if (peek(lx, 0) == '0' && (peek(lx, 1) == 'x' || peek(lx, 1) == 'X')) {
		base = 16;
		advance(lx);
		advance(lx);
		if (!isxdigit(peek(lx, 0)))
			return fail(err, t->line, t->col, false, "%s", "malformed hex number");
	} else if (peek(lx, 0) == '0') {
		base = 8;
	}
	uint64_t v = 0;
	for (int c; (c = peek(lx, 0)) >= 0 && isxdigit(c); advance(lx)) {
		unsigned d = isdigit(c) ? (unsigned)(c - '0') : (unsigned)(tolower(c) - 'a' + 10);
		if (d >= base)
			return fail(err, lx->line, lx->col, false, "%s", "bad digit in number");
		if (v > (UINT64_MAX - d) / base)
			return fail(err, t->line, t->col, false, "%s",
			            "integer constant too large");
		v = v * base + d;
	}
	while (peek(lx, 0) == 'u' || peek(lx, 0) == 'U' || peek(lx, 0) == 'l' || peek(lx, 0) == 'L')
		advance(lx);
	int c = peek(lx, 0);
	if (c >= 0 && (isalnum(c) || c == '_'))
		return fail(err, lx->line, lx->col, false, "%s", "malformed number");
	t->kind = TOK_INT;
	t->ival = v;
	return 0;
}

static int hex_value(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

static int lex_string(struct lexer *lx, struct tok *t, struct tsdl_error *err)
{
	advance(lx); /* opening quote */
	size_t start = lx->pos;
	/* The decoded text is never longer than the literal. */
	size_t cap = 0;
	while (start + cap < lx->len && lx->src[start + cap] != '\n' && lx->src[start + cap] != '"')
		cap += lx->src[start + cap] == '\\' ? 2 : 1;
	char *out = vgt_arena_alloc(lx->arena, cap + 2);
	size_t n = 0;
	for (;;) {
		int c = peek(lx, 0);
		if (c < 0)
			return fail(err, t->line, t->col, true, "%s", "unterminated string");
		if (c == '\n')
			return fail(err, t->line, t->col, false, "%s", "newline in string");
		if (c == '"') {
			advance(lx);
			break;
		}
		if (c != '\\') {
			out[n++] = (char)c;
			advance(lx);
			continue;
		}
		unsigned line = lx->line, col = lx->col;
		advance(lx);
		c = peek(lx, 0);
		if (c < 0)
			return fail(err, t->line, t->col, true, "%s", "unterminated string");
		advance(lx);
		int v;
		switch (c) {
		case 'n':
			v = '\n';
			break;
		case 't':
			v = '\t';
			break;
		case 'r':
			v = '\r';
			break;
		case 'a':
			v = '\a';
			break;
		case 'b':
			v = '\b';
			break;
		case 'f':
			v = '\f';
			break;
		case 'v':
			v = '\v';
			break;
		case '\\':
		case '"':
		case '\'':
		case '?':
			v = c;
			break;
		case 'x':
			v = 0;
			for (int i = 0; i < 2 && hex_value(peek(lx, 0)) >= 0; i++, advance(lx))
				v = v * 16 + hex_value(peek(lx, 0));
			break;
		default:
			if (c < '0' || c > '7')
				return fail(err, line, col, false, "%s",
				            "unknown escape in string");
			v = c - '0';
			for (int i = 0; i < 2 && peek(lx, 0) >= '0' && peek(lx, 0) <= '7';
			     i++, advance(lx))
				v = v * 8 + (peek(lx, 0) - '0');
			break;
		}
		if (v == 0 || v > 0xff)
			return fail(err, line, col, false, "%s", "bad character escape in string");
		out[n++] = (char)v;
	}
	out[n] = 0;
	t->kind = TOK_STRING;
	t->text = out;
	return 0;
}

int vgt_lexer_next(struct lexer *lx, struct tok *t, struct tsdl_error *err)
{
	if (skip_space(lx, err) < 0)
		return -1;
	*t = (struct tok){.line = lx->line, .col = lx->col, .offset = lx->pos};
	int c = peek(lx, 0);
	int rc = 0;
	if (c < 0) {
		t->kind = TOK_EOF;
	} else if (isalpha(c) || c == '_') {
		size_t start = lx->pos;
		while ((c = peek(lx, 0)) >= 0 && (isalnum(c) || c == '_'))
			advance(lx);
		t->kind = TOK_IDENT;
		t->text = vgt_arena_strndup(lx->arena, lx->src + start, lx->pos - start);
	} else if (isdigit(c)) {
		rc = lex_number(lx, t, err);
	} else if (c == '"') {
		rc = lex_string(lx, t, err);
	} else {
		static const char *const multi[] = {":=", "->", "..."};
		t->kind = TOK_PUNCT;
		for (size_t i = 0; i < sizeof multi / sizeof *multi; i++) {
			size_t n = strlen(multi[i]);
			if (lx->len - lx->pos >= n && !memcmp(lx->src + lx->pos, multi[i], n)) {
				t->text = multi[i];
				for (size_t k = 0; k < n; k++)
					advance(lx);
				goto done;
			}
		}
		if (c == 0 || !strchr("{}[]();=,.:<>+-*", c)) {
			char name[16];
			return fail(err, t->line, t->col, false, "unexpected %s",
			            char_name(c, name, sizeof name));
		}
		t->text = vgt_arena_strndup(lx->arena, lx->src + lx->pos, 1);
		advance(lx);
	}
done:
	t->end = lx->pos;
	return rc;
}
