/* Damage: each kind is reported with its file and byte offset, and reading goes on
 * after it. Streams are built packet by packet, then corrupted byte by byte. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "trace/trace.h"

#define TICK_SIZE 14                        /* uint16 id, uint64 ts, uint32 n */
#define PACKET (TG_HEADER_SIZE + TICK_SIZE) /* a packet with one tick */

static char *root;
static struct tg_image *img;

static int setup(void **state)
{
	(void)state;
	root = tg_tempdir();
	img = tg_image_new(root, "app-42-0", NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tg_image_free(img);
	tg_rmtree(root);
	free(root);
	return 0;
}

/* A stream of `npackets` packets, each holding tick n=k at time 100*(k+1). */
static struct tg_stream *tick_packets(int npackets)
{
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	for (int k = 0; k < npackets; k++) {
		tg_packet_begin(s, 100 * (uint64_t)(k + 1));
		tg_tick(s, 100 * (uint64_t)(k + 1), (uint32_t)k);
		tg_packet_end(s, 0, 0);
	}
	return s;
}

static uint8_t *bytes_of(struct tg_stream *s)
{
	size_t len;
	return tg_stream_bytes(s, &len);
}

struct result {
	struct vgt_trace *t;
	uint32_t ticks[4096];
	size_t nticks, nevents;
	const struct vgt_stream *stream;
};

/* Reads the single stream; tick numbers in order. */
static void read_stream(struct result *r)
{
	char err[256] = "";
	const char *paths[] = {root};
	memset(r, 0, sizeof *r);
	r->t = vgt_open(paths, 1, err, sizeof err);
	if (!r->t)
		fail_msg("vgt_open: %s", err);
	struct vgt_cursor *c = vgt_cursor_open(r->t, 0);
	for (const struct vgt_event *ev; (ev = vgt_cursor_next(c));) {
		r->nevents++;
		if (!strcmp(ev->type->name, "tick") && r->nticks < 4096)
			r->ticks[r->nticks++] = (uint32_t)ev->values[0].u;
	}
	vgt_cursor_close(c);
	r->stream = vgt_stream_at(r->t, 0);
}

static void expect_ticks(const struct result *r, const uint32_t *want, size_t n)
{
	assert_int_equal(r->nticks, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(r->ticks[i], want[i]);
}

/* Damage i: its kind, offset and message (without the path). */
static void expect_damage(const struct result *r, size_t i, enum vgt_damage_kind kind,
                          uint64_t offset, const char *message)
{
	assert_true(i < r->stream->ndamage);
	const struct vgt_damage *d = &r->stream->damage[i];
	if (d->kind != kind)
		fail_msg("damage %zu is %s, expected %s (%s)", i, vgt_damage_kind_name(d->kind),
		         vgt_damage_kind_name(kind), d->message);
	assert_int_equal(d->offset, offset);
	assert_string_equal(d->message, message);
	assert_string_equal(d->file, r->stream->path);
	char line[1024], want[1024];
	vgt_damage_format(d, line, sizeof line);
	snprintf(want, sizeof want, "%s: byte %llu: %s", d->file, (unsigned long long)offset,
	         message);
	assert_string_equal(line, want);
}

static void done(struct result *r)
{
	vgt_close(r->t);
}

static void test_clean_stream(void **state)
{
	(void)state;
	tg_stream_write(tick_packets(3));
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1, 2}, 3);
	assert_int_equal(r.stream->ndamage_total, 0);
	done(&r);
}

/* A trace still being recorded: its runtime shrinks a stream file when it closes a
 * packet. Opened with vgt_set_copy_streams, what was read at the open stays readable
 * (a mapping would raise SIGBUS past the file's new end). */
static void test_stream_shrinks_after_open(void **state)
{
	(void)state;
	const char *path = tg_stream_write(tick_packets(3));
	char err[256] = "";
	const char *paths[] = {root};
	vgt_set_copy_streams(true);
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	vgt_set_copy_streams(false);
	assert_non_null(t);
	assert_int_equal(truncate(path, 0), 0);
	struct vgt_cursor *c = vgt_cursor_open(t, 0);
	uint32_t ticks[8];
	size_t n = 0;
	for (const struct vgt_event *ev; (ev = vgt_cursor_next(c));)
		if (!strcmp(ev->type->name, "tick") && n < 8)
			ticks[n++] = (uint32_t)ev->values[0].u;
	vgt_cursor_close(c);
	assert_int_equal(n, 3);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(ticks[k], k);
	vgt_close(t);
}

