/* The C generator's private parts, shared by gen_c.c (files, names, checks),
 * gen_c_record.c (record structs, encoders, decoders) and gen_c_sensor.c (inline sensor
 * functions, schemas, registration). */
#ifndef VIGIL_LANG_GEN_C_INTERNAL_H
#define VIGIL_LANG_GEN_C_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "lang/model.h"

struct cgen {
	const struct vgl_model *m;
	FILE *h, *c;   /* <package>_sensors.h and <package>_sensors.c */
	char pkg[136]; /* the package as a C identifier: "mailbox" */
	char PKG[136]; /* upper case: "MAILBOX" */
	char *err;
	size_t errsize;
};

/* A name as a C identifier: dots (and anything else not alphanumeric) become
 * underscores, a C keyword gets a trailing underscore. The result lives in one of a few
 * rotating buffers: use it before the eighth next call. */
const char *cg_id(const char *name);
/* cg_id without the keyword rule: the name of a member of the subject's own structs. */
const char *cg_member(const char *name);

/* The C type of a field's value in a record struct and of a scalar parameter. */
const char *cg_ctype(enum vgl_type t);
/* Encoded size of a fixed-size type (strings and bytes: their fixed part). */
unsigned cg_fixed_size(enum vgl_type t);
/* Writes a C expression of type `t` for the literal (defaults, consts). */
void cg_literal(FILE *f, enum vgl_type t, const struct vgl_literal *v);
/* Writes a C string literal of n bytes. */
void cg_cstring(FILE *f, const char *s, size_t n);

/* Largest encoded size of a record's fields (without the length), or CG_UNBOUNDED if a
 * string or bytes field has no max (max 0). */
#define CG_UNBOUNDED (~0ULL)
unsigned long long cg_worst_size(const struct vgl_record *r);

/* Records: struct declarations into the header; init, encode, decode into the source. */
void cg_records(struct cgen *g);
/* Sensors: inline functions into the header; schemas and registration into the source. */
void cg_sensors(struct cgen *g);
/* The model's files as ELF notes in the source (gen_c_embed.c); -1 with g->err set. */
#define CG_NOTE_MAIN 1   /* the ELF note types: the main file, */
#define CG_NOTE_IMPORT 2 /* a file it imports */
int cg_embed(struct cgen *g);

#endif
