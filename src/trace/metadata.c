/* Metadata: parses the TSDL text of an image and checks it into the model the stream
 * reader uses (packet header, stream classes, event classes, clocks, env).
 *
 * A syntax error or an unusable trace/stream/clock declaration makes the whole image
 * unreadable; an unusable event declaration only makes its events undecodable. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsdl.h"

#define MAX_TOTAL_FIELDS 1000000

/* The (stream class, event id) pairs declared so far: an open-addressing set, so that a
 * duplicate id is found in constant time whatever order the declarations come in. */
struct id_set {
	struct id_slot {
		const struct stream_class *sc; /* NULL: empty */
		uint64_t id;
	} * slots;
	size_t n, cap; /* cap: a power of two, at most half full */
};

struct checker {
	struct metadata *md;
	const char *path;
	struct damage_list *diag;
	char err[256];
	unsigned line, col;
	struct id_set ids;
};

static size_t id_hash(const struct stream_class *sc, uint64_t id)
{
	uint64_t h = (id ^ (uint64_t)(uintptr_t)sc) * 0x9e3779b97f4a7c15u;
	return (size_t)(h ^ (h >> 29));
}

/* Adds (sc, id); false if it was there already. */
static bool id_add(struct id_set *s, const struct stream_class *sc, uint64_t id)
{
	if (2 * (s->n + 1) > s->cap) {
		struct id_set g = {.cap = s->cap ? 2 * s->cap : 64};
		g.slots = vgt__xcalloc(g.cap, sizeof *g.slots);
		for (size_t i = 0; i < s->cap; i++)
			if (s->slots[i].sc)
				id_add(&g, s->slots[i].sc, s->slots[i].id);
		free(s->slots);
		*s = g;
	}
	for (size_t i = id_hash(sc, id) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (!s->slots[i].sc) {
			s->slots[i] = (struct id_slot){sc, id};
			s->n++;
			return true;
		}
		if (s->slots[i].sc == sc && s->slots[i].id == id)
			return false;
	}
}

static int by_event_id(const void *a, const void *b)
{
	uint64_t x = (*(struct event_class *const *)a)->pub.id;
	uint64_t y = (*(struct event_class *const *)b)->pub.id;
	return x < y ? -1 : x > y;
}

/* Records a fatal problem at (line, col); the caller returns -1. */
__attribute__((format(printf, 4, 5))) static int fatal(struct checker *k, unsigned line,
                                                       unsigned col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(k->err, sizeof k->err, fmt, ap);
	va_end(ap);
	k->line = line;
	k->col = col;
	return -1;
}

static int parse_uuid(const char *s, uint8_t out[16])
{
	size_t n = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '-')
			continue;
		int hi = *p, lo = p[1];
		if (!lo || n >= 16)
			return -1;
		char pair[3] = {(char)hi, (char)lo, 0}, *end;
		unsigned long v = strtoul(pair, &end, 16);
		if (*end)
			return -1;
		out[n++] = (uint8_t)v;
		p++;
	}
	return n == 16 ? 0 : -1;
}

static bool attr_int(const struct tattr *at, int64_t *out)
{
	if (!at || at->kind != TV_INT)
		return false;
	if (at->negative) {
		if (at->u > (uint64_t)INT64_MAX + 1)
			return false;
		*out = at->u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)at->u;
	} else {
		if (at->u > INT64_MAX)
			return false;
		*out = (int64_t)at->u;
	}
	return true;
}

/* Text of a name-like attribute: `name = "x";` or `name = x;`. */
static const char *attr_text(const struct tattr *at)
{
	return at && (at->kind == TV_STRING || at->kind == TV_IDENT) ? at->s : NULL;
}

static int compile_layout(struct checker *k, const struct tattr *at, struct layout *out)
{
	if (at->kind != TV_TYPE)
		return fatal(k, at->line, at->col, "'%s' must be a type (:=)", at->key);
	unsigned line = at->line, col = at->col;
	if (vgt_layout_compile(&k->md->arena, at->type, k->md->big_endian, out, k->err,
	                       sizeof k->err, &line, &col) < 0) {
		k->line = line;
		k->col = col;
		return -1;
	}
	if (out->nfields > k->md->max_fields)
		k->md->max_fields = out->nfields;
	k->md->total_fields += out->nfields;
	if (k->md->total_fields > MAX_TOTAL_FIELDS)
		return fatal(k, at->line, at->col, "metadata with too many fields");
	return 0;
}

