/* Recovery: what a killed subject leaves is repaired so that the trace reads without
 * damage, and no completed event is lost. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "trace/trace.h"

#define TICK_SIZE 14
#define PACKET (TG_HEADER_SIZE + TICK_SIZE)

static char *root;
static struct tg_image *img;
static char lines[8192];

static int setup(void **state)
{
	(void)state;
	root = tg_tempdir();
	img = tg_image_new(root, "app-42-0", NULL);
	lines[0] = 0;
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

static void collect(void *ctx, const char *line)
{
	(void)ctx;
	strncat(lines, line, sizeof lines - strlen(lines) - 2);
	strcat(lines, "\n");
}

static struct vgt_recover_result recover(bool dry)
{
	struct vgt_recover_result res;
	char err[256];
	lines[0] = 0;
	if (vgt_recover_dir(root, dry, collect, NULL, &res, err, sizeof err) < 0)
		fail_msg("vgt_recover_dir: %s", err);
	return res;
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

/* Events (ticks) of the whole trace, and its damage count. */
static size_t read_all(uint32_t *ticks, size_t max, uint64_t *damage)
{
	char err[256];
	const char *paths[] = {root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	assert_non_null(t);
	struct vgt_merge *m = vgt_merge_open(t);
	size_t n = 0;
	for (const struct vgt_event *ev; (ev = vgt_merge_next(m));)
		if (n < max)
			ticks[n++] = (uint32_t)ev->values[0].u;
	*damage = vgt_damage_total(t);
	vgt_merge_close(m);
	vgt_close(t);
	return n;
}

static struct tg_stream *tick_packets(uint32_t tid, int npackets)
{
	struct tg_stream *s = tg_stream_new(img, tid, 0);
	for (int k = 0; k < npackets; k++) {
		tg_packet_begin(s, 100 * (uint64_t)(k + 1));
		tg_tick(s, 100 * (uint64_t)(k + 1), (uint32_t)k);
		tg_packet_end(s, 0, 0);
	}
	return s;
}

static void test_trailing_zeros_removed(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(42, 2);
	static const uint8_t zeros[5000];
	tg_raw(s, zeros, sizeof zeros);
	char *path = strdup(tg_stream_write(s));
	uint32_t ticks[8];
	uint64_t damage;
	assert_int_equal(read_all(ticks, 8, &damage), 2);
	assert_int_equal(damage, 1);

	/* A dry run changes nothing. */
	struct vgt_recover_result res = recover(true);
	assert_int_equal(res.changes, 1);
	assert_int_equal(file_size(path), 2 * PACKET + 5000);
	char want[8192];
	snprintf(want, sizeof want,
	         "%s: would remove 5000 zero bytes after the last packet (5188 -> 188 bytes)\n",
	         path);
	assert_string_equal(lines, want);

	res = recover(false);
	assert_int_equal(res.changes, 1);
	assert_int_equal(res.unrepaired, 0);
	assert_int_equal(res.images, 1);
	assert_int_equal(res.streams, 1);
	assert_int_equal(file_size(path), 2 * PACKET);
	assert_int_equal(read_all(ticks, 8, &damage), 2);
	assert_int_equal(damage, 0);
	assert_int_equal(ticks[1], 1);

	/* Nothing left to do. */
	res = recover(false);
	assert_int_equal(res.changes, 0);
	assert_string_equal(lines, "");
	free(path);
}

static void test_over_long_last_packet_shrunk(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(42, 1);
	tg_packet_begin(s, 500);
	tg_tick(s, 500, 1);
	tg_tick(s, 600, 2);
	tg_packet_end(s, 50, 0);
	size_t len;
	uint8_t *b = tg_stream_bytes(s, &len);
	tg_put64(b + PACKET + 48, (uint64_t)65536 * 8); /* claims 64 KiB */
	char *path = strdup(tg_stream_write(s));
	uint32_t ticks[8];
	uint64_t damage;
	assert_int_equal(read_all(ticks, 8, &damage), 3);
	assert_int_equal(damage, 1);

	struct vgt_recover_result res = recover(false);
	assert_int_equal(res.changes, 1);
	char want[8192];
	snprintf(want, sizeof want,
	         "%s: last packet at byte 94: packet_size 65536 -> 158 bytes (the file ends "
	         "there)\n",
	         path);
	assert_string_equal(lines, want);
	assert_int_equal(file_size(path), len);
	FILE *f = fopen(path, "rb");
	uint64_t psize = 0;
	assert_int_equal(fseek(f, PACKET + 48, SEEK_SET), 0);
	assert_int_equal(fread(&psize, 8, 1, f), 1);
	fclose(f);
	assert_int_equal(psize, (len - PACKET) * 8);
	assert_int_equal(read_all(ticks, 8, &damage), 3);
	assert_int_equal(damage, 0);
	free(path);
}

static void test_event_cut_by_the_end_of_the_file(void **state)
{
	(void)state;
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 100);
	tg_tick(s, 100, 0);
	tg_tick(s, 200, 1);
	tg_tick(s, 300, 2);
	tg_packet_end(s, 1000, 0);
	tg_stream_truncate(s, TG_HEADER_SIZE + 2 * TICK_SIZE + 6);
	char *path = strdup(tg_stream_write(s));
	struct vgt_recover_result res = recover(false);
	assert_int_equal(res.changes, 2);
	assert_non_null(strstr(lines, "packet_size 1122 -> 114 bytes"));
	assert_non_null(strstr(lines, "content_size 122 -> 108 bytes (its last complete event)"));
	uint32_t ticks[8];
	uint64_t damage;
	assert_int_equal(read_all(ticks, 8, &damage), 2);
	assert_int_equal(damage, 0);
	assert_int_equal(file_size(path), TG_HEADER_SIZE + 2 * TICK_SIZE + 6);
	free(path);
}

