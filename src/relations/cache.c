/* The relations cache (cache.h): where it is kept, what it is keyed on, and the
 * choice between mapping it and building the relations from the trace. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cache_dir.h"
#include "base/file_io.h"
#include "relations/build.h" /* vgq_waits_possible */
#include "relations/cache.h"
#include "relations/cache_derived.h"
#include "relations/cache_internal.h"
#include "relations/derived.h" /* vgq_derived_registered */
#include "relations/unmerged.h"

#define MIN_EVENTS_DEFAULT 200000u

/* ---- the key: the vigil build and every file the relations were built from ---- */

struct key {
	uint8_t *p;
	size_t n, cap;
	bool stable; /* every stream's size is the one read: nothing grew meanwhile */
};

static void key_add(struct key *k, const void *p, size_t n)
{
	if (k->n + n > k->cap) {
		k->cap = (k->n + n) * 2 + 256;
		k->p = vgq_xrealloc(k->p, k->cap, 1);
	}
	memcpy(k->p + k->n, p, n);
	k->n += n;
}

/* path resolved (realpath) as far as it exists, the rest appended: a shared layout's
 * image path (TRACE/shared/NAME) names no folder. The caller frees it. */
static char *canonical(const char *path)
{
	char *real = realpath(path, NULL);
	const char *slash = strrchr(path, '/');
	if (real || !slash || slash == path)
		return real ? real : vgb_xstrdup(path);
	char *head = vgb_xstrdup(path);
	head[slash - path] = '\0';
	char *h = canonical(head);
	size_t n = strlen(h) + strlen(slash) + 1;
	char *out = vgq_xcalloc(n, 1);
	snprintf(out, n, "%s%s", h, slash);
	free(h);
	free(head);
	return out;
}

/* A file's path and identity (size, times, inode); its size, or -1 if it is gone. The
 * path canonical: `t`, `./t/` and a link to t name one trace, one cache. */
static int64_t key_file(struct key *k, const char *path)
{
	char *real = canonical(path);
	key_add(k, real, strlen(real) + 1);
	free(real);
	struct stat st;
	int64_t words[7] = {-1};
	if (stat(path, &st) == 0) {
		int64_t w[7] = {(int64_t)st.st_size,         (int64_t)st.st_mtim.tv_sec,
		                (int64_t)st.st_mtim.tv_nsec, (int64_t)st.st_ctim.tv_sec,
		                (int64_t)st.st_ctim.tv_nsec, (int64_t)st.st_ino,
		                (int64_t)st.st_dev};
		memcpy(words, w, sizeof words);
	}
	key_add(k, words, sizeof words);
	return words[0];
}

/* The object this code is in (vigil, or libvigilquery in Python) and its GNU build id. */
struct self_object {
	uintptr_t at;     /* an address inside it */
	const char *path; /* "" for the executable */
	const uint8_t *id;
	size_t idlen;
};

static void find_build_id(struct self_object *o, uintptr_t base, const ElfW(Phdr) * ph)
{
	size_t align = ph->p_align == 8 ? 8 : 4;
	const uint8_t *p = (const uint8_t *)(base + ph->p_vaddr), *end = p + ph->p_memsz;
	while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
		const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
		size_t name = (n->n_namesz + align - 1) & ~(align - 1);
		size_t desc = (n->n_descsz + align - 1) & ~(align - 1);
		if ((size_t)(end - p) - sizeof *n < name + desc)
			return;
		const uint8_t *d = p + sizeof *n + name;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    !memcmp(p + sizeof *n, "GNU", 4) && n->n_descsz > 0) {
			o->id = d;
			o->idlen = n->n_descsz;
			return;
		}
		p = d + desc;
	}
}

static int self_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct self_object *o = arg;
	bool here = false;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && o->at >= lo && o->at - lo < ph->p_memsz)
			here = true;
	}
	if (!here)
		return 0;
	o->path = info->dlpi_name;
	for (size_t i = 0; i < info->dlpi_phnum && !o->id; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			find_build_id(o, info->dlpi_addr, &info->dlpi_phdr[i]);
	return 1;
}

