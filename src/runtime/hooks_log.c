/* Logging calls of unmodified programs (docs/logcapture.md): syslog and messages written
 * to stderr through stdio, interposed like hooks.c's functions and forwarded to the real
 * ones found with dlsym(RTLD_NEXT).
 *
 * While capturing, each call is an event identified by its call site (the return address)
 * and its format: the format string for printf-like calls, the function's name in angle
 * brackets for fputs, fwrite, fputc and perror, whose text is not a format (the site alone
 * identifies them). Then the pass-through threshold decides whether the call reaches the
 * real function: syslog messages less severe than VIGIL_LOG_PASS are dropped (modelled
 * only); stderr writes have no level and are passed unless VIGIL_LOG_PASS=none. Calls on
 * other streams and descriptors go straight through. A thread-local guard keeps calls
 * made inside a real logging call (and the runtime's own) from being captured. */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* these are the functions its wrappers call */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "hooks_stdio.h"
#include "internal.h"
#include "logcap.h"

typedef void (*vsyslog_fn)(int, const char *, va_list);
typedef void (*vsyslog_chk_fn)(int, int, const char *, va_list);
typedef void (*perror_fn)(const char *);

/* Resolved on first use: a hook may run before libvigil's constructor (from another
 * library's), and dlsym does not need the runtime. */
#define REAL(type, name)                                                                           \
	({                                                                                         \
		static _Atomic(type) real_;                                                        \
		type f_ = atomic_load_explicit(&real_, memory_order_relaxed);                      \
		if (__builtin_expect(!f_, 0)) {                                                    \
			f_ = (type)dlsym(RTLD_NEXT, name);                                         \
			atomic_store_explicit(&real_, f_, memory_order_relaxed);                   \
		}                                                                                  \
		f_;                                                                                \
	})

static const char M_FPUTC[] = "<fputc>", M_PERROR[] = "<perror>";

/* A call whose site alone identifies it (fputc, perror). */
static inline void capture(void *ret, const char *fmt)
{
	if (!vg__lc.on || vg__lc_guard || !fmt)
		return;
	/* errno (perror reads it) is kept by the capture's own slow paths */
	uint32_t id = vg__lc_key_id((uintptr_t)ret, (uintptr_t)fmt, LC_KEY_RET, fmt, NULL, 0);
	if (id)
		vg__logcap_hit(id);
	else
		vg__logcap_lost(1); /* registry full, or a signal handler inside registration */
}

/* capture_fmt's call of a site that does not identify the statement (or a key not
 * registered): the message's template is the event. */
static __attribute__((noinline)) int capture_templated(void *ret, const char *fmt, va_list ap,
                                                       struct lc_key k)
{
	int level = k.level;
	if (k.templated) {
		int saved = errno;
		char msg[LC_TMPL_SCAN + 1];
		int n = vg__lc_format(msg, sizeof msg, fmt, ap);
		if (n < 0) {
			va_list aq;
			va_copy(aq, ap);
			n = vsnprintf(msg, sizeof msg, fmt, aq);
			va_end(aq);
		}
		if (n > 0)
			level = vg__lc_capture_text(
			    ret, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
		errno = saved;
	} else {
		vg__logcap_lost(1); /* registry full, or a signal handler inside registration */
	}
	return level;
}

/* A printf-like call: the event is its (site, format), or the message's template when the
 * format does not identify the statement. Returns the level word of the format or of
 * the message's template (-1: none). Inlined into each hook: the common call is a key
 * lookup and a hit. */
static inline __attribute__((always_inline)) int capture_fmt(void *ret, const char *fmt, va_list ap)
{
	if (!vg__lc.on || vg__lc_guard || !fmt)
		return -1;
	/* errno (%m reads it) is kept by vg__lc_key and vg__logcap_hit, which touch it only
	 * on a site's and a thread's first call: the common call never reads it. */
	struct lc_key k = vg__lc_key((uintptr_t)ret, (uintptr_t)fmt, LC_KEY_RET, fmt, NULL, 0);
	if (__builtin_expect(k.id != 0, 1)) {
		vg__logcap_hit(k.id);
		return k.level;
	}
	return capture_templated(ret, fmt, ap, k);
}

/* Is a syslog message of priority `pri` handed on? Its severity is the more severe of
 * its priority and its level word (PostgreSQL sends WARNING as LOG_NOTICE). */
static inline int syslog_passes(int pri, int word)
{
	if (!vg__lc.on)
		return 1;
	int sev = LOG_PRI(pri);
	if (word >= 0 && word < sev)
		sev = word;
	return sev <= vg__lc.pass;
}

/* A stderr message with level word `word` (-1: none, then only "none" stops it). */
static inline int stderr_passes(int word)
{
	return !vg__lc.on || (vg__lc.pass >= 0 && (word < 0 || word <= vg__lc.pass));
}

#define GUARDED(call)                                                                              \
	do {                                                                                       \
		int g_ = vg__lc_guard;                                                             \
		vg__lc_guard = 1;                                                                  \
		call;                                                                              \
		vg__lc_guard = g_;                                                                 \
	} while (0)

/* ---- syslog ---- */

VG_API void vsyslog(int pri, const char *fmt, va_list ap)
{
	int word = capture_fmt(__builtin_return_address(0), fmt, ap);
	vsyslog_fn f = REAL(vsyslog_fn, "vsyslog");
	if (f && syslog_passes(pri, word))
		GUARDED(f(pri, fmt, ap));
}

VG_API void syslog(int pri, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int word = capture_fmt(__builtin_return_address(0), fmt, ap);
	vsyslog_fn f = REAL(vsyslog_fn, "vsyslog");
	if (f && syslog_passes(pri, word))
		GUARDED(f(pri, fmt, ap));
	va_end(ap);
}

VG_API void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
	int word = capture_fmt(__builtin_return_address(0), fmt, ap);
	vsyslog_chk_fn f = REAL(vsyslog_chk_fn, "__vsyslog_chk");
	if (f && syslog_passes(pri, word))
		GUARDED(f(pri, flag, fmt, ap));
}

