/* vgl_load: reads a file and its imports (relative to the importing file, each file once,
 * cycles reported), parses and checks them into one model. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_io.h"
#include "lang/arena.h"
#include "lang/check.h"
#include "lang/lang.h"
#include "lang/load.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/symtab.h"

#define MAX_FILE_SIZE (16u << 20)
#define MAX_IMPORT_DEPTH 64

struct loaded {
	struct vgl_model model; /* first: vgl_free finds the rest from it */
	struct vgb_arena arena;
};

struct loader {
	struct vgl_diag *diag;
	struct vgb_arena *arena;
	struct vgl_symtab seen;  /* real path -> int state: 1 being loaded, 2 done */
	struct ast_file **order; /* imports before their importer: the checker's order */
	size_t norder, caporder;
	const char **files; /* main first, then imports as found */
	size_t nfiles, capfiles;
	const char **stack; /* the display paths of the files being loaded */
	const char **stack_real;
	size_t depth;
	const char *main_text; /* vgl_load_text: the main file's text, not read from disk */
	size_t main_len;
	const struct vgl_text *mem; /* vgl_load_texts: every file, by name; none from disk */
	size_t nmem;
};

static const struct vgl_text *in_memory(const struct loader *L, const char *name)
{
	for (size_t i = 0; i < L->nmem; i++)
		if (!strcmp(L->mem[i].name, name))
			return &L->mem[i];
	return NULL;
}

