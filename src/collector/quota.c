/* A packet vigild cannot keep (the subject's --quota-per-subject reached, or the disk
 * full): what its events were is counted in the trace, never lost silently. The packet
 * is stored as a stub, its header and a loss note (subject.c: what a restart reads back),
 * whose events_discarded adds the events it held;
 * every later packet of the stream carries the count on (vgd_packet). The events are
 * counted in memory with the event types the trace reader makes of the image's metadata
 * (docs/trace-format.md: the event header it declares, then the fields). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "trace/trace.h"
#include "vigild.h"
#include "wire/tsdl_header.h"

static uint64_t rd(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static const struct vgt_event_type *type_of(const struct vgt_image *img, uint64_t id)
{
	for (size_t i = 0; i < img->ntypes; i++)
		if (img->types[i]->id == id)
			return img->types[i];
	return NULL;
}

/* The events of the packet, decoded in memory (a full disk leaves no room for a scratch
 * copy): -1 at an id the image's metadata does not declare, or bytes that do not parse. */
static int64_t count(const struct vgt_image *img, const uint8_t *p, size_t n)
{
	size_t end = (size_t)(rd(p + VGW_PKT_CONTENT_SIZE, 8) / 8), off = VGW_PACKET_HEADER_SIZE;
	if (end > n)
		return -1;
	int64_t events = 0;
	while (off < end) {
		uint64_t id;
		if (vgt_event_header_at(img, p, end, off, &id, &off) < 0)
			return -1;
		const struct vgt_event_type *t = type_of(img, id);
		if (!t)
			return -1;
		uint64_t seq_len = 0;
		for (unsigned i = 0; i < t->nfields; i++) {
			const struct vgt_field *f = &t->fields[i];
			size_t need = f->size;
			if (f->type == VGT_STRING) {
				const uint8_t *nul = memchr(p + off, 0, end - off);
				if (!nul)
					return -1;
				need = (size_t)(nul - (p + off)) + 1;
			} else if (f->type == VGT_REF) {
				need = 12;
			} else if (f->type == VGT_BYTES && !f->size) {
				need = (size_t)seq_len;
			}
			if (need > end - off)
				return -1;
			if (f->hidden && (f->type == VGT_UINT || f->type == VGT_INT))
				seq_len = rd(p + off, f->size);
			off += need;
		}
		events++;
	}
	return events;
}

uint64_t vgd_count_events(struct vgd_image *im, const uint8_t *p, size_t n)
{
	int64_t c = -1;
	for (int again = 0; again < 2 && c < 0; again++) {
		/* The image's event types, read once; again when its metadata grew. */
		if (again || !im->types) {
			if (im->types)
				vgt_close(im->types);
			char err[256];
			const char *paths[] = {im->path};
			im->types = vgt_open(paths, 1, err, sizeof err);
		}
		if (im->types && vgt_image_count(im->types) == 1)
			c = count(vgt_image_at(im->types, 0), p, n);
	}
	if (c >= 0)
		return (uint64_t)c;
	vgd_log("%s: the events of a packet not stored do not decode; counted as 1", im->path);
	return 1; /* at least the one that did not decode */
}
