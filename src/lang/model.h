/* The checked model of a sensor description (.vgl) file: what the parser and checker
 * produce and every generator reads. Adding a language means writing one generator over
 * this model; the front end is not touched.
 *
 * Sketch of the language (docs/language.md has the grammar):
 *
 *   package mailbox;                       // optional; default: the file's base name
 *   import "common.vgl";                   // relative to the importing file
 *   const uint32 DEFAULT_PAYLOAD = 0;
 *   entity Process { string name; }        // entity types, with optional attributes
 *   struct Conn from "server.h" {          // a structure of the subject program (C)
 *       int32 fd; string peer max 64; Session session;   // Session: another struct
 *   }
 *   record Message max 256 {               // max: payload limit in bytes
 *       Process sender;                    // entity reference (id + generation)
 *       Mailbox mailbox;
 *       uint32 msg;
 *       uint32 payload = DEFAULT_PAYLOAD;  // default: literal or const
 *       string note max 32 = "";           // strings and bytes carry a max length
 *       Conn conn { fd, session };         // payload: only the selected members are
 *   }                                      //   copied; an unselected struct: its id
 *   record Urgent extends Message { uint8 priority = 1; }
 *   sensor SendMessage : event Message {   // event | interval | state
 *       traced;                            // or sampled
 *       initiator sender; target mailbox;  // roles: entity properties (performer too)
 *       flag initiator counter;            // sensor | performer | initiator | target
 *       activity;                          // category and op (default: plain activity)
 *   }
 *
 * An interval sensor yields two event types, NAME.begin and NAME.end, sharing the
 * relation NAME; a state sensor one event type whose tuples end at the next change.
 */
#ifndef VIGIL_LANG_MODEL_H
#define VIGIL_LANG_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vgl_loc {
	const char *file; /* as given on the command line or in the import */
	int line, col;    /* 1-based */
};

enum vgl_type {
	VGL_INT8,
	VGL_INT16,
	VGL_INT32,
	VGL_INT64,
	VGL_UINT8,
	VGL_UINT16,
	VGL_UINT32,
	VGL_UINT64,
	VGL_FLOAT64,
	VGL_BOOL,
	VGL_STRING,
	VGL_BYTES,
	VGL_ENTITY, /* reference to an entity type */
	VGL_STRUCT, /* a structure of the subject program (payload) */
};

struct vgl_literal {
	enum { VGL_LIT_INT, VGL_LIT_FLOAT, VGL_LIT_STRING, VGL_LIT_BOOL } kind;
	int64_t i; /* VGL_LIT_INT (negative allowed); u holds the same bits */
	uint64_t u;
	double d;
	const char *s; /* VGL_LIT_STRING, unescaped */
	size_t slen;
	bool b;
};

struct vgl_const {
	const char *name;
	enum vgl_type type; /* a primitive type */
	struct vgl_literal value;
	struct vgl_loc loc;
};

struct vgl_entity;
struct vgl_struct;

/* A member of a subject structure, or an attribute of an entity. */
struct vgl_member {
	const char *name;
	enum vgl_type type;
	const struct vgl_entity *entity; /* VGL_ENTITY */
	const struct vgl_struct *st;     /* VGL_STRUCT: recorded as an id unless selected */
	uint32_t max;                    /* VGL_STRING / VGL_BYTES: longest recorded */
	struct vgl_loc loc;
};

struct vgl_entity {
	const char *name;
	const struct vgl_member *attrs;
	size_t nattrs;
	struct vgl_loc loc;
};

struct vgl_struct {
	const char *name;   /* the C type: `struct NAME` */
	const char *header; /* from "header.h", or NULL */
	const struct vgl_member *members;
	size_t nmembers;
	struct vgl_loc loc;
};

/* A selection of struct members to copy (nested for struct members). */
struct vgl_selection {
	const struct vgl_member *member;
	const struct vgl_selection *sub; /* for a struct member: what of it; NULL: its id */
	size_t nsub;
	struct vgl_loc loc;
};

#define VGL_MAX_DEPTH 4 /* nesting of selections */

struct vgl_record;

struct vgl_property {
	const char *name;
	enum vgl_type type;
	const struct vgl_entity *entity; /* VGL_ENTITY */
	const struct vgl_struct *st;     /* VGL_STRUCT */
	const struct vgl_selection *sel; /* VGL_STRUCT: selected members (may be empty) */
	size_t nsel;
	uint32_t max; /* VGL_STRING / VGL_BYTES */
	bool has_default;
	struct vgl_literal def;            /* resolved value, also when given by a const */
	const struct vgl_const *def_const; /* the const named, or NULL */
	const struct vgl_record *owner;    /* the record that declares it */
	struct vgl_loc loc;
};

/* One field of the encoding: properties flattened, inherited ones first, struct
 * payloads expanded into their selected members (path "conn.fd"), an unselected struct
 * reference into a uint64 id. This is the order of the bytes on the wire and in CTF. */
