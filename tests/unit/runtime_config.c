/* Unit tests of the runtime's settings: sensor patterns, sizes, and the clock mapping
 * passed between processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/internal.h"

static void patterns_default_on(void **state)
{
	(void)state;
	assert_true(vg__sensor_pattern_enabled(NULL, "app.x"));
	assert_true(vg__sensor_pattern_enabled(NULL, "vg.thread.begin"));
}

static void patterns_positive_selects(void **state)
{
	(void)state;
	const char *p = "mailbox.*";
	assert_true(vg__sensor_pattern_enabled(p, "mailbox.SendMessage"));
	assert_false(vg__sensor_pattern_enabled(p, "app.x"));
	/* vigil's own sensors stay on unless excluded by name */
	assert_true(vg__sensor_pattern_enabled(p, "vg.process.begin"));
}

static void patterns_last_match_decides(void **state)
{
	(void)state;
	const char *p = "mailbox.*,-mailbox.RunningOn,-vg.thread.*";
	assert_true(vg__sensor_pattern_enabled(p, "mailbox.Waiting"));
	assert_false(vg__sensor_pattern_enabled(p, "mailbox.RunningOn"));
	assert_false(vg__sensor_pattern_enabled(p, "vg.thread.name"));
	assert_true(vg__sensor_pattern_enabled(p, "vg.entity.create"));
	assert_true(vg__sensor_pattern_enabled("-a.*,a.b", "a.b"));
	assert_false(vg__sensor_pattern_enabled("a.b,-a.*", "a.b"));
	/* only negative patterns: everything else stays on */
	assert_true(vg__sensor_pattern_enabled("-a.*", "b.c"));
	/* empty items are ignored */
	assert_true(vg__sensor_pattern_enabled(",,x,", "x"));
}

static void config_sizes(void **state)
{
	(void)state;
	struct vg_config c;
	setenv("VIGIL_PACKET_SIZE", "128K", 1);
	setenv("VIGIL_MAX_SIZE", "2G", 1);
	setenv("VIGIL_MAX_STRING", "100", 1);
	unsetenv("VIGIL_OUT");
	vg__config_read(&c);
	assert_int_equal(c.packet_size, 128 << 10);
	assert_int_equal(c.max_bytes, 2ull << 30);
	assert_int_equal(c.max_string, 100);
	assert_string_equal(c.out, "");
	/* bad values fall back to the defaults */
	setenv("VIGIL_PACKET_SIZE", "12Q", 1);
	setenv("VIGIL_MAX_SIZE", "-1", 1);
	setenv("VIGIL_MAX_STRING", "0", 1);
	vg__config_read(&c);
	assert_int_equal(c.packet_size, 64 << 10);
	assert_int_equal(c.max_bytes, 0);
	assert_int_equal(c.max_string, 1024);
	/* sizes are rounded up to whole pages */
	setenv("VIGIL_PACKET_SIZE", "5000", 1);
	vg__config_read(&c);
	assert_int_equal(c.packet_size, 8192);
	unsetenv("VIGIL_PACKET_SIZE");
	unsetenv("VIGIL_MAX_SIZE");
	unsetenv("VIGIL_MAX_STRING");
}

static void config_small_cap_and_bad_globs(void **state)
{
	(void)state;
	struct vg_config c;
	unsetenv("VIGIL_OUT");
	/* a cap below one page records nothing: refused, no cap; 0 says no cap */
	setenv("VIGIL_MAX_SIZE", "1", 1);
	vg__config_read(&c);
	assert_int_equal(c.max_bytes, 0);
	setenv("VIGIL_MAX_SIZE", "0", 1);
	vg__config_read(&c);
	assert_int_equal(c.max_bytes, 0);
	setenv("VIGIL_MAX_SIZE", "4K", 1);
	vg__config_read(&c);
	assert_int_equal(c.max_bytes, 4096);
	unsetenv("VIGIL_MAX_SIZE");
	/* globs fnmatch would take literally are left out, the others kept in order */
	setenv("VIGIL_SENSORS", "mailbox.*,[,-mailbox.Run*,-a[b,x\\,c[]]d", 1);
	setenv("VIGIL_REPORT_THREADS", "worker-[0-9]*,main[", 1);
	vg__config_read(&c);
	assert_string_equal(c.sensors, "mailbox.*,-mailbox.Run*,c[]]d");
	assert_string_equal(c.report_threads, "worker-[0-9]*");
	free(c.sensors);
	free(c.report_threads);
	setenv("VIGIL_SENSORS", "[", 1);
	vg__config_read(&c);
	assert_null(c.sensors); /* nothing usable: the default, every sensor */
	free(c.report_threads);
	unsetenv("VIGIL_SENSORS");
	unsetenv("VIGIL_REPORT_THREADS");
}

static void clock_round_trip(void **state)
{
	(void)state;
	vgw_clock_init();
	char text[128];
	assert_int_equal(vgw_clock_export(text, sizeof text), 0);
	struct vg_clock before = vg__clock;
	int64_t offset = vgw_clock_realtime_offset_ns();
	memset(&vg__clock, 0, sizeof vg__clock);
	assert_int_equal(vgw_clock_import(text), 0);
	assert_int_equal(vg__clock.use_tsc, before.use_tsc);
	assert_int_equal(vg__clock.mult, before.mult);
	assert_int_equal(vgw_clock_realtime_offset_ns(), offset);
	/* vg_now follows CLOCK_MONOTONIC closely */
	uint64_t a = vg_now(), b = vg__clock_fallback(), c = vg_now();
	assert_true(a <= c);
	assert_true(b + 1000000 > a && b < c + 1000000);
}

static void clock_rejects_garbage(void **state)
{
	(void)state;
	assert_int_equal(vgw_clock_import(""), -1);
	assert_int_equal(vgw_clock_import("tsc,1,2"), -1);
	assert_int_equal(vgw_clock_import("warp,1,2,3,4"), -1);
	assert_int_equal(vgw_clock_import("tsc,0,2,3,4"), -1);
	assert_int_equal(vgw_clock_import("mono,0,0,0,5 trailing"), -1);
	/* a mapping from another boot does not match CLOCK_MONOTONIC: refused */
	char text[128];
	snprintf(text, sizeof text, "tsc,%llu,1,1,0", 1ull << 32);
	if (vg__clock.use_tsc)
		assert_int_equal(vgw_clock_import(text), -1);
	assert_int_equal(vgw_clock_import("mono,0,0,0,42"), 0);
	assert_int_equal(vgw_clock_realtime_offset_ns(), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(patterns_default_on),
	    cmocka_unit_test(patterns_positive_selects),
	    cmocka_unit_test(patterns_last_match_decides),
	    cmocka_unit_test(config_sizes),
	    cmocka_unit_test(config_small_cap_and_bad_globs),
	    cmocka_unit_test(clock_round_trip),
	    cmocka_unit_test(clock_rejects_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
