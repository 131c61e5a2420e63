/* Damage lists: what was wrong, where, and where reading resumed. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

long vgt_damage_add(struct damage_list *l, enum vgt_damage_kind kind, const char *file,
                    uint64_t offset, unsigned line, unsigned col, const char *fmt, ...)
{
	l->total++;
	if (l->n >= VGT_DAMAGE_KEPT)
		return -1;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		l->items = vgt__xrealloc(l->items, l->cap, sizeof *l->items);
	}
	va_list ap;
	char *msg;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		vgt__oom();
	va_end(ap);
	l->items[l->n] = (struct vgt_damage){kind, file, offset, line, col, msg};
	return (long)l->n++;
}

void vgt_damage_append(struct damage_list *l, long idx, const char *fmt, ...)
{
	if (idx < 0 || (size_t)idx >= l->n)
		return;
	va_list ap;
	char *more;
	va_start(ap, fmt);
	if (vasprintf(&more, fmt, ap) < 0)
		vgt__oom();
	va_end(ap);
	char *msg = vgt__xprintf("%s%s", l->items[idx].message, more);
	free(more);
	free((char *)l->items[idx].message);
	l->items[idx].message = msg;
}

void vgt_damage_clear(struct damage_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free((char *)l->items[i].message);
	free(l->items);
	*l = (struct damage_list){0};
}

void vgt_damage_format(const struct vgt_damage *d, char *buf, size_t size)
{
	if (d->line)
		snprintf(buf, size, "%s:%u:%u: %s", d->file, d->line, d->col, d->message);
	else if (d->kind == VGT_DMG_METADATA || d->kind == VGT_DMG_IO ||
	         d->kind == VGT_DMG_NOT_A_STREAM)
		snprintf(buf, size, "%s: %s", d->file, d->message);
	else
		snprintf(buf, size, "%s: byte %" PRIu64 ": %s", d->file, d->offset, d->message);
}

const char *vgt_damage_kind_name(enum vgt_damage_kind k)
{
	static const char *const names[] = {
	    [VGT_DMG_METADATA] = "metadata",
	    [VGT_DMG_METADATA_CUT] = "metadata-cut",
	    [VGT_DMG_METADATA_TYPE] = "metadata-type",
	    [VGT_DMG_IO] = "io",
	    [VGT_DMG_BAD_MAGIC] = "bad-magic",
	    [VGT_DMG_UUID_MISMATCH] = "uuid-mismatch",
	    [VGT_DMG_UNKNOWN_STREAM] = "unknown-stream",
	    [VGT_DMG_BAD_PACKET_SIZE] = "bad-packet-size",
	    [VGT_DMG_PACKET_PAST_EOF] = "packet-past-eof",
	    [VGT_DMG_CONTENT_SIZE] = "content-size",
	    [VGT_DMG_TRUNCATED] = "truncated",
	    [VGT_DMG_TRAILING_ZEROS] = "trailing-zeros",
	    [VGT_DMG_UNKNOWN_EVENT] = "unknown-event",
	    [VGT_DMG_FIELD_OVERRUN] = "field-overrun",
	    [VGT_DMG_UNTERMINATED_STRING] = "unterminated-string",
	    [VGT_DMG_PACKETS_MISSING] = "packets-missing",
	    [VGT_DMG_TIME_BACKWARDS] = "time-backwards",
	    [VGT_DMG_PACKET_CONTEXT] = "packet-context",
	    [VGT_DMG_NOT_A_STREAM] = "not-a-stream",
	};
	return (unsigned)k < sizeof names / sizeof *names && names[k] ? names[k] : "unknown";
}
