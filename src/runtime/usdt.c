/* USDT probe sites of the loaded objects armed as sensors (docs/usdt.md).
 *
 * A site is the 1-byte `nop` an SDT note points at. Arming writes `int3` (0xcc) over it
 * and raises the probe's semaphore; disarming writes the nop back and lowers it. A
 * 1-byte store is atomic for instruction fetch: a thread running through the site
 * concurrently executes either the nop or the int3, never a torn instruction, so arming
 * needs no stop of the other threads. The trap lands in usdt_trap.c, which records the
 * event and resumes after the site (int3 is as long as the nop it replaced).
 *
 * The sites are kept in an open-addressing table keyed by address, filled under
 * `usdt_lock` and read without a lock by the handler: an entry is complete before its
 * address is published, and entries are never removed (a disarmed site is recognised
 * by a thread that trapped on it just before). */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "usdt.h"

#define TABLE_SLOTS 4096 /* a power of two; at most half are used */
#define MAX_OBJECTS 1024

static struct vg_usdt_site *_Atomic table;
static size_t nsites;
static pthread_mutex_t usdt_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(uintptr_t addr)
{
	return (size_t)((addr * 0x9E3779B97F4A7C15ull) >> 52) & (TABLE_SLOTS - 1);
}

struct vg_usdt_site *vg__usdt_find(uintptr_t addr)
{
	struct vg_usdt_site *t = atomic_load_explicit(&table, memory_order_acquire);
	if (!t || !addr)
		return NULL;
	for (size_t i = slot_of(addr), n = 0; n < TABLE_SLOTS;
	     i = (i + 1) & (TABLE_SLOTS - 1), n++) {
		uintptr_t a = atomic_load_explicit(&t[i].addr, memory_order_acquire);
		if (a == addr)
			return &t[i];
		if (!a)
			return NULL;
	}
	return NULL;
}

/* A free slot for addr (caller holds usdt_lock), or NULL when the table is full. */
static struct vg_usdt_site *slot_for(uintptr_t addr)
{
	struct vg_usdt_site *t = atomic_load_explicit(&table, memory_order_relaxed);
	if (!t) {
		t = mmap(NULL, TABLE_SLOTS * sizeof *t, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t == MAP_FAILED)
			return NULL;
		atomic_store_explicit(&table, t, memory_order_release);
	}
	if (nsites >= TABLE_SLOTS / 2)
		return NULL;
	size_t i = slot_of(addr);
	while (atomic_load_explicit(&t[i].addr, memory_order_relaxed))
		i = (i + 1) & (TABLE_SLOTS - 1);
	return &t[i];
}

/* ---- patching code ---- */

static int prot_of(uint32_t flags)
{
	return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) |
	       (flags & PF_X ? PROT_EXEC : 0);
}

/* Writes `to` over the byte at `at` if it holds `from`: 0, or -1 with why. The page is
 * made writable around the store (it stays executable, so threads running in it go
 * on), or written through /proc/self/mem (usdt_jump.c's vg__usdt_code_write). */
static int patch(uint8_t *at, int prot, uint8_t from, uint8_t to, char *why, size_t whysize)
{
	uint8_t now = *(volatile uint8_t *)at;
	if (now != from) {
		snprintf(why, whysize, "byte 0x%02x where 0x%02x was expected%s", now, from,
		         from == VG_USDT_NOP ? " (already patched by another tool?)" : "");
		return -1;
	}
	return vg__usdt_code_write(at, &to, 1, prot, why, whysize);
}

/* ---- patterns: PROVIDER:GLOB ---- */

struct pattern {
	char provider[128], name[256];
	int enable;
};

/* Every pattern given so far, in order (the last one matching a probe decides): applied
 * to the objects dlopen maps later. */
#define MAX_REMEMBERED 256
static struct pattern remembered[MAX_REMEMBERED];
static size_t nremembered;