static void test_bad_magic(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(3);
	memcpy(bytes_of(s) + PACKET, "JUNK", 4);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 2}, 2);
	assert_int_equal(r.stream->ndamage_total, 1);
	expect_damage(&r, 0, VGT_DMG_BAD_MAGIC, PACKET,
	              "bad packet magic 0x4b4e554a (expected 0xc1fc1fc1); resumed at byte 188");
	done(&r);
}

static void test_uuid_mismatch(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(3);
	bytes_of(s)[PACKET + 4 + 15] ^= 1;
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 2}, 2);
	expect_damage(&r, 0, VGT_DMG_UUID_MISMATCH, PACKET,
	              "packet uuid is not the trace's uuid; resumed at byte 188");
	done(&r);
}

static void test_unknown_stream_id(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(3);
	bytes_of(s)[2 * PACKET + 20] = 5;
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1}, 2);
	expect_damage(&r, 0, VGT_DMG_UNKNOWN_STREAM, 2 * PACKET,
	              "packet of stream_id 5, which is not declared; no packet after it");
	done(&r);
}

static void test_bad_packet_size(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(4);
	tg_put64(bytes_of(s) + PACKET + 48, PACKET * 8 + 3);
	tg_put64(bytes_of(s) + 2 * PACKET + 48, 64 * 8);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 3}, 2);
	expect_damage(&r, 0, VGT_DMG_BAD_PACKET_SIZE, PACKET,
	              "packet_size of 755 bits is not whole bytes; resumed at byte 188");
	expect_damage(&r, 1, VGT_DMG_BAD_PACKET_SIZE, 2 * PACKET,
	              "packet_size of 512 bits is smaller than the packet header; resumed at "
	              "byte 282");
	done(&r);
}

static void test_packet_size_past_eof_in_the_middle(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(3);
	tg_put64(bytes_of(s) + PACKET + 48, (uint64_t)1 << 40);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	/* Its own event is read, then the next packet is found. */
	expect_ticks(&r, (uint32_t[]){0, 1, 2}, 3);
	expect_damage(&r, 0, VGT_DMG_PACKET_PAST_EOF, PACKET,
	              "packet_size of 137438953472 bytes runs past the end of the file (188 "
	              "bytes left); resumed at byte 188");
	done(&r);
}

static void test_content_size_beyond_packet(void **state)
{
	(void)state;
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 1);
	tg_tick(s, 1, 0);
	tg_packet_end(s, 0, 0);
	tg_packet_begin(s, 2);
	tg_tick(s, 2, 1);
	tg_packet_end(s, 16, 0); /* 16 zero bytes: an "event" of id 0 when read as content */
	tg_packet_begin(s, 3);
	tg_tick(s, 3, 2);
	tg_packet_end(s, 0, 0);
	tg_put64(bytes_of(s) + PACKET + 40, (PACKET + 16 + 1) * 8);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1, 2}, 3);
	expect_damage(&r, 0, VGT_DMG_CONTENT_SIZE, PACKET,
	              "content_size of 888 bits exceeds packet_size of 880 bits; events read up "
	              "to the packet end");
	expect_damage(&r, 1, VGT_DMG_UNKNOWN_EVENT, 2 * PACKET,
	              "unknown event id 0; 16 bytes skipped");
	done(&r);
}

static void test_content_size_below_header(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(3);
	tg_put64(bytes_of(s) + PACKET + 40, 40 * 8);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 2}, 2);
	expect_damage(&r, 0, VGT_DMG_CONTENT_SIZE, PACKET,
	              "content_size of 320 bits is smaller than the packet header (80 bytes); "
	              "no events read from this packet");
	done(&r);
}

static void test_unknown_event_id(void **state)
{
	(void)state;
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 1);
	tg_tick(s, 1, 0);
	tg_event(s, 77, 2);
	tg_u32(s, 0);
	tg_tick(s, 3, 1); /* lost with the rest of the packet */
	tg_packet_end(s, 0, 0);
	tg_packet_begin(s, 4);
	tg_tick(s, 4, 2);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 2}, 2);
	expect_damage(&r, 0, VGT_DMG_UNKNOWN_EVENT, TG_HEADER_SIZE + TICK_SIZE,
	              "unknown event id 77; 28 bytes skipped");
	done(&r);
}