static int check_trace(struct checker *k, const struct tblock *b)
{
	struct metadata *md = k->md;
	int64_t v;
	const struct tattr *at = vgt_tblock_attr(b, "major");
	if (at && (!attr_int(at, &v) || v != 1))
		return fatal(k, at->line, at->col, "CTF major version must be 1");
	at = vgt_tblock_attr(b, "byte_order");
	const char *bo = attr_text(at);
	if (!bo)
		return fatal(k, b->line, b->col, "trace block without byte_order");
	if (!strcmp(bo, "be") || !strcmp(bo, "big") || !strcmp(bo, "network"))
		md->big_endian = true;
	else if (strcmp(bo, "le") && strcmp(bo, "little"))
		return fatal(k, at->line, at->col, "trace byte_order must be le or be");
	at = vgt_tblock_attr(b, "uuid");
	if (at) {
		if (at->kind != TV_STRING || parse_uuid(at->s, md->uuid) < 0)
			return fatal(k, at->line, at->col, "malformed uuid");
		md->has_uuid = true;
	}
	at = vgt_tblock_attr(b, "packet.header");
	if (!at)
		return fatal(k, b->line, b->col, "trace block without packet.header");
	if (compile_layout(k, at, &md->packet_header) < 0)
		return -1;
	md->magic = vgt_layout_field(&md->packet_header, "magic");
	md->uuid_field = vgt_layout_field(&md->packet_header, "uuid");
	md->stream_id = vgt_layout_field(&md->packet_header, "stream_id");
	const struct vgt_field *f = md->packet_header.fields;
	if (md->magic >= 0 && (f[md->magic].type != VGT_UINT || f[md->magic].size != 4))
		return fatal(k, at->line, at->col, "packet.header magic must be a uint32");
	if (md->uuid_field >= 0 &&
	    (f[md->uuid_field].type != VGT_BYTES || f[md->uuid_field].size != 16))
		return fatal(k, at->line, at->col, "packet.header uuid must be uint8_t[16]");
	if (md->stream_id >= 0 && f[md->stream_id].type != VGT_UINT)
		return fatal(k, at->line, at->col, "packet.header stream_id must be unsigned");
	return 0;
}

static int check_clock(struct checker *k, const struct tblock *b)
{
	struct metadata *md = k->md;
	struct clock_class *c = vgt_arena_alloc(&md->arena, sizeof *c);
	c->name = attr_text(vgt_tblock_attr(b, "name"));
	if (!c->name)
		return fatal(k, b->line, b->col, "clock without a name");
	c->freq = 1000000000;
	int64_t v;
	const struct tattr *at = vgt_tblock_attr(b, "freq");
	if (at) {
		if (!attr_int(at, &v) || v <= 0)
			return fatal(k, at->line, at->col, "clock freq must be a positive number");
		c->freq = (uint64_t)v;
	}
	if ((at = vgt_tblock_attr(b, "offset_s")) && !attr_int(at, &c->offset_s))
		return fatal(k, at->line, at->col, "clock offset_s must be a number");
	if ((at = vgt_tblock_attr(b, "offset")) && !attr_int(at, &c->offset))
		return fatal(k, at->line, at->col, "clock offset must be a number");
	if ((at = vgt_tblock_attr(b, "uuid"))) {
		if (at->kind != TV_STRING || parse_uuid(at->s, c->uuid) < 0)
			return fatal(k, at->line, at->col, "malformed clock uuid");
		c->has_uuid = true;
	}
	md->clocks = vgt_arena_push(&md->arena, md->clocks, md->nclocks, sizeof *md->clocks);
	md->clocks[md->nclocks++] = c;
	return 0;
}

