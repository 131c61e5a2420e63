/* The parsed `.vgd` file (before checking) and what the checker resolves in it. Private
 * to src/display. Grammar: docs/display.md. */
#ifndef VIGIL_DISPLAY_AST_H
#define VIGIL_DISPLAY_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VGD_MAX_ERRORS 50
#define VGD_MAX_SHAPES 8                       /* icons combined in one representation */
#define VGD_MAX_ENTRIES 64                     /* entries of one value table */
#define VGD_MAX_DURATION 1000000000000000000ll /* ns: a window, a hold */

struct vgd_loc {
	uint32_t line, col; /* 1-based; col counts bytes */
	size_t off;         /* byte offset of the token */
};

enum vgd_shape {
	VGD_POINT,
	VGD_LINE,
	VGD_POINTER,
	VGD_CURVE,
	VGD_POLYGON,
	VGD_CIRCLE,
	VGD_OVAL,
	VGD_RECTANGLE,
	VGD_TEXT,
};

enum vgd_aspect_kind {
	VGD_A_X,
	VGD_A_Y,
	VGD_A_SIZE,
	VGD_A_LABEL,
	VGD_A_INTENSITY,
	VGD_A_COLOUR,
	VGD_A_ROTATION,
	VGD_A_SCALE,
};

/* How an aspect gets its value. */
enum vgd_drive {
	VGD_D_CONST, /* a number (num, percent), a place keyword (place) or a colour (colour) */
	VGD_D_VALUE, /* by value of ATTR [from LO to HI]: a number mapped linearly */
	VGD_D_ORDER, /* by order of ATTR [from LO to HI]: the rank among all values */
	VGD_D_TABLE, /* by ATTR (KEY = OUT, ..., else OUT) */
	VGD_D_ATTR,  /* label ATTR, colour by ATTR (a palette by order) */
};

/* A constant of an aspect: a number, a percentage of the canvas, or a colour. */
struct vgd_const {
	double num;
	bool percent;
	uint32_t colour; /* 0xRRGGBB when is_colour */
	bool is_colour;
};

struct vgd_entry {
	struct vgd_loc loc;
	bool key_is_string;
	char *key; /* the literal as written (a string's text, or a number's text) */
	double key_num;
	struct vgd_const out;
};

struct vgd_aspect {
	enum vgd_aspect_kind kind;
	struct vgd_loc loc;
	enum vgd_drive drive;
	struct vgd_const c; /* VGD_D_CONST; size: c is the width (or radius) */
	double size_h;      /* size W x H: the height (< 0: same as the width) */
	char *attr;
	struct vgd_loc attr_loc;
	bool has_range;
	struct vgd_const lo, hi;
	struct vgd_entry *entries;
	size_t nentries;
	bool has_else;
	struct vgd_const otherwise;
	char *text;   /* label "TEXT" */
	int label_at; /* enum vgd_place, for labels */
	/* resolved by the checker */
	int col;                 /* the attribute's index in the relation, -1 if none */
	double vmin, vmax;       /* by value: the attribute's range over the relation */
	struct vgd_order *order; /* by order / palette: the sorted distinct values */
};

enum vgd_place {
	VGD_CENTER,
	VGD_TOP,
	VGD_BOTTOM,
	VGD_LEFT,
	VGD_RIGHT,
	VGD_TOP_LEFT,
	VGD_TOP_RIGHT,
	VGD_BOTTOM_LEFT,
	VGD_BOTTOM_RIGHT,
};

/* What a `show` statement makes of each tuple. */
enum vgd_form {
	VGD_F_ICON,    /* show R as circle + text: one icon per tuple */
	VGD_F_INSIDE,  /* show R as A inside B: A's icon drawn inside B's */
	VGD_F_LINK,    /* show R as pointer|line|curve from A to B */
	VGD_F_FLASH,   /* show R as flashing A: A's icon flashes while the tuple holds */
	VGD_F_ASPECTS, /* show R as A: aspects of A's icon while the tuple holds */
};

struct vgd_show {
	struct vgd_loc loc;
	char *rel;
	struct vgd_loc rel_loc;
	enum vgd_form form;
	enum vgd_shape shapes[VGD_MAX_SHAPES];
	unsigned sides[VGD_MAX_SHAPES]; /* polygon N */
	size_t nshapes;
	enum vgd_shape link; /* VGD_F_LINK: pointer, line or curve */
	char *a, *b;         /* entity attributes: A (inside/from/flashing/of), B (in/to) */
	struct vgd_loc a_loc, b_loc;
	struct vgd_aspect *aspects;
	size_t naspects;
	/* resolved by the checker */
	const struct vgq_relation *r;
	int a_col, b_col;
	const char *a_kind, *b_kind; /* entity kinds of A and B (NULL: any) */
	bool entity;                 /* VGD_F_ICON over an entity relation */
	bool sorted;                 /* r's tuples are in order of start */
	uint32_t palette;            /* the default colour */
};

enum vgd_time { VGD_T_ANIMATION, VGD_T_TRACE, VGD_T_AXIS };

struct vgd_derive {
	struct vgd_loc loc;
	char *file; /* derive "FILE" */
	struct vgd_loc file_loc;
	size_t off, len; /* derive { TQUEL }: the text between the braces */
};

struct vgd_error {
	struct vgd_loc loc;
	char *message;
};

struct vgd_file {
	char *source;
	const char *text;
	size_t len;
	double width, height;
	enum vgd_time time;
	int64_t window, hold; /* ns; 0: a fraction of the trace's span */
	struct vgd_loc time_loc;
	bool clock;
	int clock_at; /* enum vgd_place */
	struct vgd_show *shows;
	size_t nshows;
	struct vgd_derive *derives;
	size_t nderives;
	struct vgd_error *errors;
	size_t nerrors;
};

/* Parses `len` bytes of text (kept by pointer, not copied: it must outlive the file).
 * Never NULL; syntax errors are in f->errors. */
struct vgd_file *vgd_parse(const char *source, const char *text, size_t len);
void vgd_file_free(struct vgd_file *f);
/* Adds an error at loc (ignored beyond VGD_MAX_ERRORS). */
void vgd_error(struct vgd_file *f, struct vgd_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Each error, in order of position: "SOURCE:LINE:COL: error: MESSAGE", line, caret. */
void vgd_print_errors(const struct vgd_file *f, FILE *out);

const char *vgd_shape_name(enum vgd_shape s);
const char *vgd_aspect_name(enum vgd_aspect_kind k);
const char *vgd_place_name(int place);

#endif
