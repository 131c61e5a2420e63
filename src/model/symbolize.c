/* Raw sites to file:line through libdw's offline interface: each module is opened once
 * (by path, as recorded), its debug information found beside it or by build id.
 *
 * libdw is loaded with dlopen when the first raw site is looked up, not linked: it and
 * the compression libraries it needs (zlib, lzma, bzip2) would otherwise be loaded by
 * every start of every program holding this code, `vigil query` included (docs/
 * architecture.md, src/cli). Without it, sites stay module+0xHEX and
 * vgm_symbolizer_unavailable says why. */
#define _GNU_SOURCE
#include "model/symbolize.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VIGIL_HAVE_LIBDW
#include <dlfcn.h>
#include <elfutils/libdwfl.h>

/* elfutils' soname since 0.1xx (2005): the library Debian's libdw1 installs */
#define LIBDW_SONAME "libdw.so.1"

/* The libdw functions used here, from the library loaded at first use. */
static struct {
	__typeof__(dwfl_begin) *begin;
	__typeof__(dwfl_end) *end;
	__typeof__(dwfl_report_offline) *report_offline;
	__typeof__(dwfl_report_end) *report_end;
	__typeof__(dwfl_module_info) *module_info;
	__typeof__(dwfl_module_getsrc) *module_getsrc;
	__typeof__(dwfl_lineinfo) *lineinfo;
	__typeof__(dwfl_line_comp_dir) *line_comp_dir;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	char why[256]; /* "" once loaded */
} dw;

static void load_libdw(void)
{
	void *h = dlopen(LIBDW_SONAME, RTLD_NOW | RTLD_LOCAL);
	struct {
		const char *name;
		void **at;
	} syms[] = {
	    {"dwfl_begin", (void **)&dw.begin},
	    {"dwfl_end", (void **)&dw.end},
	    {"dwfl_report_offline", (void **)&dw.report_offline},
	    {"dwfl_report_end", (void **)&dw.report_end},
	    {"dwfl_module_info", (void **)&dw.module_info},
	    {"dwfl_module_getsrc", (void **)&dw.module_getsrc},
	    {"dwfl_lineinfo", (void **)&dw.lineinfo},
	    {"dwfl_line_comp_dir", (void **)&dw.line_comp_dir},
	    {"dwfl_build_id_find_elf", (void **)&dw.callbacks.find_elf},
	    {"dwfl_standard_find_debuginfo", (void **)&dw.callbacks.find_debuginfo},
	    {"dwfl_offline_section_address", (void **)&dw.callbacks.section_address},
	};
	if (!h) {
		const char *e = dlerror();
		snprintf(dw.why, sizeof dw.why, "%s", e ? e : "cannot load " LIBDW_SONAME);
		return;
	}
	for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
		if (!(*syms[i].at = dlsym(h, syms[i].name))) {
			snprintf(dw.why, sizeof dw.why, "%s: no %s", LIBDW_SONAME, syms[i].name);
			dw.begin = NULL;
			return;
		}
	dw.callbacks.debuginfo_path = &dw.debuginfo_path;
}

/* Whether libdw is loaded (loading it on the first call). */
static bool have_libdw(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, load_libdw);
	return dw.begin != NULL;
}
#endif

const char *vgm_symbolizer_unavailable(void)
{
#ifdef VIGIL_HAVE_LIBDW
	return have_libdw() ? NULL : dw.why;
#else
	return "vigil was built without libdw (libdw-dev)";
#endif
}

struct module {
	char *path;
#ifdef VIGIL_HAVE_LIBDW
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr low;
#endif
};

struct vgm_symbolizer {
	struct module *mods;
	size_t nmods;
	char **strings; /* results, freed with the symbolizer */
	size_t nstrings;
	size_t raw, resolved;
};

struct vgm_symbolizer *vgm_symbolizer_new(void)
{
	return calloc(1, sizeof(struct vgm_symbolizer));
}

void vgm_symbolizer_free(struct vgm_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
#ifdef VIGIL_HAVE_LIBDW
		if (s->mods[i].dwfl)
			dw.end(s->mods[i].dwfl);
#endif
		free(s->mods[i].path);
	}
	for (size_t i = 0; i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->mods);
	free(s->strings);
	free(s);
}

void vgm_symbolizer_stats(const struct vgm_symbolizer *s, size_t *raw, size_t *resolved)
{
	*raw = s->raw;
	*resolved = s->resolved;
}

