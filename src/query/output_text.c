/* The aligned table (for people) and CSV (RFC 4180), and the one entry point that picks a
 * format. */
#include <stdlib.h>
#include <string.h>

#include "query/output_internal.h"

int vgq_write_relation(FILE *out, const struct vgq_relation *r, enum vgq_format f,
                       const struct vgq_output_opts *o)
{
	struct vgq_sink s;
	vgq_sink_init(&s, out);
	switch (f) {
	case VGQ_FORMAT_TABLE:
		vgq_write_table(&s, r, o ? o->origin : 0);
		break;
	case VGQ_FORMAT_CSV:
		vgq_write_csv(&s, r);
		break;
	case VGQ_FORMAT_JSON:
		vgq_write_json(&s, r);
		break;
	}
	return vgq_sink_finish(&s);
}

/* ---- table ---- */

enum { MAX_WIDTH = 40 };

/* Display text of a cell: control characters and bytes that are not UTF-8 are shown as
 * escapes (\n, \t, \r, \xHH, \u0085), so one tuple stays on one line; the width counts
 * code points. Past `limit` characters (0: none) it is cut to limit - 1 and "…" added. */
struct display {
	struct vgq_text text;
	size_t width, cut_len; /* cut_len: text length at width limit - 1 */
	size_t limit;
};

static void display_char(struct display *d, const char *p, size_t n)
{
	if (d->limit && d->width == d->limit - 1)
		d->cut_len = d->text.len;
	vgq_text_put(&d->text, p, n);
	d->width++;
}

static void display_escape(struct display *d, const char *esc)
{
	for (; *esc; esc++)
		display_char(d, esc, 1);
}

static void display(struct display *d, const char *p, size_t n, size_t limit)
{
	static const char HEX[] = "0123456789abcdef";
	d->text.len = 0;
	d->width = 0;
	d->limit = limit;
	const unsigned char *u = (const unsigned char *)p;
	size_t ascii = 0;
	while (ascii < n && u[ascii] >= 0x20 && u[ascii] < 0x7f)
		ascii++;
	if (ascii == n && (!limit || n <= limit)) { /* printable ASCII that fits: as is */
		vgq_text_put(&d->text, p, n);
		d->width = n;
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t len = vgq_utf8_seq(u + i, n - i);
		unsigned c = u[i];
		if (len == 1 && c >= 0x20 && c != 0x7f) {
			display_char(d, p + i, 1);
		} else if (len == 2 && c == 0xc2 && u[i + 1] < 0xa0) { /* C1 controls */
			char esc[] = {'\\', 'u', '0', '0', HEX[u[i + 1] >> 4], HEX[u[i + 1] & 15],
			              0};
			display_escape(d, esc);
		} else if (len > 1) {
			display_char(d, p + i, len);
		} else {
			char esc[] = {'\\', 'x', HEX[c >> 4], HEX[c & 15], 0};
			display_escape(d, c == '\n'   ? "\\n"
			                  : c == '\t' ? "\\t"
			                  : c == '\r' ? "\\r"
			                              : esc);
		}
		i += len ? len : 1;
	}
	if (limit && d->width > limit) {
		d->text.len = d->cut_len;
		vgq_text_put(&d->text, "\xe2\x80\xa6", 3); /* … */
		d->width = limit;
	}
}

struct table {
	const struct vgq_relation *r;
	int64_t origin;
	size_t ncols; /* attributes, then 1 or 2 time columns */
	size_t *width;
	struct vgq_text raw;
	struct display cell;
};

static bool column_right(const struct table *tb, size_t c)
{
	if (c >= tb->r->nattrs)
		return true;
	enum vgq_type t = tb->r->attrs[c].type;
	return t == VGQ_INT || t == VGQ_UINT || t == VGQ_DOUBLE;
}

static const char *column_name(const struct table *tb, size_t c)
{
	if (c < tb->r->nattrs)
		return tb->r->attrs[c].name;
	if (vgq_output_is_event(tb->r))
		return "at";
	return c == tb->r->nattrs ? "from" : "to";
}

/* Renders cell (tuple, c) into tb->cell. */
static void render(struct table *tb, size_t tuple, size_t c)
{
	const struct vgq_relation *r = tb->r;
	tb->raw.len = 0;
	if (c >= r->nattrs) {
		char buf[VGQ_SECONDS_TEXT_SIZE];
		int64_t t = c == r->nattrs ? r->from[tuple] : r->to[tuple];
		vgq_text_put(&tb->raw, buf, vgq_seconds_text(buf, t, tb->origin));
	} else if (!vgq_value_text(&tb->raw, r, c, tuple)) {
		vgq_text_putc(&tb->raw, '-');
	}
	display(&tb->cell, tb->raw.ptr, tb->raw.len, MAX_WIDTH);
}

static void put_spaces(struct vgq_sink *s, size_t n)
{
	static const char SP[] = "                                        ";
	while (n) {
		size_t k = n < sizeof SP - 1 ? n : sizeof SP - 1;
		vgq_sink_put(s, SP, k);
		n -= k;
	}
}

