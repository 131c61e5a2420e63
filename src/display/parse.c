/* The parser of `.vgd` files (grammar: docs/display.md). Recursive descent over the
 * tokens of lex.c; a syntax error skips to the next statement keyword. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "display/colour.h"
#include "display/lex.h"
#include "trace/trace.h"

struct parser {
	struct vgd_file *f;
	struct vgd_lexer lx;
	struct vgd_token t; /* the current token */
	bool failed;        /* the statement being parsed had an error */
	const char *follow; /* what may come after the statement, besides the next one */
};

static void next(struct parser *p)
{
	p->t = vgd_lex_next(&p->lx);
}

static bool is_word(const struct parser *p, const char *w)
{
	return p->t.kind == VGD_TK_NAME && strlen(w) == p->t.len && !memcmp(p->t.p, w, p->t.len);
}

static bool is_punct(const struct parser *p, char c)
{
	return p->t.kind == VGD_TK_PUNCT && p->t.punct == c;
}

static char *copy(const char *s, size_t len)
{
	char *c = vgb_xcalloc(len + 1, 1);
	memcpy(c, s, len);
	return c;
}

/* A string token's text with its escapes undone. */
static char *copy_string(const struct vgd_token *t)
{
	char *c = vgb_xcalloc(t->len + 1, 1);
	size_t n = 0;
	for (size_t i = 0; i < t->len; i++) {
		if (t->p[i] == '\\' && i + 1 < t->len)
			i++;
		c[n++] = t->p[i];
	}
	return c;
}

/* The token as it reads in a message. */
static const char *describe(const struct parser *p, char *buf, size_t size)
{
	switch (p->t.kind) {
	case VGD_TK_EOF:
		return "the end of the file";
	case VGD_TK_STRING:
		snprintf(buf, size, "a string");
		return buf;
	default:
		snprintf(buf, size, "'%.*s'", (int)(p->t.len > 40 ? 40 : p->t.len), p->t.p);
		return buf;
	}
}

static void expected(struct parser *p, const char *what)
{
	if (p->failed)
		return;
	p->failed = true;
	/* the lexer already reported this token (an unterminated string...) */
	if (p->f->nerrors && p->f->errors[p->f->nerrors - 1].loc.off == p->t.loc.off)
		return;
	char buf[64];
	vgd_error(p->f, p->t.loc, "expected %s, found %s", what, describe(p, buf, sizeof buf));
}

static bool expect_word(struct parser *p, const char *w)
{
	if (!is_word(p, w)) {
		char what[40];
		snprintf(what, sizeof what, "'%s'", w);
		expected(p, what);
		return false;
	}
	next(p);
	return true;
}

static bool expect_punct(struct parser *p, char c)
{
	if (!is_punct(p, c)) {
		char what[8];
		snprintf(what, sizeof what, "'%c'", c);
		expected(p, what);
		return false;
	}
	next(p);
	return true;
}

/* A name (relation or attribute); NULL after an error. */
static char *name(struct parser *p, const char *what, struct vgd_loc *loc)
{
	if (p->t.kind != VGD_TK_NAME) {
		expected(p, what);
		return NULL;
	}
	*loc = p->t.loc;
	char *n = copy(p->t.p, p->t.len);
	next(p);
	return n;
}

/* A plain number (no unit); false after an error. */
static bool number(struct parser *p, double *v)
{
	if (p->t.kind != VGD_TK_NUMBER) {
		expected(p, "a number");
		return false;
	}
	char buf[64];
	size_t n = p->t.len < sizeof buf - 1 ? p->t.len : sizeof buf - 1;
	memcpy(buf, p->t.p, n);
	buf[n] = 0;
	char *end;
	errno = 0;
	*v = strtod(buf, &end);
	if (*end || errno || !isfinite(*v) || p->t.len >= sizeof buf - 1) {
		vgd_error(p->f, p->t.loc, "'%.*s' is not a number", (int)n, p->t.p);
		p->failed = true;
		return false;
	}
	next(p);
	return true;
}