bool vgm_site_is_raw(const char *site, char **module, uint64_t *offset)
{
	if (site[0] != '/')
		return false;
	const char *plus = strrchr(site, '+');
	if (!plus || plus == site || plus[1] != '0' || plus[2] != 'x' || !plus[3])
		return false;
	uint64_t off = 0;
	for (const char *p = plus + 3; *p; p++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			return false;
		if (off >> 60)
			return false;
		off = off << 4 | d;
	}
	if (module && !(*module = strndup(site, (size_t)(plus - site))))
		return false;
	*offset = off;
	return true;
}

char *vgm_site_path(const char *file, const char *comp_dir)
{
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	if (comp_dir && file[0] == '/') {
		size_t n = strlen(comp_dir);
		while (n > 1 && comp_dir[n - 1] == '/')
			n--;
		if (n > 1 && !strncmp(file, comp_dir, n) && file[n] == '/')
			return strdup(file + n + 1);
		/* The longest common directory prefix, if it has two components or more
		 * (/work/main/ of /work/main/src/x.c built in /work/main/build). */
		size_t last = 0, comps = 0;
		for (size_t i = 0; file[i] && file[i] == comp_dir[i]; i++)
			if (file[i] == '/' && i > 0) {
				last = i;
				comps++;
			}
		if (comps >= 2)
			return strdup(file + last + 1);
	}
	return strdup(file);
}

static int keep(struct vgm_symbolizer *s, char *str)
{
	if (!str)
		return -1;
	char **v = realloc(s->strings, (s->nstrings + 1) * sizeof *v);
	if (!v) {
		free(str);
		return -1;
	}
	s->strings = v;
	s->strings[s->nstrings++] = str;
	return 0;
}

static struct module *module_get(struct vgm_symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nmods; i++)
		if (!strcmp(s->mods[i].path, path))
			return &s->mods[i];
	struct module *v = realloc(s->mods, (s->nmods + 1) * sizeof *v);
	if (!v)
		return NULL;
	s->mods = v;
	struct module *m = &s->mods[s->nmods];
	memset(m, 0, sizeof *m);
	if (!(m->path = strdup(path)))
		return NULL;
	s->nmods++;
#ifdef VIGIL_HAVE_LIBDW
	m->dwfl = have_libdw() ? dw.begin(&dw.callbacks) : NULL;
	if (m->dwfl) {
		const char *base = strrchr(path, '/');
		m->mod = dw.report_offline(m->dwfl, base ? base + 1 : path, path, -1);
		dw.report_end(m->dwfl, NULL, NULL);
		if (m->mod)
			dw.module_info(m->mod, NULL, &m->low, NULL, NULL, NULL, NULL, NULL);
	}
#endif
	return m;
}

/* file:line of the call whose return address is at `off` in the module, or NULL. */
static char *lookup(struct vgm_symbolizer *s, const char *path, uint64_t off)
{
#ifdef VIGIL_HAVE_LIBDW
	struct module *m = module_get(s, path);
	if (!m || !m->mod || !off)
		return NULL;
	/* A return address is the instruction after the call: the call is at addr - 1. */
	Dwfl_Line *line = dw.module_getsrc(m->mod, m->low + off - 1);
	if (!line)
		return NULL;
	int lineno = 0;
	const char *file = dw.lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!file || lineno <= 0)
		return NULL;
	char *rel = vgm_site_path(file, dw.line_comp_dir(line));
	if (!rel)
		return NULL;
	char *site = NULL;
	if (asprintf(&site, "%s:%d", rel, lineno) < 0)
		site = NULL;
	free(rel);
	return site;
#else
	(void)s, (void)path, (void)off;
	return NULL;
#endif
}

const char *vgm_symbolize(struct vgm_symbolizer *s, const char *site)
{
	char *module = NULL;
	uint64_t off;
	if (!vgm_site_is_raw(site, &module, &off))
		return site;
	s->raw++;
	char *out = lookup(s, module, off);
	if (out) {
		s->resolved++;
	} else {
		const char *base = strrchr(module, '/');
		if (asprintf(&out, "%s+0x%" PRIx64, base ? base + 1 : module, off) < 0)
			out = NULL;
	}
	free(module);
	if (keep(s, out))
		return NULL;
	return out;
}
