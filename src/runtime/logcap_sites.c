/* The registry of log events of this process: event id -> (site, format, tag). An event is
 * registered on the first call of its site, off the hot path, under `reg_lock`; later
 * calls find its id without a lock: a VG_LOG site keeps it in its static descriptor, an
 * intercepted call or an adapter call looks up (address, format pointer, line) in a
 * lock-free table (slots are filled once, under the lock, and published by a release
 * store of their first word). Two keys with the same site and format text share one id. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "logcap.h"

#define KEY_SLOTS (1u << 17)
#define TEXT_SLOTS (1u << 17)
#define MAX_FMT 4096 /* longer formats are cut (an event is still one site) */

struct key_slot {
	_Atomic uintptr_t a; /* 0: free */
	uintptr_t b;
	uint32_t c;
	uint32_t id;
	int8_t level;      /* the level word of the format, -1: none */
	uint8_t templated; /* the format does not identify the statement */
};

/* Templates per call site (under reg_lock): how many have their own event, and the
 * site's overflow event. Sites beyond the table share one overflow event. */
#define SITE_SLOTS 4096u
struct site_cap {
	uintptr_t site; /* 0: free */
	uint32_t n;
	uint32_t overflow;
};
static struct site_cap site_caps[SITE_SLOTS];
static uint32_t shared_overflow;
static const char OVERFLOW_FMT[] = "<overflow: templates past this site's cap>";

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lc_event events[LC_MAX_EVENTS];
static _Atomic uint32_t nevents;
static uint32_t text_slots[TEXT_SLOTS]; /* ids by hash of (site, fmt); under reg_lock */
static struct key_slot keys[KEY_SLOTS];
static uint32_t nkeys;

/* Set while this thread registers: a signal handler that logs then (a new site or
 * template) is not captured, rather than waiting forever for the lock its own thread
 * holds. */
static __thread int in_reg __attribute__((tls_model("initial-exec")));

static int reg_enter(void)
{
	if (in_reg)
		return -1;
	in_reg = 1;
	atomic_signal_fence(memory_order_seq_cst);
	pthread_mutex_lock(&reg_lock);
	return 0;
}

static void reg_leave(void)
{
	pthread_mutex_unlock(&reg_lock);
	atomic_signal_fence(memory_order_seq_cst);
	in_reg = 0;
}

uint32_t vg__lc_event_count(void)
{
	return atomic_load_explicit(&nevents, memory_order_acquire);
}

const struct lc_event *vg__lc_event(uint32_t id)
{
	return id >= 1 && id <= vg__lc_event_count() ? &events[id] : NULL;
}

void vg__lc_sites_lock(void)
{
	pthread_mutex_lock(&reg_lock);
}
void vg__lc_sites_unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}
void vg__lc_sites_after_fork(void)
{
	pthread_mutex_init(&reg_lock, NULL); /* ids stay: the child runs the same code */
}

