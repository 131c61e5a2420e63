/* The checker's sensors: relation, record, roles, flag, and the category clause
 * (`entity OP;` or `activity [OP];`, docs/language.md) that gives each event type its op
 * (docs/consistency.md). */
#include <stdio.h>
#include <string.h>

#include "lang/arena.h"
#include "lang/check.h"
#include "lang/names.h"

static const char *const clause_words[CL_COUNT] = {"traced", "sampled", "performer", "initiator",
                                                   "target", "flag",    "entity",    "activity"};

/* The ops a category clause may name. */
struct op_word {
	const char *word;
	enum ast_clause_kind category; /* CL_ENTITY or CL_ACTIVITY */
	enum vgl_relation relation;    /* the only relation it applies to */
	enum vgl_op begin, end;        /* an event's op is `begin` */
	const char *target;            /* what the target is, or NULL: no target needed */
};

static const struct op_word op_words[] = {
    {"create", CL_ENTITY, VGL_REL_EVENT, VGL_OP_CREATE, VGL_OP_CREATE, "the entity it creates"},
    {"load", CL_ENTITY, VGL_REL_EVENT, VGL_OP_LOAD, VGL_OP_LOAD, "the type it loads"},
    {"reclaim", CL_ENTITY, VGL_REL_EVENT, VGL_OP_RECLAIM, VGL_OP_RECLAIM, "the entity it reclaims"},
    {"rename", CL_ENTITY, VGL_REL_EVENT, VGL_OP_RENAME, VGL_OP_RENAME, "the entity it names"},
    {"invocation", CL_ENTITY, VGL_REL_INTERVAL, VGL_OP_ENTER, VGL_OP_LEAVE, NULL},
    {"acquire", CL_ACTIVITY, VGL_REL_EVENT, VGL_OP_ACQUIRE, VGL_OP_ACQUIRE, "the lock acquired"},
    {"release", CL_ACTIVITY, VGL_REL_EVENT, VGL_OP_RELEASE, VGL_OP_RELEASE, "the lock released"},
    {"wait_begin", CL_ACTIVITY, VGL_REL_EVENT, VGL_OP_WAIT_BEGIN, VGL_OP_WAIT_BEGIN,
     "the lock waited for"},
    {"wait_end", CL_ACTIVITY, VGL_REL_EVENT, VGL_OP_WAIT_END, VGL_OP_WAIT_END,
     "the lock waited for"},
    {"suspend", CL_ACTIVITY, VGL_REL_EVENT, VGL_OP_SUSPEND, VGL_OP_SUSPEND, "the thread suspended"},
    {"resume", CL_ACTIVITY, VGL_REL_EVENT, VGL_OP_RESUME, VGL_OP_RESUME, "the thread resumed"},
    {"reference", CL_ACTIVITY, VGL_REL_EVENT, VGL_OP_REFERENCE, VGL_OP_REFERENCE, NULL},
    {"move", CL_ACTIVITY, VGL_REL_EVENT, VGL_OP_MOVE, VGL_OP_MOVE, NULL},
    {"hold", CL_ACTIVITY, VGL_REL_INTERVAL, VGL_OP_ACQUIRE, VGL_OP_RELEASE, "the lock held"},
    {"wait", CL_ACTIVITY, VGL_REL_INTERVAL, VGL_OP_WAIT_BEGIN, VGL_OP_WAIT_END,
     "the lock waited for"},
};
#define NOPS (sizeof op_words / sizeof *op_words)

static const char *const relation_words[] = {"event", "interval", "state"};

/* Edit distance (insertions, deletions, substitutions, adjacent swaps) of two short
 * words, capped: anything at or above `cap` is `cap`. */
static size_t distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 32 || lb > 32)
		return cap;
	size_t d[33][33];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb] < cap ? d[la][lb] : cap;
}

/* The op word closest to `w` (at most 2 edits, fewer than its length), or NULL. */
static const struct op_word *suggest(const char *w)
{
	const struct op_word *best = NULL;
	size_t bestd = 3;
	for (size_t i = 0; i < NOPS; i++) {
		size_t d = distance(w, op_words[i].word, 3);
		if (d < bestd && d < strlen(op_words[i].word)) {
			best = &op_words[i];
			bestd = d;
		}
	}
	return best;
}

