/* stdio on followed descriptors (docs/net.md, "stdio"): glibc's stdio writes and reads
 * its buffers with internal calls that no preload sees, so the entry points are
 * interposed and the bytes that reached (or came from) the descriptor during each call
 * are worked out from the FILE's buffer pointers, which glibc's <stdio.h> makes public:
 *
 *   sent     = pending before + bytes the call accepted - pending after
 *   received = bytes the call consumed + available after - available before
 *
 * (pending: written into the buffer, not yet flushed; available: read into the buffer,
 * not yet consumed). Bytes are recorded when they reach the descriptor, a flush, so
 * their ranges match the reader's; bytes that the header's inline putc_unlocked and
 * getc_unlocked move through the buffer are counted by the call that flushes or refills
 * it (__overflow, __uflow, any later call, fclose, fflush, exit). The stream is locked
 * around the call so that the pointers read are its own. At exit the streams seen with
 * pending bytes are flushed (as exit would, a moment later) so that their last bytes are
 * recorded. The scanf family consumes an unknown count: a refill during it is recorded as
 * vg.net.unfollowed. Wide-oriented streams are not followed. */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* __printf_chk and friends are defined here */
/* When optimising, glibc's <bits/stdio.h> defines vprintf, putchar, putc_unlocked, ...
 * as extern inlines unless __NO_INLINE__ says not to; they are defined here instead (an
 * optimising clang refuses an interposed definition after glibc's). */
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hooks_stdio.h"
#include "net_hooks.h"

/* Some are macros in <stdio.h> when optimising: the functions are defined here. */
#undef fwrite_unlocked
#undef fread_unlocked
#undef putc
#undef getc
#undef putc_unlocked
#undef getc_unlocked
#undef putchar_unlocked
#undef getchar_unlocked
#undef fputc_unlocked
#undef fgetc_unlocked

#define LINE_BUF 0x0200   /* glibc's _IO_LINE_BUF */
#define UNBUFFERED 0x0002 /* glibc's _IO_UNBUFFERED */

/* ---- the streams seen, flushed at exit ---- */

#define SEEN_MAX 64
static _Atomic(FILE *) seen[SEEN_MAX];

static void remember(FILE *fp)
{
	if (fp == stdout || fp == stderr)
		return;
	for (int i = 0; i < SEEN_MAX; i++)
		if (atomic_load_explicit(&seen[i], memory_order_relaxed) == fp)
			return;
	for (int i = 0; i < SEEN_MAX; i++) {
		FILE *none = NULL;
		if (atomic_compare_exchange_strong(&seen[i], &none, fp))
			return;
	}
}

static void forget(FILE *fp)
{
	for (int i = 0; i < SEEN_MAX; i++) {
		FILE *f = fp;
		atomic_compare_exchange_strong(&seen[i], &f, NULL);
	}
}

/* ---- buffer arithmetic ---- */

static inline size_t pending(const FILE *fp)
{
	return fp->_IO_write_ptr > fp->_IO_write_base
	           ? (size_t)(fp->_IO_write_ptr - fp->_IO_write_base)
	           : 0;
}

static inline size_t available(const FILE *fp)
{
	return fp->_IO_read_end > fp->_IO_read_ptr ? (size_t)(fp->_IO_read_end - fp->_IO_read_ptr)
	                                           : 0;
}

/* Has fp bytes to flush? (A flush of nothing does not introduce its descriptor.) */
static int has_pending(FILE *fp)
{
	if (!fp)
		return 0;
	flockfile(fp);
	size_t n = pending(fp);
	funlockfile(fp);
	return n > 0;
}

/* Is fp's descriptor followed (and fp byte-oriented)? */
static inline int followed(FILE *fp, const void *ret, uint32_t *c)
{
	if (VG_LIKELY(!vg__rt.recording) || !fp)
		return 0;
	return fp->_mode <= 0 && vg__follow(fp->_fileno, ret, c);
}

struct out {
	FILE *fp;
	uint32_t c;
	size_t before;
	struct vg_net_stamp at;
};

static void out_begin(struct out *o, FILE *fp)
{
	o->fp = fp;
	flockfile(fp);
	o->before = pending(fp);
	vg__net_stamp(&o->at);
}