/* Puts tb->cell as column c, padded to its width. */
static void put_cell(struct vgq_sink *s, struct table *tb, size_t c)
{
	size_t pad = tb->width[c] - tb->cell.width;
	if (c)
		vgq_sink_put(s, "  ", 2);
	if (column_right(tb, c))
		put_spaces(s, pad);
	vgq_sink_put(s, tb->cell.text.ptr, tb->cell.text.len);
	if (!column_right(tb, c) && c + 1 < tb->ncols)
		put_spaces(s, pad);
}

void vgq_write_table(struct vgq_sink *s, const struct vgq_relation *r, int64_t origin)
{
	struct table tb = {.r = r, .origin = origin};
	tb.ncols = r->nattrs + (vgq_output_is_event(r) ? 1 : 2);
	tb.width = calloc(tb.ncols, sizeof *tb.width);
	if (!tb.width) {
		fputs("vigil: out of memory\n", stderr);
		abort();
	}
	/* Pass 1: widths. */
	for (size_t c = 0; c < tb.ncols; c++) {
		const char *name = column_name(&tb, c);
		display(&tb.cell, name, strlen(name), MAX_WIDTH);
		tb.width[c] = tb.cell.width;
	}
	for (size_t t = 0; t < r->ntuples; t++)
		for (size_t c = 0; c < tb.ncols; c++) {
			render(&tb, t, c);
			if (tb.cell.width > tb.width[c])
				tb.width[c] = tb.cell.width;
		}
	/* Pass 2: the title, the header, the rows. */
	display(&tb.cell, r->name, strlen(r->name), 0);
	vgq_sink_put(s, tb.cell.text.ptr, tb.cell.text.len);
	char num[VGQ_INT_TEXT_SIZE];
	vgq_sink_puts(s, vgq_output_is_event(r) ? " (event relation, " : " (interval relation, ");
	vgq_sink_put(s, num, vgq_u64_text(num, r->ntuples));
	vgq_sink_puts(s, r->ntuples == 1 ? " tuple)\n" : " tuples)\n");
	for (size_t c = 0; c < tb.ncols; c++) {
		const char *name = column_name(&tb, c);
		display(&tb.cell, name, strlen(name), MAX_WIDTH);
		put_cell(s, &tb, c);
	}
	vgq_sink_putc(s, '\n');
	for (size_t t = 0; t < r->ntuples; t++) {
		for (size_t c = 0; c < tb.ncols; c++) {
			render(&tb, t, c);
			put_cell(s, &tb, c);
		}
		vgq_sink_putc(s, '\n');
		vgq_sink_maybe_flush(s);
	}
	free(tb.width);
	vgq_text_free(&tb.raw);
	vgq_text_free(&tb.cell.text);
}

/* ---- CSV ---- */

/* One field: quoted when it holds , " CR LF, starts or ends with a space or a tab, or
 * is an empty string (so that it differs from a missing value, an empty field). */
static void csv_field(struct vgq_sink *s, const char *p, size_t n)
{
	bool quote = n == 0 || p[0] == ' ' || p[0] == '\t' || p[n - 1] == ' ' || p[n - 1] == '\t' ||
	             strpbrk(p, ",\"\r\n");
	if (!quote) {
		vgq_sink_put(s, p, n);
		return;
	}
	vgq_sink_putc(s, '"');
	for (const char *q; (q = memchr(p, '"', n)); n -= (size_t)(q + 1 - p), p = q + 1) {
		vgq_sink_put(s, p, (size_t)(q + 1 - p));
		vgq_sink_putc(s, '"');
	}
	vgq_sink_put(s, p, n);
	vgq_sink_putc(s, '"');
}

void vgq_write_csv(struct vgq_sink *s, const struct vgq_relation *r)
{
	bool event = vgq_output_is_event(r);
	for (size_t a = 0; a < r->nattrs; a++) {
		csv_field(s, r->attrs[a].name, strlen(r->attrs[a].name));
		vgq_sink_putc(s, ',');
	}
	vgq_sink_puts(s, event ? "at\r\n" : "from,to\r\n");
	struct vgq_text v = {0};
	char num[VGQ_INT_TEXT_SIZE];
	for (size_t t = 0; t < r->ntuples; t++) {
		for (size_t a = 0; a < r->nattrs; a++) {
			v.len = 0;
			if (vgq_value_text(&v, r, a, t))
				csv_field(s, v.ptr ? v.ptr : "", v.len);
			vgq_sink_putc(s, ',');
		}
		vgq_sink_put(s, num, vgq_i64_text(num, r->from[t]));
		if (!event) {
			vgq_sink_putc(s, ',');
			vgq_sink_put(s, num, vgq_i64_text(num, r->to[t]));
		}
		vgq_sink_put(s, "\r\n", 2);
		vgq_sink_maybe_flush(s);
	}
	vgq_text_free(&v);
}
