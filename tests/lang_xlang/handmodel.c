/* Runs the Python and Java generators on a model built by hand (no front end): names
 * that need mangling, a struct payload flattened into dotted fields, an unselected struct
 * id, a child declared before its parent, defaults of every kind. Usage: handmodel DIR;
 * lang_handmodel.py checks what it writes. */
#include <stdio.h>
#include <string.h>

#include "lang/lang.h"

static const struct vgl_loc L = {"hand.vgl", 1, 1};
static const struct vgl_entity process = {"Process", NULL, 0, {"hand.vgl", 2, 1}};
static const struct vgl_member conn_members[] = {
    {"fd", VGL_INT32, NULL, NULL, 0, {"hand.vgl", 3, 1}},
    {"peer", VGL_STRING, NULL, NULL, 8, {"hand.vgl", 3, 10}},
};
static const struct vgl_struct conn = {"Conn", "server.h", conn_members, 2, {"hand.vgl", 3, 1}};
static const struct vgl_const ANSWER = {
    "ANSWER", VGL_UINT64, {.kind = VGL_LIT_INT, .i = -1, .u = UINT64_MAX}, {"hand.vgl", 4, 1}};

static struct vgl_record records[2]; /* [0] Child (declared first), [1] Base */

#define LIT_INT(v)                                                                                 \
	{                                                                                          \
		.kind = VGL_LIT_INT, .i = (v), .u = (uint64_t)(v)                                  \
	}
static struct vgl_property base_props[] = {
    {.name = "a", .type = VGL_INT8, .has_default = true, .def = LIT_INT(-128)},
    {.name = "big",
     .type = VGL_UINT64,
     .has_default = true,
     .def = {.kind = VGL_LIT_INT, .i = -1, .u = UINT64_MAX},
     .def_const = &ANSWER},
    {.name = "f",
     .type = VGL_FLOAT64,
     .has_default = true,
     .def = {.kind = VGL_LIT_FLOAT, .d = -0.0}},
    {.name = "s",
     .type = VGL_STRING,
     .max = 4,
     .has_default = true,
     .def = {.kind = VGL_LIT_STRING, .s = "h\xc3\xa9\n\"\\\xf0\x9f\x98\x80", .slen = 11}},
    {.name = "b",
     .type = VGL_BYTES,
     .max = 3,
     .has_default = true,
     .def = {.kind = VGL_LIT_STRING, .s = "\x00\xff\"", .slen = 3}},
    {.name = "p", .type = VGL_ENTITY, .entity = &process},
    {.name = "flag",
     .type = VGL_BOOL,
     .has_default = true,
     .def = {.kind = VGL_LIT_BOOL, .b = true}},
    {.name = "inf",
     .type = VGL_FLOAT64,
     .has_default = true,
     .def = {.kind = VGL_LIT_FLOAT, .d = -__builtin_inf()}},
};
static const struct vgl_selection conn_sel[] = {{&conn_members[0], NULL, 0, {0}},
                                                {&conn_members[1], NULL, 0, {0}}};
static struct vgl_property child_props[] = {
    {.name = "conn", .type = VGL_STRUCT, .st = &conn, .sel = conn_sel, .nsel = 2},
    {.name = "conn_x", .type = VGL_INT16},
    {.name = "other", .type = VGL_STRUCT, .st = &conn},
    {.name = "class", .type = VGL_UINT32, .has_default = true, .def = LIT_INT(7)},
    {.name = "encode", .type = VGL_UINT16, .has_default = true, .def = LIT_INT(65535)},
    {.name = "int", .type = VGL_UINT8, .has_default = true, .def = LIT_INT(255)},
};
#define NB (sizeof base_props / sizeof base_props[0])
#define NC (sizeof child_props / sizeof child_props[0])

static const struct vgl_member *const path_fd[] = {&conn_members[0]};
static const struct vgl_member *const path_peer[] = {&conn_members[1]};
static struct vgl_field child_fields[NB + NC + 1];
static struct vgl_field base_fields[NB];
static const struct vgl_property *child_all[NB + NC];
static const struct vgl_property *base_all[NB];

