/* Lists of names as users write them on a command line: "a,b,c". */
#ifndef VIGIL_BASE_WORD_LIST_H
#define VIGIL_BASE_WORD_LIST_H

#include <stdbool.h>

/* Whether `name` is one of the comma-separated names of `list`, case-insensitively. */
bool vgb_word_listed(const char *list, const char *name);

#endif