static void remember(const struct pattern *p) /* caller holds usdt_lock */
{
	size_t i = 0;
	while (i < nremembered &&
	       (strcmp(remembered[i].provider, p->provider) || strcmp(remembered[i].name, p->name)))
		i++;
	if (i < nremembered) { /* the same pattern again: moves last */
		memmove(&remembered[i], &remembered[i + 1],
		        (nremembered - i - 1) * sizeof *remembered);
		nremembered--;
	}
	if (nremembered < MAX_REMEMBERED)
		remembered[nremembered++] = *p;
}

/* The objects whose sites were looked at (bias and a hash of the path), so that a
 * dlopen's rescan reads only the new ones. */
static struct {
	uint64_t bias, hash;
} seen[MAX_OBJECTS];
static size_t nseen;

static uint64_t path_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* 1 if the object was seen before; else it is noted (caller holds usdt_lock). */
static int seen_before(uint64_t bias, const char *path)
{
	uint64_t h = path_hash(path);
	for (size_t i = 0; i < nseen; i++)
		if (seen[i].bias == bias && seen[i].hash == h)
			return 1;
	if (nseen < MAX_OBJECTS)
		seen[nseen].bias = bias, seen[nseen++].hash = h;
	return 0;
}

static int pattern_parse(const char *text, struct pattern *p, char *err, size_t errsize)
{
	const char *colon = strchr(text, ':');
	if (!colon || colon == text || !colon[1]) {
		snprintf(err, errsize,
		         "usdt pattern '%.200s': expected PROVIDER:PROBE (globs), "
		         "e.g. 'postgresql:transaction__*'",
		         text);
		return -1;
	}
	size_t lp = (size_t)(colon - text), ln = strlen(colon + 1);
	if (lp >= sizeof p->provider || ln >= sizeof p->name) {
		snprintf(err, errsize, "usdt pattern '%.200s': too long", text);
		return -1;
	}
	memcpy(p->provider, text, lp);
	p->provider[lp] = 0;
	memcpy(p->name, colon + 1, ln + 1);
	return 0;
}

static int pattern_match(const struct pattern *p, const struct vg_sdt_probe *probe)
{
	return !fnmatch(p->provider, probe->provider, 0) && !fnmatch(p->name, probe->name, 0);
}

/* ---- the loaded objects ---- */

struct object {
	char path[PATH_MAX];
	uint64_t bias;
	const ElfW(Phdr) * phdr;
	int phnum;
};
struct objects {
	struct object *o;
	size_t n;
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct objects *all = arg;
	const char *name = info->dlpi_name;
	if (all->n == MAX_OBJECTS)
		return 1;
	if (name[0] && name[0] != '/')
		return 0; /* the vdso */
	struct object *o = &all->o[all->n++];
	snprintf(o->path, sizeof o->path, "%s", name[0] ? name : "/proc/self/exe");
	o->bias = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	return 0;
}

/* The flags of the PT_LOAD segment holding [vaddr, vaddr + len), or 0. */
static uint32_t segment_flags(const struct object *o, uint64_t vaddr, uint64_t len)
{
	for (int i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *ph = &o->phdr[i];
		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr + len <= ph->p_vaddr + ph->p_memsz)
			return ph->p_flags | 0x80000000u;
	}
	return 0;
}

static const char *const arg_names[VG_SDT_MAX_ARGS] = {"arg1", "arg2",  "arg3",  "arg4",
                                                       "arg5", "arg6",  "arg7",  "arg8",
                                                       "arg9", "arg10", "arg11", "arg12"};

static enum vg_field_type field_type(const struct vg_sdt_arg *a)
{
	static const enum vg_field_type s[] = {VG_INT8, VG_INT16, VG_INT32, VG_INT64},
	                                u[] = {VG_UINT8, VG_UINT16, VG_UINT32, VG_UINT64};
	int k = a->size == 1 ? 0 : a->size == 2 ? 1 : a->size == 4 ? 2 : 3;
	return a->is_signed ? s[k] : u[k];
}

/* `x__start`/`x__begin` opens and `x__done`/`x__end` closes the pair `x`: the stem's
 * length and the role, or VG_USDT_ALONE. */
