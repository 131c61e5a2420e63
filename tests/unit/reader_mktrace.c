/* reader_mktrace DIR SCENARIO: writes a hand-made trace for the end-to-end tests of
 * `vigil dump` and `vigil recover` (tests/e2e/reader_*.sh).
 *
 *   basic    two images (app-42-0 with two threads, srv-7-0 with one), every field
 *            type, named entities; events interleave in time across all streams
 *   damaged  basic, plus a stream with a bad packet between two good ones
 *   killed   basic, plus a stream ending in zero-filled space and one whose last
 *            packet claims bytes past the end of the file
 *   discarded basic, with a stream whose writer counted 1234 lost events
 *   big      basic, plus 200000 ticks (for output that fills a pipe)
 *   compact  basic, plus an image written with the runtime's compact event headers:
 *            ids on both sides of the compact range (30, 31, 300), gaps on both sides
 *            of 2^27 ns, long silences, the 27-bit timestamp wrapping
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader_tracegen.h"

#define T0 1000000000ull /* clock value of the first event: 1 s after boot */

static void all_types(struct tg_stream *s, uint64_t ts, int32_t v, const char *text)
{
	tg_event(s, TG_ALL_TYPES, ts);
	tg_u8(s, (uint8_t)(int8_t)-v);
	tg_u16(s, (uint16_t)(int16_t)(-v * 100));
	tg_u32(s, (uint32_t)(-v * 100000));
	tg_u64(s, (uint64_t)(-(int64_t)v * 10000000000ll));
	tg_u8(s, (uint8_t)v);
	tg_u16(s, (uint16_t)(v * 1000));
	tg_u32(s, (uint32_t)v * 100000u);
	tg_u64(s, UINT64_MAX - (uint64_t)v);
	tg_f64(s, v + 0.25);
	tg_str(s, text);
	tg_bytes(s, "\x01\xab\xff", 3);
	tg_ref(s, 0x1000 + (uint64_t)v % 2, 1);
}

static void basic(const char *root)
{
	struct tg_image *app =
	    tg_image_new(root, "app-42-0", &(struct tg_image_opts){.procname = "app", .pid = 42});
	struct tg_image *srv =
	    tg_image_new(root, "srv-7-0", &(struct tg_image_opts){.procname = "srv", .pid = 7});
	/* app, main thread: names the thread and two mailboxes, then all_types. */
	struct tg_stream *s = tg_stream_new(app, 42, 0);
	tg_packet_begin(s, T0);
	tg_event(s, TG_THREAD_BEGIN, T0);
	tg_u32(s, 42);
	tg_u32(s, 0);
	tg_str(s, "main");
	tg_event(s, TG_ENTITY_CREATE, T0 + 10);
	tg_str(s, "Mailbox");
	tg_u64(s, 0x1000);
	tg_u32(s, 1);
	tg_str(s, "inbox");
	all_types(s, T0 + 100, 1, "hello \"world\"\n");
	tg_packet_end(s, 0, 0);
	tg_packet_begin(s, T0 + 200);
	all_types(s, T0 + 300, 2, "caf\xc3\xa9 \x01");
	tg_event(s, TG_EMPTY, T0 + 400);
	tg_packet_end(s, 64, 0);
	tg_stream_write(s);
	/* app, a worker: ticks interleaved with main's events, one at the same time. */
	s = tg_stream_new(app, 43, 0);
	tg_packet_begin(s, T0 + 50);
	tg_tick(s, T0 + 50, 1);
	tg_tick(s, T0 + 100, 2); /* same time as main's first all_types */
	tg_tick(s, T0 + 250, 3);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	/* srv: its own process, same clock. */
	s = tg_stream_new(srv, 7, 0);
	tg_packet_begin(s, T0 + 20);
	tg_tick(s, T0 + 20, 100);
	tg_tick(s, T0 + 1500000000ull, 101); /* 1.5 s later */
	tg_tick(s, T0 + 2000000000ull, 102);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(app);
	tg_image_free(srv);
}

static struct tg_image *extra_image(const char *root)
{
	return tg_image_new(root, "extra-9-0",
	                    &(struct tg_image_opts){.procname = "extra", .pid = 9});
}

static void damaged(const char *root)
{
	struct tg_image *img = extra_image(root);
	struct tg_stream *s = tg_stream_new(img, 9, 0);
	tg_packet_begin(s, T0 + 30);
	tg_tick(s, T0 + 30, 1);
	tg_packet_end(s, 0, 0);
	size_t bad;
	tg_stream_bytes(s, &bad);
	tg_packet_begin(s, T0 + 31);
	tg_tick(s, T0 + 31, 2);
	tg_packet_end(s, 0, 0);
	tg_packet_begin(s, T0 + 32);
	tg_tick(s, T0 + 32, 3);
	tg_packet_end(s, 0, 0);
	size_t len;
	uint8_t *b = tg_stream_bytes(s, &len);
	b[bad] ^= 0xff; /* the second packet's magic */
	tg_stream_write(s);
	tg_image_free(img);
}

