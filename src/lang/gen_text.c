/* Text-emitting helpers shared by the Python and Java generators. */
#include "lang/gen_text.h"

#include "base/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gt_err(char *err, size_t errsize, const char *fmt, ...)
{
	if (err && errsize) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errsize, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int gt_mkdirs(const char *path, char *err, size_t errsize)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof buf)
		return gt_err(err, errsize, "bad output folder '%s'", path);
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char c = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return gt_err(err, errsize, "cannot create %s: %s", buf, strerror(errno));
		buf[i] = c;
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return gt_err(err, errsize, "%s is not a folder", path);
	return 0;
}

int gt_open(struct gt_out *o, const char *dir, const char *name, char *err, size_t errsize)
{
	int n = snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof o->path)
		return gt_err(err, errsize, "output path too long: %s/%s", dir, name);
	char why[4200];
	o->f = NULL;
	if (vg_out_open(&o->out, o->path, why, sizeof why) < 0)
		return gt_err(err, errsize, "cannot write %s", why);
	o->f = o->out.f;
	return 0;
}

int gt_close(struct gt_out *o, char *err, size_t errsize)
{
	if (!o->f)
		return 0;
	o->f = NULL;
	char why[4200];
	if (vg_out_commit(&o->out, why, sizeof why) < 0)
		return gt_err(err, errsize, "cannot write %s", why);
	return 0;
}

void gt_abort(struct gt_out *o)
{
	if (o->f)
		vg_out_abort(&o->out);
	o->f = NULL;
}

int gt_ident(char *out, size_t n, const char *name, const char *const *reserved)
{
	size_t len = strlen(name);
	if (len + 2 > n)
		return -1;
	for (size_t i = 0; i <= len; i++)
		out[i] = name[i] == '.' ? '_' : name[i];
	for (const char *const *r = reserved; r && *r; r++) {
		if (strcmp(out, *r) == 0) {
			out[len] = '_';
			out[len + 1] = '\0';
			break;
		}
	}
	return 0;
}

const char *gt_type_name(enum vgl_type t)
{
	static const char *const names[] = {
	    [VGL_INT8] = "int8",     [VGL_INT16] = "int16",   [VGL_INT32] = "int32",
	    [VGL_INT64] = "int64",   [VGL_UINT8] = "uint8",   [VGL_UINT16] = "uint16",
	    [VGL_UINT32] = "uint32", [VGL_UINT64] = "uint64", [VGL_FLOAT64] = "float64",
	    [VGL_BOOL] = "bool",     [VGL_STRING] = "string", [VGL_BYTES] = "bytes",
	    [VGL_ENTITY] = "entity", [VGL_STRUCT] = "struct",
	};
	return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

bool gt_is_int(enum vgl_type t)
{
	return t >= VGL_INT8 && t <= VGL_UINT64;
}

int gt_int_size(enum vgl_type t)
{
	switch (t) {
	case VGL_INT8:
	case VGL_UINT8:
		return 1;
	case VGL_INT16:
	case VGL_UINT16:
		return 2;
	case VGL_INT32:
	case VGL_UINT32:
		return 4;
	default:
		return 8;
	}
}

bool gt_is_signed(enum vgl_type t)
{
	return t >= VGL_INT8 && t <= VGL_INT64;
}

int64_t gt_int_lo(enum vgl_type t)
{
	if (!gt_is_signed(t))
		return 0;
	int bits = 8 * gt_int_size(t);
	return bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
}

uint64_t gt_int_hi(enum vgl_type t)
{
	int bits = 8 * gt_int_size(t) - (gt_is_signed(t) ? 1 : 0);
	return bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
}

uint32_t gt_utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	uint32_t cp;
	size_t len = vgb_utf8_decode(s + *i, n - *i, &cp);
	*i += len ? len : 1;
	return len ? cp : 0xFFFD;
}

const struct vgl_literal *gt_field_default(const struct vgl_field *f)
{
	if (f->npath || f->is_struct_id || !f->prop || !f->prop->has_default)
		return NULL;
	return &f->prop->def;
}

size_t gt_first_own_field(const struct vgl_record *r)
{
	size_t i = r->nfields;
	while (i > 0 && r->fields[i - 1].prop && r->fields[i - 1].prop->owner == r)
		i--;
	return i;
}

struct ident_of {
	char id[GT_IDENT_MAX];
	size_t field;
};

static int by_ident(const void *a, const void *b)
{
	const struct ident_of *x = a, *y = b;
	int c = strcmp(x->id, y->id);
	return c ? c : (x->field > y->field) - (x->field < y->field);
}

/* Sorted, so that a record of thousands of fields is checked in O(n log n). */
int gt_check_unique(const struct vgl_record *r, const char *const *reserved, const char *lang,
                    char *err, size_t errsize)
{
	size_t n = r->nfields;
	struct ident_of *v = calloc(n ? n : 1, sizeof *v);
	if (!v)
		return gt_err(err, errsize, "out of memory");
	for (size_t i = 0; i < n; i++) {
		v[i].field = i;
		if (gt_ident(v[i].id, sizeof v[i].id, r->fields[i].name, reserved) != 0) {
			free(v);
			return gt_err(err, errsize, "record %s: field name too long", r->name);
		}
	}
	qsort(v, n, sizeof *v, by_ident);
	/* As fields are read in order: the first field that takes an earlier one's name,
	 * with the earliest of those (each group of equal names is sorted by field). */
	size_t bad = SIZE_MAX, first = 0;
	const char *as = NULL;
	for (size_t k = 1; k < n; k++)
		if (!strcmp(v[k - 1].id, v[k].id) && (k < 2 || strcmp(v[k - 2].id, v[k].id)) &&
		    v[k].field < bad)
			bad = v[k].field, first = v[k - 1].field, as = v[k].id;
	int rc = 0;
	if (bad != SIZE_MAX)
		rc = gt_err(err, errsize, "record %s: fields '%s' and '%s' are both '%s' in %s",
		            r->name, r->fields[first].name, r->fields[bad].name, as, lang);
	free(v);
	return rc;
}

static size_t record_depth(const struct vgl_record *r)
{
	size_t d = 0;
	for (const struct vgl_record *p = r->parent; p && d <= 1000; p = p->parent)
		d++;
	return d;
}

const struct vgl_record *gt_record_in_order(const struct vgl_model *m, size_t i)
{
	for (size_t d = 0;; d++) {
		bool deeper = false;
		for (size_t k = 0; k < m->nrecords; k++) {
			size_t dk = record_depth(&m->records[k]);
			deeper |= dk > d;
			if (dk == d && i-- == 0)
				return &m->records[k];
		}
		if (!deeper)
			return NULL;
	}
}