/* A duration: 20ms, 1.5s, 300us, 7ns, or a number of seconds. */
static bool duration(struct parser *p, int64_t *ns, struct vgd_loc *loc)
{
	*loc = p->t.loc;
	if (p->t.kind != VGD_TK_NUMBER) {
		expected(p, "a duration (e.g. 20ms)");
		return false;
	}
	char buf[64];
	size_t n = p->t.len < sizeof buf - 1 ? p->t.len : sizeof buf - 1;
	memcpy(buf, p->t.p, n);
	buf[n] = 0;
	/* at most 10^18 ns (31 years): times plus durations stay within int64 */
	if (p->t.len >= sizeof buf - 1 || vgt_parse_duration(buf, ns) < 0 || *ns <= 0 ||
	    *ns > VGD_MAX_DURATION) {
		vgd_error(p->f, p->t.loc,
		          "'%s' is not a positive duration up to 31 years (e.g. 20ms, 1.5s)", buf);
		p->failed = true;
		return false;
	}
	next(p);
	return true;
}

/* A number, maybe followed by '%'. */
static bool quantity(struct parser *p, struct vgd_const *c)
{
	if (!number(p, &c->num))
		return false;
	if (is_punct(p, '%')) {
		c->percent = true;
		next(p);
	}
	return true;
}

/* A colour: a name (red, steelblue, ...) or a string "#rrggbb" / "#rgb". */
static bool colour(struct parser *p, struct vgd_const *c)
{
	if (p->t.kind != VGD_TK_NAME && p->t.kind != VGD_TK_STRING) {
		expected(p, "a colour (a name such as red, or \"#rrggbb\")");
		return false;
	}
	char *text = p->t.kind == VGD_TK_STRING ? copy_string(&p->t) : copy(p->t.p, p->t.len);
	bool ok = vgd_colour_parse(text, &c->colour);
	if (!ok) {
		vgd_error(p->f, p->t.loc,
		          "'%s' is not a colour (a name such as red, or \"#rrggbb\")", text);
		p->failed = true;
	}
	free(text);
	if (!ok)
		return false;
	c->is_colour = true;
	next(p);
	return true;
}

static const char *const place_words[] = {"center", "top", "bottom", "left", "right"};

/* center | top | bottom | left | right | top left | top right | bottom left | bottom right */
static bool place(struct parser *p, int *out)
{
	int first = -1;
	for (int i = 0; i < 5; i++)
		if (is_word(p, place_words[i]))
			first = i;
	if (is_word(p, "middle"))
		first = VGD_CENTER;
	if (first < 0) {
		expected(p, "a place (center, top, bottom, left, right, top left, ...)");
		return false;
	}
	next(p);
	*out = first;
	if (first == VGD_TOP || first == VGD_BOTTOM) {
		bool top = first == VGD_TOP;
		if (is_word(p, "left")) {
			*out = top ? VGD_TOP_LEFT : VGD_BOTTOM_LEFT;
			next(p);
		} else if (is_word(p, "right")) {
			*out = top ? VGD_TOP_RIGHT : VGD_BOTTOM_RIGHT;
			next(p);
		}
	}
	return true;
}

static void add_aspect(struct vgd_show *s, const struct vgd_aspect *a)
{
	struct vgd_aspect *n = vgb_xrealloc(s->aspects, s->naspects + 1, sizeof *n);
	s->aspects = n;
	s->aspects[s->naspects++] = *a;
}

/* by value of ATTR | by order of ATTR, after "by"; then [from LO to HI] */
static bool by_value_or_order(struct parser *p, struct vgd_aspect *a, bool colours)
{
	a->drive = is_word(p, "value") ? VGD_D_VALUE : VGD_D_ORDER;
	next(p);
	if (!expect_word(p, "of"))
		return false;
	a->attr = name(p, "an attribute", &a->attr_loc);
	if (!a->attr)
		return false;
	if (is_word(p, "from")) {
		next(p);
		a->has_range = true;
		if (!(colours ? colour(p, &a->lo) : quantity(p, &a->lo)) || !expect_word(p, "to") ||
		    !(colours ? colour(p, &a->hi) : quantity(p, &a->hi)))
			return false;
	}
	return true;
}

