/* Message templates and severities (docs/logcapture.md, "Templates"): when a capture site
 * does not identify the log statement (a wrapper's "%s", "[%lu-%d] %s", a write to fd 2),
 * the event is the formatted message with its variable parts masked. Pure functions of
 * the text, in memory, no allocation: the same message gives the same template in every
 * run and process, which is what lets `vigil diff` match events of two runs. */
#include <stdint.h>
#include <string.h>

#include "logcap.h"

/* Character classes, one table lookup per byte. C_SPECIAL: a byte that may start a quote
 * or a path, or is replaced; other bytes outside words are copied as they are. */
enum {
	C_ALPHA = 1,
	C_DIGIT = 2,
	C_HEX = 4,
	C_WORD = 8,
	C_SPACE = 16,
	C_DELIM = 32,
	C_SPECIAL = 64
};
#define R(a, b, v) [a... b] = v
static const unsigned char cls[256] = {
    R('a', 'f', C_ALPHA | C_HEX | C_WORD),
    R('g', 'z', C_ALPHA | C_WORD),
    R('A', 'F', C_ALPHA | C_HEX | C_WORD),
    R('G', 'Z', C_ALPHA | C_WORD),
    R('0', '9', C_DIGIT | C_HEX | C_WORD),
    ['_'] = C_WORD,
    [' '] = C_SPACE | C_DELIM,
    ['\t'] = C_SPACE | C_DELIM,
    /* characters that end a token: a path or a number stops there */
    ['"'] = C_DELIM | C_SPECIAL,
    ['\''] = C_DELIM | C_SPECIAL,
    ['/'] = C_SPECIAL,
    ['('] = C_DELIM,
    [')'] = C_DELIM,
    ['['] = C_DELIM,
    [']'] = C_DELIM,
    ['{'] = C_DELIM,
    ['}'] = C_DELIM,
    ['<'] = C_DELIM,
    ['>'] = C_DELIM,
    [','] = C_DELIM,
    [';'] = C_DELIM,
    ['='] = C_DELIM,
    ['|'] = C_DELIM,
    ['\n'] = C_DELIM | C_SPECIAL,
    ['\r'] = C_DELIM | C_SPECIAL,
    [0] = C_DELIM | C_SPECIAL,
    /* control bytes other than tab, DEL and bytes >= 0x80 (UTF-8 is checked) */
    R(0x01, 0x08, C_SPECIAL),
    R(0x0b, 0x0c, C_SPECIAL),
    R(0x0e, 0x1f, C_SPECIAL),
    R(0x7f, 0xff, C_SPECIAL),
};
#undef R

static inline int is_alpha(int c)
{
	return (cls[c & 0xff] & C_ALPHA) != 0;
}
static inline int is_digit(int c)
{
	return (cls[c & 0xff] & C_DIGIT) != 0;
}
static inline int is_hex(int c)
{
	return (cls[c & 0xff] & C_HEX) != 0;
}
static inline int is_word(int c) /* a run of these is a word of the template */
{
	return (cls[c & 0xff] & C_WORD) != 0;
}
static inline int is_delim(int c)
{
	return (cls[c & 0xff] & C_DELIM) != 0;
}

struct tout {
	char *p;
	size_t len, cap; /* cap leaves room for "..." and the NUL */
	size_t ph_end;   /* where the last placeholder ended, 0: none */
	int full;
};

/* Small copies by bytes: words are a few bytes long, and a variable-length memcpy here
 * was expanded into a `rep movs` whose start-up cost dominated the masker. */
static inline void copy_bytes(char *d, const char *s, size_t n)
{
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		memcpy(d, &w, 8);
		d += 8, s += 8, n -= 8;
	}
	while (n--)
		*d++ = *s++;
}

static inline void put(struct tout *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		o->full = 1;
		return;
	}
	copy_bytes(o->p + o->len, s, n);
	o->len += n;
}

static inline void put1(struct tout *o, char c)
{
	if (o->len < o->cap)
		o->p[o->len++] = c;
	else
		o->full = 1;
}

/* A placeholder; one right after another placeholder and one separator (".", ":", "/",
 * "-") is merged into it: a date, a time, an address or an LSN is one "<n>". */
static void mask(struct tout *o, const char *ph)
{
	char sep = o->ph_end && o->len == o->ph_end + 1 ? o->p[o->ph_end] : 0;
	if (sep == '.' || sep == ':' || sep == '/' || sep == '-') {
		o->len = o->ph_end; /* drop the separator, keep the first placeholder */
		return;
	}
	put(o, ph, ph[1] == 'n' ? 3 : 5); /* "<n>" or "<hex>" */
	o->ph_end = o->len;
}

