/* The plan cache of the jump path (usdt_plan_cache.h). A cache file:
 *
 *   vigil usdt plans 1
 *   object SIZE MTIME_NS BUILD_ID|-
 *   + PC PC:HEX:INSNS           a site's plan
 *   - PC WHY                    a site refused (it stays on the int3 path)
 *   end N                       N site lines: a file cut short is seen */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_io.h"
#include "usdt_plan_cache.h"

#define HEADER "vigil usdt plans 1"

int vg_plan_set_add(struct vg_plan_set *s, uint64_t pc, int ok, const char *text)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct vg_plan_entry *m = realloc(s->v, cap * sizeof *m);
		if (!m)
			return -1;
		s->v = m, s->cap = cap;
	}
	struct vg_plan_entry *e = &s->v[s->n++];
	e->pc = pc, e->ok = ok;
	snprintf(e->text, sizeof e->text, "%s", text);
	return 0;
}

const struct vg_plan_entry *vg_plan_set_find(const struct vg_plan_set *s, uint64_t pc)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pc == pc)
			return &s->v[i];
	return NULL;
}

void vg_plan_set_free(struct vg_plan_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* The cache directory into dir (created when `create`); 0, or -1: no cache. */
static int cache_dir(char *dir, size_t size, int create)
{
	const char *own = getenv("VIGIL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;
	if (own)
		n = *own ? snprintf(dir, size, "%s", own) : -1;
	else if (xdg && *xdg == '/')
		n = snprintf(dir, size, "%s/vigil", xdg);
	else if (home && *home == '/')
		n = snprintf(dir, size, "%s/.cache/vigil", home);
	else
		n = -1;
	if (n < 0 || (size_t)n >= size)
		return -1;
	/* 0700: plans name the user's files */
	return create ? vgb_mkdirs(dir, 0700) : 0;
}

static int cache_path(const struct vg_plan_key *k, char *path, size_t size, int create)
{
	char dir[4096];
	if (cache_dir(dir, sizeof dir, create) < 0)
		return -1;
	int n = k->build_id[0] ? snprintf(path, size, "%s/usdt-%s.plans", dir, k->build_id)
	                       : snprintf(path, size, "%s/usdt-%" PRIx64 "-%" PRIx64 ".plans", dir,
	                                  (uint64_t)k->st.st_dev, (uint64_t)k->st.st_ino);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

int vg_plan_cache_load(const struct vg_plan_key *k, const char *shown, struct vg_plan_set *out)
{
	char path[4200], line[600];
	if (cache_path(k, path, sizeof path, 0) < 0)
		return 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	unsigned lineno = 1;
	int rc = -1;
	if (!fgets(line, sizeof line, f) || strcmp(line, HEADER "\n"))
		goto out;
	lineno++;
	uint64_t size, mtime;
	char id[90];
	if (!fgets(line, sizeof line, f) ||
	    sscanf(line, "object %" SCNu64 " %" SCNu64 " %89s", &size, &mtime, id) != 3)
		goto out;
	/* a copy changed in place (a site patched by hand) keeps its build-id */
	if (size != (uint64_t)k->st.st_size || mtime != mtime_ns(&k->st) ||
	    strcmp(id, k->build_id[0] ? k->build_id : "-")) {
		rc = 0; /* another version of the object: planned again, and replaced */
		goto out;
	}
	while (lineno++, fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		if (!len || line[len - 1] != '\n')
			goto out;
		line[len - 1] = 0;
		unsigned long long n;
		if (sscanf(line, "end %llu", &n) == 1) {
			rc = n == out->n && fgetc(f) == EOF ? 1 : -1;
			break;
		}
		char *end;
		if ((line[0] != '+' && line[0] != '-') || line[1] != ' ')
			goto out;
		uint64_t pc = strtoull(line + 2, &end, 16);
		if (end == line + 2 || *end != ' ' || !end[1] ||
		    vg_plan_set_add(out, pc, line[0] == '+', end + 1) < 0)
			goto out;
	}
out:
	fclose(f);
	if (rc < 0) {
		fprintf(stderr,
		        "vigil: plan cache %s:%u (for %s): not a plan file; planning again\n", path,
		        lineno, shown);
		vg_plan_set_free(out);
	} else if (rc == 0) {
		vg_plan_set_free(out);
	}
	return rc;
}

void vg_plan_cache_store(const struct vg_plan_key *k, const struct vg_plan_set *plans)
{
	char path[4200], tmp[4300];
	if (cache_path(k, path, sizeof path, 1) < 0)
		return;
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	FILE *f = fopen(tmp, "wex");
	if (!f)
		return;
	fprintf(f, HEADER "\nobject %" PRIu64 " %" PRIu64 " %s\n", (uint64_t)k->st.st_size,
	        mtime_ns(&k->st), k->build_id[0] ? k->build_id : "-");
	for (size_t i = 0; i < plans->n; i++)
		fprintf(f, "%c %" PRIx64 " %s\n", plans->v[i].ok ? '+' : '-', plans->v[i].pc,
		        plans->v[i].text);
	fprintf(f, "end %zu\n", plans->n);
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		unlink(tmp);
}