static void killed(const char *root)
{
	struct tg_image *img = extra_image(root);
	/* Killed between growing the file and writing the next packet's header. */
	struct tg_stream *s = tg_stream_new(img, 9, 0);
	tg_packet_begin(s, T0 + 30);
	tg_tick(s, T0 + 30, 1);
	tg_tick(s, T0 + 40, 2);
	tg_packet_end(s, 0, 0);
	static const uint8_t zeros[4096];
	tg_raw(s, zeros, sizeof zeros);
	tg_stream_write(s);
	/* A last packet claiming 64 KiB that the file does not have. */
	s = tg_stream_new(img, 10, 0);
	tg_packet_begin(s, T0 + 35);
	tg_tick(s, T0 + 35, 7);
	tg_tick(s, T0 + 45, 8);
	tg_packet_end(s, 100, 0);
	size_t len;
	uint8_t *b = tg_stream_bytes(s, &len);
	tg_put64(b + 48, 65536 * 8);
	tg_stream_write(s);
	tg_image_free(img);
}

static void discarded(const char *root)
{
	struct tg_image *img = extra_image(root);
	struct tg_stream *s = tg_stream_new(img, 9, 0);
	tg_packet_begin(s, T0 + 30);
	tg_tick(s, T0 + 30, 1);
	tg_packet_end(s, 0, 1000);
	tg_packet_begin(s, T0 + 31);
	tg_tick(s, T0 + 31, 2);
	tg_packet_end(s, 0, 1234);
	tg_stream_write(s);
	tg_image_free(img);
}

static void big(const char *root)
{
	struct tg_image *img = extra_image(root);
	for (uint32_t tid = 9; tid < 11; tid++) {
		struct tg_stream *s = tg_stream_new(img, tid, 0);
		for (uint32_t p = 0; p < 100; p++) {
			tg_packet_begin(s, T0 + 1000ull * p * 1000);
			for (uint32_t e = 0; e < 1000; e++)
				tg_tick(s, T0 + 1000ull * (p * 1000 + e) + tid, p * 1000 + e);
			tg_packet_end(s, 0, 0);
		}
		tg_stream_write(s);
	}
	tg_image_free(img);
}

/* Ticks of ids 2 (TG_TICK), 30, 31 and 300 at times that exercise the compact header's
 * escape: each gap is 2^27 - 1, 2^27 or 2^27 + 1 ns, a few ns, or seconds. */
static void compact(const char *root)
{
	struct tg_image *img =
	    tg_image_new(root, "compact-11-0",
	                 &(struct tg_image_opts){.procname = "compact", .pid = 11, .compact = 1});
	static const uint16_t ids[] = {TG_TICK, 30, 31, 300};
	for (size_t i = 1; i < sizeof ids / sizeof *ids; i++) {
		char name[32];
		snprintf(name, sizeof name, "tick%u", ids[i]);
		tg_declare(img, name, ids[i], "vigil:kind=event;flag=sensor;traced", "uint32_t n;");
	}
	tg_write_metadata(img);
	static const uint64_t gaps[] = {
	    1, (1u << 27) - 1, 1u << 27, (1u << 27) + 1, 7, 3000000000ull, (1u << 27) - 5,
	    0, 10000000000ull, 100};
	const uint64_t gap_count = sizeof gaps / sizeof *gaps;
	for (uint32_t tid = 11; tid < 13; tid++) {
		struct tg_stream *s = tg_stream_new(img, tid, 0);
		/* The packet starts with its low 27 bits near their end: the first events wrap. */
		uint64_t ts = T0 + (1u << 27) - 3 + tid;
		uint32_t n = 0;
		for (uint32_t p = 0; p < 3; p++) {
			tg_packet_begin(s, ts);
			for (uint64_t g = 0; g < 2 * gap_count; g++) {
				ts += gaps[(g + p + tid) % gap_count];
				tg_event(s, ids[(g + tid) % 4], ts);
				tg_u32(s, n++);
			}
			tg_packet_end(s, 16, 0);
			ts += 5;
		}
		tg_stream_write(s);
	}
	tg_image_free(img);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr,
		        "usage: reader_mktrace DIR basic|damaged|killed|discarded|big|compact\n");
		return 2;
	}
	const char *root = argv[1], *what = argv[2];
	mkdir(root, 0777); /* may exist */
	basic(root);
	if (!strcmp(what, "damaged"))
		damaged(root);
	else if (!strcmp(what, "killed"))
		killed(root);
	else if (!strcmp(what, "discarded"))
		discarded(root);
	else if (!strcmp(what, "big"))
		big(root);
	else if (!strcmp(what, "compact"))
		compact(root);
	else if (strcmp(what, "basic")) {
		fprintf(stderr, "reader_mktrace: unknown scenario '%s'\n", what);
		return 2;
	}
	return 0;
}