/* ok: the call succeeded, having accepted `accepted` bytes into the stream. */
static void out_end(struct out *o, int ok, size_t accepted)
{
	size_t after = pending(o->fp);
	funlockfile(o->fp);
	remember(o->fp);
	if (ok && o->before + accepted > after)
		vg__sent(o->fp->_fileno, o->c, (ssize_t)(o->before + accepted - after), &o->at);
	vg__io_done();
}

/* Reading a line-buffered or unbuffered stream first flushes a line-buffered stdout
 * (glibc's underflow): those bytes are sent on stdout. */
struct in {
	FILE *fp;
	uint32_t c, oc;
	size_t before, out_before;
	int out; /* stdout followed and flushable here */
	struct vg_net_stamp at;
};

static void in_begin(struct in *i, FILE *fp, const void *ret)
{
	i->fp = fp;
	i->out = 0;
	flockfile(fp); /* then stdout's lock: glibc's order, so that no two threads deadlock */
	/* (a stream without a buffer yet may become line-buffered at its first read) */
	if (fp != stdout && ((fp->_flags & (LINE_BUF | UNBUFFERED)) || !fp->_IO_buf_base) &&
	    stdout && (stdout->_flags & LINE_BUF) && pending(stdout) &&
	    followed(stdout, ret, &i->oc)) {
		flockfile(stdout);
		i->out_before = pending(stdout);
		if (i->out_before) {
			i->out = 1;
			vg__net_stamp(&i->at);
		} else {
			funlockfile(stdout);
		}
	}
	i->before = available(fp);
}

static void in_end(struct in *i, int ok, size_t consumed)
{
	size_t after = available(i->fp);
	funlockfile(i->fp);
	if (i->out) {
		size_t out_after = pending(stdout);
		funlockfile(stdout);
		if (out_after < i->out_before)
			vg__sent(stdout->_fileno, i->oc, (ssize_t)(i->out_before - out_after),
			         &i->at);
		vg__io_done();
	}
	if (ok && consumed + after > i->before)
		vg__received(i->fp->_fileno, i->c, (ssize_t)(consumed + after - i->before), 0);
}

/* ---- output ---- */

typedef int (*vfprintf_fn)(FILE *, const char *, va_list);
typedef int (*vfprintf_chk_fn)(FILE *, int, const char *, va_list);
typedef int (*vdprintf_fn)(int, const char *, va_list);
typedef int (*vdprintf_chk_fn)(int, int, const char *, va_list);
typedef int (*fputs_fn)(const char *, FILE *);
typedef int (*puts_fn)(const char *);
typedef int (*fputc_fn)(int, FILE *);
typedef int (*putchar_fn)(int);
typedef size_t (*fwrite_fn)(const void *, size_t, size_t, FILE *);
typedef int (*fflush_fn)(FILE *);

/* The body of an output call on stream `fp` returning `type`: `call` is the real call,
 * `ok` and `accepted` expressions of its result r. */
#define OUTPUT(type, fp, call, ok, accepted)                                                       \
	do {                                                                                       \
		uint32_t c_;                                                                       \
		if (VG_LIKELY(!followed(fp, RET, &c_)))                                            \
			return call;                                                               \
		struct out o_ = {.c = c_};                                                         \
		out_begin(&o_, fp);                                                                \
		type r = call;                                                                     \
		int saved_ = errno;                                                                \
		out_end(&o_, ok, accepted);                                                        \
		errno = saved_;                                                                    \
		return r;                                                                          \
	} while (0)

/* flag < 0: vfprintf, else __vfprintf_chk. */
int vg__stdio_vfprintf(const void *ret, FILE *fp, int flag, const char *fmt, va_list ap)
{
	vfprintf_fn f = REAL(vfprintf_fn, "vfprintf");
	vfprintf_chk_fn fc = REAL(vfprintf_chk_fn, "__vfprintf_chk");
	uint32_t c;
	if (VG_LIKELY(!followed(fp, ret, &c)))
		return flag < 0 ? f(fp, fmt, ap) : fc(fp, flag, fmt, ap);
	struct out o = {.c = c};
	out_begin(&o, fp);
	int r = flag < 0 ? f(fp, fmt, ap) : fc(fp, flag, fmt, ap);
	int saved = errno;
	out_end(&o, r >= 0, r >= 0 ? (size_t)r : 0);
	errno = saved;
	return r;
}

