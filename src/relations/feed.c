/* One event into the relations: a tuple of an event relation, the opening or closing
 * of an interval tuple (an end closes the oldest open tuple of its image with equal
 * attribute values; if none, optionally makes a tuple [end, end]), the next tuple of a
 * state chain, or the start, renaming or end of an entity's lifetime. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relations/build.h"

static uint32_t image_index(struct builder *b, const struct vgt_image *img)
{
	if (img != b->last_image) {
		for (size_t i = 0; i < vgt_image_count(b->trace); i++)
			if (vgt_image_at(b->trace, i) == img) {
				b->last_image = img;
				b->last_image_index = (uint32_t)i;
				break;
			}
		b->last_process_index = b->last_image_index;
		for (size_t i = 0; i < vgt_image_count(b->trace); i++)
			if (vgt_image_same_process(vgt_image_at(b->trace, i), img)) {
				b->last_process_index = (uint32_t)i;
				break;
			}
	}
	return b->last_image_index;
}

/* Threads outlive exec: the process's first image scopes their identities, as the
 * trace's names do, so a thread begun before an exec ends after it in one tuple. */
static uint32_t process_index(struct builder *b, const struct vgt_image *img)
{
	image_index(b, img);
	return b->last_process_index;
}

/* ---- values ---- */

static void put(struct builder *b, struct vgq_relation *r, int a, size_t t,
                const struct vgt_value *v, uint32_t image)
{
	union vgq_column *c = &r->cols[a];
	switch (r->attrs[a].type) {
	case VGQ_INT:
		c->i[t] = v->i;
		break;
	case VGQ_UINT:
		c->u[t] = v->u;
		break;
	case VGQ_DOUBLE:
		c->d[t] = v->d;
		break;
	case VGQ_STRING:
		c->s[t] = vgq_pool_intern(b->pool, v->str.ptr, v->str.len);
		break;
	case VGQ_BYTES:
		c->b[t] = (struct vgq_bytes){vgq_pool_bytes(b->pool, v->bytes.ptr, v->bytes.len),
		                             v->bytes.len};
		break;
	case VGQ_ENTITY: {
		const char *name =
		    vgt_names_lookup(b->names, r->attrs[a].ref_kind, v->ref.id, v->ref.gen);
		/* the runtime records an entity created without a name with the name "" */
		c->r[t] = (struct vgq_ref){
		    v->ref.id, v->ref.gen, image,
		    name && *name ? vgq_pool_intern(b->pool, name, strlen(name)) : NULL};
		break;
	}
	}
}

static bool equal(const struct vgq_relation *r, int a, size_t t, const struct vgt_value *v,
                  uint32_t image)
{
	const union vgq_column *c = &r->cols[a];
	switch (r->attrs[a].type) {
	case VGQ_INT:
		return c->i[t] == v->i;
	case VGQ_UINT:
		return c->u[t] == v->u;
	case VGQ_DOUBLE:
		return c->d[t] == v->d;
	case VGQ_STRING:
		return c->s[t] && strlen(c->s[t]) == v->str.len &&
		       !memcmp(c->s[t], v->str.ptr, v->str.len);
	case VGQ_BYTES:
		return c->b[t].len == v->bytes.len &&
		       (!v->bytes.len || !memcmp(c->b[t].ptr, v->bytes.ptr, v->bytes.len));
	case VGQ_ENTITY:
		return c->r[t].id == v->ref.id && c->r[t].gen == v->ref.gen &&
		       c->r[t].image == image;
	}
	return false;
}

static size_t add_tuple(struct builder *b, const struct tinfo *ti, const struct vgt_event *ev,
                        uint32_t image)
{
	struct vgq_relation *r = ti->slot->rel;
	size_t t = vgq_relation_append(r, ev->ts);
	for (unsigned f = 0; f < ti->type->nfields; f++)
		if (ti->col[f] >= 0)
			put(b, r, ti->col[f], t, &ev->values[f], image);
	return t;
}

/* An end matches an open tuple of its own image whose attributes equal its fields. */
static bool same_tuple(const struct tinfo *ti, size_t t, const struct vgt_event *ev, uint32_t image,
                       uint32_t tuple_image)
{
	if (image != tuple_image)
		return false;
	for (unsigned f = 0; f < ti->type->nfields; f++)
		if (ti->match[f] && !equal(ti->slot->rel, ti->col[f], t, &ev->values[f], image))
			return false;
	return true;
}

/* ---- the key an end matches an open tuple on: a hash of its image and of the values
 * of the begun attributes, equal whenever equal() holds for each ---- */

static uint64_t hash_bytes(const void *p, size_t len)
{
	const unsigned char *c = p;
	uint64_t h = 0xCBF29CE484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ c[i]) * 0x100000001B3ull;
	return h;
}