static int pair_role(const char *name, size_t *stem)
{
	static const struct {
		const char *suffix;
		int role;
	} ends[] = {{"__start", VG_USDT_OPEN},
	            {"__begin", VG_USDT_OPEN},
	            {"__done", VG_USDT_CLOSE},
	            {"__end", VG_USDT_CLOSE}};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
		size_t k = strlen(ends[i].suffix);
		if (n > k && !strcmp(name + n - k, ends[i].suffix)) {
			*stem = n - k;
			return ends[i].role;
		}
	}
	return VG_USDT_ALONE;
}

/* Does the file have the other end of the pair (`x__done` for `x__start`, ...)? A start
 * without a done is a plain event (transaction__start, whose end is __commit). */
static int has_partner(const struct vg_sdt_file *f, const char *provider, const char *name,
                       size_t stem, int role)
{
	size_t cursor = 0, k = 0;
	struct vg_sdt_probe q;
	char err[200];
	while (vg_sdt_next(f, &cursor, &q, err, sizeof err) == 1)
		if (!strcmp(q.provider, provider) && !strncmp(q.name, name, stem) &&
		    pair_role(q.name, &k) == VG_USDT_OPEN + VG_USDT_CLOSE - role && k == stem)
			return 1;
	return 0;
}

/* The pairs seen so far, numbered (caller holds usdt_lock). */
#define MAX_PAIRS 1024
static char *pair_names[MAX_PAIRS];
static unsigned npairs;

static uint16_t pair_number(const char *name)
{
	unsigned i = 0;
	while (i < npairs && strcmp(pair_names[i], name))
		i++;
	if (i == npairs && npairs < MAX_PAIRS && (pair_names[i] = strdup(name)))
		npairs++;
	return (uint16_t)i; /* MAX_PAIRS: none (the handler then never pairs it) */
}

/* The sensor `provider.name` with the site's argument types; the dead sensor (id
 * 0xFFFF) when a site of that probe registered other types first. A closing probe
 * (`x__done`) is the end of the interval relation `provider.x`: its event leads with
 * vg_since, the time of the same thread's innermost open `x__start` (docs/usdt.md). */
static vg_sensor *sensor_for(const struct vg_sdt_file *f, const struct vg_sdt_probe *p,
                             struct vg_usdt_site *site)
{
	char name[300], relation[300];
	snprintf(name, sizeof name, "%s.%s", p->provider, p->name);
	size_t stem = 0;
	int role = pair_role(p->name, &stem);
	if (role != VG_USDT_ALONE && !has_partner(f, p->provider, p->name, stem, role))
		role = VG_USDT_ALONE;
	snprintf(relation, sizeof relation, "%s.%.*s", p->provider, (int)stem, p->name);
	site->pair_role = (uint8_t)role;
	site->pair = role == VG_USDT_ALONE ? MAX_PAIRS : pair_number(relation);
	vg_field_desc fields[VG_SDT_MAX_ARGS + 1];
	unsigned nf = 0;
	if (role == VG_USDT_CLOSE)
		fields[nf++] = (vg_field_desc){"vg_since", VG_UINT64, NULL};
	for (unsigned i = 0; i < p->nargs; i++)
		fields[nf++] = (vg_field_desc){arg_names[i], field_type(&p->arg[i]), NULL};
	vg_type_desc d = {.name = name,
	                  .relation = role == VG_USDT_CLOSE ? relation : NULL,
	                  .kind = role == VG_USDT_CLOSE ? VG_KIND_END : VG_KIND_EVENT,
	                  .fields = fields,
	                  .nfields = nf,
	                  .performer = -1,
	                  .initiator = -1,
	                  .target = -1};
	vg_sensor *s = vg__sensor_register_inited(&d);
	/* Arming is the switch of a site: its sensor records whatever VIGIL_SENSORS says
	 * (vigil record --listen starts user sensors off). */
	if (s->id != 0xFFFF && atomic_load(&s->enabled) <= 0)
		vg_sensor_enable(s);
	return s;
}