VG_API int vprintf(const char *fmt, va_list ap)
{
	return vg__stdio_vfprintf(RET, stdout, -1, fmt, ap);
}

VG_API int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vg__stdio_vfprintf(RET, stdout, -1, fmt, ap);
	va_end(ap);
	return r;
}

VG_API int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return vg__stdio_vfprintf(RET, stdout, flag < 0 ? 0 : flag, fmt, ap);
}

VG_API int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vg__stdio_vfprintf(RET, stdout, flag < 0 ? 0 : flag, fmt, ap);
	va_end(ap);
	return r;
}

/* dprintf writes straight to the descriptor: like write (flag < 0: vdprintf). */
int vg__stdio_vdprintf(const void *ret, int fd, int flag, const char *fmt, va_list ap)
{
	vdprintf_fn f = REAL(vdprintf_fn, "vdprintf");
	vdprintf_chk_fn fc = REAL(vdprintf_chk_fn, "__vdprintf_chk");
	uint32_t c;
	if (VG_LIKELY(!vg__follow(fd, ret, &c)))
		return flag < 0 ? f(fd, fmt, ap) : fc(fd, flag, fmt, ap);
	struct vg_net_stamp at;
	vg__net_stamp(&at);
	int r = flag < 0 ? f(fd, fmt, ap) : fc(fd, flag, fmt, ap);
	vg__sent(fd, c, r, &at);
	return r;
}

/* fputs, fwrite and fputc are exported by hooks_log.c (which may capture them as log
 * messages on stderr) and come here when they are passed on. */
int vg__stdio_fputs(const void *ret, const char *s, FILE *fp)
{
	fputs_fn f = REAL(fputs_fn, "fputs");
	uint32_t c;
	if (VG_LIKELY(!followed(fp, ret, &c)))
		return f(s, fp);
	struct out o = {.c = c};
	out_begin(&o, fp);
	int r = f(s, fp);
	int saved = errno;
	out_end(&o, r != EOF, strlen(s));
	errno = saved;
	return r;
}

size_t vg__stdio_fwrite(const void *ret, const void *p, size_t size, size_t n, FILE *fp)
{
	fwrite_fn f = REAL(fwrite_fn, "fwrite");
	uint32_t c;
	if (VG_LIKELY(!followed(fp, ret, &c)))
		return f(p, size, n, fp);
	struct out o = {.c = c};
	out_begin(&o, fp);
	size_t r = f(p, size, n, fp);
	int saved = errno;
	out_end(&o, 1, r * size);
	errno = saved;
	return r;
}

int vg__stdio_fputc(const void *ret, int ch, FILE *fp)
{
	fputc_fn f = REAL(fputc_fn, "fputc");
	uint32_t c;
	if (VG_LIKELY(!followed(fp, ret, &c)))
		return f(ch, fp);
	struct out o = {.c = c};
	out_begin(&o, fp);
	int r = f(ch, fp);
	int saved = errno;
	out_end(&o, r != EOF, 1);
	errno = saved;
	return r;
}

VG_API int fputs_unlocked(const char *s, FILE *fp)
{
	fputs_fn f = REAL(fputs_fn, "fputs_unlocked");
	OUTPUT(int, fp, f(s, fp), r != EOF, strlen(s));
}

VG_API int puts(const char *s)
{
	puts_fn f = REAL(puts_fn, "puts");
	OUTPUT(int, stdout, f(s), r != EOF, strlen(s) + 1);
}