static void test_field_overrun(void **state)
{
	(void)state;
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 1);
	tg_tick(s, 1, 0);
	/* all_types whose byte sequence claims 1000 bytes. */
	tg_event(s, TG_ALL_TYPES, 2);
	tg_raw(s, "\x01\x02\x00\x03\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00", 15);
	tg_raw(s, "\x05\x06\x00\x07\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00", 15);
	tg_f64(s, 1.0);
	tg_str(s, "x");
	tg_u32(s, 1000);
	tg_raw(s, "abc", 3);
	tg_packet_end(s, 0, 0);
	tg_packet_begin(s, 3);
	tg_tick(s, 3, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1}, 2);
	expect_damage(&r, 0, VGT_DMG_FIELD_OVERRUN, TG_HEADER_SIZE + TICK_SIZE,
	              "event 'all_types' runs past the packet content; 57 bytes skipped");
	done(&r);
}

static void test_unterminated_string(void **state)
{
	(void)state;
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 1);
	tg_tick(s, 1, 0);
	tg_event(s, TG_ENTITY_CREATE, 2);
	tg_raw(s, "Mailb", 5); /* content ends inside the string */
	tg_packet_end(s, 0, 0);
	tg_packet_begin(s, 3);
	tg_tick(s, 3, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1}, 2);
	expect_damage(&r, 0, VGT_DMG_UNTERMINATED_STRING, TG_HEADER_SIZE + TICK_SIZE,
	              "event 'vg.entity.create': a string runs past the packet content; 15 bytes "
	              "skipped");
	done(&r);
}

static void test_truncated_last_packet(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(2);
	tg_packet_begin(s, 300);
	tg_tick(s, 300, 2);
	tg_tick(s, 400, 3);
	tg_packet_end(s, 200, 0);
	size_t len;
	tg_stream_bytes(s, &len);
	tg_stream_truncate(s, 2 * PACKET + TG_HEADER_SIZE + TICK_SIZE + 12); /* inside tick 3 */
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1, 2}, 3);
	expect_damage(&r, 0, VGT_DMG_PACKET_PAST_EOF, 2 * PACKET,
	              "packet_size of 308 bytes runs past the end of the file (106 bytes left); "
	              "no packet after it");
	expect_damage(&r, 1, VGT_DMG_TRUNCATED, 2 * PACKET + TG_HEADER_SIZE + TICK_SIZE,
	              "the file ends inside event 'tick'");
	assert_int_equal(r.stream->ndamage, 2);
	done(&r);
}

static void test_file_ends_inside_a_header(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(2);
	tg_packet_begin(s, 300);
	tg_stream_truncate(s, 2 * PACKET + 30);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1}, 2);
	expect_damage(&r, 0, VGT_DMG_TRUNCATED, 2 * PACKET,
	              "the file ends inside a packet header (30 bytes left)");
	done(&r);
}

static void test_trailing_zeros(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(2);
	static const uint8_t zeros[4096];
	tg_raw(s, zeros, sizeof zeros);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1}, 2);
	expect_damage(&r, 0, VGT_DMG_TRAILING_ZEROS, 2 * PACKET,
	              "4096 bytes of zero-filled space after the last packet");
	assert_int_equal(r.stream->ndamage_total, 1);
	done(&r);
}

static void test_zeros_between_packets(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(1);
	static const uint8_t zeros[100];
	tg_raw(s, zeros, sizeof zeros);
	tg_packet_begin(s, 500);
	tg_tick(s, 500, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1}, 2);
	expect_damage(&r, 0, VGT_DMG_BAD_MAGIC, PACKET,
	              "bad packet magic 0x00000000 (expected 0xc1fc1fc1); resumed at byte 194");
	done(&r);
}

static void test_packets_missing_and_time_backwards(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(3);
	tg_put64(bytes_of(s) + 2 * PACKET + 56, 5);                  /* seq 0, 1, 5 */
	tg_put64(bytes_of(s) + 2 * PACKET + TG_HEADER_SIZE + 2, 50); /* tick 2 at 50 */
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1, 2}, 3); /* the old event is still read */
	expect_damage(&r, 0, VGT_DMG_PACKETS_MISSING, 2 * PACKET,
	              "packet_seq_num 5 follows 1 (packets missing)");
	expect_damage(&r, 1, VGT_DMG_TIME_BACKWARDS, 2 * PACKET + TG_HEADER_SIZE,
	              "event 'tick' is 150 ns older than the one before it");
	done(&r);
}

/* Offsets in a packet header: timestamp_end, events_discarded, tid. */
#define CTX_TS_END 32
#define CTX_DISCARDED 64
#define CTX_TID 72