static void say_untouched(const struct object *o, const struct vg_sdt_probe *p, const char *why)
{
	vg__warn("usdt: %s:%s at %s+0x%" PRIx64 ": %s; site left untouched", p->provider, p->name,
	         o->path, p->pc, why);
}

/* Sites armed with int3 in this pass that have a plan for the jump path (usdt_jump.c):
 * converted together at the end of the pass (caller holds usdt_lock). */
static struct vg_usdt_site *to_jump[TABLE_SLOTS / 2];
static size_t nto_jump;
static long jumped; /* sites put on the jump path by the last pass */

/* The site's plan for the jump path, if the CLI gave one and its bytes are the program's. */
static struct vg_usdt_jump *plan_for(const struct object *o, const struct vg_sdt_probe *p,
                                     uint64_t dev, uint64_t ino)
{
	const struct vg_usdt_jump *plan = vg__usdt_plan_find(dev, ino, p->pc);
	if (!plan)
		return NULL;
	const uint8_t *at = (const uint8_t *)(uintptr_t)(o->bias + p->pc);
	if (segment_flags(o, p->pc, plan->len) == 0 || memcmp(at, plan->orig, plan->len)) {
		vg__warn("usdt: %s:%s at %s+0x%" PRIx64 ": the plan's bytes are not the program's; "
		         "the site stays on the int3 path",
		         p->provider, p->name, o->path, p->pc);
		return NULL;
	}
	/* a pool beside the table (entries are never removed, nor their plans) */
	static struct vg_usdt_jump pool[TABLE_SLOTS / 2];
	static size_t used;
	if (used == TABLE_SLOTS / 2)
		return NULL;
	pool[used] = *plan;
	return &pool[used++];
}

/* Arms one site (caller holds usdt_lock): 1 armed now, 0 already armed or left
 * untouched (said why). dev, ino: the object's file, for its plan. */