static uint64_t hash_double(double d)
{
	uint64_t u = 0;
	if (d != 0) /* -0.0 == 0.0 */
		memcpy(&u, &d, sizeof u);
	return u;
}

/* One attribute's share; a sum, so that the order of the fields does not matter. */
static uint64_t share(int a, uint64_t value_hash)
{
	return vgq_mix(value_hash + (uint64_t)a * 0x9E3779B97F4A7C15ull);
}

static uint64_t column_hash(const struct vgq_relation *r, int a, size_t t)
{
	const union vgq_column *c = &r->cols[a];
	switch (r->attrs[a].type) {
	case VGQ_INT:
		return share(a, (uint64_t)c->i[t]);
	case VGQ_UINT:
		return share(a, c->u[t]);
	case VGQ_DOUBLE:
		return share(a, hash_double(c->d[t]));
	case VGQ_STRING: /* NULL never equals: any hash will do */
		return share(a, c->s[t] ? hash_bytes(c->s[t], strlen(c->s[t])) : 0);
	case VGQ_BYTES:
		return share(a, hash_bytes(c->b[t].ptr, c->b[t].len));
	case VGQ_ENTITY:
		return share(a, c->r[t].id ^ vgq_mix(c->r[t].gen));
	}
	return 0;
}

static uint64_t value_hash(const struct vgq_relation *r, int a, const struct vgt_value *v)
{
	switch (r->attrs[a].type) {
	case VGQ_INT:
		return share(a, (uint64_t)v->i);
	case VGQ_UINT:
		return share(a, v->u);
	case VGQ_DOUBLE:
		return share(a, hash_double(v->d));
	case VGQ_STRING:
		return share(a, hash_bytes(v->str.ptr, v->str.len));
	case VGQ_BYTES:
		return share(a, hash_bytes(v->bytes.ptr, v->bytes.len));
	case VGQ_ENTITY:
		return share(a, v->ref.id ^ vgq_mix(v->ref.gen));
	}
	return 0;
}

static uint64_t tuple_hash(void *slot, size_t t, uint32_t image)
{
	const struct rslot *s = slot;
	uint64_t h = vgq_mix(image);
	for (size_t a = 0; a < s->nkeyed; a++)
		if (s->keyed[a])
			h += column_hash(s->rel, (int)a, t);
	return h;
}

/* The first tuple to open with attributes begun keys the open tuples on them. */
static void first_key(struct rslot *s)
{
	if (s->keyed || !s->nbegun)
		return;
	s->keyed = vgq_xcalloc(s->nbegun, sizeof *s->keyed);
	memcpy(s->keyed, s->begun, s->nbegun * sizeof *s->keyed);
	s->nkeyed = s->nbegun;
	vgq_open_rehash(&s->open, tuple_hash, s); /* any opened with no attribute begun */
}

static bool end_matches(const struct tinfo *ti, size_t a)
{
	for (unsigned f = 0; f < ti->type->nfields; f++)
		if (ti->match[f] && (size_t)ti->col[f] == a)
			return true;
	return false;
}

/* An end that does not match every key attribute (its type lacks some) narrows the key
 * to those it matches: the open tuples are hashed again (once per attribute at most). */
static void narrow_key(struct rslot *s, const struct tinfo *ti)
{
	bool narrowed = false;
	for (size_t a = 0; a < s->nkeyed; a++)
		if (s->keyed[a] && !end_matches(ti, a)) {
			s->keyed[a] = false;
			narrowed = true;
		}
	if (narrowed)
		vgq_open_rehash(&s->open, tuple_hash, s);
}

/* ---- intervals: an end closes the oldest open begin with equal attribute values (the
 * newest, for a leave of an invocation) ---- */

static void open_tuple(struct rslot *s, size_t t, uint32_t image)
{
	first_key(s);
	vgq_open_add(&s->open, t, image, tuple_hash(s, t, image));
}

static void begin(struct builder *b, const struct tinfo *ti, const struct vgt_event *ev,
                  uint32_t image)
{
	open_tuple(ti->slot, add_tuple(b, ti, ev, image), image);
}

void vgq_build_reopen(struct builder *b, const struct tinfo *ti, size_t t,
                      const struct vgt_image *img)
{
	open_tuple(ti->slot, t, image_index(b, img));
}