#define PUTC(name)                                                                                 \
	VG_API int name(int ch, FILE *fp)                                                          \
	{                                                                                          \
		fputc_fn f = REAL(fputc_fn, #name);                                                \
		OUTPUT(int, fp, f(ch, fp), r != EOF, 1);                                           \
	}
PUTC(putc)
PUTC(fputc_unlocked)
PUTC(putc_unlocked)

VG_API int putchar(int ch)
{
	putchar_fn f = REAL(putchar_fn, "putchar");
	OUTPUT(int, stdout, f(ch), r != EOF, 1);
}

VG_API int putchar_unlocked(int ch)
{
	putchar_fn f = REAL(putchar_fn, "putchar_unlocked");
	OUTPUT(int, stdout, f(ch), r != EOF, 1);
}

/* Called by the inline putc_unlocked when the buffer is full (ch EOF: only a flush). */
VG_API int __overflow(FILE *fp, int ch)
{
	typedef int (*overflow_fn)(FILE *, int);
	overflow_fn f = REAL(overflow_fn, "__overflow");
	OUTPUT(int, fp, f(fp, ch), r != EOF, ch == EOF ? 0 : 1);
}

VG_API size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *fp)
{
	fwrite_fn f = REAL(fwrite_fn, "fwrite_unlocked");
	OUTPUT(size_t, fp, f(p, size, n, fp), 1, r * size);
}

/* Flushes fp, recording what reached its descriptor (ret: the caller's address). */
static int flush_one(FILE *fp, const void *ret)
{
	fflush_fn f = REAL(fflush_fn, "fflush");
	uint32_t c;
	if (VG_LIKELY(!vg__rt.recording) || !has_pending(fp) || !followed(fp, ret, &c))
		return f(fp);
	struct out o = {.c = c};
	out_begin(&o, fp);
	int r = f(fp);
	int saved = errno;
	out_end(&o, r == 0, 0);
	errno = saved;
	return r;
}

/* At exit a stream may be held by a thread blocked in a write (a full pipe): exit's own
 * flush does not wait for it, nor does this one (try: skipped if held). */
static void flush_seen_one(FILE *fp, const void *ret, int at_exit)
{
	if (!at_exit) {
		flush_one(fp, ret);
	} else if (ftrylockfile(fp) == 0) {
		flush_one(fp, ret); /* (the lock is recursive) */
		funlockfile(fp);
	}
}

static void flush_seen(const void *ret, int at_exit)
{
	flush_seen_one(stdout, ret, at_exit);
	flush_seen_one(stderr, ret, at_exit);
	for (int i = 0; i < SEEN_MAX; i++) {
		FILE *fp = atomic_load(&seen[i]);
		if (fp)
			flush_seen_one(fp, ret, at_exit);
	}
}

static int flush_all(const void *ret)
{
	fflush_fn f = REAL(fflush_fn, "fflush");
	if (VG_UNLIKELY(vg__rt.recording) && !vg__from_runtime(ret))
		flush_seen(ret, 0); /* the streams followed, one by one; then every other one */
	return f(NULL);
}

VG_API int fflush(FILE *fp)
{
	return fp ? flush_one(fp, RET) : flush_all(RET);
}

VG_API int fflush_unlocked(FILE *fp)
{
	fflush_fn f = REAL(fflush_fn, "fflush_unlocked");
	if (!fp)
		return flush_all(RET);
	OUTPUT(int, fp, f(fp), r == 0, 0);
}

/* fclose flushes and closes the descriptor inside libc: the flush is done first here
 * (recorded), then the descriptor is forgotten (as close does: before, since another
 * thread may reuse its number as soon as it is closed), then the stream is closed. */
VG_API int fclose(FILE *fp)
{
	fflush_fn f = REAL(fflush_fn, "fclose");
	if (VG_LIKELY(!vg__rt.recording) || !fp)
		return f(fp);
	int fd = fp->_fileno;
	if (has_pending(fp))
		flush_one(fp, RET);
	forget(fp); /* (after the flush, which remembers it) whether followed or not */
	if (fd >= 0)
		vg__net_fd_closed(fd);
	return f(fp);
}

/* pclose and freopen close the stream's descriptor inside libc too. */
VG_API int pclose(FILE *fp)
{
	fflush_fn f = REAL(fflush_fn, "pclose");
	if (VG_LIKELY(!vg__rt.recording) || !fp)
		return f(fp);
	int fd = fp->_fileno;
	if (has_pending(fp))
		flush_one(fp, RET);
	forget(fp);
	if (fd >= 0)
		vg__net_fd_closed(fd);
	return f(fp);
}