static void test_packet_context_contradictions(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(4);
	tg_put64(bytes_of(s) + PACKET + CTX_TS_END, 50);       /* packet 1 ends at 50 */
	tg_put64(bytes_of(s) + CTX_DISCARDED, 7);              /* 7 lost by packet 0 */
	tg_put64(bytes_of(s) + PACKET + CTX_DISCARDED, 7);     /* still 7 */
	tg_put64(bytes_of(s) + 2 * PACKET + CTX_DISCARDED, 3); /* and 3 by packet 2 */
	tg_put64(bytes_of(s) + 3 * PACKET + CTX_DISCARDED, 7); /* 7 again: fine */
	uint32_t other = 43;
	memcpy(bytes_of(s) + 3 * PACKET + CTX_TID, &other, 4); /* another thread */
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){0, 1, 2, 3}, 4); /* every event is still read */
	expect_damage(&r, 0, VGT_DMG_PACKET_CONTEXT, PACKET,
	              "timestamp_end 50 is before timestamp_begin 200");
	expect_damage(&r, 1, VGT_DMG_PACKET_CONTEXT, 2 * PACKET,
	              "events_discarded 3 is less than the previous packet's 7 (the count only "
	              "grows)");
	expect_damage(&r, 2, VGT_DMG_PACKET_CONTEXT, 3 * PACKET,
	              "thread 43/0 in a stream of thread 42/0");
	assert_int_equal(r.stream->ndamage_total, 3);
	assert_int_equal(r.stream->stats.events_discarded, 7);
	done(&r);
}

/* Entries of an image folder that cannot be streams are each one damage naming them;
 * an empty file is a stream without packets (its writer committed nothing). */
static void test_entries_that_are_not_streams(void **state)
{
	(void)state;
	tg_stream_write(tick_packets(1));
	char path[4096];
	const char *dir = tg_image_dir(img);
	snprintf(path, sizeof path, "%s/stream-fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof path, "%s/stream-dir", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/stream-zero", dir);
	assert_int_equal(symlink("/dev/zero", path), 0);
	snprintf(path, sizeof path, "%s/stream-loop", dir);
	assert_int_equal(symlink("stream-loop", path), 0);
	snprintf(path, sizeof path, "%s/stream-empty", dir);
	tg_write_file(path, NULL, 0);
	struct result r;
	read_stream(&r);
	assert_int_equal(vgt_stream_count(r.t), 2); /* the ticks and the empty file */
	const struct vgt_image *im = vgt_image_at(r.t, 0);
	static const char *const want[][2] = {
	    {"stream-dir", "a folder, not a stream file: not read"},
	    {"stream-fifo", "a FIFO, not a stream file: not read"},
	    {"stream-loop", "a symbolic link, not a stream file: not followed"},
	    {"stream-zero", "a symbolic link, not a stream file: not followed"},
	};
	assert_int_equal(im->ndamage, 4);
	for (size_t i = 0; i < 4; i++) {
		bool found = false;
		for (size_t j = 0; j < im->ndamage; j++) {
			const struct vgt_damage *d = &im->damage[j];
			snprintf(path, sizeof path, "%s/%s", dir, want[i][0]);
			if (strcmp(d->file, path))
				continue;
			found = true;
			assert_int_equal(d->kind, VGT_DMG_NOT_A_STREAM);
			assert_string_equal(d->message, want[i][1]);
			char line[8192], expect[8192];
			vgt_damage_format(d, line, sizeof line);
			snprintf(expect, sizeof expect, "%s: %s", path, want[i][1]);
			assert_string_equal(line, expect);
		}
		if (!found)
			fail_msg("no damage names %s", want[i][0]);
	}
	assert_int_equal(vgt_damage_total(r.t), 4);
	done(&r);
}

static void test_garbage_file(void **state)
{
	(void)state;
	uint8_t junk[10000];
	srand(7);
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (uint8_t)(rand() | 1);
	char path[4096];
	snprintf(path, sizeof path, "%s/stream-1-0", tg_image_dir(img));
	tg_write_file(path, junk, sizeof junk);
	struct result r;
	read_stream(&r);
	assert_int_equal(r.nevents, 0);
	assert_int_equal(r.stream->ndamage_total, 1);
	assert_int_equal(r.stream->damage[0].kind, VGT_DMG_BAD_MAGIC);
	assert_non_null(strstr(r.stream->damage[0].message, "; no packet after it"));
	done(&r);
}