/* ( KEY = OUT, ... [, else OUT] ) */
static bool table(struct parser *p, struct vgd_aspect *a, bool colours)
{
	if (!expect_punct(p, '('))
		return false;
	a->drive = VGD_D_TABLE;
	for (;;) {
		struct vgd_const *out;
		if (is_word(p, "else")) {
			next(p);
			a->has_else = true;
			out = &a->otherwise;
		} else {
			if (a->nentries == VGD_MAX_ENTRIES) {
				vgd_error(p->f, p->t.loc, "more than %d entries in one table",
				          VGD_MAX_ENTRIES);
				p->failed = true;
				return false;
			}
			struct vgd_entry *e = &a->entries[a->nentries];
			e->loc = p->t.loc;
			if (p->t.kind == VGD_TK_STRING) {
				e->key_is_string = true;
				e->key = copy_string(&p->t);
				next(p);
			} else if (p->t.kind == VGD_TK_NUMBER) {
				e->key = copy(p->t.p, p->t.len);
				if (!number(p, &e->key_num)) {
					free(e->key);
					e->key = NULL;
					return false;
				}
			} else {
				expected(p, "a value (a string or a number) or 'else'");
				return false;
			}
			a->nentries++;
			if (!expect_punct(p, '='))
				return false;
			out = &e->out;
		}
		if (!(colours ? colour(p, out) : quantity(p, out)))
			return false;
		if (is_punct(p, ')')) {
			next(p);
			return true;
		}
		if (!expect_punct(p, ','))
			return false;
	}
}

static bool position(struct parser *p, struct vgd_aspect *a)
{
	static const struct {
		const char *w;
		double pct;
	} words[] = {{"left", 10},  {"center", 50}, {"middle", 50},
	             {"right", 90}, {"top", 10},    {"bottom", 90}};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (is_word(p, words[i].w)) {
			a->drive = VGD_D_CONST;
			a->c.num = words[i].pct;
			a->c.percent = true;
			next(p);
			return true;
		}
	if (is_word(p, "by")) {
		next(p);
		if (!is_word(p, "value") && !is_word(p, "order")) {
			expected(p, "'value' or 'order'");
			return false;
		}
		return by_value_or_order(p, a, false);
	}
	if (p->t.kind != VGD_TK_NUMBER) {
		expected(
		    p, "a position (a number, N%, left, right, ..., 'by order of', 'by value of')");
		return false;
	}
	a->drive = VGD_D_CONST;
	return quantity(p, &a->c);
}

/* intensity | rotation | scale | colour: a constant or driven by an attribute */
static bool drive(struct parser *p, struct vgd_aspect *a)
{
	bool colours = a->kind == VGD_A_COLOUR;
	if (is_word(p, "by")) {
		next(p);
		if (is_word(p, "value") || is_word(p, "order"))
			return by_value_or_order(p, a, colours);
		a->attr = name(p, "'value of', 'order of' or an attribute", &a->attr_loc);
		if (!a->attr)
			return false;
		if (is_punct(p, '(')) {
			a->entries = vgb_xcalloc(VGD_MAX_ENTRIES, sizeof *a->entries);
			return table(p, a, colours);
		}
		if (!colours) {
			vgd_error(p->f, a->loc,
			          "%s by an attribute needs a table: by %s (VALUE = N, ...), or "
			          "'by value of' / 'by order of'",
			          vgd_aspect_name(a->kind), a->attr);
			p->failed = true;
			return false;
		}
		a->drive = VGD_D_ORDER; /* colour by ATTR: a palette, by order */
		return true;
	}
	a->drive = VGD_D_CONST;
	return colours ? colour(p, &a->c) : quantity(p, &a->c);
}