/* Reads a regular file (not a FIFO or a device: they could block or never end). */
static char *read_file(struct vgb_arena *a, const char *path, size_t *len, char *why,
                       size_t whysize)
{
	size_t n;
	char *buf = vgb_read_file(path, MAX_FILE_SIZE, VGB_READ_REGULAR, &n);
	if (!buf) {
		if (errno == EFBIG)
			snprintf(why, whysize, "'%s' is larger than 16 MiB", path);
		else if (errno == EINVAL || errno == EISDIR)
			snprintf(why, whysize, "'%s' is not a regular file", path);
		else
			snprintf(why, whysize, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	/* The model's texts live as long as its arena. */
	char *text = vgb_arena_strndup(a, buf, n);
	free(buf);
	*len = n;
	return text;
}

/* The default package: the file's base name without ".vgl". */
static const char *base_package(struct vgb_arena *a, const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	if (n > 4 && !strcmp(b + n - 4, ".vgl"))
		n -= 4;
	return vgb_arena_strndup(a, b, n);
}

static bool is_identifier(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* `name` as written in an import of `from`: relative to from's folder. */
static const char *resolve(struct vgb_arena *a, const char *from, const char *name)
{
	const char *slash = strrchr(from, '/');
	if (name[0] == '/' || !slash)
		return name;
	size_t dir = (size_t)(slash - from) + 1, n = strlen(name);
	char *p = vgb_arena_alloc(a, dir + n + 1);
	memcpy(p, from, dir);
	memcpy(p + dir, name, n);
	return p;
}

static void load_file(struct loader *L, const char *path, const char *real, struct vgl_loc at);

static void load_import(struct loader *L, const char *from, const struct ast_import *im)
{
	const char *path = resolve(L->arena, from, im->path);
	char buf[PATH_MAX];
	if (L->mem) { /* in memory: a file is known by its name as resolved */
		if (!in_memory(L, path) || strlen(path) >= sizeof buf) {
			vgl_error(L->diag, im->loc, "'%s' is not among the embedded files", path);
			return;
		}
		strcpy(buf, path);
	} else if (!realpath(path, buf)) {
		vgl_error(L->diag, im->loc, "cannot open '%s': %s", path, strerror(errno));
		return;
	}
	int *state = vgl_sym_get(&L->seen, buf);
	if (state && *state == 2)
		return; /* imported before: loaded once */
	if (state) {
		size_t from_i = 0;
		while (strcmp(L->stack_real[from_i], buf))
			from_i++;
		size_t len = strlen(path) + 1;
		for (size_t i = from_i; i < L->depth; i++)
			len += strlen(L->stack[i]) + 4;
		char *s = vgb_arena_alloc(L->arena, len), *p = s;
		for (size_t i = from_i; i < L->depth; i++) {
			p = stpcpy(p, L->stack[i]);
			p = stpcpy(p, " -> ");
		}
		stpcpy(p, path);
		vgl_error(L->diag, im->loc, "import cycle: %s", s);
		return;
	}
	if (L->depth >= MAX_IMPORT_DEPTH) {
		vgl_error(L->diag, im->loc, "imports nested deeper than %d files",
		          MAX_IMPORT_DEPTH);
		return;
	}
	load_file(L, path, vgb_arena_strdup(L->arena, buf), im->loc);
}

static void load_file(struct loader *L, const char *path, const char *real, struct vgl_loc at)
{
	int *state = vgb_arena_alloc(L->arena, sizeof *state);
	*state = 1;
	vgl_sym_put(&L->seen, real, state);
	const char **slot = vgl_push(L->arena, &L->files, &L->nfiles, &L->capfiles, sizeof *slot);
	*slot = path;

	char why[PATH_MAX + 64];
	struct vgl_source *src = vgb_arena_alloc(L->arena, sizeof *src);
	src->path = path;
	const struct vgl_text *m = L->mem ? in_memory(L, path) : NULL;
	if (m) {
		src->text = m->text;
		src->len = m->len;
	} else if (L->main_text && L->nfiles == 1) {
		src->text = L->main_text;
		src->len = L->main_len;
	} else {
		src->text = read_file(L->arena, path, &src->len, why, sizeof why);
	}
	if (!src->text) {
		vgl_error(L->diag, at, "%s", why);
		*state = 2;
		return;
	}
	vgl_diag_add_source(L->diag, src);
	struct ast_file *f = vgl_parse(src, L->diag, L->arena);

	L->stack[L->depth] = path;
	L->stack_real[L->depth++] = real;
	for (size_t i = 0; i < f->nimports && !vgl_diag_full(L->diag); i++)
		load_import(L, path, &f->imports[i]);
	L->depth--;

	if (!f->package) {
		const char *pkg = base_package(L->arena, path);
		bool needed = L->depth == 0;
		for (size_t i = 0; i < f->ndecls; i++)
			needed |= f->decls[i].kind == AST_SENSOR;
		if (needed && (!is_identifier(pkg) || vgl_name_problem(pkg))) {
			struct vgl_loc file_loc = {path, 0, 0};
			vgl_error(L->diag, file_loc,
			          "the file name '%s' cannot be the package name: declare one with "
			          "'package NAME;'",
			          pkg);
		}
		for (size_t i = 0; i < f->ndecls; i++)
			f->decls[i].package = pkg;
		f->package = pkg;
	}
	struct ast_file **o = vgl_push(L->arena, &L->order, &L->norder, &L->caporder, sizeof *o);
	*o = f;
	*state = 2;
}

static struct vgl_model *load(const char *path, const char *text, size_t len,
                              const struct vgl_text *mem, size_t nmem, FILE *errors, int *nerrors)
{
	struct loaded *ld = calloc(1, sizeof *ld);
	if (!ld) {
		fprintf(errors, "vigil: out of memory\n");
		if (nerrors)
			*nerrors = 1;
		return NULL;
	}
	struct vgb_arena *a = &ld->arena;
	struct vgl_diag diag = {.out = errors, .arena = a};
	struct loader L = {.diag = &diag, .arena = a, .seen = {.arena = a}};
	L.stack = vgb_arena_array(a, MAX_IMPORT_DEPTH + 1, sizeof *L.stack);
	L.stack_real = vgb_arena_array(a, MAX_IMPORT_DEPTH + 1, sizeof *L.stack_real);
	L.main_text = text;
	L.main_len = len;
	if (mem) { /* copied: the caller's texts may go before the model */
		struct vgl_text *copy = vgb_arena_array(a, nmem, sizeof *copy);
		for (size_t i = 0; i < nmem; i++) {
			char *t = vgb_arena_alloc(a, mem[i].len + 1);
			memcpy(t, mem[i].text, mem[i].len);
			t[mem[i].len] = 0;
			copy[i] =
			    (struct vgl_text){vgb_arena_strdup(a, mem[i].name), t, mem[i].len};
		}
		L.mem = copy;
		L.nmem = nmem;
		path = copy[0].name;
	}
	const char *display = vgb_arena_strdup(a, path);
	struct vgl_loc file_loc = {display, 0, 0};
	char buf[PATH_MAX];
	if (text || mem)
		load_file(&L, display, display, file_loc);
	else if (!realpath(path, buf))
		vgl_error(&diag, file_loc, "cannot open: %s", strerror(errno));
	else
		load_file(&L, display, vgb_arena_strdup(a, buf), file_loc);

	struct vgl_model *m = &ld->model;
	if (L.norder && !vgl_diag_full(&diag)) {
		m->package = L.order[L.norder - 1]->package; /* the main file's */
		m->files = L.files;
		m->nfiles = L.nfiles;
		vgl_check(m, L.order, L.norder, &diag, a);
	}
	vgl_diag_flush(&diag);
	if (nerrors)
		*nerrors = diag.nerrors;
	if (diag.nerrors) {
		vgl_free(m);
		return NULL;
	}
	return m;
}

struct vgl_model *vgl_load(const char *path, FILE *errors, int *nerrors)
{
	return load(path, NULL, 0, NULL, 0, errors, nerrors);
}

struct vgl_model *vgl_load_text(const char *name, const char *text, size_t len, FILE *errors,
                                int *nerrors)
{
	return load(name, text, len, NULL, 0, errors, nerrors);
}

struct vgl_model *vgl_load_texts(const struct vgl_text *files, size_t n, FILE *errors, int *nerrors)
{
	if (!n) {
		fprintf(errors, "vigil: no sensor description given\n");
		if (nerrors)
			*nerrors = 1;
		return NULL;
	}
	return load(files[0].name, NULL, 0, files, n, errors, nerrors);
}

void vgl_free(struct vgl_model *m)
{
	if (!m)
		return;
	struct loaded *ld = (struct loaded *)((char *)m - offsetof(struct loaded, model));
	vgb_arena_free(&ld->arena);
	free(ld);
}