typedef FILE *(*freopen_fn)(const char *, const char *, FILE *);

static FILE *freopen_common(freopen_fn f, const char *path, const char *mode, FILE *fp,
                            const void *ret)
{
	if (VG_LIKELY(!vg__rt.recording) || !fp)
		return f(path, mode, fp);
	int fd = fp->_fileno;
	if (has_pending(fp))
		flush_one(fp, ret);
	if (fd >= 0 && path) /* (a NULL path keeps the descriptor) */
		vg__net_fd_closed(fd);
	return f(path, mode, fp);
}

VG_API FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	return freopen_common(REAL(freopen_fn, "freopen"), path, mode, fp, RET);
}

VG_API FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	return freopen_common(REAL(freopen_fn, "freopen64"), path, mode, fp, RET);
}

/* exit flushes every stream after the process's end is recorded: the streams seen are
 * flushed here first (exit handlers run in reverse order of registration, and this one
 * is registered after the runtime's). The io_uring instances still open are counted
 * then too (io_uring.c). */
static void flush_at_exit(int status, void *arg)
{
	(void)status;
	(void)arg;
	if (vg__rt.recording) {
		flush_seen(NULL, 1);
		vg__net_count_rings();
	}
}

__attribute__((constructor)) static void stdio_hooks_init(void)
{
	vg__ensure_init();
	if (vg__rt.recording)
		on_exit(flush_at_exit, NULL);
}

/* ---- input ---- */

typedef size_t (*fread_fn)(void *, size_t, size_t, FILE *);
typedef size_t (*fread_chk_fn)(void *, size_t, size_t, size_t, FILE *);
typedef char *(*fgets_fn)(char *, int, FILE *);
typedef char *(*fgets_chk_fn)(char *, size_t, int, FILE *);
typedef int (*getc_fn)(FILE *);
typedef int (*getchar_fn)(void);
typedef ssize_t (*getdelim_fn)(char **, size_t *, int, FILE *);
typedef ssize_t (*getline_fn)(char **, size_t *, FILE *);
typedef int (*vfscanf_fn)(FILE *, const char *, va_list);

#define INPUT(type, fp, call, ok, consumed)                                                        \
	do {                                                                                       \
		uint32_t c_;                                                                       \
		if (VG_LIKELY(!followed(fp, RET, &c_)))                                            \
			return call;                                                               \
		struct in i_ = {.c = c_};                                                          \
		in_begin(&i_, fp, RET);                                                            \
		type r = call;                                                                     \
		int saved_ = errno;                                                                \
		in_end(&i_, ok, consumed);                                                         \
		errno = saved_;                                                                    \
		return r;                                                                          \
	} while (0)

VG_API size_t fread(void *p, size_t size, size_t n, FILE *fp)
{
	fread_fn f = REAL(fread_fn, "fread");
	INPUT(size_t, fp, f(p, size, n, fp), 1, r * size);
}

VG_API size_t fread_unlocked(void *p, size_t size, size_t n, FILE *fp)
{
	fread_fn f = REAL(fread_fn, "fread_unlocked");
	INPUT(size_t, fp, f(p, size, n, fp), 1, r * size);
}

VG_API size_t __fread_chk(void *p, size_t len, size_t size, size_t n, FILE *fp)
{
	fread_chk_fn f = REAL(fread_chk_fn, "__fread_chk");
	INPUT(size_t, fp, f(p, len, size, n, fp), 1, r * size);
}

VG_API size_t __fread_unlocked_chk(void *p, size_t len, size_t size, size_t n, FILE *fp)
{
	fread_chk_fn f = REAL(fread_chk_fn, "__fread_unlocked_chk");
	INPUT(size_t, fp, f(p, len, size, n, fp), 1, r * size);
}

/* fgets: the line's length (a line holding a NUL byte counts up to it). */
VG_API char *fgets(char *s, int n, FILE *fp)
{
	fgets_fn f = REAL(fgets_fn, "fgets");
	INPUT(char *, fp, f(s, n, fp), r != NULL, r ? strlen(r) : 0);
}