static bool aspect(struct parser *p, struct vgd_show *s)
{
	static const struct {
		const char *w;
		enum vgd_aspect_kind k;
	} words[] = {{"x", VGD_A_X},
	             {"y", VGD_A_Y},
	             {"size", VGD_A_SIZE},
	             {"label", VGD_A_LABEL},
	             {"intensity", VGD_A_INTENSITY},
	             {"colour", VGD_A_COLOUR},
	             {"color", VGD_A_COLOUR},
	             {"rotation", VGD_A_ROTATION},
	             {"scale", VGD_A_SCALE}};
	struct vgd_aspect a = {.loc = p->t.loc, .col = -1, .size_h = -1};
	size_t i = 0;
	while (i < sizeof words / sizeof *words && !is_word(p, words[i].w))
		i++;
	if (i == sizeof words / sizeof *words) {
		expected(p, "an aspect (x, y, size, label, intensity, colour, rotation, scale)");
		return false;
	}
	a.kind = words[i].k;
	next(p);
	bool ok;
	switch (a.kind) {
	case VGD_A_X:
	case VGD_A_Y:
		ok = position(p, &a);
		break;
	case VGD_A_SIZE:
		a.drive = VGD_D_CONST;
		ok = number(p, &a.c.num);
		if (ok && is_word(p, "x")) {
			next(p);
			ok = number(p, &a.size_h);
		}
		if (ok && (a.c.num < 0 || a.c.num > 100000 || a.size_h > 100000)) {
			vgd_error(p->f, a.loc, "a size is from 0 to 100000 pixels");
			p->failed = true;
			ok = false;
		}
		break;
	case VGD_A_LABEL:
		if (p->t.kind == VGD_TK_STRING) {
			a.drive = VGD_D_CONST;
			a.text = copy_string(&p->t);
			next(p);
			ok = true;
		} else {
			a.drive = VGD_D_ATTR;
			a.attr = name(p, "an attribute or a \"text\"", &a.attr_loc);
			ok = a.attr != NULL;
		}
		if (ok && is_word(p, "at")) {
			next(p);
			ok = place(p, &a.label_at);
		}
		break;
	default:
		ok = drive(p, &a);
		break;
	}
	add_aspect(s, &a); /* kept even when incomplete, so that vgd_file_free frees it */
	return ok;
}

static const struct {
	const char *w;
	enum vgd_shape s;
} shape_words[] = {{"point", VGD_POINT}, {"line", VGD_LINE},           {"pointer", VGD_POINTER},
                   {"curve", VGD_CURVE}, {"polygon", VGD_POLYGON},     {"circle", VGD_CIRCLE},
                   {"oval", VGD_OVAL},   {"rectangle", VGD_RECTANGLE}, {"text", VGD_TEXT}};

static int shape_word(const struct parser *p)
{
	for (size_t i = 0; i < sizeof shape_words / sizeof *shape_words; i++)
		if (is_word(p, shape_words[i].w))
			return (int)shape_words[i].s;
	return -1;
}