static void end(struct builder *b, const struct tinfo *ti, const struct vgt_event *ev,
                uint32_t image)
{
	struct rslot *s = ti->slot;
	/* Invocations are LIFO: a leave ends the innermost matching enter. */
	bool lifo = ti->type->op == VGT_OP_LEAVE;
	/* Only the open tuples of its key's hash can match: the bucket is walked. */
	narrow_key(s, ti);
	uint64_t h = vgq_mix(image);
	for (unsigned f = 0; f < ti->type->nfields; f++)
		if (ti->match[f] && (size_t)ti->col[f] < s->nkeyed && s->keyed[ti->col[f]])
			h += value_hash(s->rel, ti->col[f], &ev->values[f]);
	for (size_t k = vgq_open_first(&s->open, true, h, lifo); k != VGQ_OPEN_NONE;
	     k = vgq_open_next(&s->open, k, true, lifo)) {
		size_t t = s->open.nodes[k].tuple;
		if (!same_tuple(ti, t, ev, image, s->open.nodes[k].image))
			continue;
		s->rel->to[t] = ev->ts;
		s->rel->open[t] = false;
		for (unsigned f = 0; f < ti->type->nfields; f++)
			if (ti->col[f] >= 0 && !ti->match[f])
				put(b, s->rel, ti->col[f], t, &ev->values[f], image);
		vgq_open_remove(&s->open, k);
		return;
	}
	/* A sampled interval whose begin was not recorded: the end says when it began
	 * (vg_since, a raw clock value), or the keep filter remembers it. */
	int64_t since = INT64_MIN;
	if (ti->since >= 0 && ev->values[ti->since].u)
		since = ev->ts - (int64_t)(ev->clock_value - ev->values[ti->since].u);
	else if (ti->since >= 0 && b->end_since)
		since = b->end_since(b->end_since_arg, ev);
	if (since != INT64_MIN && since <= ev->ts) {
		size_t t = add_tuple(b, ti, ev, image);
		s->rel->from[t] = since;
		s->rel->to[t] = ev->ts;
		s->rel->open[t] = false;
		return;
	}
	s->rel->unmatched_ends++;
	/* A monitor that enabled only the end sensor: the tuple is known from its end. */
	if (b->ends_without_begin && s->rel->kind == VGQ_REL_INTERVAL) {
		size_t t = add_tuple(b, ti, ev, image);
		s->rel->open[t] = false;
		vgq_relation_set_begin_unknown(s->rel, t);
	}
}

/* ---- states: a change ends the entity's previous tuple and starts the next ---- */

static struct vgq_key state_key(const struct tinfo *ti, const struct vgt_event *ev, uint32_t image)
{
	struct vgq_key k = {(uintptr_t)ti->slot, image, ev->tid, ev->thread_gen};
	if (ti->key < 0)
		return k;
	const struct vgt_value *v = &ev->values[ti->key];
	k.gen = UINT64_MAX; /* apart from the thread keys */
	switch (v->type) {
	case VGT_REF:
		k.id = v->ref.id;
		k.gen = v->ref.gen;
		break;
	case VGT_INT:
	case VGT_UINT:
		k.id = v->u;
		break;
	case VGT_DOUBLE:
		memcpy(&k.id, &v->d, sizeof k.id);
		break;
	case VGT_STRING: /* texts are hashed: equal texts are one entity */
	case VGT_BYTES: {
		uint64_t h = 1469598103934665603ull;
		const uint8_t *p =
		    v->type == VGT_STRING ? (const uint8_t *)v->str.ptr : v->bytes.ptr;
		size_t len = v->type == VGT_STRING ? v->str.len : v->bytes.len;
		for (size_t i = 0; i < len; i++)
			h = (h ^ p[i]) * 1099511628211ull;
		k.id = h;
		k.gen = UINT64_MAX - 1;
		break;
	}
	}
	return k;
}

static void state(struct builder *b, const struct tinfo *ti, const struct vgt_event *ev,
                  uint32_t image)
{
	struct vgq_key k = state_key(ti, ev, image);
	size_t *cur = vgq_keymap_slot(b->keys, &k);
	struct vgq_relation *r = ti->slot->rel;
	if (*cur != SIZE_MAX) {
		r->to[*cur] = ev->ts;
		r->open[*cur] = false;
	}
	*cur = add_tuple(b, ti, ev, image);
}

/* ---- entities: vg.entity.*, vg.process.*, vg.thread.* ---- */

static struct rslot *entity_slot(struct builder *b, const struct tinfo *ti,
                                 const struct vgt_event *ev)
{
	const char *kind = ti->fixed_kind;
	if (!kind) {
		const struct vgt_value *v = &ev->values[ti->f_kind];
		if (v->type != VGT_STRING || !v->str.len)
			return NULL;
		kind = v->str.ptr;
	}
	struct rslot *s = vgq_build_relation(b, kind, VGQ_REL_ENTITY);
	if (s->rel->kind == VGQ_REL_ENTITY)
		return s;
	if (!s->entity_refused) { /* every event of the kind comes here: say it once */
		s->entity_refused = true;
		vgq_build_warn(b,
		               "entities of kind '%s' are left out: '%s' is a relation of kind %s "
		               "(from event type %s)",
		               kind, s->rel->name, vgq_rkind_name(s->rel->kind),
		               s->first_type ? s->first_type : "?");
	}
	return NULL;
}