static void build(void)
{
	struct vgl_record *child = &records[0], *base = &records[1];
	for (size_t i = 0; i < NB; i++) {
		struct vgl_property *p = &base_props[i];
		p->owner = base;
		p->loc = L;
		base_all[i] = child_all[i] = p;
		base_fields[i] = (struct vgl_field){.name = p->name,
		                                    .type = p->type,
		                                    .entity = p->entity,
		                                    .max = p->max,
		                                    .prop = p};
		child_fields[i] = base_fields[i];
	}
	size_t k = NB;
	for (size_t i = 0; i < NC; i++) {
		struct vgl_property *p = &child_props[i];
		p->owner = child;
		p->loc = L;
		child_all[NB + i] = p;
		if (strcmp(p->name, "conn") == 0) {
			child_fields[k++] = (struct vgl_field){.name = "conn.fd",
			                                       .type = VGL_INT32,
			                                       .prop = p,
			                                       .path = path_fd,
			                                       .npath = 1};
			child_fields[k++] = (struct vgl_field){.name = "conn.peer",
			                                       .type = VGL_STRING,
			                                       .max = 8,
			                                       .prop = p,
			                                       .path = path_peer,
			                                       .npath = 1};
		} else if (strcmp(p->name, "other") == 0) {
			child_fields[k++] = (struct vgl_field){
			    .name = "other", .type = VGL_UINT64, .prop = p, .is_struct_id = true};
		} else {
			child_fields[k++] = (struct vgl_field){
			    .name = p->name, .type = p->type, .max = p->max, .prop = p};
		}
	}
	*base = (struct vgl_record){.name = "Base",
	                            .props = base_props,
	                            .nprops = NB,
	                            .all = base_all,
	                            .nall = NB,
	                            .fields = base_fields,
	                            .nfields = NB,
	                            .loc = {"hand.vgl", 5, 1}};
	*child = (struct vgl_record){.name = "Child",
	                             .parent = base,
	                             .props = child_props,
	                             .nprops = NC,
	                             .all = child_all,
	                             .nall = NB + NC,
	                             .fields = child_fields,
	                             .nfields = k,
	                             .loc = {"hand.vgl", 9, 1}};
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: handmodel DIR\n");
		return 2;
	}
	build();
	static const char *const files[] = {"hand.vgl"};
	struct vgl_model m = {.package = "hand",
	                      .files = files,
	                      .nfiles = 1,
	                      .consts = &ANSWER,
	                      .nconsts = 1,
	                      .entities = &process,
	                      .nentities = 1,
	                      .structs = &conn,
	                      .nstructs = 1,
	                      .records = records,
	                      .nrecords = 2};
	char err[256];
	if (vgl_gen_python(&m, argv[1], err, sizeof err) != 0 ||
	    vgl_gen_java(&m, argv[1], err, sizeof err) != 0) {
		fprintf(stderr, "handmodel: %s\n", err);
		return 1;
	}
	/* A clash after mangling must be refused: "conn.fd" and "conn_fd" are both conn_fd. */
	struct vgl_field clash[2] = {child_fields[NB], child_fields[NB]};
	clash[1].name = "conn_fd";
	struct vgl_record bad = records[1];
	bad.fields = clash;
	bad.nfields = 2;
	bad.parent = NULL;
	struct vgl_model mb = m;
	mb.records = &bad;
	mb.nrecords = 1;
	char clashdir[4096];
	snprintf(clashdir, sizeof clashdir, "%s/clash", argv[1]);
	int rp = vgl_gen_python(&mb, clashdir, err, sizeof err);
	printf("python clash: %d %s\n", rp, err);
	int rj = vgl_gen_java(&mb, clashdir, err, sizeof err);
	printf("java clash: %d %s\n", rj, err);
	return rp == -1 && rj == -1 ? 0 : 1;
}
