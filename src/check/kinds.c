/* Entity kinds, interned: "Mailbox" and "mailbox" are one kind. Numbers 0 and 1 are the
 * built-in process and thread. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define KIND_MAX 128 /* longer kind names are cut (they still compare on this much) */

struct kind_rec {
	char text[KIND_MAX]; /* lowercase, NUL-padded: the key */
	uint32_t num;
};

static uint64_t kind_hash(const void *key)
{
	const uint64_t *w = key;
	uint64_t h = 0;
	for (size_t i = 0; i < KIND_MAX / 8 && w[i]; i++)
		h = vgc_mix(h ^ w[i]);
	return h;
}

static void lower(char out[KIND_MAX], const char *text)
{
	memset(out, 0, KIND_MAX);
	for (size_t i = 0; i < KIND_MAX - 1 && text[i]; i++)
		out[i] = (char)tolower((unsigned char)text[i]);
}

int vgc_kinds_init(struct vgc_kinds *k)
{
	memset(k, 0, sizeof *k);
	vgc_table_init(&k->index, sizeof(struct kind_rec), KIND_MAX, kind_hash);
	return vgc_kind_intern(k, "process") == VGC_KIND_PROCESS &&
	               vgc_kind_intern(k, "thread") == VGC_KIND_THREAD
	           ? 0
	           : -1;
}

void vgc_kinds_free(struct vgc_kinds *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->display[i]);
	free(k->display);
	vgc_table_free(&k->index);
}

int64_t vgc_kind_intern(struct vgc_kinds *k, const char *text)
{
	char key[KIND_MAX];
	lower(key, text);
	/* The OS process is not a user kind: user entities of kind "process" stay theirs. */
	if (k->n > VGC_KIND_PROCESS && !strcmp(key, "process"))
		key[KIND_MAX - 1] = 1;
	bool fresh;
	struct kind_rec *r = vgc_table_insert(&k->index, key, &fresh);
	if (!r)
		return -1;
	if (!fresh)
		return r->num;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;
		char **d = realloc(k->display, cap * sizeof *d);
		if (!d)
			return -1;
		k->display = d;
		k->cap = cap;
	}
	k->display[k->n] = strdup(text);
	if (!k->display[k->n])
		return -1;
	r->num = (uint32_t)k->n;
	return (int64_t)k->n++;
}

const char *vgc_kind_display(const struct vgc_kinds *k, uint32_t kind)
{
	return kind < k->n ? k->display[kind] : "?";
}