static int arm(const struct object *o, const struct vg_sdt_file *f, const struct vg_sdt_probe *p,
               uint64_t dev, uint64_t ino)
{
	uintptr_t addr = (uintptr_t)(o->bias + p->pc);
	char why[200];
	uint32_t code = segment_flags(o, p->pc, 1);
	if (!code || !(code & PF_X)) {
		say_untouched(o, p, "the address is not in the object's code");
		return 0;
	}
	uint16_t *sem = NULL;
	if (p->semaphore) {
		uint32_t data = segment_flags(o, p->semaphore, 2);
		if (!data || !(data & PF_W) || p->semaphore % 2) {
			say_untouched(o, p, "its semaphore is not in writable data");
			return 0;
		}
		sem = (uint16_t *)(uintptr_t)(o->bias + p->semaphore);
	}
	struct vg_usdt_site *s = vg__usdt_find(addr);
	if (s) { /* known: armed before, maybe disarmed since */
		if (atomic_load(&s->armed))
			return 0;
		char name[300];
		snprintf(name, sizeof name, "%s.%s", p->provider, p->name);
		if (s->pair_role == VG_USDT_LOADER || !s->sensor || strcmp(s->sensor->name, name)) {
			/* a library unloaded by dlclose had a site at this address */
			say_untouched(o, p, "its address held another probe's site before");
			return 0;
		}
		if (patch((uint8_t *)addr, prot_of(code), VG_USDT_NOP, VG_USDT_INT3, why,
		          sizeof why)) {
			say_untouched(o, p, why);
			return 0;
		}
		atomic_store(&s->armed, 1);
		if (sem)
			__atomic_fetch_add(sem, 1, __ATOMIC_SEQ_CST);
		if (s->jump)
			to_jump[nto_jump++] = s;
		return 1;
	}
	if (p->arg_error) {
		snprintf(why, sizeof why, "argument %u (%.*s) not understood: %s", p->arg_bad,
		         (int)p->arg[p->arg_bad - 1].text_len, p->arg[p->arg_bad - 1].text,
		         p->arg_error);
		say_untouched(o, p, why);
		return 0;
	}
	if (*(volatile uint8_t *)addr != VG_USDT_NOP) {
		snprintf(why, sizeof why,
		         "byte 0x%02x where a nop was expected (already patched "
		         "by another tool?)",
		         *(volatile uint8_t *)addr);
		say_untouched(o, p, why);
		return 0;
	}
	if (vg__usdt_trap_install() < 0) {
		snprintf(why, sizeof why, "cannot install the SIGTRAP handler: %s",
		         strerror(errno));
		say_untouched(o, p, why);
		return 0;
	}
	s = slot_for(addr);
	if (!s) {
		say_untouched(o, p, "too many sites armed (2048)");
		return 0;
	}
	vg_sensor *sensor = sensor_for(f, p, s);
	if (sensor->id == 0xFFFF) {
		say_untouched(o, p, "its arguments differ from another site of that probe");
		return 0;
	}
	s->sensor = sensor;
	s->jump = plan_for(o, p, dev, ino); /* before the int3: its bytes are the program's */
	s->semaphore = sem;
	s->bias = o->bias;
	s->nargs = (uint8_t)p->nargs;
	s->payload = s->pair_role == VG_USDT_CLOSE ? 8 : 0;
	for (unsigned i = 0; i < p->nargs; i++) {
		s->arg[i] = p->arg[i];
		s->arg[i].text = NULL; /* it pointed into the file, unmapped after the scan */
		s->payload += p->arg[i].size;
	}
	atomic_store(&s->armed, 1);
	atomic_store_explicit(&s->addr, addr, memory_order_release); /* before the int3 */
	nsites++;
	if (patch((uint8_t *)addr, prot_of(code), VG_USDT_NOP, VG_USDT_INT3, why, sizeof why)) {
		atomic_store(&s->armed, 0);
		say_untouched(o, p, why);
		return 0;
	}
	if (sem)
		__atomic_fetch_add(sem, 1, __ATOMIC_SEQ_CST);
	if (s->jump)
		to_jump[nto_jump++] = s;
	return 1;
}

/* Disarms one site (caller holds usdt_lock): 1 if it was armed. */
static int disarm(const struct object *o, const struct vg_sdt_probe *p)
{
	uintptr_t addr = (uintptr_t)(o->bias + p->pc);
	struct vg_usdt_site *s = vg__usdt_find(addr);
	if (!s || !atomic_load(&s->armed))
		return 0;
	char why[200];
	if (atomic_load(&s->path) != VG_USDT_PATH_INT3 &&
	    vg__usdt_jump_revert(s, why, sizeof why)) {
		vg__warn("usdt: %s:%s at %s+0x%" PRIx64 ": cannot leave the jump path: %s",
		         p->provider, p->name, o->path, p->pc, why);
		return 0;
	}
	if (patch((uint8_t *)addr, prot_of(segment_flags(o, p->pc, 1)), VG_USDT_INT3, VG_USDT_NOP,
	          why, sizeof why)) {
		vg__warn("usdt: %s:%s at %s+0x%" PRIx64 ": cannot disarm: %s", p->provider, p->name,
		         o->path, p->pc, why);
		return 0;
	}
	atomic_store(&s->armed, 0);
	uint16_t *sem = atomic_load(&s->semaphore);
	if (sem)
		__atomic_fetch_sub(sem, 1, __ATOMIC_SEQ_CST);
	return 1;
}

/* Arms or disarms every site of the loaded objects that a pattern names (the last
 * pattern matching a probe decides); only_new: only objects not seen before. The number
 * switched, or -1 with err. *matched: sites named. Caller holds usdt_lock. */
