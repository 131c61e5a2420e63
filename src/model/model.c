/* The in-memory model: events and transitions in arrays, found through two
 * open-addressing hash tables (of indices) keyed by (site, fmt) and (from, to). */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

struct vgm_model *vgm_model_new(void)
{
	return calloc(1, sizeof(struct vgm_model));
}

void vgm_model_free(struct vgm_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nevents; i++) {
		free(m->events[i].site);
		free(m->events[i].fmt);
		free(m->events[i].name);
	}
	for (size_t i = 0; i < m->ntrans; i++)
		vgm_sketch_free(&m->trans[i].sk);
	for (size_t i = 0; i < m->nsources; i++)
		free(m->sources[i]);
	free(m->sources);
	free(m->events);
	free(m->trans);
	free(m->ev_slots);
	free(m->tr_slots);
	free(m);
}

static uint64_t hash_bytes(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_event(const char *site, const char *fmt)
{
	return hash_bytes(hash_bytes(0xcbf29ce484222325ull, site) * 31 + 1, fmt);
}

static uint64_t hash_trans(uint32_t from, uint32_t to)
{
	uint64_t x = ((uint64_t)from << 32 | to) * 0x9e3779b97f4a7c15ull;
	return x ^ x >> 29;
}

static uint64_t slot_hash_event(const struct vgm_model *m, uint32_t i)
{
	return hash_event(m->events[i].site, m->events[i].fmt);
}

static uint64_t slot_hash_trans(const struct vgm_model *m, uint32_t i)
{
	return hash_trans(m->trans[i].from, m->trans[i].to);
}

/* Grows a table to hold n entries at most half full, re-inserting them. */
static int grow(const struct vgm_model *m, uint32_t **slots, size_t *nslots, size_t n,
                uint64_t (*hash)(const struct vgm_model *, uint32_t))
{
	if (n * 2 <= *nslots)
		return 0;
	size_t ns = *nslots ? *nslots * 2 : 64;
	while (n * 2 > ns)
		ns *= 2;
	uint32_t *s = calloc(ns, sizeof *s);
	if (!s)
		return -1;
	for (uint32_t i = 0; i < n - 1; i++) { /* the n-th is inserted by the caller */
		size_t k = hash(m, i) & (ns - 1);
		while (s[k])
			k = (k + 1) & (ns - 1);
		s[k] = i + 1;
	}
	free(*slots);
	*slots = s;
	*nslots = ns;
	return 0;
}

long vgm_event_find(const struct vgm_model *m, const char *site, const char *fmt)
{
	if (!m->ev_nslots)
		return -1;
	size_t k = hash_event(site, fmt) & (m->ev_nslots - 1);
	for (; m->ev_slots[k]; k = (k + 1) & (m->ev_nslots - 1)) {
		const struct vgm_event *e = &m->events[m->ev_slots[k] - 1];
		if (!strcmp(e->site, site) && !strcmp(e->fmt, fmt))
			return (long)m->ev_slots[k] - 1;
	}
	return -1;
}

long vgm_event_intern(struct vgm_model *m, const char *site, const char *fmt)
{
	long found = vgm_event_find(m, site, fmt);
	if (found >= 0)
		return found;
	if (m->nevents >= UINT32_MAX - 1)
		return -1;
	if (m->nevents == m->events_cap) {
		size_t cap = m->events_cap ? m->events_cap * 2 : 16;
		struct vgm_event *v = realloc(m->events, cap * sizeof *v);
		if (!v)
			return -1;
		m->events = v;
		m->events_cap = cap;
	}
	struct vgm_event *e = &m->events[m->nevents];
	*e = (struct vgm_event){strdup(site), strdup(fmt), NULL, 0, 0, 0};
	if (!e->site || !e->fmt) {
		free(e->site);
		free(e->fmt);
		return -1;
	}
	m->nevents++;
	if (grow(m, &m->ev_slots, &m->ev_nslots, m->nevents, slot_hash_event)) {
		m->nevents--;
		free(e->site);
		free(e->fmt);
		return -1;
	}
	size_t k = hash_event(site, fmt) & (m->ev_nslots - 1);
	while (m->ev_slots[k])
		k = (k + 1) & (m->ev_nslots - 1);
	m->ev_slots[k] = (uint32_t)m->nevents;
	return (long)m->nevents - 1;
}

int vgm_event_set_name(struct vgm_model *m, size_t e, const char *name)
{
	char *copy = name ? strdup(name) : NULL;
	if (name && !copy)
		return -1;
	free(m->events[e].name);
	m->events[e].name = copy;
	return 0;
}

struct vgm_trans *vgm_trans_find(const struct vgm_model *m, uint32_t from, uint32_t to)
{
	if (!m->tr_nslots)
		return NULL;
	size_t k = hash_trans(from, to) & (m->tr_nslots - 1);
	for (; m->tr_slots[k]; k = (k + 1) & (m->tr_nslots - 1)) {
		struct vgm_trans *t = &m->trans[m->tr_slots[k] - 1];
		if (t->from == from && t->to == to)
			return t;
	}
	return NULL;
}

struct vgm_trans *vgm_trans_intern(struct vgm_model *m, uint32_t from, uint32_t to)
{
	struct vgm_trans *t = vgm_trans_find(m, from, to);
	if (t)
		return t;
	if (m->ntrans >= UINT32_MAX - 1)
		return NULL;
	if (m->ntrans == m->trans_cap) {
		size_t cap = m->trans_cap ? m->trans_cap * 2 : 16;
		struct vgm_trans *v = realloc(m->trans, cap * sizeof *v);
		if (!v)
			return NULL;
		m->trans = v;
		m->trans_cap = cap;
	}
	m->trans[m->ntrans++] = (struct vgm_trans){.from = from, .to = to};
	if (grow(m, &m->tr_slots, &m->tr_nslots, m->ntrans, slot_hash_trans)) {
		m->ntrans--;
		return NULL;
	}
	size_t k = hash_trans(from, to) & (m->tr_nslots - 1);
	while (m->tr_slots[k])
		k = (k + 1) & (m->tr_nslots - 1);
	m->tr_slots[k] = (uint32_t)m->ntrans;
	return &m->trans[m->ntrans - 1];
}

int vgm_add_source(struct vgm_model *m, const char *text)
{
	char **v = realloc(m->sources, (m->nsources + 1) * sizeof *v);
	if (!v)
		return -1;
	m->sources = v;
	if (!(v[m->nsources] = strdup(text)))
		return -1;
	m->nsources++;
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int vgm_model_merge(struct vgm_model *dst, const struct vgm_model *src, vgm_site_map map_site,
                    void *ctx)
{
	uint32_t *map = malloc((src->nevents ? src->nevents : 1) * sizeof *map);
	if (!map)
		return -1;
	int rc = -1;
	for (size_t i = 0; i < src->nevents; i++) {
		const struct vgm_event *se = &src->events[i];
		const char *site = map_site ? map_site(ctx, se->site) : se->site;
		if (!site)
			goto out;
		long e = vgm_event_intern(dst, site, se->fmt);
		if (e < 0)
			goto out;
		map[i] = (uint32_t)e;
		struct vgm_event *de = &dst->events[e];
		if (!de->id)
			de->id = se->id;
		de->count = sat_add(de->count, se->count);
		if (!de->name && se->name && vgm_event_set_name(dst, (size_t)e, se->name))
			goto out;
	}
	for (size_t i = 0; i < src->ntrans; i++) {
		const struct vgm_trans *st = &src->trans[i];
		struct vgm_trans *dt = vgm_trans_intern(dst, map[st->from], map[st->to]);
		if (!dt)
			goto out;
		dt->count = sat_add(dt->count, st->count);
		dt->sum_ns = sat_add(dt->sum_ns, st->sum_ns);
		if (vgm_sketch_merge(&dt->sk, &st->sk))
			goto out;
	}
	for (size_t i = 0; i < src->nsources; i++)
		if (vgm_add_source(dst, src->sources[i]))
			goto out;
	vgm_model_update_out(dst);
	rc = 0;
out:
	free(map);
	return rc;
}

void vgm_model_update_out(struct vgm_model *m)
{
	for (size_t i = 0; i < m->nevents; i++)
		m->events[i].out = 0;
	for (size_t i = 0; i < m->ntrans; i++) {
		struct vgm_event *e = &m->events[m->trans[i].from];
		e->out = sat_add(e->out, m->trans[i].count);
	}
}

uint64_t vgm_total_events(const struct vgm_model *m)
{
	uint64_t n = 0;
	for (size_t i = 0; i < m->nevents; i++)
		n = sat_add(n, m->events[i].count);
	return n;
}

uint64_t vgm_total_transitions(const struct vgm_model *m)
{
	uint64_t n = 0;
	for (size_t i = 0; i < m->ntrans; i++)
		n = sat_add(n, m->trans[i].count);
	return n;
}

const char *vgm_event_label(const struct vgm_event *e, char *buf, size_t size)
{
	if (e->name) {
		snprintf(buf, size, "%s", e->name);
		return buf;
	}
	/* A trace sensor's format is its name: the site alone says it. */
	if (!strncmp(e->site, "sensor:", 7) && !strcmp(e->site + 7, e->fmt)) {
		snprintf(buf, size, "%s", e->fmt);
		return buf;
	}
	char fmt[48];
	size_t k = 0;
	const char *p = e->fmt;
	for (; *p && k < 40; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '\n' || c == '\t')
			fmt[k++] = ' ';
		else if (c >= 0x20 && c != 0x7f)
			fmt[k++] = (char)c;
	}
	/* do not cut inside a UTF-8 character */
	if (*p) {
		while (k > 0 && ((unsigned char)fmt[k - 1] & 0xc0) == 0x80)
			k--;
		if (k > 0 && ((unsigned char)fmt[k - 1] & 0x80))
			k--;
	}
	fmt[k] = 0;
	snprintf(buf, size, "%s \"%s%s\"", e->site, fmt, *p ? "..." : "");
	return buf;
}

const char *vgm_format_ns(double ns, char *buf, size_t size)
{
	double a = ns < 0 ? -ns : ns;
	if (a != a)
		snprintf(buf, size, "-");
	else if (a < 1e3)
		snprintf(buf, size, "%.0f ns", ns);
	else if (a < 1e6)
		snprintf(buf, size, "%.3g us", ns / 1e3);
	else if (a < 1e9)
		snprintf(buf, size, "%.3g ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3g s", ns / 1e9);
	return buf;
}
