/* The registry of log events of this process: event id -> (site, format, tag). An event is
 * registered on the first call of its site, off the hot path, under `reg_lock`; later
 * calls find its id without a lock: a VG_LOG site keeps it in its static descriptor, an
 * intercepted call or an adapter call looks up (address, format pointer, line) in a
 * lock-free table (slots are filled once, under the lock, and published by a release
 * store of their first word). Two keys with the same site and format text share one id. */
#define _GNU_SOURCE
#include <dlfcn.h>
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
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lc_event events[LC_MAX_EVENTS];
static _Atomic uint32_t nevents;
static uint32_t text_slots[TEXT_SLOTS]; /* ids by hash of (site, fmt); under reg_lock */
static struct key_slot keys[KEY_SLOTS];
static uint32_t nkeys;

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
	pthread_mutex_lock(&reg_lock);
	id = atomic_load_explicit(&site->id, memory_order_relaxed);
	if (!id) {
		id = register_event(text, site->fmt ? site->fmt : "", site->tag);
		atomic_store_explicit(&site->id, id, memory_order_release);
	}
	pthread_mutex_unlock(&reg_lock);
	return id;
}

static uint32_t key_hash(uintptr_t a, uintptr_t b, uint32_t c)
{
	uint64_t h =
	    ((uint64_t)a * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4full) ^ c;
	return (uint32_t)(h >> 40) & (KEY_SLOTS - 1);
}

static uint32_t key_find(uintptr_t a, uintptr_t b, uint32_t c, uint32_t *slot)
{
	uint32_t i = key_hash(a, b, c);
	for (;; i = (i + 1) & (KEY_SLOTS - 1)) {
		uintptr_t sa = atomic_load_explicit(&keys[i].a, memory_order_acquire);
		if (sa == 0)
			break;
		if (sa == a && keys[i].b == b && keys[i].c == c)
			return keys[i].id;
	}
	*slot = i;
	return 0;
}

uint32_t vg__lc_key_id(uintptr_t a, uintptr_t b, uint32_t c, const char *fmt_text, const char *file,
                       int line)
{
	uint32_t slot;
	uint32_t id = key_find(a, b, c, &slot);
	if (__builtin_expect(id != 0, 1))
		return id;
	char text[PATH_MAX + 32];
	if (c & LC_KEY_ADAPTER)
		file_line_site(text, sizeof text, file, line);
	else
		module_site(text, sizeof text, a);
	pthread_mutex_lock(&reg_lock);
	id = key_find(a, b, c, &slot); /* another thread may have registered it meanwhile */
	if (!id && nkeys < KEY_SLOTS / 2) {
		id = register_event(text, fmt_text ? fmt_text : "", NULL);
		if (id) {
			keys[slot].b = b;
			keys[slot].c = c;
			keys[slot].id = id;
			atomic_store_explicit(&keys[slot].a, a, memory_order_release);
			nkeys++;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return id;
}