/* Has the file a site that the patterns arm and that has no plan for the jump path? */
static int needs_plans(const struct vg_sdt_file *f, const struct pattern *pats, size_t npats,
                       uint64_t dev, uint64_t ino)
{
	size_t cursor = 0;
	struct vg_sdt_probe p;
	char why[256];
	while (vg_sdt_next(f, &cursor, &p, why, sizeof why) == 1) {
		size_t k = npats;
		while (k-- > 0 && !pattern_match(&pats[k], &p))
			;
		if (k < npats && pats[k].enable && !p.arg_error &&
		    !vg__usdt_plan_find(dev, ino, p.pc))
			return 1;
	}
	return 0;
}

static long apply(const struct pattern *pats, size_t npats, int only_new, size_t *matched,
                  size_t *of_provider, char *err, size_t errsize)
{
	struct objects all = {.o = calloc(MAX_OBJECTS, sizeof(struct object))};
	if (!all.o) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	dl_iterate_phdr(collect, &all);
	long switched = 0;
	*matched = *of_provider = 0;
	for (size_t i = 0; i < all.n; i++) {
		struct object *o = &all.o[i];
		if (seen_before(o->bias, o->path) && only_new)
			continue;
		int fd = open(o->path, O_RDONLY | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !st.st_size) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (data == MAP_FAILED)
			continue;
		struct vg_sdt_file f;
		char why[256];
		if (vg_sdt_open(&f, data, (size_t)st.st_size, why, sizeof why) == 0) {
			size_t cursor = 0;
			struct vg_sdt_probe p;
			int r;
			if (needs_plans(&f, pats, npats, (uint64_t)st.st_dev, (uint64_t)st.st_ino))
				vg__usdt_plan_object(o->path, (uint64_t)st.st_dev,
				                     (uint64_t)st.st_ino);
			while ((r = vg_sdt_next(&f, &cursor, &p, why, sizeof why)) == 1) {
				size_t k = npats, last = npats;
				while (k-- > 0)
					if (pattern_match(&pats[k], &p)) {
						last = k;
						break;
					}
				for (size_t j = 0; j < npats; j++)
					if (!fnmatch(pats[j].provider, p.provider, 0)) {
						(*of_provider)++;
						break;
					}
				if (last == npats)
					continue;
				(*matched)++;
				switched += pats[last].enable ? arm(o, &f, &p, (uint64_t)st.st_dev,
				                                    (uint64_t)st.st_ino)
				                              : disarm(o, &p);
			}
			if (r < 0)
				vg__warn("usdt: %s: %s; its later probes are not armed", o->path,
				         why);
		}
		munmap(data, (size_t)st.st_size);
	}
	free(all.o);
	jumped = 0;
	if (nto_jump) { /* int3 first, then the jumps, all sites of the pass at once */
		char why[200] = "";
		jumped = vg__usdt_jump_convert(to_jump, nto_jump, why, sizeof why);
		if (jumped < (long)nto_jump)
			vg__warn("usdt: %zu of %zu planned sites stay on the int3 path: %s",
			         nto_jump - (size_t)jumped, nto_jump, why[0] ? why : "see above");
		nto_jump = 0;
	}
	return switched;
}

/* ---- libraries loaded later: the loader's r_brk ---- */

/* Arms a breakpoint on _r_debug.r_brk (glibc's _dl_debug_state, an empty function the
 * loader calls after each change of the link maps; debuggers stop there). Its body must
 * be a bare `ret` (or endbr64; ret): the handler then returns for it. Caller holds
 * usdt_lock; once. */
static void loader_arm(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	uint8_t *at = (uint8_t *)_r_debug.r_brk;
	static const uint8_t endbr_ret[] = {0xf3, 0x0f, 0x1e, 0xfa, 0xc3};
	if (!at || (at[0] != 0xc3 && memcmp(at, endbr_ret, sizeof endbr_ret))) {
		vg__warn("usdt: the loader's r_brk is not the empty function expected; sites in "
		         "libraries loaded later by dlopen are not armed");
		return;
	}
	char why[200];
	struct vg_usdt_site *s;
	if (vg__usdt_trap_install() < 0 || !(s = slot_for((uintptr_t)at))) {
		vg__warn("usdt: cannot watch the loader (SIGTRAP handler or site table)");
		return;
	}
	s->pair_role = VG_USDT_LOADER;
	s->sensor = NULL;
	s->nargs = 0;
	atomic_store(&s->armed, 1);
	atomic_store_explicit(&s->addr, (uintptr_t)at, memory_order_release);
	nsites++;
	if (patch(at, PROT_READ | PROT_EXEC, at[0], VG_USDT_INT3, why, sizeof why)) {
		atomic_store(&s->armed, 0);
		vg__warn("usdt: cannot watch the loader: %s", why);
	}
}

