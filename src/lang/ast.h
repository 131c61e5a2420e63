/* The syntax tree of one .vgl file, as written: names are not resolved yet (check.c
 * does that). Private to src/lang. */
#ifndef VIGIL_LANG_AST_H
#define VIGIL_LANG_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lang/model.h"

struct vgl_symtab;

/* A default or a const's value: a literal, or the name of a const. */
struct ast_value {
	const char *name; /* a const's name, or NULL for a literal */
	struct vgl_literal lit;
	bool neg; /* an integer literal below zero */
	struct vgl_loc loc;
};

struct ast_sel {
	const char *name;
	struct vgl_loc loc;
	bool has_sub; /* braces followed the name */
	struct ast_sel *sub;
	size_t nsub;
};

/* A property of a record, a member of a struct, an attribute of an entity. */
struct ast_member {
	const char *type;
	struct vgl_loc type_loc;
	const char *name;
	struct vgl_loc loc;
	bool has_max;
	uint32_t max;
	struct vgl_loc max_loc;
	bool has_sel;
	struct ast_sel *sel;
	size_t nsel;
	struct vgl_loc sel_loc;
	bool has_def;
	struct ast_value def;
};

enum ast_clause_kind {
	CL_TRACED,
	CL_SAMPLED,
	CL_PERFORMER,
	CL_INITIATOR,
	CL_TARGET,
	CL_FLAG,
	CL_ENTITY,   /* entity OP; */
	CL_ACTIVITY, /* activity [OP]; */
};
#define CL_COUNT (CL_ACTIVITY + 1)

struct ast_clause {
	enum ast_clause_kind kind;
	struct vgl_loc loc;
	const char *arg; /* role: a field name ("conn.owner"); flag: its place; entity,
	                  * activity: the op as written (NULL: `activity;`) */
	struct vgl_loc arg_loc;
	bool counter;
	bool once; /* traced once: the sensor lowers its flag after each event it records */
};

enum ast_kind { AST_CONST, AST_ENTITY, AST_STRUCT, AST_RECORD, AST_SENSOR };

struct ast_decl {
	enum ast_kind kind;
	const char *name;
	struct vgl_loc loc;
	const char *package; /* of the file that declares it */
	/* const */
	const char *type;
	struct vgl_loc type_loc;
	struct ast_value value;
	/* entity, struct, record */
	struct ast_member *members;
	size_t nmembers;
	const char *header; /* struct ... from "header.h" */
	const char *parent; /* record ... extends NAME */
	struct vgl_loc parent_loc;
	bool has_max;
	uint32_t max;
	struct vgl_loc max_loc;
	/* sensor */
	const char *relation;
	struct vgl_loc relation_loc;
	const char *record;
	struct vgl_loc record_loc;
	struct ast_clause *clauses;
	size_t nclauses;
	/* Used by the checker. */
	bool broken;              /* a syntax error cut it short: uses of its name are not errors */
	struct vgl_symtab *index; /* a struct's members, a record's fields, by name */
	void *model;              /* the model object built from it, NULL if it was a duplicate */
	int mark;                 /* records: 0 new, 1 on the current extends walk, 2 done */
};

struct ast_import {
	const char *path; /* as written */
	struct vgl_loc loc;
};

struct ast_file {
	const char *path;
	const char *package; /* declared, or NULL */
	struct vgl_loc package_loc;
	struct ast_import *imports;
	size_t nimports;
	struct ast_decl *decls;
	size_t ndecls;
};

#endif