static void check_env(struct checker *k, const struct tblock *b)
{
	struct metadata *md = k->md;
	/* Several env blocks add up. */
	for (size_t i = 0; i < b->nattrs; i++) {
		const struct tattr *at = &b->attrs[i];
		char num[32];
		const char *text = at->s;
		if (at->kind == TV_INT) {
			snprintf(num, sizeof num, "%s%" PRIu64, at->negative ? "-" : "", at->u);
			text = num;
		} else if (at->kind == TV_TYPE) {
			continue;
		}
		md->env = vgt_arena_push(&md->arena, md->env, md->nenv, sizeof *md->env);
		md->env[md->nenv++] =
		    (struct env_entry){at->key, vgt_arena_strdup(&md->arena, text)};
	}
}

static const struct clock_class *find_clock(const struct metadata *md, const char *name)
{
	if (!name)
		return md->nclocks == 1 ? md->clocks[0] : NULL;
	for (size_t i = 0; i < md->nclocks; i++)
		if (!strcmp(md->clocks[i]->name, name))
			return md->clocks[i];
	return NULL;
}

static int check_stream(struct checker *k, const struct tblock *b)
{
	struct metadata *md = k->md;
	struct stream_class *sc = vgt_arena_alloc(&md->arena, sizeof *sc);
	int64_t id = 0;
	const struct tattr *at = vgt_tblock_attr(b, "id");
	if (at && (!attr_int(at, &id) || id < 0))
		return fatal(k, at->line, at->col, "stream id must be a number");
	sc->id = (uint64_t)id;
	if (vgt_metadata_stream(md, sc->id))
		return fatal(k, b->line, b->col, "stream %" PRIu64 " declared twice", sc->id);
	if ((at = vgt_tblock_attr(b, "event.context")))
		return fatal(k, at->line, at->col, "event.context is not supported by vigil");
	at = vgt_tblock_attr(b, "event.header");
	if (!at)
		return fatal(k, b->line, b->col, "stream without event.header");
	if (compile_layout(k, at, &sc->event_header) < 0)
		return -1;
	const struct layout *eh = &sc->event_header;
	sc->ev_id = vgt_layout_field(eh, "id");
	sc->ev_ts = vgt_layout_field(eh, "timestamp");
	if (sc->ev_id < 0 || eh->fields[sc->ev_id].type != VGT_UINT)
		return fatal(k, at->line, at->col, "event.header needs an unsigned 'id'");
	if (sc->ev_ts < 0 || eh->fields[sc->ev_ts].type != VGT_UINT)
		return fatal(k, at->line, at->col, "event.header needs an unsigned 'timestamp'");
	sc->ts_bits = eh->fields[sc->ev_ts].size * 8;
	sc->clock = find_clock(md, eh->clock[sc->ev_ts]);
	if (eh->clock[sc->ev_ts] && !sc->clock)
		return fatal(k, at->line, at->col, "timestamp mapped to unknown clock '%s'",
		             eh->clock[sc->ev_ts]);

	sc->ts_begin = sc->ts_end = sc->content_size = sc->packet_size = -1;
	sc->seq_num = sc->discarded = sc->tid = sc->thread_gen = -1;
	if ((at = vgt_tblock_attr(b, "packet.context"))) {
		if (compile_layout(k, at, &sc->packet_context) < 0)
			return -1;
		const struct layout *pc = &sc->packet_context;
		struct {
			const char *name;
			int *slot;
		} known[] = {{"timestamp_begin", &sc->ts_begin},
		             {"timestamp_end", &sc->ts_end},
		             {"content_size", &sc->content_size},
		             {"packet_size", &sc->packet_size},
		             {"packet_seq_num", &sc->seq_num},
		             {"events_discarded", &sc->discarded},
		             {"tid", &sc->tid},
		             {"thread_gen", &sc->thread_gen}};
		for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
			int f = vgt_layout_field(pc, known[i].name);
			if (f >= 0 && pc->fields[f].type != VGT_UINT)
				return fatal(k, at->line, at->col,
				             "packet.context %s must be unsigned", known[i].name);
			*known[i].slot = f;
		}
	}
	md->streams = vgt_arena_push(&md->arena, md->streams, md->nstreams, sizeof *md->streams);
	md->streams[md->nstreams++] = sc;
	return 0;
}

/* An unusable event declaration: reported, and its events will not be decoded. */
__attribute__((format(printf, 4, 5))) static void reject(struct checker *k, unsigned line,
                                                         unsigned col, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	vgt_damage_add(k->diag, VGT_DMG_METADATA_TYPE, k->path, 0, line, col, "%s", msg);
}

