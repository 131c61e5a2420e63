/* Loading the structural events of a trace into the event set: vg.net.* (docs/net.md),
 * vg.thread.* and vg.process.*. Each process image belongs to the host named by its
 * metadata env `host` (else its `hostname`); traces naming the same host are one host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"
#include "trace/source.h"

enum {
	F_IID_HI,
	F_IID_LO,
	F_FD,
	F_CONN,
	F_OFF,
	F_LEN,
	F_MSG,
	F_WHAT,
	F_KIND,
	F_ROLE,
	F_LOCAL,
	F_REMOTE,
	F_TID,
	F_GEN,
	F_NAME,
	F_PID,
	F_PPID,
	F_PATH,
	F_CALL,
	F_COUNT,
	NF
};
static const char *const field_names[NF] = {
    "iid_hi", "iid_lo", "fd",  "conn", "off",  "len", "msg",  "what", "kind", "role",
    "local",  "remote", "tid", "gen",  "name", "pid", "ppid", "path", "call", "count"};

enum {
	T_OTHER = -1,
	T_THREAD_NAME = VGN_KIND_COUNT,
	T_UNFOLLOWED,
	T_PARTIAL,
	T_PROC_NAME,
	T_STATE
};

static int classify(const char *name)
{
	static const struct {
		const char *name;
		int kind;
	} k[] = {{"vg.net.input", VGN_INPUT},         {"vg.net.conn", VGN_CONN},
	         {"vg.net.send", VGN_SEND},           {"vg.net.recv", VGN_RECV},
	         {"vg.net.close", VGN_CLOSE},         {"vg.thread.begin", VGN_THREAD_BEGIN},
	         {"vg.thread.end", VGN_THREAD_END},   {"vg.thread.name", T_THREAD_NAME},
	         {"vg.net.unfollowed", T_UNFOLLOWED}, {"vg.process.begin", VGN_PROC_BEGIN},
	         {"vg.process.exec", VGN_PROC_EXEC},  {"vg.process.end", VGN_PROC_END},
	         {"vg.net.partial", T_PARTIAL},       {"vg.process.name", T_PROC_NAME}};
	if (strncmp(name, "vg.", 3))
		return T_OTHER;
	for (size_t i = 0; i < sizeof k / sizeof *k; i++)
		if (!strcmp(k[i].name, name))
			return k[i].kind;
	return T_OTHER;
}

/* A user-defined state of the performing thread (docs/net.md "User-defined states"): a
 * `.vgl` state relation with no performer, no target and no entity reference, so that
 * each change ends the previous state of the thread that records it. */
static bool thread_state(const struct vgt_event_type *t)
{
	if (!t->vigil || t->kind != VGT_KIND_STATE || !strncmp(t->name, "vg.", 3) ||
	    t->performer >= 0 || t->target >= 0)
		return false;
	for (unsigned f = 0; f < t->nfields; f++)
		if (t->fields[f].type == VGT_REF)
			return false;
	return true;
}

/* "Relation=v1,v2": the state a thread is in from this event on. */
static const char *state_label(struct vgn_set *s, const struct vgt_event *ev)
{
	const struct vgt_event_type *t = ev->type;
	char buf[512];
	size_t n = (size_t)snprintf(buf, sizeof buf, "%s=", t->relation ? t->relation : t->name);
	for (unsigned f = 0, k = 0; f < t->nfields && n < sizeof buf; f++) {
		const struct vgt_value *v = &ev->values[f];
		if (t->fields[f].hidden)
			continue;
		const char *sep = k++ ? "," : "";
		switch (v->type) {
		case VGT_STRING:
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%.*s", sep,
			                      (int)v->str.len, v->str.ptr);
			break;
		case VGT_UINT:
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%llu", sep,
			                      (unsigned long long)v->u);
			break;
		case VGT_INT:
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", sep,
			                      (long long)v->i);
			break;
		case VGT_DOUBLE:
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%g", sep, v->d);
			break;
		default:
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s?", sep);
			break;
		}
	}
	return vgn_intern(s, buf);
}

/* What the loader does with events of the type: enum vgn_kind, or one of T_*. */
static int kind_of(const struct vgt_event_type *t)
{
	int kind = classify(t->name);
	return kind == T_OTHER && thread_state(t) ? T_STATE : kind;
}

static const char *host_of(const struct vgt_image *img)
{
	const char *h = vgt_image_env(img, "host");
	if (h && *h)
		return h;
	return img->hostname && *img->hostname ? img->hostname : "unknown-host";
}

