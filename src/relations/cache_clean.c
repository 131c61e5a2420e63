/* Files of an older trace removed from beside the relations cache (cache_internal.h): a
 * relation's file (PATH.rel-NAME) or a derived one (PATH.derived-NAME) is written under the
 * key of the trace as it was; once the trace changed, a query naming that relation would
 * rebuild it, but one naming others never would, and the file stayed. So when a manifest
 * of a new key is written, every such file of another key goes.
 *
 * Safely: only names vigil writes (not its temporary files), only regular files (a link
 * is never followed, nor removed), and only a file whose header and key were read and
 * found another trace's (or another vigil's): one being written (its header comes last),
 * damaged or of this key stays. A query of the old key still reading a file keeps its
 * mapping; one of the new key finds the relation missing and builds it. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "relations/cache_derived.h"
#include "relations/cache_internal.h"

/* NAME as vgc_relation_path escapes it: letters, digits, '_', '-', '.', %XX, ~HASH, no
 * temporary file's ".tmp." */
static bool written_name(const char *name)
{
	if (!*name || strstr(name, ".tmp."))
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("_-.%~", *c)))
			return false;
	return true;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

void vgc_clean_stale(const char *manifest, const void *key, size_t keylen)
{
	char dir[4096];
	const char *slash = strrchr(manifest, '/'), *base = slash ? slash + 1 : manifest;
	int dirlen = !slash ? 1 : slash == manifest ? 1 : (int)(slash - manifest);
	if (dirlen >= (int)sizeof dir)
		return;
	snprintf(dir, sizeof dir, "%.*s", dirlen, !slash ? "." : manifest);
	DIR *dh = opendir(dir);
	if (!dh)
		return;
	size_t blen = strlen(base);
	for (struct dirent *e; (e = readdir(dh));) {
		const char *rest = e->d_name + blen;
		if (strncmp(e->d_name, base, blen))
			continue;
		bool rel = !strncmp(rest, ".rel-", 5), derived = !strncmp(rest, ".derived-", 9);
		if (!(rel || derived) || !written_name(rest + (rel ? 5 : 9)))
			continue;
		char path[8300];
		struct stat before, after;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (lstat(path, &before) != 0 || !S_ISREG(before.st_mode))
			continue;
		enum vgc_open_status st = rel ? vgc_probe_relation(path, key, keylen)
		                              : vgc_derived_probe(path, key, keylen);
		/* removed only if it is still the file read (not one renamed into place since) */
		if (st == VGC_STALE && lstat(path, &after) == 0 && same_file(&before, &after)) {
			unlink(path);
			/* and the record of its checked columns (cache_checked.c), a file alone */
			char rec[8400];
			snprintf(rec, sizeof rec, "%s%%checked", path);
			if (rel && lstat(rec, &after) == 0 && S_ISREG(after.st_mode))
				unlink(rec);
		}
	}
	closedir(dh);
}
