/* Lists of names as users write them (word_list.h). */
#include <string.h>
#include <strings.h>

#include "base/word_list.h"

bool vgb_word_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncasecmp(p, name, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}
