/* stdio calls on followed descriptors (hooks_stdio.c), for the hooks of hooks_log.c
 * that export the same functions: each calls the real function and records the bytes
 * that reached a followed descriptor. `ret`: the program's call site (libvigil's own
 * calls are not followed); flag < 0: the unfortified function. Not installed. */
#ifndef VIGIL_RUNTIME_HOOKS_STDIO_H
#define VIGIL_RUNTIME_HOOKS_STDIO_H

#include <stdarg.h>
#include <stdio.h>

int vg__stdio_vfprintf(const void *ret, FILE *fp, int flag, const char *fmt, va_list ap);
int vg__stdio_vdprintf(const void *ret, int fd, int flag, const char *fmt, va_list ap);
int vg__stdio_fputs(const void *ret, const char *s, FILE *fp);
size_t vg__stdio_fwrite(const void *ret, const void *p, size_t size, size_t n, FILE *fp);
int vg__stdio_fputc(const void *ret, int ch, FILE *fp);

#endif