static void entity(struct builder *b, const struct tinfo *ti, const struct vgt_event *ev,
                   uint32_t image)
{
	struct rslot *s = entity_slot(b, ti, ev);
	const struct vgt_value *id = &ev->values[ti->f_id], *gen = &ev->values[ti->f_gen];
	if (!s || id->type != VGT_UINT || gen->type != VGT_UINT)
		return;
	/* Processes are identified machine-wide, threads per process (across its execs),
	 * user entities (addresses) per image. */
	bool process = ti->fixed_kind && !strcmp(ti->fixed_kind, "OSProcess");
	bool thread = ti->fixed_kind && !strcmp(ti->fixed_kind, "OSThread");
	struct vgq_key k = {(uintptr_t)s,
	                    process  ? UINT64_MAX
	                    : thread ? process_index(b, ev->image)
	                             : image,
	                    id->u, gen->u};
	size_t *cur = vgq_keymap_slot(b->keys, &k);
	struct vgq_relation *r = s->rel;
	const struct vgt_value *name = ti->f_name >= 0 ? &ev->values[ti->f_name] : NULL;
	if (name && name->type != VGT_STRING)
		name = NULL;
	switch (ti->what) {
	case T_ENT_CREATE:
		if (*cur != SIZE_MAX) { /* created again: the old lifetime ends here */
			r->to[*cur] = ev->ts;
			r->open[*cur] = false;
		}
		*cur = vgq_relation_append(r, ev->ts);
		r->cols[1].u[*cur] = id->u;
		r->cols[2].u[*cur] = gen->u;
		/* fallthrough */
	case T_ENT_NAME: {
		if (*cur == SIZE_MAX || !name || !name->str.len) /* "": created without a name */
			break;
		const char *now = vgq_pool_intern(b->pool, name->str.ptr, name->str.len);
		const char *before = r->cols[0].s[*cur];
		/* The name is valid over time: a rename ends the tuple and starts one with the
		 * new name (at the instant of its creation, the name is simply given). */
		if (ti->what == T_ENT_NAME && before && before != now && r->from[*cur] < ev->ts) {
			r->to[*cur] = ev->ts;
			r->open[*cur] = false;
			size_t t = vgq_relation_append(r, ev->ts);
			r->cols[1].u[t] = r->cols[1].u[*cur];
			r->cols[2].u[t] = r->cols[2].u[*cur];
			*cur = t;
		}
		r->cols[0].s[*cur] = now;
		break;
	}
	case T_ENT_RECLAIM:
		if (*cur == SIZE_MAX) {
			r->unmatched_ends++;
			break;
		}
		r->to[*cur] = ev->ts;
		r->open[*cur] = false;
		*cur = SIZE_MAX;
		break;
	default:
		break;
	}
}

/* ---- the pass ---- */

/* A class past the table: one a followed trace gained since the schema was made (its
 * reader has not called vgq_build_schema_grow yet), mapped now. */
static void map_new_class(struct builder *b, uint32_t class_id)
{
	if (b->trace)
		vgq_build_schema_grow(b, b->trace);
	if (class_id >= b->nby_class) { /* not a class of the builder's trace: a caller's bug */
		fprintf(stderr,
		        "vigil: internal error: event class %" PRIu32
		        " is not one of the trace's %zu\n",
		        class_id, b->nby_class);
		abort();
	}
}

void vgq_build_feed(struct builder *b, const struct vgt_event *ev)
{
	if (ev->type->class_id >= b->nby_class)
		map_new_class(b, ev->type->class_id);
	const struct tinfo *ti = b->by_class[ev->type->class_id];
	if (!ti)
		return;
	uint32_t image = image_index(b, ev->image);
	switch (ti->what) {
	case T_SKIP:
		break;
	case T_EVENT:
		if (ti->bounded && (ev->ts < ti->lo || ev->ts > ti->hi))
			break; /* its payload may have been passed over (build.c) */
		if (!ev->values && ti->type->nfields)
			break; /* passed over by the reader: cannot be (test query.build_bounds) */
		if (ti->nchecks && !vgq_build_keys_hold(ti, ev))
			break;
		add_tuple(b, ti, ev, image);
		break;
	case T_BEGIN:
		begin(b, ti, ev, image);
		break;
	case T_END:
		end(b, ti, ev, image);
		break;
	case T_STATE:
		state(b, ti, ev, image);
		break;
	case T_ENT_CREATE:
	case T_ENT_RECLAIM:
	case T_ENT_NAME:
		entity(b, ti, ev, image);
		break;
	}
}