struct vgl_field {
	const char
	    *name; /* "msg", "conn.fd": generators turn dots into what their language allows */
	enum vgl_type type; /* never VGL_STRUCT: a struct reference becomes VGL_UINT64 */
	const struct vgl_entity *entity;
	uint32_t max;
	const struct vgl_property *prop;      /* where it comes from */
	const struct vgl_member *const *path; /* members from the property's struct down */
	size_t npath;
	bool is_struct_id; /* an unselected struct reference: its address as an id */
};

struct vgl_record {
	const char *name;
	const struct vgl_record *parent;
	const struct vgl_property *props; /* its own */
	size_t nprops;
	const struct vgl_property *const *all; /* inherited first, then its own */
	size_t nall;
	const struct vgl_field *fields; /* the encoding */
	size_t nfields;
	uint32_t max_size;   /* declared payload limit, 0: none */
	uint32_t worst_size; /* largest encoded size (strings and bytes at their max) */
	struct vgl_loc loc;
};

enum vgl_relation { VGL_REL_EVENT, VGL_REL_INTERVAL, VGL_REL_STATE };
enum vgl_flag_place { VGL_FLAG_SENSOR, VGL_FLAG_PERFORMER, VGL_FLAG_INITIATOR, VGL_FLAG_TARGET };

/* What an event type does (docs/consistency.md). The values are those of enum vg_op in
 * include/vigil/vigil.h, so that generators may write them as they are; the model does not
 * include the runtime's header. */
enum vgl_op {
	VGL_OP_ACTIVITY = 0, /* activity: refers to live entities only (the default) */
	VGL_OP_CREATE,       /* entity: starts the target's lifetime */
	VGL_OP_LOAD,         /* entity: defines the target (a type) */
	VGL_OP_RECLAIM,      /* entity: ends the target's lifetime */
	VGL_OP_RENAME,       /* entity: names the target */
	VGL_OP_ENTER,        /* entity: an invocation starts on the calling thread */
	VGL_OP_LEAVE,        /* entity: the calling thread's innermost invocation ends */
	VGL_OP_ACQUIRE,      /* activity: the calling thread acquires the target lock */
	VGL_OP_RELEASE,      /* activity: ... releases it */
	VGL_OP_WAIT_BEGIN,   /* activity: ... starts waiting for it */
	VGL_OP_WAIT_END,     /* activity: ... stops waiting */
	VGL_OP_SUSPEND,      /* activity: the target thread is suspended */
	VGL_OP_RESUME,       /* activity: ... and resumed */
	VGL_OP_REFERENCE,    /* activity: the initiator refers to the target */
	VGL_OP_MOVE,         /* activity: the target moved */
};
#define VGL_OP_COUNT (VGL_OP_MOVE + 1)

struct vgl_sensor {
	const char *name;       /* as declared: "SendMessage" */
	const char *event_name; /* "mailbox.SendMessage" (package + name) */
	enum vgl_relation relation;
	const struct vgl_record *record;
	bool sampled;
	/* Index in record->fields of the entity field holding each role, or -1. */
	int performer, initiator, target;
	enum vgl_flag_place flag;
	bool counter; /* the flag is a counter (enable adds, disable removes) */
	/* traced once (disable traced, Snodgrass's D strategy): an event sensor placed on an
	 * entity whose flag the sensor lowers by one with each event it records, so each
	 * raise lets one event through. */
	bool once;
	/* The op of each event type: `op` of an event or state sensor, or of an interval's
	 * begin; `end_op` of an interval's end (equal to `op` otherwise). An op other than
	 * ACTIVITY, REFERENCE, MOVE, ENTER and LEAVE has a target (checked). */
	enum vgl_op op, end_op;
	struct vgl_loc loc;
};

struct vgl_model {
	const char *package;
	const char *const *files; /* the main file first, then imports */
	size_t nfiles;
	const struct vgl_const *consts;
	size_t nconsts;
	const struct vgl_entity *entities;
	size_t nentities;
	const struct vgl_struct *structs;
	size_t nstructs;
	const struct vgl_record *records;
	size_t nrecords;
	const struct vgl_sensor *sensors;
	size_t nsensors;
};

/* A sampled interval sensor placed on an entity, its begin and end plain activities: a
 * monitor may sample it, and its end event leads with the runtime's `vg_since`
 * (docs/watch.md "Sampling"). Inline: the query room uses it without the lang library. */
static inline bool vgl_op_plain(enum vgl_op op)
{
	return op == VGL_OP_ACTIVITY || op == VGL_OP_REFERENCE || op == VGL_OP_MOVE;
}
static inline bool vgl_sensor_sampled_interval(const struct vgl_sensor *s)
{
	return s->sampled && s->relation == VGL_REL_INTERVAL && s->flag != VGL_FLAG_SENSOR &&
	       vgl_op_plain(s->op) && vgl_op_plain(s->end_op);
}

#endif