/* "create, load, reclaim, rename or invocation": the ops of a category. */
static void op_list(enum ast_clause_kind category, char *out, size_t size)
{
	size_t n = 0, k = 0, len = 0;
	for (size_t i = 0; i < NOPS; i++)
		n += op_words[i].category == category;
	out[0] = 0;
	for (size_t i = 0; i < NOPS && len < size; i++) {
		if (op_words[i].category != category)
			continue;
		k++;
		len += (size_t)snprintf(out + len, size - len, "%s%s",
		                        k == 1   ? ""
		                        : k == n ? " or "
		                                 : ", ",
		                        op_words[i].word);
	}
}

/* The category clause `cl` into s->op and s->end_op. `relation_ok`: s->relation is
 * known; `has_target`: the sensor names a target. */
static void check_op(struct checker *c, const struct ast_decl *d, const struct ast_clause *cl,
                     struct vgl_sensor *s, bool relation_ok, bool has_target)
{
	const char *cat = clause_words[cl->kind];
	if (!cl->arg)
		return; /* `activity;`: the default, on any relation */
	const struct op_word *op = NULL;
	for (size_t i = 0; i < NOPS && !op; i++)
		if (!strcmp(cl->arg, op_words[i].word))
			op = &op_words[i];
	if (!op) {
		const struct op_word *near = suggest(cl->arg);
		char list[160];
		op_list(cl->kind, list, sizeof list);
		if (near)
			vgl_error(c->diag, cl->arg_loc,
			          "unknown %s op '%s' (did you mean '%s %s'?)", cat, cl->arg,
			          clause_words[near->category], near->word);
		else
			vgl_error(c->diag, cl->arg_loc, "unknown %s op '%s' (expected %s)", cat,
			          cl->arg, list);
		return;
	}
	if (op->category != cl->kind) {
		vgl_error(c->diag, cl->arg_loc, "'%s' is an %s op: write '%s %s;'", op->word,
		          clause_words[op->category], clause_words[op->category], op->word);
		return;
	}
	if (relation_ok && s->relation != op->relation) {
		vgl_error(c->diag, cl->arg_loc,
		          "'%s %s' applies to %s sensors, not to %s sensor '%s'", cat, op->word,
		          relation_words[op->relation], relation_words[s->relation], d->name);
		return;
	}
	if (op->target && !has_target)
		vgl_error(c->diag, cl->loc, "'%s %s' needs a target (%s): sensor '%s' has none",
		          cat, op->word, op->target, d->name);
	s->op = op->begin;
	s->end_op = op->end;
}

/* A role names an entity field of the record: its index in record->fields. */
static int find_role(struct checker *c, const struct vgl_record *r, const struct ast_clause *cl)
{
	struct ast_decl *d = vgl_sym_get(&c->types, r->name);
	if (!d->index) { /* built once: sensors of one record may be many */
		d->index = vgb_arena_alloc(c->arena, sizeof *d->index);
		d->index->arena = c->arena;
		for (size_t i = 0; i < r->nfields; i++)
			vgl_sym_put(d->index, r->fields[i].name, (void *)&r->fields[i]);
	}
	const struct vgl_field *f = vgl_sym_get(d->index, cl->arg);
	if (f && f->type == VGL_ENTITY)
		return (int)(f - r->fields);
	if (f) {
		vgl_error(c->diag, cl->arg_loc, "%s '%s' is %s, not an entity reference",
		          clause_words[cl->kind], cl->arg, vgl_a_type(f->type));
		return -1;
	}
	if (strchr(cl->arg, '.'))
		vgl_error(c->diag, cl->arg_loc,
		          "record '%s' has no field '%s' (a struct member must be selected)",
		          r->name, cl->arg);
	else
		vgl_error(c->diag, cl->arg_loc, "record '%s' has no property '%s'", r->name,
		          cl->arg);
	return -1;
}

static void check_flag(struct checker *c, const struct ast_decl *d, struct vgl_sensor *s,
                       const struct ast_clause *const *seen)
{
	const struct ast_clause *flag = seen[CL_FLAG];
	if (!flag)
		return;
	s->counter = flag->counter;
	static const char *const places[] = {"sensor", "performer", "initiator", "target"};
	size_t k = 0;
	while (k < 4 && strcmp(flag->arg, places[k]))
		k++;
	if (k == 4) {
		vgl_error(
		    c->diag, flag->arg_loc,
		    "unknown flag place '%s' (expected sensor, performer, initiator or target)",
		    flag->arg);
		return;
	}
	s->flag = (enum vgl_flag_place)k;
	if (k > 0 && !seen[CL_PERFORMER + k - 1])
		vgl_error(c->diag, flag->arg_loc, "flag on the %s, but sensor '%s' has no %s",
		          places[k], d->name, places[k]);
}