int vgn_load_trace(struct vgn_set *s, const char *path, struct vgn_load_stats *st,
                   void (*progress)(const char *line), char *err, size_t errsize)
{
	const char *paths[] = {path};
	struct vgt_source *src = vgt_source_open(paths, 1, 0, err, errsize);
	if (!src)
		return -1;
	int rc = vgn_load_open(s, vgt_source_trace(src), path, st, progress);
	vgt_source_close(src);
	return rc;
}

/* One reading of a trace into a set, event by event (vgn_load_open reads a whole trace
 * through it; vigil watch's Message feeds it the events as they come). */
struct vgn_loader {
	struct vgn_set *s;
	const struct vgt_trace *t;
	const char *trace; /* interned path */
	struct vgn_load_stats *st;
	int *kinds; /* per class: what the loader does with its events (-2: not looked at) */
	size_t nkinds;
	struct vgt_fields *fields;
	struct vgn_tmap last_recv; /* thread -> its latest receive (for vg.net.partial) */
};

struct vgn_loader *vgn_loader_new(struct vgn_set *s, const struct vgt_trace *t, const char *path,
                                  struct vgn_load_stats *st)
{
	struct vgn_loader *l = vgb_xcalloc(1, sizeof *l);
	l->s = s;
	l->t = t;
	l->trace = vgn_intern(s, path);
	l->st = st;
	l->fields = vgt_fields_new(t, field_names, NF);
	vgn_tmap_init(&l->last_recv);
	return l;
}

void vgn_loader_free(struct vgn_loader *l)
{
	if (!l)
		return;
	vgn_tmap_free(&l->last_recv);
	vgt_fields_free(l->fields);
	free(l->kinds);
	free(l);
}

/* The class's kind, looked at when first met (a followed trace gains classes). */
static int class_kind(struct vgn_loader *l, const struct vgt_event_type *type)
{
	size_t c = type->class_id;
	if (c >= l->nkinds) {
		size_t n = c + 1 > 2 * l->nkinds ? c + 1 : 2 * l->nkinds;
		l->kinds = vgb_xrealloc(l->kinds, n, sizeof *l->kinds);
		for (size_t i = l->nkinds; i < n; i++)
			l->kinds[i] = -2;
		l->nkinds = n;
	}
	if (l->kinds[c] == -2)
		l->kinds[c] = kind_of(type);
	return l->kinds[c];
}