/* One word (a run of letters, digits and '_') that holds a digit. */
static void word_with_digits(struct tout *o, const char *w, size_t n)
{
	size_t hex = 0, digits = 0;
	for (size_t i = 0; i < n; i++) {
		hex += is_hex((unsigned char)w[i]);
		digits += is_digit((unsigned char)w[i]);
	}
	if (digits == n) { /* 16 digits or more: a hex id that happens to have no letter */
		mask(o, n >= 16 ? "<hex>" : "<n>");
		return;
	}
	if (n >= 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
		int all = n > 2;
		for (size_t i = 2; i < n; i++)
			all &= is_hex((unsigned char)w[i]);
		if (all) {
			mask(o, "<hex>");
			return;
		}
	}
	if (hex == n) { /* hex digits only, with a letter: an id, a hash, a UUID part */
		mask(o, "<hex>");
		return;
	}
	size_t i = 0;
	if (is_digit((unsigned char)w[0])) { /* a number with its unit: 16kB, 2ms */
		while (i < n && is_digit((unsigned char)w[i]))
			i++;
		mask(o, "<n>");
	}
	/* A name with a number in it: runs of 3 digits or more are masked (pg_toast_16384),
	 * shorter ones kept (DEBUG5, utf8, ipv6). */
	while (i < n) {
		size_t j = i;
		while (j < n && is_digit((unsigned char)w[j]))
			j++;
		if (j - i >= 3) {
			mask(o, "<n>");
			i = j;
		} else if (j > i) {
			put(o, w + i, j - i);
			i = j;
		} else {
			put1(o, w[i]);
			i++;
		}
	}
}

/* A closing quote q for the one at s[0], within the line and 256 bytes; 0 if none. */
static size_t quote_end(const char *s, size_t n, char q)
{
	for (size_t i = 1; i < n && i < 256; i++) {
		if (s[i] == '\n' || s[i] == '\r')
			return 0;
		if (s[i] == q) {
			if (q == '\'' && i + 1 < n && is_word((unsigned char)s[i + 1]))
				continue; /* an apostrophe inside a word, not the closing quote */
			return i;
		}
	}
	return 0;
}

/* Output of the literal run msg[from, to) (words without digits, kept punctuation and
 * well-formed UTF-8, copied as they are) when it does not fit: token by token as far as
 * the template has room, so that a cut template ends where copying each token in turn
 * would have stopped (a word or a UTF-8 sequence whole or not at all). */
static void put_run_cut(struct tout *o, const char *msg, size_t from, size_t to)
{
	for (size_t i = from; i < to && !o->full;) {
		unsigned char c = (unsigned char)msg[i];
		size_t j = i + 1;
		if (is_word(c)) {
			while (j < to && is_word((unsigned char)msg[j]))
				j++;
			put(o, msg + i, j - i);
		} else if (c >= 0x80 && vg__lc_utf8_len((const unsigned char *)msg + i, to - i)) {
			j = i + vg__lc_utf8_len((const unsigned char *)msg + i, to - i);
			put(o, msg + i, j - i);
		} else {
			put1(o, (char)c);
		}
		i = j;
	}
}

/* Writes the pending literal run msg[*from, to) and starts a new one at `next`; whether
 * the template is full (then nothing more is written). */
static inline int flush(struct tout *o, const char *msg, size_t *from, size_t to, size_t next)
{
	if (o->len + (to - *from) <= o->cap) {
		copy_bytes(o->p + o->len, msg + *from, to - *from);
		o->len += to - *from;
	} else {
		put_run_cut(o, msg, *from, to);
	}
	*from = next;
	return o->full;
}

/* One pass over the message. Bytes that stay as they are (words without digits, kept
 * punctuation, UTF-8) are not copied one by one: they accumulate in a literal run that
 * is copied whole before the next placeholder or replaced byte. */
