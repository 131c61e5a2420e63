/* JSON string literals in model files (the format strings and names). */
#ifndef VIGIL_MODEL_JSTR_H
#define VIGIL_MODEL_JSTR_H

#include <stddef.h>
#include <stdio.h>

/* Parses the JSON string literal at s (s[0] must be '"') within len bytes. On success
 * returns 0, the decoded text (UTF-8, NUL-terminated, malloc'ed) in *out and the bytes
 * consumed in *used; else -1 with *why saying what is wrong and *used the offset of the
 * problem. Rejects raw control characters, invalid UTF-8, lone surrogates and \u0000. */
int vgm_json_parse(const char *s, size_t len, size_t *used, char **out, const char **why);
/* Writes s as a JSON string literal: quotes, backslashes and control characters escaped,
 * other UTF-8 as is; bytes that are not UTF-8 become U+FFFD. */
void vgm_json_write(FILE *f, const char *s);

#endif