static void check_event(struct checker *k, const struct tblock *b, struct event_class ***all,
                        size_t *cap)
{
	struct metadata *md = k->md;
	struct event_class *ec = vgt_arena_alloc(&md->arena, sizeof *ec);
	struct vgt_event_type *t = &ec->pub;
	t->name = attr_text(vgt_tblock_attr(b, "name"));
	const struct tattr *at = vgt_tblock_attr(b, "id");
	int64_t id, sid = md->nstreams == 1 ? (int64_t)md->streams[0]->id : 0;
	if (!t->name) {
		reject(k, b->line, b->col, "event without a name: ignored");
		return;
	}
	if (!at || !attr_int(at, &id) || id < 0) {
		reject(k, b->line, b->col, "event '%s' without a valid id: ignored", t->name);
		return;
	}
	if ((at = vgt_tblock_attr(b, "stream_id")) && (!attr_int(at, &sid) || sid < 0)) {
		reject(k, at->line, at->col, "event '%s': bad stream_id: ignored", t->name);
		return;
	}
	t->id = (uint64_t)id;
	t->stream_id = (uint64_t)sid;
	ec->sc = vgt_metadata_stream(md, t->stream_id);
	if (!ec->sc) {
		reject(k, b->line, b->col, "event '%s': no stream %" PRIu64 ": ignored", t->name,
		       t->stream_id);
		return;
	}
	if (!id_add(&k->ids, ec->sc, t->id)) {
		reject(k, b->line, b->col, "event '%s': id %" PRIu64 " is already used: ignored",
		       t->name, t->id);
		return;
	}
	ec->usable = true;
	if ((at = vgt_tblock_attr(b, "context"))) {
		reject(k, at->line, at->col,
		       "event '%s': context is not supported: its events are skipped", t->name);
		ec->usable = false;
	}
	if (ec->usable && (at = vgt_tblock_attr(b, "fields"))) {
		if (compile_layout(k, at, &ec->payload) < 0) {
			reject(k, k->line, k->col, "event '%s': %s: its events are skipped",
			       t->name, k->err);
			ec->usable = false;
			ec->payload = (struct layout){0};
		}
	}
	t->fields = ec->payload.fields;
	t->nfields = ec->payload.nfields;
	at = vgt_tblock_attr(b, "model.emf.uri");
	t->model_uri = attr_text(at);
	char problem[256];
	vgt_model_uri_apply(&md->arena, t, t->model_uri, problem, sizeof problem);
	if (*problem)
		reject(k, at->line, at->col, "event '%s': model.emf.uri: %s", t->name, problem);

	*all = vgt_arena_grow(&md->arena, *all, md->nevents, cap, sizeof **all);
	(*all)[md->nevents++] = ec;
	/* In its stream class; sorted by id once all are in (check). */
	struct stream_class *sc = ec->sc;
	sc->sorted = vgt_arena_push(&md->arena, sc->sorted, sc->nsorted, sizeof *sc->sorted);
	sc->sorted[sc->nsorted++] = ec;
}

/* Direct lookup tables for streams whose event ids are small (vigil's are uint16). */
static void index_events(struct metadata *md)
{
	for (size_t s = 0; s < md->nstreams; s++) {
		struct stream_class *sc = md->streams[s];
		if (!sc->nsorted || sc->sorted[sc->nsorted - 1]->pub.id >= 65536)
			continue;
		sc->by_id_len = sc->sorted[sc->nsorted - 1]->pub.id + 1;
		sc->by_id = vgt_arena_alloc(&md->arena, sc->by_id_len * sizeof *sc->by_id);
		for (size_t i = 0; i < sc->nsorted; i++)
			sc->by_id[sc->sorted[i]->pub.id] = sc->sorted[i];
	}
}