VG_API void __syslog_chk(int pri, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int word = capture_fmt(__builtin_return_address(0), fmt, ap);
	vsyslog_chk_fn f = REAL(vsyslog_chk_fn, "__vsyslog_chk");
	if (f && syslog_passes(pri, word))
		GUARDED(f(pri, flag, fmt, ap));
	va_end(ap);
}

/* ---- stdio to stderr ---- */

/* What a suppressed printf-like call returns: the length it would have written. */
static int would_write(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	return n;
}

static int vfprintf_common(void *ret, FILE *fp, int flag, const char *fmt, va_list ap)
{
	int rc = -1;
	if (fp == stderr && vg__lc.on) {
		int word = capture_fmt(ret, fmt, ap);
		if (!stderr_passes(word))
			return would_write(fmt, ap);
	}
	GUARDED(rc = vg__stdio_vfprintf(ret, fp, flag, fmt, ap));
	return rc;
}

VG_API int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	return vfprintf_common(__builtin_return_address(0), fp, -1, fmt, ap);
}

VG_API int fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfprintf_common(__builtin_return_address(0), fp, -1, fmt, ap);
	va_end(ap);
	return rc;
}

VG_API int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	return vfprintf_common(__builtin_return_address(0), fp, flag < 0 ? 0 : flag, fmt, ap);
}

VG_API int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfprintf_common(__builtin_return_address(0), fp, flag < 0 ? 0 : flag, fmt, ap);
	va_end(ap);
	return rc;
}

static int vdprintf_common(void *ret, int fd, int flag, const char *fmt, va_list ap)
{
	int rc = -1;
	if (fd == STDERR_FILENO && vg__lc.on) {
		int word = capture_fmt(ret, fmt, ap);
		if (!stderr_passes(word))
			return would_write(fmt, ap);
	}
	GUARDED(rc = vg__stdio_vdprintf(ret, fd, flag, fmt, ap));
	return rc;
}

VG_API int vdprintf(int fd, const char *fmt, va_list ap)
{
	return vdprintf_common(__builtin_return_address(0), fd, -1, fmt, ap);
}

VG_API int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vdprintf_common(__builtin_return_address(0), fd, -1, fmt, ap);
	va_end(ap);
	return rc;
}

VG_API int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	return vdprintf_common(__builtin_return_address(0), fd, flag < 0 ? 0 : flag, fmt, ap);
}

VG_API int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vdprintf_common(__builtin_return_address(0), fd, flag < 0 ? 0 : flag, fmt, ap);
	va_end(ap);
	return rc;
}

VG_API int fputs(const char *s, FILE *fp)
{
	if (fp == stderr && vg__lc.on && !vg__lc_guard) {
		if (!vg__lc_capture_lines(__builtin_return_address(0), s, strlen(s)))
			return 1;
	}
	int rc = EOF;
	GUARDED(rc = vg__stdio_fputs(__builtin_return_address(0), s, fp));
	return rc;
}

VG_API size_t fwrite(const void *p, size_t size, size_t n, FILE *fp)
{
	if (fp == stderr && vg__lc.on && !vg__lc_guard && size && n <= SIZE_MAX / size) {
		if (!vg__lc_capture_lines(__builtin_return_address(0), p, size * n))
			return n;
	}
	size_t rc = 0;
	GUARDED(rc = vg__stdio_fwrite(__builtin_return_address(0), p, size, n, fp));
	return rc;
}

VG_API int fputc(int c, FILE *fp)
{
	if (fp == stderr && vg__lc.on) {
		capture(__builtin_return_address(0), M_FPUTC);
		if (!stderr_passes(-1))
			return (unsigned char)c;
	}
	int rc = EOF;
	GUARDED(rc = vg__stdio_fputc(__builtin_return_address(0), c, fp));
	return rc;
}

VG_API void perror(const char *s)
{
	if (vg__lc.on) {
		capture(__builtin_return_address(0), M_PERROR);
		if (!stderr_passes(-1))
			return;
	}
	perror_fn f = REAL(perror_fn, "perror");
	if (f)
		GUARDED(f(s));
}