static uint64_t text_hash(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Under reg_lock: the id of (site, fmt), registered if new; 0 if the registry is full or
 * out of memory. */
static uint32_t register_event(const char *site, const char *fmt, const char *tag)
{
	uint64_t h = text_hash(fmt, text_hash(site, 0xcbf29ce484222325ull) * 31);
	uint32_t i = (uint32_t)(h >> 47) & (TEXT_SLOTS - 1);
	for (; text_slots[i]; i = (i + 1) & (TEXT_SLOTS - 1)) {
		struct lc_event *e = &events[text_slots[i]];
		if (!strcmp(e->site, site) && !strcmp(e->fmt, fmt)) {
			if (tag && !e->tag)
				e->tag = strdup(tag);
			return text_slots[i];
		}
	}
	uint32_t id = atomic_load_explicit(&nevents, memory_order_relaxed) + 1;
	if (id >= LC_MAX_EVENTS || id >= TEXT_SLOTS / 2)
		return 0;
	char *s = strdup(site), *f = strndup(fmt, MAX_FMT), *t = tag ? strdup(tag) : NULL;
	if (!s || !f || (tag && !t)) {
		free(s);
		free(f);
		free(t);
		return 0;
	}
	events[id] = (struct lc_event){s, f, t};
	text_slots[i] = id;
	atomic_store_explicit(&nevents, id, memory_order_release);
	return id;
}

/* "file:LINE", spaces in the path written as %20 (the model file separates fields by
 * spaces). */
static void file_line_site(char *out, size_t len, const char *file, int line)
{
	size_t j = 0;
	for (const char *p = file ? file : "?"; *p && j + 4 < len - 16; p++) {
		if (*p == ' ') {
			memcpy(out + j, "%20", 3);
			j += 3;
		} else {
			out[j++] = *p;
		}
	}
	snprintf(out + j, len - j, ":%d", line);
}

/* "/abs/module+0xHEX": the module holding `addr` and the address's ELF virtual address in
 * it (addr minus the module's load bias), which is what addr2line takes. Not under
 * reg_lock: dladdr takes the loader's lock. */
static void module_site(char *out, size_t len, uintptr_t addr)
{
	Dl_info info;
	struct link_map *map = NULL;
	if (!dladdr1((void *)addr, &info, (void **)&map, RTLD_DL_LINKMAP) || !map) {
		snprintf(out, len, "?+0x%lx", (unsigned long)addr);
		return;
	}
	char path[PATH_MAX];
	const char *name = info.dli_fname;
	if (!name || name[0] != '/' || map->l_name[0] == 0) {
		ssize_t n = vg__readlink_proc("/proc/self/exe", path, sizeof path - 1);
		path[n > 0 ? n : 0] = 0;
		name = path;
	} else if (realpath(info.dli_fname, path)) {
		name = path;
	}
	snprintf(out, len, "%s+0x%lx", name, (unsigned long)(addr - map->l_addr));
	for (char *p = out; *p; p++)
		if (*p == ' ')
			*p = '_';
}

uint32_t vg__lc_site_id(vg_log_site *site)
{
	uint32_t id = atomic_load_explicit(&site->id, memory_order_acquire);
	if (id)
		return id;
	char text[PATH_MAX + 32];
	file_line_site(text, sizeof text, site->file, site->line);
	if (reg_enter() < 0)
		return 0;
	id = atomic_load_explicit(&site->id, memory_order_relaxed);
	if (!id) {
		id = register_event(text, site->fmt ? site->fmt : "", site->tag);
		atomic_store_explicit(&site->id, id, memory_order_release);
	}
	reg_leave();
	return id;
}

static uint32_t key_hash(uintptr_t a, uintptr_t b, uint32_t c)
{
	uint64_t h =
	    ((uint64_t)a * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4full) ^ c;
	return (uint32_t)(h >> 40) & (KEY_SLOTS - 1);
}

/* The slot of key (a, b, c), or NULL; *slot: where it would go. Inlined: it is most of
 * an intercepted call's own cost. */
static inline __attribute__((always_inline)) const struct key_slot *
key_find(uintptr_t a, uintptr_t b, uint32_t c, uint32_t *slot)
{
	uint32_t i = key_hash(a, b, c);
	for (;; i = (i + 1) & (KEY_SLOTS - 1)) {
		uintptr_t sa = atomic_load_explicit(&keys[i].a, memory_order_acquire);
		if (sa == 0)
			break;
		if (sa == a && keys[i].b == b && keys[i].c == c) {
			*slot = i;
			return &keys[i];
		}
	}
	*slot = i;
	return NULL;
}

/* Under reg_lock: fills the free slot `slot` with key (a, b, c) and publishes it. */
static void key_add(uint32_t slot, uintptr_t a, uintptr_t b, uint32_t c, uint32_t id, int level,
                    int templated)
{
	keys[slot].b = b;
	keys[slot].c = c;
	keys[slot].id = id;
	keys[slot].level = (int8_t)level;
	keys[slot].templated = (uint8_t)templated;
	atomic_store_explicit(&keys[slot].a, a, memory_order_release);
	nkeys++;
}

static struct lc_key key_register(uintptr_t a, uintptr_t b, uint32_t c, const char *fmt_text,
                                  const char *file, int line);

struct lc_key vg__lc_key(uintptr_t a, uintptr_t b, uint32_t c, const char *fmt_text,
                         const char *file, int line)
{
	uint32_t slot;
	const struct key_slot *k = key_find(a, b, c, &slot);
	if (__builtin_expect(k != NULL, 1))
		return (struct lc_key){k->id, k->level, k->templated};
	int saved = errno; /* registration calls libc; the hooked call may read errno (%m) */
	struct lc_key r = key_register(a, b, c, fmt_text, file, line);
	errno = saved;
	return r;
}

/* vg__lc_key's first sight of a key: its event registered, its format looked at. */
static struct lc_key key_register(uintptr_t a, uintptr_t b, uint32_t c, const char *fmt_text,
                                  const char *file, int line)
{
	uint32_t slot;
	const struct key_slot *k;
	const char *fmt = fmt_text ? fmt_text : "";
	int templated = c == LC_KEY_RET && fmt[0] != '<' && vg__lc_fmt_templated(fmt);
	int level = vg__lc_level_word(fmt, strlen(fmt));
	char text[PATH_MAX + 32];
	if (c & LC_KEY_ADAPTER)
		file_line_site(text, sizeof text, file, line);
	else if (!templated)
		module_site(text, sizeof text, a);
	struct lc_key r = {0, (int8_t)level, (uint8_t)templated};
	if (reg_enter() < 0)
		return (struct lc_key){0, -1, 0};
	k = key_find(a, b, c, &slot); /* another thread may have registered it meanwhile */
	if (k) {
		r.id = k->id;
	} else if (nkeys < KEY_SLOTS / 2) {
		/* a templated site has no event of its own: its messages' templates do */
		r.id = templated ? 0 : register_event(text, fmt, NULL);
		if (r.id || templated)
			key_add(slot, a, b, c, r.id, level, templated);
	}
	reg_leave();
	return r;
}

uint32_t vg__lc_key_id(uintptr_t a, uintptr_t b, uint32_t c, const char *fmt_text, const char *file,
                       int line)
{
	return vg__lc_key(a, b, c, fmt_text, file, line).id;
}

/* Under reg_lock: the cap entry of `site`, or NULL when the table is full. */
static struct site_cap *site_cap(uintptr_t site)
{
	uint32_t i = (uint32_t)(((uint64_t)site * 0x9e3779b97f4a7c15ull) >> 52) & (SITE_SLOTS - 1);
	for (uint32_t n = 0; n < SITE_SLOTS; n++, i = (i + 1) & (SITE_SLOTS - 1)) {
		if (site_caps[i].site == site)
			return &site_caps[i];
		if (!site_caps[i].site) {
			site_caps[i].site = site;
			return &site_caps[i];
		}
	}
	return NULL;
}

/* Under reg_lock: the overflow event of a site at its cap, registered if `text` is
 * given; 0 if it is not registered yet and `text` is NULL. */
static uint32_t overflow_id(struct site_cap *sc, const char *text)
{
	uint32_t *id = sc ? &sc->overflow : &shared_overflow;
	if (!*id && text)
		*id = register_event(sc ? text : "?", OVERFLOW_FMT, NULL);
	return *id;
}

/* A 64-bit hash of a template, 8 bytes a step (templates are 20-240 bytes; a byte-wise
 * FNV was a sixth of a templated call). Only ever compared within the process. */
static uint64_t tmpl_hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static struct lc_key tmpl_register(uintptr_t site, uint64_t h, const char *tmpl, size_t len);

struct lc_key vg__lc_tmpl_key(uintptr_t site, const char *tmpl, size_t len)
{
	uint64_t h = tmpl_hash(tmpl, len);
	uint32_t slot;
	const struct key_slot *k = key_find(site, (uintptr_t)h, LC_KEY_TMPL, &slot);
	if (__builtin_expect(k != NULL, 1))
		return (struct lc_key){k->id, k->level, 0};
	int saved = errno; /* registration calls libc; the hooked call may read errno (%m) */
	struct lc_key r = tmpl_register(site, h, tmpl, len);
	errno = saved;
	return r;
}

/* vg__lc_tmpl_key's first sight of a template at a site. */
static struct lc_key tmpl_register(uintptr_t site, uint64_t h, const char *tmpl, size_t len)
{
	uint32_t slot;
	const struct key_slot *k;
	/* A new template: its level word is found once, in the template (a level word is
	 * a word of letters: masking keeps it, except in quotes and paths). A site already
	 * at its cap needs no site text (dladdr is slow and a million distinct messages may
	 * come this way). */
	struct lc_key r = {0, (int8_t)vg__lc_level_word(tmpl, len), 0};
	if (reg_enter() < 0)
		return r;
	struct site_cap *sc = site_cap(site);
	int over = !sc || sc->n >= vg__lc.tmpl_cap || nkeys >= KEY_SLOTS / 2;
	r.id = over ? overflow_id(sc, NULL) : 0;
	reg_leave();
	if (r.id)
		return r;
	char text[PATH_MAX + 32];
	module_site(text, sizeof text, site);
	if (reg_enter() < 0)
		return r;
	k = key_find(site, (uintptr_t)h, LC_KEY_TMPL, &slot);
	sc = site_cap(site);
	if (k) {
		r.id = k->id;
	} else if (sc && sc->n < vg__lc.tmpl_cap && nkeys < KEY_SLOTS / 2) {
		r.id = register_event(text, tmpl, NULL);
		if (r.id) {
			key_add(slot, site, (uintptr_t)h, LC_KEY_TMPL, r.id, r.level, 0);
			sc->n++;
		}
	} else {
		r.id = overflow_id(sc, text);
	}
	reg_leave();
	return r;
}