static int check(struct checker *k, const struct tsdl_doc *doc)
{
	const struct tblock *trace = NULL;
	for (size_t i = 0; i < doc->nblocks; i++) {
		const struct tblock *b = &doc->blocks[i];
		if (b->kind == TB_TRACE) {
			if (trace)
				return fatal(k, b->line, b->col, "second trace block");
			trace = b;
		}
	}
	if (!trace)
		return fatal(k, 1, 1, "no trace block");
	if (check_trace(k, trace) < 0)
		return -1;
	/* Clocks and env before streams, streams before events, whatever the text order. */
	for (size_t i = 0; i < doc->nblocks; i++) {
		if (doc->blocks[i].kind == TB_CLOCK && check_clock(k, &doc->blocks[i]) < 0)
			return -1;
		if (doc->blocks[i].kind == TB_ENV)
			check_env(k, &doc->blocks[i]);
	}
	for (size_t i = 0; i < doc->nblocks; i++)
		if (doc->blocks[i].kind == TB_STREAM && check_stream(k, &doc->blocks[i]) < 0)
			return -1;
	size_t cap = 0;
	for (size_t i = 0; i < doc->nblocks; i++)
		if (doc->blocks[i].kind == TB_EVENT)
			check_event(k, &doc->blocks[i], &k->md->events, &cap);
	free(k->ids.slots);
	k->ids = (struct id_set){0};
	for (size_t s = 0; s < k->md->nstreams; s++) {
		struct stream_class *sc = k->md->streams[s];
		if (sc->nsorted > 1)
			qsort(sc->sorted, sc->nsorted, sizeof *sc->sorted, by_event_id);
	}
	index_events(k->md);
	return 0;
}

struct metadata *vgt_metadata_parse(const char *text, size_t len, const char *path,
                                    struct damage_list *diag)
{
	if (len >= 4 && !memcmp(text, "\x57\x1d\xd1\x75", 4)) {
		vgt_damage_add(diag, VGT_DMG_METADATA, path, 0, 0, 0,
		               "packetized metadata is not supported (vigil writes plain text)");
		return NULL;
	}
	struct metadata *md = vgt__xcalloc(1, sizeof *md);
	struct tsdl_doc doc;
	struct tsdl_error err;
	if (vgt_tsdl_parse(&md->arena, text, len, &doc, &err) < 0) {
		if (!err.at_eof || !doc.nblocks) {
			vgt_damage_add(diag, VGT_DMG_METADATA, path, 0, err.line, err.col, "%s",
			               err.msg);
			vgt_metadata_free(md);
			return NULL;
		}
		/* A writer killed while appending a declaration: keep what came before. */
		md->cut = true;
		vgt_damage_add(
		    diag, VGT_DMG_METADATA_CUT, path, 0, err.line, err.col,
		    "%s: the metadata ends inside a declaration; the declarations before "
		    "it are used",
		    err.msg);
	}
	md->complete_len = doc.complete_len;
	struct checker k = {.md = md, .path = path, .diag = diag};
	int checked = check(&k, &doc);
	free(k.ids.slots);
	if (checked < 0) {
		vgt_damage_add(diag, VGT_DMG_METADATA, path, 0, k.line, k.col, "%s", k.err);
		vgt_metadata_free(md);
		return NULL;
	}
	return md;
}

void vgt_metadata_free(struct metadata *m)
{
	if (!m)
		return;
	vgt_arena_free(&m->arena);
	free(m);
}

const char *vgt_metadata_env(const struct metadata *m, const char *key)
{
	for (size_t i = m->nenv; i-- > 0;)
		if (!strcmp(m->env[i].key, key))
			return m->env[i].text;
	return NULL;
}

struct stream_class *vgt_metadata_stream(const struct metadata *m, uint64_t id)
{
	for (size_t i = 0; i < m->nstreams; i++)
		if (m->streams[i]->id == id)
			return m->streams[i];
	return NULL;
}

struct event_class *vgt_stream_class_event(const struct stream_class *sc, uint64_t id)
{
	if (sc->by_id)
		return id < sc->by_id_len ? sc->by_id[id] : NULL;
	size_t lo = 0, hi = sc->nsorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sc->sorted[mid]->pub.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sc->nsorted && sc->sorted[lo]->pub.id == id ? sc->sorted[lo] : NULL;
}

int vgt_type_field(const struct vgt_event_type *t, const char *name)
{
	for (unsigned i = 0; i < t->nfields; i++)
		if (!strcmp(t->fields[i].name, name))
			return (int)i;
	return -1;
}