static void test_unfinished_packet_header_removed(void **state)
{
	(void)state;
	/* Killed while writing the next packet's header: magic and uuid only. */
	struct tg_stream *s = tick_packets(42, 2);
	tg_u32(s, 0xC1FC1FC1);
	tg_raw(s, tg_image_uuid(img), 16);
	static const uint8_t zeros[200];
	tg_raw(s, zeros, sizeof zeros);
	char *path = strdup(tg_stream_write(s));
	struct vgt_recover_result res = recover(false);
	assert_int_equal(res.changes, 1);
	assert_non_null(strstr(lines, "removed 220 bytes of a packet without events after the "
	                              "last packet"));
	assert_int_equal(file_size(path), 2 * PACKET);
	free(path);
}

static void test_garbage_tail_left_alone(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(42, 2);
	tg_raw(s, "not a packet, not zeros", 23);
	char *path = strdup(tg_stream_write(s));
	struct vgt_recover_result res = recover(false);
	assert_int_equal(res.changes, 0);
	assert_int_equal(res.unrepaired, 1);
	char want[8192];
	snprintf(want, sizeof want,
	         "%s: 23 bytes after byte 188 are not a packet and not zero: left as they are\n",
	         path);
	assert_string_equal(lines, want);
	assert_int_equal(file_size(path), 2 * PACKET + 23);
	free(path);
}

static void test_inner_damage_left_and_reported(void **state)
{
	(void)state;
	struct tg_stream *s = tick_packets(42, 3);
	size_t len;
	memcpy(tg_stream_bytes(s, &len) + PACKET, "JUNK", 4);
	static const uint8_t zeros[64];
	tg_raw(s, zeros, sizeof zeros);
	char *path = strdup(tg_stream_write(s));
	struct vgt_recover_result res = recover(false);
	assert_int_equal(res.changes, 1);
	assert_int_equal(res.unrepaired, 1);
	assert_non_null(strstr(lines, "1 damaged place inside the stream left as they are"));
	assert_int_equal(file_size(path), 3 * PACKET);
	uint32_t ticks[8];
	uint64_t damage;
	assert_int_equal(read_all(ticks, 8, &damage), 2);
	assert_int_equal(damage, 1);
	free(path);
}

static void test_cut_metadata_repaired(void **state)
{
	(void)state;
	tg_stream_write(tick_packets(42, 1));
	char path[4096];
	snprintf(path, sizeof path, "%s/metadata", tg_image_dir(img));
	uint64_t whole = file_size(path);
	FILE *f = fopen(path, "a");
	fputs("event {\n\tname = \"late\";\n\tid = 77;\n\tfields := struct { uint3", f);
	fclose(f);
	uint32_t ticks[8];
	uint64_t damage;
	assert_int_equal(read_all(ticks, 8, &damage), 1);
	assert_int_equal(damage, 1);
	struct vgt_recover_result res = recover(false);
	assert_int_equal(res.changes, 1);
	assert_non_null(strstr(lines, "cut after its last complete declaration"));
	/* The complete text ended with "};\n\n": the cut keeps up to the ';'. */
	assert_int_equal(file_size(path), whole - 2);
	assert_int_equal(read_all(ticks, 8, &damage), 1);
	assert_int_equal(damage, 0);
}

static void test_empty_and_zero_streams(void **state)
{
	(void)state;
	struct tg_stream *s = tg_stream_new(img, 5, 0);
	static const uint8_t zeros[4096];
	tg_raw(s, zeros, sizeof zeros); /* killed right after growing the file */
	char *path = strdup(tg_stream_write(s));
	tg_stream_write(tg_stream_new(img, 6, 0)); /* empty */
	struct vgt_recover_result res = recover(false);
	assert_int_equal(res.changes, 1);
	assert_int_equal(res.streams, 2);
	assert_int_equal(file_size(path), 0);
	uint32_t ticks[8];
	uint64_t damage;
	assert_int_equal(read_all(ticks, 8, &damage), 0);
	assert_int_equal(damage, 0);
	free(path);
}

static void test_not_a_trace(void **state)
{
	(void)state;
	char err[256];
	struct vgt_recover_result res;
	assert_int_equal(vgt_recover_dir("/nonexistent", false, NULL, NULL, &res, err, sizeof err),
	                 -1);
	assert_string_equal(err, "cannot open '/nonexistent': No such file or directory");
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_trailing_zeros_removed),
	    T(test_over_long_last_packet_shrunk),
	    T(test_event_cut_by_the_end_of_the_file),
	    T(test_unfinished_packet_header_removed),
	    T(test_garbage_tail_left_alone),
	    T(test_inner_damage_left_and_reported),
	    T(test_cut_metadata_repaired),
	    T(test_empty_and_zero_streams),
	    T(test_not_a_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