size_t vg__lc_template(const char *msg, size_t n, char *out, size_t cap)
{
	if (cap < 8)
		return 0;
	struct tout o = {out, 0, cap - 4, 0, 0};
	if (n > LC_TMPL_SCAN)
		n = LC_TMPL_SCAN;
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		n--;
	size_t i = 0, lit = 0; /* msg[lit, i): the pending literal run */
	while (i < n) {
		unsigned char c = (unsigned char)msg[i];
		unsigned char k = cls[c];
		if (k & C_WORD) {
			size_t j = i + 1;
			unsigned seen = k; /* the classes of the word's bytes, or-ed */
			for (; j < n && (cls[(unsigned char)msg[j]] & C_WORD); j++)
				seen |= cls[(unsigned char)msg[j]];
			if (seen & C_DIGIT) {
				if (flush(&o, msg, &lit, i, j))
					break;
				word_with_digits(&o, msg + i, j - i);
				if (o.full)
					break;
			}
			i = j;
			continue;
		}
		if (!(k & C_SPECIAL)) { /* punctuation and spaces: kept */
			i++;
			continue;
		}
		int at_start = i == 0 || !is_word((unsigned char)msg[i - 1]);
		if (c == '"' || (c == '\'' && at_start)) {
			size_t e = quote_end(msg + i, n - i, (char)c);
			if (e) {
				if (flush(&o, msg, &lit, i, i + e + 1))
					break;
				put(&o, c == '"' ? "\"<s>\"" : "'<s>'", 5);
				if (o.full)
					break;
				i += e + 1;
				continue;
			}
		}
		if (c == '/' && at_start && i + 1 < n && !is_delim((unsigned char)msg[i + 1]) &&
		    msg[i + 1] != '/' &&
		    (i == 0 || is_delim((unsigned char)msg[i - 1]) || msg[i - 1] == ':')) {
			/* a path: to the end of the token, a trailing ':' or '.' kept */
			size_t j = i;
			while (j < n && !is_delim((unsigned char)msg[j]))
				j++;
			size_t e = j;
			while (e > i + 1 && (msg[e - 1] == ':' || msg[e - 1] == '.'))
				e--;
			if (flush(&o, msg, &lit, i, j))
				break;
			put(&o, "<path>", 6);
			put(&o, msg + e, j - e);
			if (o.full)
				break;
			i = j;
			continue;
		}
		if (c >= 0x80) {
			size_t u = vg__lc_utf8_len((const unsigned char *)msg + i, n - i);
			if (u) {
				i += u;
				continue;
			}
		}
		/* Punctuation and spaces are kept; control bytes and bytes that are not
		 * UTF-8 become '?'. */
		if ((c < 0x20 && c != '\t') || c >= 0x7f) {
			if (flush(&o, msg, &lit, i, i + 1))
				break;
			put1(&o, '?');
			if (o.full)
				break;
		}
		i++;
	}
	if (!o.full)
		flush(&o, msg, &lit, i, i);
	if (o.full || i < n) {
		memcpy(out + o.len, "...", 3);
		o.len += 3;
	}
	out[o.len] = 0;
	return o.len;
}

/* ---- severities ---- */

static const struct {
	const char *word;
	signed char level;
} level_words[] = {
    {"debug", 7}, {"debug1", 7},  {"debug2", 7}, {"debug3", 7}, {"debug4", 7}, {"debug5", 7},
    {"trace", 7}, {"verbose", 7}, {"log", 6},    {"info", 6},   {"notice", 5}, {"warning", 4},
    {"warn", 4},  {"error", 3},   {"err", 3},    {"fatal", 2},  {"crit", 2},   {"critical", 2},
    {"alert", 1}, {"emerg", 0},   {"panic", 0},
};

static int word_level(const char *w, size_t n)
{
	char low[10];
	if (n == 0 || n >= sizeof low)
		return -1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]);
	low[n] = 0;
	for (size_t i = 0; i < sizeof level_words / sizeof level_words[0]; i++)
		if (!strcmp(low, level_words[i].word))
			return level_words[i].level;
	return -1;
}

int vg__lc_level_word(const char *msg, size_t n)
{
	if (n > 160)
		n = 160;
	for (size_t i = 0; i < n;) {
		if (!is_alpha((unsigned char)msg[i])) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < n && is_word((unsigned char)msg[j]))
			j++;
		char before = i ? msg[i - 1] : ' ', after = j < n ? msg[j] : 0;
		/* "LOG:", "error:", "[warn]", "<error>": a level word is followed by ':' or
		 * enclosed in brackets, and starts the text or follows a space or a bracket */
		int starts =
		    before == ' ' || before == '\t' || before == '[' || before == '<' || i == 0;
		int marked = after == ':' || (before == '[' && after == ']') ||
		             (before == '<' && after == '>');
		if (starts && marked) {
			int l = word_level(msg + i, j - i);
			if (l >= 0)
				return l;
		}
		i = j;
	}
	return -1;
}

/* Does the format leave the statement unknown? Its text outside conversions is at most
 * one word, and it has a %s: "%s", "[%lu-%d] %s", "LOG: %s", "%s: %s". */
int vg__lc_fmt_templated(const char *fmt)
{
	int words = 0, has_s = 0, in_word = 0;
	for (const char *p = fmt; *p; p++) {
		if (*p == '%') {
			in_word = 0;
			if (p[1] == '%') {
				p++;
				continue;
			}
			p++;
			while (*p && !strchr("diouxXeEfFgGaAcspnmCS", *p))
				p++;
			if (!*p)
				break;
			has_s |= *p == 's';
			continue;
		}
		int w = is_alpha((unsigned char)*p);
		if (w && !in_word)
			words++;
		in_word = w;
	}
	return has_s && words <= 1;
}
