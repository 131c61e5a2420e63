/* The lexer of `.vgd` files: names, numbers (with a unit), strings, punctuation, and
 * comments (`// ...` and slash-star ... star-slash) skipped. */
#include "display/lex.h"

#include <ctype.h>
#include <string.h>

void vgd_lex_init(struct vgd_lexer *lx, struct vgd_file *f)
{
	memset(lx, 0, sizeof *lx);
	lx->f = f;
	lx->line = 1;
}

struct vgd_loc vgd_lex_loc(const struct vgd_lexer *lx)
{
	return (struct vgd_loc){lx->line, (uint32_t)(lx->pos - lx->line_start + 1), lx->pos};
}

static int peek(const struct vgd_lexer *lx, size_t ahead)
{
	size_t i = lx->pos + ahead;
	return i < lx->f->len ? (unsigned char)lx->f->text[i] : -1;
}

static void advance(struct vgd_lexer *lx)
{
	if (lx->f->text[lx->pos] == '\n') {
		lx->line++;
		lx->line_start = lx->pos + 1;
	}
	lx->pos++;
}

static void skip_space(struct vgd_lexer *lx)
{
	for (;;) {
		int c = peek(lx, 0);
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
			advance(lx);
		} else if (c == '/' && peek(lx, 1) == '/') {
			while (peek(lx, 0) >= 0 && peek(lx, 0) != '\n')
				advance(lx);
		} else if (c == '/' && peek(lx, 1) == '*') {
			struct vgd_loc at = vgd_lex_loc(lx);
			advance(lx);
			advance(lx);
			while (peek(lx, 0) >= 0 && !(peek(lx, 0) == '*' && peek(lx, 1) == '/'))
				advance(lx);
			if (peek(lx, 0) < 0) {
				vgd_error(lx->f, at, "unterminated comment");
				return;
			}
			advance(lx);
			advance(lx);
		} else {
			return;
		}
	}
}

static bool name_char(int c)
{
	return c >= 0 && (isalnum(c) || c == '_' || c == '.');
}

struct vgd_token vgd_lex_next(struct vgd_lexer *lx)
{
	for (;;) {
		skip_space(lx);
		struct vgd_token t = {.loc = vgd_lex_loc(lx), .p = lx->f->text + lx->pos};
		int c = peek(lx, 0);
		if (c < 0) {
			t.kind = VGD_TK_EOF;
			return t;
		}
		if (isalpha(c) || c == '_') {
			while (name_char(peek(lx, 0)))
				advance(lx);
			t.kind = VGD_TK_NAME;
		} else if (isdigit(c) ||
		           ((c == '-' || c == '.') && peek(lx, 1) >= 0 && isdigit(peek(lx, 1)))) {
			advance(lx);
			while (peek(lx, 0) >= 0 && (isalnum(peek(lx, 0)) || peek(lx, 0) == '.'))
				advance(lx);
			t.kind = VGD_TK_NUMBER;
		} else if (c == '"') {
			advance(lx);
			t.p++;
			while (peek(lx, 0) >= 0 && peek(lx, 0) != '"' && peek(lx, 0) != '\n') {
				if (peek(lx, 0) == '\\' && peek(lx, 1) >= 0 && peek(lx, 1) != '\n')
					advance(lx);
				advance(lx);
			}
			if (peek(lx, 0) != '"') {
				vgd_error(lx->f, t.loc, "unterminated string");
				t.kind = VGD_TK_STRING;
				t.len = (size_t)(lx->f->text + lx->pos - t.p);
				return t;
			}
			t.len = (size_t)(lx->f->text + lx->pos - t.p);
			advance(lx);
			t.kind = VGD_TK_STRING;
			return t;
		} else if (strchr(":,()=+{}%", c) && c) {
			advance(lx);
			t.kind = VGD_TK_PUNCT;
			t.punct = (char)c;
		} else {
			if (c >= 0x20 && c < 0x7f)
				vgd_error(lx->f, t.loc, "unexpected character '%c'", c);
			else
				vgd_error(lx->f, t.loc, "unexpected byte 0x%02x", (unsigned)c);
			advance(lx);
			if (lx->f->nerrors >= VGD_MAX_ERRORS) {
				lx->pos = lx->f->len;
				t.kind = VGD_TK_EOF;
				return t;
			}
			continue;
		}
		t.len = (size_t)(lx->f->text + lx->pos - t.p);
		return t;
	}
}
