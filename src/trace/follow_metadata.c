/* A followed image's metadata grows while its process runs: the runtime appends one
 * declaration per sensor as it registers (before the sensor can fire). Parsing the text
 * again gives new objects for the old declarations too; readers hold the old ones (the
 * classes they looked their fields up in, by pointer and by class_id), so the new parse's
 * tables are pointed at the old classes and only the new declarations are new classes. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/file_io.h"
#include "internal.h"

#define MAX_METADATA ((size_t)64 << 20)

/* Points the stream class's tables at `old` instead of `fresh`. */
static void adopt_class(struct stream_class *sc, const struct event_class *fresh,
                        struct event_class *old)
{
	for (size_t i = 0; i < sc->nsorted; i++)
		if (sc->sorted[i] == fresh)
			sc->sorted[i] = old;
	if (sc->by_id && fresh->pub.id < sc->by_id_len && sc->by_id[fresh->pub.id] == fresh)
		sc->by_id[fresh->pub.id] = old;
}

static bool is_metadata_damage(enum vgt_damage_kind k)
{
	return k == VGT_DMG_METADATA || k == VGT_DMG_METADATA_CUT || k == VGT_DMG_METADATA_TYPE;
}

/* The image's damage with the metadata's as the latest parse found it (a declaration
 * cut while it was being appended is no damage once it is whole). */
static void replace_metadata_damage(struct image *img, struct damage_list *diag)
{
	struct damage_list kept = {0};
	for (size_t i = 0; i < img->damage.n; i++) {
		struct vgt_damage *d = &img->damage.items[i];
		if (is_metadata_damage(d->kind)) {
			free((char *)d->message);
			continue;
		}
		long k = vgt_damage_add(&kept, d->kind, d->file, d->offset, d->line, d->col, "%s",
		                        d->message);
		(void)k;
		free((char *)d->message);
	}
	for (size_t i = 0; i < diag->n; i++) {
		struct vgt_damage *d = &diag->items[i];
		vgt_damage_add(&kept, d->kind, d->file, d->offset, d->line, d->col, "%s",
		               d->message);
	}
	free(img->damage.items);
	vgt_damage_clear(diag);
	img->damage = kept;
	img->pub.damage = kept.items;
	img->pub.ndamage = kept.n;
}

size_t vgt_image_grow_metadata(struct image *img)
{
	if (!img->md)
		return 0;
	size_t len = 0;
	char *text = vgb_read_file(img->metadata_path, MAX_METADATA, VGB_READ_REGULAR, &len);
	if (!text || len <= img->metadata_len) {
		free(text);
		return 0;
	}
	struct damage_list diag = {0};
	struct metadata *md = vgt_metadata_parse(text, len, img->metadata_path, &diag);
	free(text);
	if (!md) { /* the text that parsed before no longer does: read on with the old */
		vgt_damage_clear(&diag);
		return 0;
	}
	const struct vgt_event_type **types =
	    vgt_arena_alloc(&md->arena, (img->pub.ntypes + md->nevents + 1) * sizeof *types);
	size_t n = img->pub.ntypes;
	memcpy(types, img->pub.types, n * sizeof *types);
	for (size_t i = 0; i < md->nevents; i++) {
		struct event_class *fresh = md->events[i];
		const struct stream_class *osc = vgt_metadata_stream(img->md, fresh->pub.stream_id);
		struct event_class *old = osc ? vgt_stream_class_event(osc, fresh->pub.id) : NULL;
		if (old) {
			if (fresh->sc)
				adopt_class(fresh->sc, fresh, old);
			md->events[i] = old;
		} else {
			types[n++] = &fresh->pub;
		}
	}
	size_t added = n - img->pub.ntypes;
	img->old_md = vgt__xrealloc(img->old_md, img->nold_md + 1, sizeof *img->old_md);
	img->old_md[img->nold_md++] = img->md;
	img->md = md;
	img->metadata_len = len;
	img->pub.types = types;
	img->pub.ntypes = n;
	replace_metadata_damage(img, &diag);
	return added;
}