/* After "as": flashing A | LINK from A to B | SHAPE {+ SHAPE} | A inside B | A */
static bool representation(struct parser *p, struct vgd_show *s)
{
	if (is_word(p, "flashing")) {
		next(p);
		s->form = VGD_F_FLASH;
		s->a = name(p, "an entity attribute", &s->a_loc);
		return s->a != NULL;
	}
	int sh = shape_word(p);
	if (sh == VGD_POINTER || sh == VGD_LINE || sh == VGD_CURVE) {
		struct vgd_token save = p->t;
		struct vgd_lexer lx = p->lx;
		next(p);
		if (is_word(p, "from")) {
			next(p);
			s->form = VGD_F_LINK;
			s->link = (enum vgd_shape)sh;
			s->a = name(p, "an entity attribute", &s->a_loc);
			if (!s->a || !expect_word(p, "to"))
				return false;
			s->b = name(p, "an entity attribute", &s->b_loc);
			return s->b != NULL;
		}
		p->t = save; /* an icon after all */
		p->lx = lx;
	}
	if (sh >= 0) {
		s->form = VGD_F_ICON;
		for (;;) {
			sh = shape_word(p);
			if (sh < 0) {
				expected(p,
				         "an icon (point, line, pointer, curve, polygon, circle, "
				         "oval, rectangle, text)");
				return false;
			}
			if (s->nshapes == VGD_MAX_SHAPES) {
				vgd_error(p->f, p->t.loc, "more than %d icons combined",
				          VGD_MAX_SHAPES);
				p->failed = true;
				return false;
			}
			next(p);
			s->shapes[s->nshapes] = (enum vgd_shape)sh;
			if (sh == VGD_POLYGON) {
				double n = 5;
				if (p->t.kind == VGD_TK_NUMBER) {
					struct vgd_loc at = p->t.loc;
					if (!number(p, &n))
						return false;
					if (n < 3 || n > 64 || n != floor(n)) {
						vgd_error(p->f, at, "a polygon has 3 to 64 sides");
						p->failed = true;
						return false;
					}
				}
				s->sides[s->nshapes] = (unsigned)n;
			}
			s->nshapes++;
			if (!is_punct(p, '+'))
				return true;
			next(p);
		}
	}
	s->a = name(p,
	            "a representation (an icon, 'pointer from', 'flashing', or an "
	            "entity attribute)",
	            &s->a_loc);
	if (!s->a)
		return false;
	if (is_word(p, "inside")) {
		next(p);
		s->form = VGD_F_INSIDE;
		s->b = name(p, "an entity attribute", &s->b_loc);
		return s->b != NULL;
	}
	s->form = VGD_F_ASPECTS;
	return true;
}

static void show(struct parser *p)
{
	struct vgd_show s = {.loc = p->t.loc, .a_col = -1, .b_col = -1};
	next(p);
	s.rel = name(p, "a relation", &s.rel_loc);
	bool ok = s.rel && expect_word(p, "as") && representation(p, &s);
	p->follow = s.form == VGD_F_ICON ? "'+', ':' or " : "':' or ";
	if (ok && is_punct(p, ':')) {
		p->follow = "',' or ";
		next(p);
		while (aspect(p, &s) && is_punct(p, ','))
			next(p);
	}
	struct vgd_show *n = vgb_xrealloc(p->f->shows, p->f->nshows + 1, sizeof *n);
	p->f->shows = n;
	p->f->shows[p->f->nshows++] = s;
}

static void derive(struct parser *p)
{
	struct vgd_derive d = {.loc = p->t.loc};
	next(p);
	if (p->t.kind == VGD_TK_STRING) {
		d.file_loc = p->t.loc;
		d.file = copy_string(&p->t);
		next(p);
	} else if (is_punct(p, '{')) {
		/* The TQuel text up to the matching '}' outside strings and comments; the
		 * engine parses it with its own grammar (vgd_derive_run). */
		size_t i = p->lx.pos, n = p->f->len;
		const char *t = p->f->text;
		d.off = i;
		while (i < n && t[i] != '}') {
			if (t[i] == '"') {
				for (i++; i < n && t[i] != '"' && t[i] != '\n'; i++)
					if (t[i] == '\\' && i + 1 < n)
						i++;
			} else if (t[i] == '/' && i + 1 < n && t[i + 1] == '*') {
				for (i += 2; i + 1 < n && !(t[i] == '*' && t[i + 1] == '/'); i++)
					;
				i++;
			}
			if (i < n)
				i++;
		}
		if (i >= n) {
			vgd_error(p->f, p->t.loc,
			          "'{' without its '}': the queries run to the end "
			          "of the file");
			p->failed = true;
			p->lx.pos = n;
			next(p);
			return;
		}
		d.len = i - d.off;
		while (p->lx.pos < i) /* keeps the lexer's line count */
			if (t[p->lx.pos++] == '\n') {
				p->lx.line++;
				p->lx.line_start = p->lx.pos;
			}
		next(p); /* the '}' */
		next(p);
	} else {
		expected(p, "a file name \"FILE.tq\" or '{' TQuel statements '}'");
		return;
	}
	struct vgd_derive *n = vgb_xrealloc(p->f->derives, p->f->nderives + 1, sizeof *n);
	p->f->derives = n;
	p->f->derives[p->f->nderives++] = d;
}