/* The build id vgq_cache_key_program read (idlen 0: none: this object's own). */
static struct {
	uint8_t id[64];
	size_t idlen;
} key_program;

/* The build id of the ELF file at path (its notes, by file offsets), copied to id[64]. */
static size_t file_build_id(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	size_t size = (size_t)st.st_size, len = 0;
	uint8_t *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return 0;
	const ElfW(Ehdr) *e = (const ElfW(Ehdr) *)f;
	bool elf = !memcmp(e->e_ident, ELFMAG, SELFMAG) && e->e_phentsize == sizeof(ElfW(Phdr)) &&
	           e->e_phoff <= size && (size - e->e_phoff) / sizeof(ElfW(Phdr)) >= e->e_phnum;
	for (size_t i = 0; elf && i < e->e_phnum && !len; i++) {
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(f + e->e_phoff) + i;
		if (ph->p_type != PT_NOTE || ph->p_offset > size ||
		    ph->p_filesz > size - ph->p_offset)
			continue;
		/* find_build_id reads base + p_vaddr: the note by its file offset instead */
		ElfW(Phdr) at = *ph;
		at.p_vaddr = ph->p_offset;
		at.p_memsz = ph->p_filesz;
		struct self_object o = {0};
		find_build_id(&o, (uintptr_t)f, &at);
		if (o.id && o.idlen <= 64)
			memcpy(id, o.id, len = o.idlen);
	}
	munmap(f, size);
	return len;
}

bool vgq_cache_key_program(const char *path)
{
	uint8_t id[64];
	size_t len = path ? file_build_id(path, id) : 0;
	if (len) {
		memcpy(key_program.id, id, len);
		key_program.idlen = len;
	}
	return len > 0;
}

/* The folder of the object holding this code: the program's (/proc/self/exe), or the
 * shared library's (libvigilquery.so) as the loader found it. */
static bool own_folder(char *out, size_t n)
{
	struct self_object o = {.at = (uintptr_t)&own_folder};
	ssize_t len;
	if (dl_iterate_phdr(self_object, &o) && o.path && *o.path) {
		if (snprintf(out, n, "%s", o.path) >= (int)n)
			return false;
		len = (ssize_t)strlen(out);
	} else if ((len = readlink("/proc/self/exe", out, n - 1)) <= 0) {
		return false;
	}
	out[len] = 0;
	char *slash = strrchr(out, '/');
	if (!slash)
		return snprintf(out, n, ".") < (int)n;
	*slash = 0;
	return true;
}

bool vgq_cache_key_beside(const char *const *places)
{
	char dir[4096], path[8200];
	if (!own_folder(dir, sizeof dir))
		return false;
	for (; *places; places++) {
		snprintf(path, sizeof path, "%s/%s", dir, *places);
		if (vgq_cache_key_program(path))
			return true;
	}
	return false;
}

/* Which vigil builds: another build (another build id) never reads this one's cache. By
 * the build id vgq_cache_key_program read, else of the object holding this code, not
 * /proc/self/exe (under valgrind that is valgrind); without one, the object's file
 * identity. False if neither is known. */
static bool key_builder(struct key *k)
{
	static const char tag[] = "build id";
	if (key_program.idlen) {
		key_add(k, tag, sizeof tag);
		key_add(k, key_program.id, key_program.idlen);
		return true;
	}
	struct self_object o = {.at = (uintptr_t)&key_builder};
	if (dl_iterate_phdr(self_object, &o) && o.id) {
		key_add(k, tag, sizeof tag);
		key_add(k, o.id, o.idlen);
		return true;
	}
	return key_file(k, o.path && *o.path ? o.path : "/proc/self/exe") >= 0;
}