void vg__usdt_loaded(void)
{
	pthread_mutex_lock(&usdt_lock);
	size_t matched, of_provider;
	char err[200];
	if (apply(remembered, nremembered, 1, &matched, &of_provider, err, sizeof err) < 0)
		vg__warn("usdt: after dlopen: %s", err);
	pthread_mutex_unlock(&usdt_lock);
}

int vg__usdt_plan(const char *text, char *err, size_t errsize)
{
	pthread_mutex_lock(&usdt_lock);
	int rc = vg__usdt_plan_add(text, err, errsize);
	pthread_mutex_unlock(&usdt_lock);
	return rc;
}

int vg__usdt_switch(int enable, const char *text, long *count, char *err, size_t errsize)
{
	struct pattern p;
	if (pattern_parse(text, &p, err, errsize) < 0)
		return -1;
	p.enable = enable;
	size_t matched, of_provider;
	pthread_mutex_lock(&usdt_lock);
	remember(&p);
	long n = apply(&p, 1, 0, &matched, &of_provider, err, errsize);
	if (enable)
		loader_arm();
	pthread_mutex_unlock(&usdt_lock);
	if (n < 0)
		return -1;
	*count = n;
	return 0;
}

/* VIGIL_USDT: comma-separated PROVIDER:GLOB patterns (vigil record --usdt). */
void vg__usdt_init(void)
{
	const char *env = getenv("VIGIL_USDT");
	if (!env || !*env || !vg__rt.recording)
		return;
	struct pattern pats[64];
	size_t n = 0;
	char err[300], item[400];
	for (const char *s = env; *s;) {
		size_t len = strcspn(s, ",");
		if (len && len < sizeof item && n < sizeof pats / sizeof *pats) {
			memcpy(item, s, len);
			item[len] = 0;
			if (pattern_parse(item, &pats[n], err, sizeof err) == 0)
				pats[n++].enable = 1;
			else
				vg__warn("VIGIL_USDT: %s", err);
		}
		s += len + (s[len] == ',');
	}
	size_t matched = 0, of_provider = 0;
	pthread_mutex_lock(&usdt_lock);
	/* VIGIL_USDT_PLAN: the jump path's plans of the program's sites (vigil record) */
	const char *plan = getenv("VIGIL_USDT_PLAN");
	for (const char *s = plan ? plan : ""; *s;) {
		size_t len = strcspn(s, ";");
		char one[512];
		if (len && len < sizeof one) {
			memcpy(one, s, len);
			one[len] = 0;
			if (vg__usdt_plan_add(one, err, sizeof err) < 0)
				vg__warn("VIGIL_USDT_PLAN: %s", err);
		}
		s += len + (s[len] == ';');
	}
	for (size_t i = 0; i < n; i++)
		remember(&pats[i]);
	long armed = n ? apply(pats, n, 0, &matched, &of_provider, err, sizeof err) : 0;
	if (n)
		loader_arm();
	pthread_mutex_unlock(&usdt_lock);
	if (armed < 0)
		vg__warn("usdt: %s", err);
	else if (of_provider && !matched) /* a typo in a probe name; other images say nothing */
		vg__warn("usdt: the loaded objects have probes of that provider, but none matches "
		         "VIGIL_USDT=%s (vigil usdt list shows them)",
		         env);
	else if (vg__rt.cfg.verbose)
		vg__warn("usdt: %ld of %zu matching sites armed, %ld on the jump path", armed,
		         matched, jumped);
}