static void statement(struct parser *p)
{
	struct vgd_file *f = p->f;
	if (is_word(p, "show")) {
		show(p);
	} else if (is_word(p, "derive")) {
		derive(p);
	} else if (is_word(p, "canvas")) {
		next(p);
		double w, h;
		struct vgd_loc at = p->t.loc;
		if (!number(p, &w) || !expect_word(p, "x") || !number(p, &h))
			return;
		if (w < 100 || h < 100 || w > 20000 || h > 20000) {
			vgd_error(f, at, "a canvas is from 100 x 100 to 20000 x 20000 pixels");
			p->failed = true;
			return;
		}
		f->width = w;
		f->height = h;
	} else if (is_word(p, "time")) {
		f->time_loc = p->t.loc;
		next(p);
		struct vgd_loc at;
		if (is_word(p, "animation")) {
			next(p);
			f->time = VGD_T_ANIMATION;
		} else if (is_word(p, "animationtrace")) {
			next(p);
			f->time = VGD_T_TRACE;
			if (p->t.kind == VGD_TK_NUMBER && !duration(p, &f->window, &at))
				return;
		} else if (is_word(p, "axis")) {
			next(p);
			f->time = VGD_T_AXIS;
			if (p->t.kind == VGD_TK_NUMBER && !duration(p, &f->window, &at))
				return;
		} else {
			expected(p, "animation, animationtrace or axis");
			return;
		}
		if (is_word(p, "hold")) {
			next(p);
			duration(p, &f->hold, &at);
		}
	} else if (is_word(p, "clock")) {
		next(p);
		f->clock = true;
		f->clock_at = VGD_TOP_RIGHT;
		if (is_word(p, "at")) {
			next(p);
			place(p, &f->clock_at);
		}
	} else {
		expected(p, "a statement (show, derive, time, clock, canvas)");
	}
}

static bool statement_start(const struct parser *p)
{
	return p->t.kind == VGD_TK_EOF || is_word(p, "show") || is_word(p, "derive") ||
	       is_word(p, "canvas") || is_word(p, "time") || is_word(p, "clock");
}

struct vgd_file *vgd_parse(const char *source, const char *text, size_t len)
{
	struct vgd_file *f = vgb_xcalloc(1, sizeof *f);
	f->source = copy(source, strlen(source));
	f->text = text;
	f->len = len;
	f->width = 900;
	f->height = 600;
	f->time = VGD_T_TRACE;
	struct parser p = {.f = f};
	vgd_lex_init(&p.lx, f);
	next(&p);
	while (p.t.kind != VGD_TK_EOF && f->nerrors < VGD_MAX_ERRORS) {
		p.failed = false;
		p.follow = "";
		statement(&p);
		if (!p.failed && !statement_start(&p)) {
			char what[128];
			snprintf(what, sizeof what,
			         "%sthe next statement (show, derive, time, clock, canvas)",
			         p.follow);
			expected(&p, what);
		}
		if (p.failed)
			while (!statement_start(&p))
				next(&p);
	}
	return f;
}

static void free_aspect(struct vgd_aspect *a)
{
	free(a->attr);
	free(a->text);
	for (size_t i = 0; i < a->nentries; i++)
		free(a->entries[i].key);
	free(a->entries);
	free(a->order);
}

void vgd_file_free(struct vgd_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nshows; i++) {
		struct vgd_show *s = &f->shows[i];
		free(s->rel);
		free(s->a);
		free(s->b);
		for (size_t j = 0; j < s->naspects; j++)
			free_aspect(&s->aspects[j]);
		free(s->aspects);
	}
	free(f->shows);
	for (size_t i = 0; i < f->nderives; i++)
		free(f->derives[i].file);
	free(f->derives);
	for (size_t i = 0; i < f->nerrors; i++)
		free(f->errors[i].message);
	free(f->errors);
	free(f->source);
	free(f);
}