void vgn_loader_event(struct vgn_loader *l, const struct vgt_event *ev)
{
	struct vgn_set *s = l->s;
	struct vgn_load_stats *st = l->st;
	st->events++;
	int kind = class_kind(l, ev->type);
	if (kind == T_OTHER)
		return;
	const int *f = vgt_fields_slots(l->fields, ev->type);
	if (kind == T_UNFOLLOWED) { /* counted, not part of any network */
		const char *call = vgt_slot_text(ev, f[F_CALL]);
		uint64_t count = vgt_slot_u64(ev, f[F_COUNT]);
		if (!strcmp(call, "io_uring"))
			st->unfollowed_io_uring += count;
		else if (!strcmp(call, "exec-static"))
			st->unfollowed_static += count;
		else
			st->unfollowed_scanf += count;
		return;
	}
	const struct vgt_image *img = ev->image;
	uint32_t host = vgn_host_get(s, host_of(img));
	uint32_t proc = vgn_proc_get(s, host, img->pid, img->process_gen);
	struct vgn_proc *pr = &s->procs[proc];
	if (img->ppid > 0)
		pr->ppid = img->ppid;
	if (img->procname && *img->procname)
		pr->program = vgn_intern(s, img->procname);
	uint32_t th = vgn_thread_get(s, proc, ev->tid, ev->thread_gen);
	if (kind == T_PARTIAL) { /* the thread's receive just before: part of a line */
		uint32_t r = vgn_tmap_get(&l->last_recv, th, 0, 0);
		if (r != VGN_NONE && s->events[r].serial == vgt_slot_u64(ev, f[F_CONN]))
			s->events[r].partial = true;
		return;
	}
	if (kind == T_STATE) {
		VGN_GROW(s->states, s->cap_states, s->nstates + 1);
		s->states[s->nstates++] =
		    (struct vgn_state){th, ev->ts, ev->ts, state_label(s, ev)};
		return;
	}
	if (kind == T_PROC_NAME || kind == VGN_PROC_BEGIN) {
		const char *name = vgt_slot_text(ev, f[F_NAME]);
		if (*name) {
			pr->name = vgn_intern(s, name);
			pr->name_exec = img->exec_index;
		}
		if (kind == T_PROC_NAME)
			return;
	}
	if (kind == T_THREAD_NAME || kind == VGN_THREAD_BEGIN) {
		/* by tid: a thread may be named by another thread of its process */
		uint32_t named = kind == T_THREAD_NAME
		                     ? vgn_thread_get(s, proc, (uint32_t)vgt_slot_u64(ev, f[F_TID]),
		                                      (uint32_t)vgt_slot_u64(ev, f[F_GEN]))
		                     : th;
		const char *name = vgt_slot_text(ev, f[F_NAME]);
		if (*name)
			s->threads[named].name = vgn_intern(s, name);
		if (kind == T_THREAD_NAME)
			return;
	}
	/* an image exec'd after the name was given (a trace without vg.process.name) */
	const char *program = pr->name && pr->name_exec == img->exec_index ? pr->name : pr->program;
	if (!strncmp(ev->type->name, "vg.net.", 7))
		st->net_events++;
	struct vgn_event e = {
	    .kind = (uint8_t)kind,
	    .thread = th,
	    .ts = ev->ts,
	    .iid_hi = vgt_slot_u64(ev, f[F_IID_HI]),
	    .iid_lo = vgt_slot_u64(ev, f[F_IID_LO]),
	    .fd = (int32_t)vgt_slot_u64(ev, f[F_FD]),
	    .serial = vgt_slot_u64(ev, f[F_CONN]),
	    .off = vgt_slot_u64(ev, f[F_OFF]),
	    .len = vgt_slot_u64(ev, f[F_LEN]),
	    .msg = vgt_slot_u64(ev, f[F_MSG]),
	    .exec = img->exec_index,
	    .text = vgn_intern(s, kind == VGN_INPUT       ? vgt_slot_text(ev, f[F_WHAT])
	                          : kind == VGN_PROC_EXEC ? vgt_slot_text(ev, f[F_PATH])
	                          : kind == VGN_PROC_BEGIN || kind == VGN_THREAD_BEGIN
	                              ? vgt_slot_text(ev, f[F_NAME])
	                              : ""),
	    .program = program,
	    .name = s->threads[th].name,
	    .trace = l->trace,
	    .offset = ev->offset,
	};
	if (kind == VGN_PROC_BEGIN) {
		uint64_t ppid = vgt_slot_u64(ev, f[F_PPID]);
		if (ppid)
			pr->ppid = (int64_t)ppid;
	}
	if (kind == VGN_CONN) {
		struct vgn_conn cn = {proc,
		                      img->exec_index,
		                      e.serial,
		                      e.fd,
		                      vgn_intern(s, vgt_slot_text(ev, f[F_KIND])),
		                      vgn_intern(s, vgt_slot_text(ev, f[F_ROLE])),
		                      vgn_intern(s, vgt_slot_text(ev, f[F_LOCAL])),
		                      vgn_intern(s, vgt_slot_text(ev, f[F_REMOTE])),
		                      ev->ts};
		vgn_conn_add(s, &cn);
	}
	uint32_t added = vgn_event_add(s, &e);
	if (e.kind == VGN_RECV)
		vgn_tmap_put(&l->last_recv, th, 0, 0, added);
}

int vgn_load_open(struct vgn_set *s, struct vgt_trace *t, const char *path,
                  struct vgn_load_stats *st, void (*progress)(const char *line))
{
	struct vgt_source *src = vgt_source_of(t);
	st->images += vgt_image_count(t);
	struct vgn_loader *l = vgn_loader_new(s, t, path, st);
	uint64_t n = 0;
	for (const struct vgt_event *ev; (ev = vgt_source_next(src));) {
		if (progress && !(++n % 1000000)) {
			char line[256];
			snprintf(line, sizeof line, "%s: %llu events read", path,
			         (unsigned long long)n);
			progress(line);
		}
		vgn_loader_event(l, ev);
	}
	vgn_loader_free(l);
	st->damage += vgt_damage_total(t);
	for (size_t i = 0; i < vgt_stream_count(t); i++)
		st->discarded += vgt_stream_at(t, i)->stats.events_discarded;
	vgt_source_close(src);
	return 0;
}