static void test_damage_list_is_capped_but_counted(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(2400);
	for (int k = 1; k < 2400; k += 2)
		bytes_of(s)[(size_t)k * PACKET] = 0; /* 1200 bad magics */
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	assert_int_equal(r.nticks, 1200);
	assert_int_equal(r.stream->ndamage, VGT_DAMAGE_KEPT);
	assert_int_equal(r.stream->ndamage_total, 1200);
	assert_int_equal(vgt_damage_total(r.t), 1200);
	done(&r);
}

static void test_bad_image_spares_the_others(void **state)
{
	(void)state;
	tg_stream_write(tick_packets(2));
	struct tg_image *bad = tg_image_new(root, "bad-7-0", &(struct tg_image_opts){.pid = 7});
	char path[4096];
	snprintf(path, sizeof path, "%s/metadata", tg_image_dir(bad));
	const char *text = "trace {\n\tbyte_order = le\n};\n";
	tg_write_file(path, text, strlen(text));
	struct tg_stream *s = tg_stream_new(bad, 7, 0);
	tg_packet_begin(s, 1);
	tg_tick(s, 1, 9);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);

	char err[256];
	const char *paths[] = {root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	assert_non_null(t);
	assert_int_equal(vgt_image_count(t), 2);
	const struct vgt_image *a = vgt_image_at(t, 0), *b = vgt_image_at(t, 1);
	assert_true(a->readable);
	assert_false(b->readable);
	assert_int_equal(b->nstreams, 0);
	assert_int_equal(b->ndamage, 1);
	char line[5000], want[5000];
	vgt_damage_format(&b->damage[0], line, sizeof line);
	snprintf(want, sizeof want, "%s:3:1: expected ';', got '}'", path);
	assert_string_equal(line, want);
	struct vgt_merge *m = vgt_merge_open(t);
	size_t n = 0;
	while (vgt_merge_next(m))
		n++;
	assert_int_equal(n, 2);
	assert_int_equal(vgt_damage_total(t), 1);
	vgt_merge_close(m);
	vgt_close(t);
	tg_image_free(bad);
}

static void test_events_of_a_rejected_declaration(void **state)
{
	(void)state;
	tg_declare(img, "odd", 9, "", "uint16_t a[2];");
	tg_write_metadata(img);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 1);
	tg_event(s, 9, 1);
	tg_u32(s, 0);
	tg_packet_end(s, 0, 0);
	tg_packet_begin(s, 2);
	tg_tick(s, 2, 1);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	expect_ticks(&r, (uint32_t[]){1}, 1);
	expect_damage(&r, 0, VGT_DMG_UNKNOWN_EVENT, TG_HEADER_SIZE,
	              "event 'odd' has no usable declaration; 14 bytes skipped");
	assert_int_equal(vgt_image_at(r.t, 0)->ndamage, 1);
	assert_int_equal(vgt_image_at(r.t, 0)->damage[0].kind, VGT_DMG_METADATA_TYPE);
	done(&r);
}

static void test_rereading_starts_statistics_over(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(3);
	memcpy(bytes_of(s) + PACKET, "JUNK", 4);
	tg_stream_write(s);
	struct result r;
	read_stream(&r);
	struct vgt_cursor *c = vgt_cursor_open(r.t, 0);
	while (vgt_cursor_next(c))
		;
	vgt_cursor_close(c);
	assert_int_equal(r.stream->stats.events, 2);
	assert_int_equal(r.stream->ndamage_total, 1);
	done(&r);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_clean_stream),
	    T(test_stream_shrinks_after_open),
	    T(test_bad_magic),
	    T(test_uuid_mismatch),
	    T(test_unknown_stream_id),
	    T(test_bad_packet_size),
	    T(test_packet_size_past_eof_in_the_middle),
	    T(test_content_size_beyond_packet),
	    T(test_content_size_below_header),
	    T(test_unknown_event_id),
	    T(test_field_overrun),
	    T(test_unterminated_string),
	    T(test_truncated_last_packet),
	    T(test_file_ends_inside_a_header),
	    T(test_trailing_zeros),
	    T(test_zeros_between_packets),
	    T(test_packets_missing_and_time_backwards),
	    T(test_packet_context_contradictions),
	    T(test_entries_that_are_not_streams),
	    T(test_garbage_file),
	    T(test_damage_list_is_capped_but_counted),
	    T(test_bad_image_spares_the_others),
	    T(test_events_of_a_rejected_declaration),
	    T(test_rereading_starts_statistics_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