static void make_key(struct key *k, const struct vgt_trace *t)
{
	static const char tag[] = "vigil relations cache v1";
	key_add(k, tag, sizeof tag);
	k->stable = key_builder(k); /* another vigil may build otherwise */
	char path[4200];
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		snprintf(path, sizeof path, "%s/metadata", vgt_image_at(t, i)->path);
		key_file(k, path);
	}
	for (size_t i = 0; i < vgt_stream_count(t); i++) {
		const struct vgt_stream *s = vgt_stream_at(t, i);
		if (key_file(k, s->path) != (int64_t)s->file_size)
			k->stable = false;
	}
}

/* ---- where ---- */

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* TRACE/.vigil-cache: a dot file, which trace readers pass over. */
static bool beside_path(const char *trace, char *out, size_t n)
{
	return is_dir(trace) && snprintf(out, n, "%s/.vigil-cache", trace) < (int)n;
}

bool vgq_cache_dir(char *out, size_t n)
{
	return vgb_cache_dir(out, n);
}

/* CACHEDIR/relations-HASH.vgc, HASH of the trace's real path. */
static bool dir_path(const char *trace, bool create, char *out, size_t n)
{
	char dir[4096];
	if (!vgq_cache_dir(dir, sizeof dir))
		return false;
	char *real = realpath(trace, NULL);
	if (!real)
		return false;
	uint64_t h = 1469598103934665603ull;
	for (const char *c = real; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	free(real);
	if (create && vgb_mkdirs(dir, 0700) < 0)
		return false;
	return snprintf(out, n, "%s/relations-%016llx.vgc", dir, (unsigned long long)h) < (int)n;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t min_events(void)
{
	const char *e = getenv("VIGIL_CACHE_MIN_EVENTS");
	char *end;
	if (!e || !*e)
		return MIN_EVENTS_DEFAULT;
	unsigned long long v = strtoull(e, &end, 10);
	return *end ? MIN_EVENTS_DEFAULT : v;
}

static bool named(const struct vgq_cache_request *rq, const char *name)
{
	if (!rq->need)
		return true;
	for (size_t i = 0; i < rq->nneed; i++)
		if (!strcasecmp(rq->need[i], name))
			return true;
	return false;
}

/* Relation i of a database built from the trace (or made by a manifest) is one a build
 * for this request holds: named, or built whatever is named (entity relations). */
static bool built_for(const struct vgq_database *db, size_t i, const struct vgq_cache_request *rq)
{
	return !db->internal->by_need || !db->internal->by_need[i] ||
	       named(rq, db->relations[i]->name);
}

static void say_damaged(const struct vgq_cache_request *rq, const char *path, const char *why)
{
	fprintf(stderr, "%s: the relations cache %s is damaged (%s): rebuilt from the trace\n",
	        rq->who, path, why);
	unlink(path);
}

/* ---- writing: the relations built, then the manifest ---- */

static bool by_request(const struct vgq_database *db, size_t i)
{
	return !strcasecmp(db->relations[i]->name, "WaitFor");
}

/* Writes the database's relations that `fresh` marks (built here, not cached yet) and,
 * unless one is there already, the manifest, at `manifest` (each file through a
 * temporary one renamed over it). */
static bool write_files(const struct vgq_database *db, const bool *fresh, const struct key *k,
                        uint64_t stream_damage, bool manifest_too, const char *manifest)
{
	struct vgc_out *outs = vgq_xcalloc(db->nrelations + 1, sizeof *outs);
	char(*paths)[4096] = vgq_xcalloc(db->nrelations + 1, sizeof *paths);
	size_t n = 0;
	/* what the pass warned beyond its own: the derived WaitFor's, said when it is named */
	char *const *extra = db->warnings + db->internal->nwarnings_pass;
	size_t nextra = db->nwarnings - db->internal->nwarnings_pass;
	for (size_t i = 0; i < db->nrelations; i++) {
		if (!fresh[i])
			continue;
		vgc_relation_path(manifest, db->relations[i]->name, paths[n], sizeof paths[n]);
		bool wf = by_request(db, i);
		outs[n] = (struct vgc_out){.rel = db->relations[i],
		                           .path = paths[n],
		                           .warnings = wf ? extra : NULL,
		                           .nwarnings = wf ? nextra : 0};
		n++;
	}
	int rc = vgc_write_relations(outs, n, k->p, k->n, vgt_decode_threads());
	if (rc == 0 && manifest_too)
		rc = vgc_write_manifest(db, db->internal->nwarnings_pass, k->p, k->n, stream_damage,
		                        manifest);
	free(outs);
	free(paths);
	return rc == 0;
}

/* Writes beside the trace, else (that directory cannot be written) in the cache
 * directory; the manifest's path in res->path. The manifest is then of a new key (none of
 * this one was found): the files of older ones beside it are removed. */
static bool save(const struct vgq_database *db, const bool *fresh, const struct key *k,
                 uint64_t stream_damage, const char *trace, struct vgq_cache_result *res)
{
	char path[4096];
	bool written = false;
	if (beside_path(trace, path, sizeof path)) {
		written = write_files(db, fresh, k, stream_damage, true, path);
		/* a file that failed after the writer freed pieces (unmerged.h): none to write
		 * again from */
		if (!written && ((errno != EACCES && errno != EROFS && errno != EPERM) ||
		                 vgq_database_released(db)))
			return false;
	}
	if (!written)
		written = dir_path(trace, true, path, sizeof path) &&
		          write_files(db, fresh, k, stream_damage, true, path);
	if (!written)
		return false;
	snprintf(res->path, sizeof res->path, "%s", path);
	vgc_clean_stale(path, k->p, k->n); /* a new key's manifest: older files go */
	return true;
}

/* ---- reading: the manifest, then each relation's file ---- */

static int rel_order(const struct vgq_relation *x, const struct vgq_relation *y)
{
	int c = strcasecmp(x->name, y->name);
	return c ? c : strcmp(x->name, y->name);
}

/* Adds relation r to the database (no tuples yet) where its name sorts. */
static size_t insert_relation(struct vgq_database *db, struct vgq_relation *r)
{
	struct vgq_relation **rels =
	    vgq_xrealloc((void *)db->relations, db->nrelations + 1, sizeof *rels);
	bool *by_need = vgq_xrealloc(db->internal->by_need, db->nrelations + 1, sizeof *by_need);
	size_t at = 0;
	while (at < db->nrelations && rel_order(rels[at], r) < 0)
		at++;
	memmove(rels + at + 1, rels + at, (db->nrelations - at) * sizeof *rels);
	memmove(by_need + at + 1, by_need + at, (db->nrelations - at) * sizeof *by_need);
	rels[at] = r;
	by_need[at] = false;
	db->relations = rels;
	db->internal->by_need = by_need;
	db->nrelations++;
	return at;
}

static int find_relation(const struct vgq_database *db, const char *name)
{
	for (size_t i = 0; i < db->nrelations; i++)
		if (!strcmp(db->relations[i]->name, name))
			return (int)i;
	return -1;
}

/* What the cache holds for a request: the manifest's database, and the relations' files
 * opened and checked (files[i] for relation i), the others to build. */
struct found {
	struct vgq_database *db; /* from the manifest */
	uint64_t stream_damage;
	struct vgc_rfile **files;
	const char **missing; /* names to build */
	size_t nmissing;
	bool damaged;
};

static void found_free(struct found *f)
{
	if (f->db)
		for (size_t i = 0; i < f->db->nrelations; i++)
			vgc_rfile_close(f->files[i]);
	vgq_database_free(f->db);
	free(f->files);
	free(f->missing);
	*f = (struct found){0};
}

/* The file of relation `name` of the manifest at `where`, checked for this request. */
static struct vgc_rfile *open_relation(const char *where, const char *name, const struct key *k,
                                       const struct vgq_cache_request *rq, bool all_attrs,
                                       bool *damaged)
{
	char path[4200], why[256];
	struct vgc_rfile *f = NULL;
	vgc_relation_path(where, name, path, sizeof path);
	switch (vgc_open_relation(path, name, k->p, k->n, &f, why, sizeof why)) {
	case VGC_OPENED:
		if (vgc_rfile_check(f, all_attrs ? NULL : rq))
			return f;
		vgc_rfile_close(f);
		snprintf(why, sizeof why, "a column's checksum differs");
		/* fall through */
	case VGC_DAMAGED:
		say_damaged(rq, path, why);
		*damaged = true;
		return NULL;
	case VGC_ABSENT:
	case VGC_STALE:
		break;
	}
	return NULL;
}

static void find_files(struct found *fd, const char *where, const struct key *k,
                       struct vgt_trace *t, const struct vgq_cache_request *rq)
{
	struct vgq_database *db = fd->db;
	/* the derived WaitFor (a trace with lock operations and no relation of that name) is
	 * no relation of the manifest: it has its file when a build named it */
	bool own = false;
	for (size_t i = 0; i < db->nrelations; i++)
		own = own || !strcasecmp(db->relations[i]->name, "WaitFor");
	bool derived = !own && named(rq, "WaitFor") && vgq_waits_possible(t);
	struct vgc_rfile *wf = NULL;
	if (derived && (wf = open_relation(where, "WaitFor", k, rq, !rq->need, &fd->damaged)))
		insert_relation(db,
		                vgq_relation_new(vgq_pool_intern(db->internal->pool, "WaitFor", 7),
		                                 VGQ_REL_INTERVAL));
	fd->files = vgq_xcalloc(db->nrelations + 1, sizeof *fd->files);
	fd->missing = vgq_xcalloc(db->nrelations + 2, sizeof *fd->missing);
	for (size_t i = 0; i < db->nrelations; i++) {
		const char *name = db->relations[i]->name;
		if (wf && !strcmp(name, "WaitFor")) {
			fd->files[i] = wf;
			continue;
		}
		if (!built_for(db, i, rq))
			continue;
		bool entity = db->relations[i]->kind == VGQ_REL_ENTITY && !db->internal->by_need[i];
		fd->files[i] = open_relation(where, name, k, rq, entity || !rq->need, &fd->damaged);
		if (!fd->files[i])
			fd->missing[fd->nmissing++] = name;
	}
	if (derived && !wf)
		fd->missing[fd->nmissing++] = "WaitFor";
}

/* The warnings of the request's WaitFor file, after the pass's. */
static void add_warnings(struct vgq_database *db, const struct vgc_rfile *f)
{
	const char *const *w;
	size_t n = vgc_rfile_warnings(f, &w);
	db->warnings = vgq_xrealloc(db->warnings, db->nwarnings + n + 1, sizeof *db->warnings);
	for (size_t i = 0; i < n; i++)
		db->warnings[db->nwarnings++] = strdup(w[i]);
}

/* Puts the files found (fd->files, by the places of fd->db: the manifest's database,
 * or db itself) into db's places, but those of relations db built from the trace; the
 * files not taken are closed. Returns which of db's relations are built here and not
 * cached (to write), or NULL after saying so if a file's values are not as written. */
static bool *adopt_into(struct vgq_database *db, struct found *fd, bool built,
                        const struct vgq_cache_request *rq)
{
	const struct vgq_database *from = fd->db ? fd->db : db;
	size_t nfrom = fd->files ? from->nrelations : 0;
	/* relations cached but not built here (the derived WaitFor) get a place first */
	for (size_t j = 0; built && j < nfrom; j++)
		if (fd->files[j] && find_relation(db, from->relations[j]->name) < 0)
			insert_relation(
			    db, vgq_relation_new(vgq_pool_intern(db->internal->pool,
			                                         from->relations[j]->name,
			                                         strlen(from->relations[j]->name)),
			                         from->relations[j]->kind));
	bool *fresh = vgq_xcalloc(db->nrelations + 1, sizeof *fresh);
	struct vgc_rfile **files = vgq_xcalloc(db->nrelations + 1, sizeof *files);
	for (size_t i = 0; i < db->nrelations; i++) {
		int j = from == db ? (int)i : find_relation(from, db->relations[i]->name);
		bool cached = j >= 0 && (size_t)j < nfrom && fd->files[j];
		fresh[i] = built && !cached && built_for(db, i, rq);
		bool entity = db->internal->by_need && !db->internal->by_need[i] &&
		              db->relations[i]->kind == VGQ_REL_ENTITY;
		if (!cached || (built && entity)) /* built here whatever is named: kept */
			continue;
		files[i] = fd->files[j];
		fd->files[j] = NULL;
		if (by_request(db, i))
			add_warnings(db, files[i]);
	}
	for (size_t j = 0; j < nfrom; j++) {
		vgc_rfile_close(fd->files[j]);
		fd->files[j] = NULL;
	}
	char why[4200];
	bool ok = vgc_adopt(db, files, why, sizeof why);
	if (!ok)
		say_damaged(rq, why, "a value is out of place");
	for (size_t i = 0; i < db->nrelations; i++)
		vgc_rfile_close(files[i]);
	free(files);
	if (!ok) {
		free(fresh);
		return NULL;
	}
	return fresh;
}

/* The relations the build left unmerged (unmerged.h) replaced by their files just written
 * at `manifest` (mapped as a warm query's, none summed again), or, not written, gathered
 * into columns of their own. */
static bool settle(struct vgq_database *db, bool written, const char *manifest, const struct key *k,
                   const struct vgq_cache_request *rq)
{
	struct vgc_rfile **files = vgq_xcalloc(db->nrelations + 1, sizeof *files);
	bool any = false;
	/* a relation whose pieces were freed had its file written whole (renamed into place),
	 * even when another file failed */
	bool look = *manifest && (written || vgq_database_released(db));
	for (size_t i = 0; look && i < db->nrelations; i++) {
		const struct vgq_relation *r = db->relations[i];
		if (!r->unmerged)
			continue;
		char path[4096], why[256];
		vgc_relation_path(manifest, r->name, path, sizeof path);
		if (vgc_open_relation(path, r->name, k->p, k->n, &files[i], why, sizeof why) !=
		    VGC_OPENED)
			continue;
		vgc_rfile_written(files[i], rq);
		any = true;
	}
	char why[4200];
	if (any && !vgc_adopt(db, files, why, sizeof why)) /* none put: gathered below */
		for (size_t i = 0; i < db->nrelations; i++)
			vgc_rfile_close(files[i]);
	free(files);
	return vgq_database_settle(db, vgt_decode_threads());
}

struct vgq_database *vgq_database_cached(struct vgt_trace *t, const struct vgq_cache_request *rq,
                                         struct vgq_cache_result *res)
{
	struct vgq_cache_result ignored;
	res = res ? res : &ignored;
	*res = (struct vgq_cache_result){.outcome = VGQ_CACHE_OFF};
	const char *env = getenv("VIGIL_CACHE");
	struct vgq_build_options o = {.need = rq->need, .nneed = rq->nneed};
	if (env && !strcmp(env, "off")) { /* nothing to keep: only what the query ranges over */
		/* Bounded and keyed builds are partial relations: never on the cached path below.
		 */
		struct vgq_build_options off = o;
		off.bounds = rq->bounds;
		off.nbounds = rq->nbounds;
		off.keys = rq->keys;
		off.nkeys = rq->nkeys;
		return vgq_database_build_opts(t, rq->need || rq->bounds || rq->keys ? &off : NULL);
	}
	struct key k = {0};
	make_key(&k, t);
	uint64_t open_damage = vgt_damage_total(t);
	char paths[2][4096];
	size_t npaths = 0;
	if (beside_path(rq->trace_path, paths[npaths], sizeof paths[npaths]))
		npaths++;
	if (dir_path(rq->trace_path, false, paths[npaths], sizeof paths[npaths]))
		npaths++;
	struct found fd = {0};
	const char *where = NULL;
	bool rebuilt = false;
	for (size_t i = 0; i < npaths && !where; i++) {
		char why[256];
		struct vgc_manifest man;
		switch (vgc_open_manifest(paths[i], k.p, k.n, &man, why, sizeof why)) {
		case VGC_OPENED:
			where = paths[i];
			fd.db = man.db;
			fd.stream_damage = man.stream_damage;
			find_files(&fd, where, &k, t, rq);
			rebuilt = fd.damaged;
			break;
		case VGC_DAMAGED:
			say_damaged(rq, paths[i], why);
			rebuilt = true;
			break;
		case VGC_ABSENT:
		case VGC_STALE:
			break;
		}
	}
	if (where && !fd.nmissing) { /* everything asked for is cached: the manifest's database */
		struct vgq_database *db = fd.db;
		db->damage = open_damage + fd.stream_damage;
		db->partial = db->damage > 0;
		fd.db = NULL;
		bool *fresh = adopt_into(db, &fd, false, rq);
		if (fresh) {
			free(fresh);
			found_free(&fd);
			/* the cache holds relations of the whole trace: derived relations
			 * (derived.c) are read from the same trace when a query names one */
			db->internal->trace = t;
			db->internal->whole_trace = true;
			res->outcome = VGQ_CACHE_WARM;
			snprintf(res->path, sizeof res->path, "%s", where);
			if (vgq_derived_registered(0)) /* none with VIGIL_DERIVED=off */
				vgc_derived_place(db, k.p, k.n, where, rq);
			free(k.p);
			return db;
		}
		vgq_database_free(db);
		found_free(&fd);
		where = NULL;
		rebuilt = true;
	}
	/* build what is missing beside the manifest, else all the request names; its event
	 * relations gathered by the cache's writer (settle) */
	struct vgq_build_options missing = {.need = fd.missing, .nneed = fd.nmissing},
	                         all = {.defer_merge = true};
	o.defer_merge = missing.defer_merge = true;
	struct vgq_database *db = vgq_database_build_opts(t, where      ? &missing
	                                                     : rq->need ? &o
	                                                                : &all);
	bool *fresh = adopt_into(db, &fd, true, rq);
	if (!fresh) { /* a cached file was wrong: all from the trace */
		vgq_database_free(db);
		where = NULL;
		rebuilt = true;
		db = vgq_database_build_opts(t, rq->need ? &o : &all);
		struct found none = {0};
		fresh = adopt_into(db, &none, true, rq);
	}
	found_free(&fd);
	res->outcome = rebuilt ? VGQ_CACHE_REBUILT : where ? VGQ_CACHE_ADDED : VGQ_CACHE_COLD;
	/* a damaged trace is cached with its damage, so it answers with the same report */
	uint64_t stream_damage = vgt_damage_total(t) - open_damage;
	uint64_t w0 = mono_ns();
	if (where) { /* the relations added beside the manifest */
		snprintf(res->path, sizeof res->path, "%s", where);
		if (k.stable)
			res->written = write_files(db, fresh, &k, stream_damage, false, where);
	} else if (k.stable && db->events >= min_events()) {
		res->written = save(db, fresh, &k, stream_damage, rq->trace_path, res);
	}
	if (!settle(db, res->written, res->path, &k, rq)) {
		/* a file failed after the writer had freed some of its pieces (unmerged.h): the
		 * relations built again, as without a cache */
		vgq_database_free(db);
		o.defer_merge = false;
		db = vgq_database_build_opts(t, rq->need ? &o : NULL);
		res->written = false;
	}
	res->write_ns = res->written ? mono_ns() - w0 : 0;
	/* derived relations beside it, when a query names one */
	if ((res->written || where) && vgq_derived_registered(0))
		vgc_derived_place(db, k.p, k.n, res->path, rq);
	free(fresh);
	free(k.p);
	return db;
}

const char *vgq_cache_outcome_name(enum vgq_cache_outcome o)
{
	static const char *const names[] = {"off", "warm", "cold", "rebuilt", "added"};
	return (unsigned)o < 5 ? names[o] : "?";
}