void vgl_check_sensor(struct checker *c, const struct ast_decl *d, struct vgl_sensor *s)
{
	s->name = d->name;
	s->loc = d->loc;
	s->performer = s->initiator = s->target = -1;
	s->op = s->end_op = VGL_OP_ACTIVITY;
	size_t plen = strlen(d->package), nlen = strlen(d->name);
	char *ev = vgb_arena_alloc(c->arena, plen + nlen + 2);
	memcpy(ev, d->package, plen);
	ev[plen] = '.';
	memcpy(ev + plen + 1, d->name, nlen);
	s->event_name = ev;

	bool relation_ok = true;
	if (!strcmp(d->relation, "event"))
		s->relation = VGL_REL_EVENT;
	else if (!strcmp(d->relation, "interval"))
		s->relation = VGL_REL_INTERVAL;
	else if (!strcmp(d->relation, "state"))
		s->relation = VGL_REL_STATE;
	else {
		relation_ok = false;
		vgl_error(c->diag, d->relation_loc,
		          "unknown relation '%s' (expected event, interval or state)", d->relation);
	}

	const struct ast_decl *rd = vgl_sym_get(&c->types, d->record);
	if (rd && rd->broken)
		;
	else if (!rd)
		vgl_error(c->diag, d->record_loc, "unknown record '%s'", d->record);
	else if (rd->kind != AST_RECORD)
		vgl_error(c->diag, d->record_loc, "'%s' is %s, not a record", d->record,
		          vgl_kind_word(rd->kind));
	else
		s->record = rd->model;

	const struct ast_clause *seen[CL_COUNT] = {0};
	for (size_t i = 0; i < d->nclauses; i++) {
		const struct ast_clause *cl = &d->clauses[i];
		if (seen[cl->kind]) {
			vgl_error(c->diag, cl->loc, "duplicate '%s' in sensor '%s'",
			          clause_words[cl->kind], d->name);
			continue;
		}
		seen[cl->kind] = cl;
		int *role = cl->kind == CL_PERFORMER   ? &s->performer
		            : cl->kind == CL_INITIATOR ? &s->initiator
		            : cl->kind == CL_TARGET    ? &s->target
		                                       : NULL;
		if (role && s->record)
			*role = find_role(c, s->record, cl);
	}
	if (seen[CL_TRACED] && seen[CL_SAMPLED]) {
		const struct ast_clause *second =
		    seen[CL_TRACED] > seen[CL_SAMPLED] ? seen[CL_TRACED] : seen[CL_SAMPLED];
		vgl_error(c->diag, second->loc, "a sensor is either traced or sampled, not both");
	}
	s->sampled = seen[CL_SAMPLED] && !seen[CL_TRACED];
	if (seen[CL_ENTITY] && seen[CL_ACTIVITY]) {
		const struct ast_clause *second =
		    seen[CL_ENTITY] > seen[CL_ACTIVITY] ? seen[CL_ENTITY] : seen[CL_ACTIVITY];
		vgl_error(c->diag, second->loc,
		          "a sensor's events are either entity or activity events, not both");
	} else if (seen[CL_ENTITY] || seen[CL_ACTIVITY]) {
		check_op(c, d, seen[CL_ENTITY] ? seen[CL_ENTITY] : seen[CL_ACTIVITY], s,
		         relation_ok, seen[CL_TARGET] != NULL);
	}
	check_flag(c, d, s, seen);
	const struct ast_clause *once =
	    seen[CL_TRACED] && seen[CL_TRACED]->once ? seen[CL_TRACED] : NULL;
	if (once && s->relation != VGL_REL_EVENT)
		vgl_error(c->diag, once->loc,
		          "'traced once' applies to event sensors only ('%s' is %s)", d->name,
		          s->relation == VGL_REL_INTERVAL ? "an interval" : "a state");
	else if (once && s->flag == VGL_FLAG_SENSOR)
		vgl_error(c->diag, once->loc,
		          "'traced once' needs its flag on an entity (flag performer, initiator or "
		          "target): each raise of that flag lets one event through");
	else if (once && !vgl_op_plain(s->op))
		vgl_error(c->diag, once->loc,
		          "'traced once' applies to plain activities, not to %s events",
		          vgl_op_name(s->op));
	s->once = once != NULL;
}