VG_API char *fgets_unlocked(char *s, int n, FILE *fp)
{
	fgets_fn f = REAL(fgets_fn, "fgets_unlocked");
	INPUT(char *, fp, f(s, n, fp), r != NULL, r ? strlen(r) : 0);
}

VG_API char *__fgets_chk(char *s, size_t len, int n, FILE *fp)
{
	fgets_chk_fn f = REAL(fgets_chk_fn, "__fgets_chk");
	INPUT(char *, fp, f(s, len, n, fp), r != NULL, r ? strlen(r) : 0);
}

VG_API char *__fgets_unlocked_chk(char *s, size_t len, int n, FILE *fp)
{
	fgets_chk_fn f = REAL(fgets_chk_fn, "__fgets_unlocked_chk");
	INPUT(char *, fp, f(s, len, n, fp), r != NULL, r ? strlen(r) : 0);
}

#define GETC(name)                                                                                 \
	VG_API int name(FILE *fp)                                                                  \
	{                                                                                          \
		getc_fn f = REAL(getc_fn, #name);                                                  \
		INPUT(int, fp, f(fp), 1, r != EOF);                                                \
	}
GETC(fgetc)
GETC(getc)
GETC(fgetc_unlocked)
GETC(getc_unlocked)
GETC(__uflow) /* the inline getc_unlocked's refill: consumes a byte */

VG_API int __underflow(FILE *fp) /* a refill that consumes nothing */
{
	getc_fn f = REAL(getc_fn, "__underflow");
	INPUT(int, fp, f(fp), 1, 0);
}

VG_API int getchar(void)
{
	getchar_fn f = REAL(getchar_fn, "getchar");
	INPUT(int, stdin, f(), 1, r != EOF);
}

VG_API int getchar_unlocked(void)
{
	getchar_fn f = REAL(getchar_fn, "getchar_unlocked");
	INPUT(int, stdin, f(), 1, r != EOF);
}

VG_API ssize_t getdelim(char **line, size_t *n, int delim, FILE *fp)
{
	getdelim_fn f = REAL(getdelim_fn, "getdelim");
	INPUT(ssize_t, fp, f(line, n, delim, fp), r > 0, r > 0 ? (size_t)r : 0);
}

VG_API ssize_t __getdelim(char **line, size_t *n, int delim, FILE *fp)
{
	getdelim_fn f = REAL(getdelim_fn, "__getdelim");
	INPUT(ssize_t, fp, f(line, n, delim, fp), r > 0, r > 0 ? (size_t)r : 0);
}

VG_API ssize_t getline(char **line, size_t *n, FILE *fp)
{
	getline_fn f = REAL(getline_fn, "getline");
	INPUT(ssize_t, fp, f(line, n, fp), r > 0, r > 0 ? (size_t)r : 0);
}

/* The scanf family: what it consumed is not known. A refill during it is recorded as
 * unfollowed (its bytes are not). */
static int vfscanf_body(const char *name, FILE *fp, const char *fmt, va_list ap, const void *ret)
{
	vfscanf_fn f = REAL(vfscanf_fn, name);
	uint32_t c;
	if (VG_LIKELY(!followed(fp, ret, &c)))
		return f(fp, fmt, ap);
	char *end = fp->_IO_read_end, *base = fp->_IO_buf_base;
	int r = f(fp, fmt, ap);
	if (fp->_IO_read_end != end || fp->_IO_buf_base != base)
		vg__net_unfollowed(fp->_fileno, c, "scanf", 1);
	return r;
}

VG_API int __isoc99_vfscanf(FILE *fp, const char *fmt, va_list ap)
{
	return vfscanf_body("__isoc99_vfscanf", fp, fmt, ap, RET);
}

VG_API int __isoc99_vscanf(const char *fmt, va_list ap)
{
	return vfscanf_body("__isoc99_vfscanf", stdin, fmt, ap, RET);
}

VG_API int __isoc99_fscanf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfscanf_body("__isoc99_vfscanf", fp, fmt, ap, RET);
	va_end(ap);
	return r;
}

VG_API int __isoc99_scanf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfscanf_body("__isoc99_vfscanf", stdin, fmt, ap, RET);
	va_end(ap);
	return r;
}
