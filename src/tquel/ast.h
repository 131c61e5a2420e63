/* The abstract syntax of TQuel as parsed (docs/tquel.md): statements, value expressions
 * (target list, where clause), temporal expressions and predicates (valid and when
 * clauses), aggregates. Every node carries its source location. The parser checks
 * syntax only: names of variables, relations and attributes are resolved later. */
#ifndef VIGIL_TQUEL_AST_H
#define VIGIL_TQUEL_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tquel_loc {
	uint32_t line, col; /* 1-based; col counts bytes */
	size_t off, end;    /* byte offsets in the text: first byte, just after the last */
};

enum tquel_kind {
	/* value expressions: target list items, where clause, aggregate arguments */
	TQ_NUMBER, /* number (lexeme as written, value) */
	TQ_STRING, /* string */
	TQ_ATTR,   /* attr.var . attr.name */
	TQ_NEG,    /* - a */
	TQ_ADD,
	TQ_SUB,
	TQ_MUL,
	TQ_DIV,
	TQ_EQ,
	TQ_NE,
	TQ_LT,
	TQ_LE,
	TQ_GT,
	TQ_GE,
	TQ_AND, /* a and b: in where and when clauses alike */
	TQ_OR,
	TQ_NOT, /* not a */
	TQ_AGG, /* agg */
	/* temporal expressions: an event or an interval */
	TQ_TVAR,      /* the valid time of tuple variable `name` */
	TQ_BEGIN_OF,  /* begin of a */
	TQ_END_OF,    /* end of a */
	TQ_INTERSECT, /* a overlap b: the intersection */
	TQ_EXTEND,    /* a extend b: from the start of a to the end of b */
	TQ_TCONST,    /* a temporal constant: "now", "beginning", "forever", a date */
	/* temporal predicates (operands are temporal expressions) */
	TQ_PRECEDE,
	TQ_OVERLAPS, /* a overlap b: true when they share an instant */
	TQ_EQUAL,
};

/* The temporal constants (an event each): "now" is resolved when the statement is bound
 * (the trace's last event; under vigil watch the last one read so far), a date when
 * parsed (ns since the Unix epoch, UTC). */
enum tquel_tconst { TQ_NOW, TQ_BEGINNING, TQ_FOREVER, TQ_DATE };

enum tquel_aggfn {
	TQ_COUNT,
	TQ_SUM,
	TQ_AVG,
	TQ_MIN,
	TQ_MAX,
	/* recognised by name before '(' (not keywords: they may name tuple variables) */
	TQ_ANY,   /* 1 when something contributes, else 0 */
	TQ_STDEV, /* population standard deviation */
	TQ_FIRST, /* the value of the contribution that began first */
	TQ_LAST,  /* ... last */
	TQ_RATE,  /* (last - first) per second between their beginnings */
	TQ_AVGTI, /* average time increment between beginnings, in seconds */
	TQ_VARTS, /* variability of that spacing: its standard deviation over its mean */
};
#define TQ_AGGFN_COUNT (TQ_VARTS + 1)
/* Lower-case names of the aggregate functions, by enum tquel_aggfn. */
extern const char *const tquel_aggfn_names[TQ_AGGFN_COUNT];

/* for each instant (instantaneous, the default), for ever (cumulative), or for each
 * SPAN (a moving window: the contributions valid at some instant of the span ending at
 * each instant) */
enum tquel_window { TQ_INSTANT, TQ_EVER, TQ_SPAN };

struct tquel_expr;

struct tquel_agg {
	enum tquel_aggfn fn;
	bool unique; /* countU, sumU, avgU: over distinct values */
	struct tquel_expr *arg;
	struct tquel_expr **by; /* by-list, nby items */
	size_t nby;
	enum tquel_window window;
	int64_t span_ns;          /* TQ_SPAN: the window's length, >= 1 */
	const char *span_text;    /* TQ_SPAN: as written, "1.5 s" (number, space, unit) */
	struct tquel_expr *where; /* inner where clause, or NULL */
	struct tquel_expr *when;  /* inner when clause, or NULL */
};

struct tquel_expr {
	enum tquel_kind kind;
	struct tquel_loc loc; /* the whole expression, enclosing parentheses included */
	bool parens;          /* written in parentheses */
	unsigned height;      /* nodes on the longest path down, this one included */
	union {
		struct {
			const char *lexeme; /* as written: 10, 2.5 */
			bool is_int;
			int64_t i; /* when is_int */
			double d;
		} number;
		struct {
			const char *s; /* unescaped, NUL-terminated; no NUL inside */
		} string;
		struct {
			const char *var, *name;
		} attr;
		struct {
			const char *name;
		} tvar;
		struct {
			const char *s; /* as written, unescaped */
			enum tquel_tconst which;
			int64_t ns; /* TQ_DATE */
		} tconst;
		struct {
			struct tquel_expr *a, *b; /* b is NULL for unary kinds */
		} op;
		struct tquel_agg agg;
	} u;
};

struct tquel_target {
	struct tquel_loc loc;
	const char *name; /* the result attribute */
	bool renamed;     /* written `name = expr`; else a bare V.attr named after attr */
	bool all;         /* a bare `V.all`: every attribute of V (name "all", value V.all) */
	struct tquel_expr *value;
};

enum tquel_valid_kind { TQ_VALID_NONE, TQ_VALID_AT, TQ_VALID_FROM_TO };

struct tquel_valid {
	enum tquel_valid_kind kind;
	struct tquel_loc loc;
	struct tquel_expr *at, *from, *to; /* temporal expressions */
};

enum tquel_stmt_kind { TQ_RANGE, TQ_RETRIEVE };

struct tquel_range {
	const char *var;
	const char *relation;
	uint64_t clock_period; /* relation "Clock": ticks of the base clock (1 for `Clock`);
	                          0 for every other relation */
	struct tquel_loc var_loc, relation_loc;
};

struct tquel_retrieve {
	bool unique;      /* retrieve unique: value-equivalent tuples coalesced */
	const char *into; /* result relation name, or NULL */
	struct tquel_loc into_loc;
	struct tquel_target *targets;
	size_t ntargets;
	struct tquel_valid valid;
	struct tquel_expr *where; /* NULL when absent */
	struct tquel_expr *when;  /* NULL when absent */
};

struct tquel_stmt {
	enum tquel_stmt_kind kind;
	struct tquel_loc loc;
	union {
		struct tquel_range range;
		struct tquel_retrieve retrieve;
	} u;
};

struct tquel_error {
	struct tquel_loc loc;
	char *message;
};

/* A parsed query text: the statements parsed without error, in order, and the errors. */
struct tquel_query {
	const char *source; /* name shown in errors: a file path or "<command line>" */
	const char *text;   /* a copy of the text, NUL-terminated */
	size_t len;
	struct tquel_stmt *stmts;
	size_t nstmts;
	struct tquel_error *errors;
	size_t nerrors;
	struct tquel_arena *arena; /* owns every node and string above */
};

/* Statement, temporal and value node kinds, for consumers. */
bool tquel_is_temporal_expr(enum tquel_kind k);
bool tquel_is_temporal_pred(enum tquel_kind k);

/* outer.c: the variables a retrieve's targets and clauses mention outside aggregates, each
 * once in order of first mention: their number, at most max (names[0..max)). */
size_t tquel_outer_names(const struct tquel_retrieve *r, const char **names, size_t max);
/* Does the value expression e mention only variables of names[0..n) (and no aggregate)? */
bool tquel_only_names(const struct tquel_expr *e, const char *const *names, size_t n);

#endif
