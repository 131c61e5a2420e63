/* Damage reported in one format for every command (trace/source.h). */
#include <inttypes.h>
#include <stdio.h>

#include "source.h"

static void each_list(const struct vgt_damage *dm, size_t n,
                      void (*line)(void *ctx, const char *text), void *ctx)
{
	char text[1024];
	for (size_t i = 0; i < n; i++) {
		vgt_damage_format(&dm[i], text, sizeof text);
		line(ctx, text);
	}
}

void vgt_damage_each(const struct vgt_trace *t, void (*line)(void *ctx, const char *text),
                     void *ctx)
{
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		const struct vgt_image *img = vgt_image_at(t, i);
		each_list(img->damage, img->ndamage, line, ctx);
		for (size_t k = 0; k < img->nstreams; k++)
			each_list(img->streams[k]->damage, img->streams[k]->ndamage, line, ctx);
	}
}

static void put_line(void *ctx, const char *text)
{
	fprintf(ctx, "%s\n", text);
}

static void not_listed(FILE *f, const char *who, const char *path, uint64_t total, size_t n)
{
	if (total > n)
		fprintf(f, "%s: %" PRIu64 " more damaged places in %s not listed\n", who, total - n,
		        path);
}

void vgt_damage_report(const struct vgt_trace *t, const char *who, const char *discarded_note,
                       FILE *f)
{
	for (size_t i = 0; i < vgt_image_count(t); i++) {
		const struct vgt_image *img = vgt_image_at(t, i);
		each_list(img->damage, img->ndamage, put_line, f);
		for (size_t k = 0; k < img->nstreams; k++) {
			const struct vgt_stream *s = img->streams[k];
			each_list(s->damage, s->ndamage, put_line, f);
			not_listed(f, who, s->path, s->ndamage_total, s->ndamage);
		}
	}
	for (size_t i = 0; i < vgt_stream_count(t); i++) {
		const struct vgt_stream *s = vgt_stream_at(t, i);
		if (s->stats.events_discarded)
			fprintf(f, "%s: %" PRIu64 " events discarded in %s%s\n", who,
			        s->stats.events_discarded, s->path, discarded_note);
	}
}
