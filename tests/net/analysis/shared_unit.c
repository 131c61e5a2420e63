/* Unit tests of the matching of pipes shared by several processes, of the refusal of a
 * pair that dates a receive before its send on one host, and of terminal lines (src/net
 * shared.c, match.c, split.c; docs/net.md "Shared pipes and sockets", "Terminals"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/net.h"

static uint32_t thread(struct vgn_set *s, const char *host, int64_t pid, const char *program)
{
	uint32_t p = vgn_proc_get(s, vgn_host_get(s, host), pid, 1);
	s->procs[p].program = vgn_intern(s, program);
	return vgn_thread_get(s, p, (uint32_t)pid, 0);
}

static uint64_t serial_next = 1;

static uint32_t conn(struct vgn_set *s, uint32_t th, const char *kind, const char *local,
                     const char *remote)
{
	struct vgn_conn c = {s->threads[th].proc,
	                     0,
	                     serial_next++,
	                     3,
	                     vgn_intern(s, kind),
	                     vgn_intern(s, "inherited"),
	                     vgn_intern(s, local),
	                     vgn_intern(s, remote),
	                     0};
	vgn_conn_add(s, &c);
	return (uint32_t)c.serial;
}

static uint32_t ev(struct vgn_set *s, int kind, uint32_t th, int64_t ts, uint32_t serial,
                   uint64_t off, uint64_t len)
{
	struct vgn_event e = {.kind = (uint8_t)kind,
	                      .thread = th,
	                      .ts = ts,
	                      .serial = serial,
	                      .off = off,
	                      .len = len,
	                      .text = vgn_intern(s, ""),
	                      .program = s->procs[s->threads[th].proc].program,
	                      .trace = vgn_intern(s, "synthetic")};
	return vgn_event_add(s, &e);
}

#define T0 1700000000000000000LL

/* The pair (snd, rcv), or NULL. */
static const struct vgn_msg *pair(const struct vgn_set *s, uint32_t snd, uint32_t rcv)
{
	for (size_t i = 0; i < s->nmsgs; i++)
		if (s->msgs[i].send == snd && s->msgs[i].recv == rcv)
			return &s->msgs[i];
	return NULL;
}

/* Two writers and two readers of one pipe, each counting its own offsets from 0 (an
 * exec'd image): the bytes go in time order. By offsets alone, the first read (0..4)
 * would take both writers' first bytes. */
static void shared_pipe_in_time_order(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "h", 10, "a"), b = thread(s, "h", 11, "b");
	uint32_t c = thread(s, "h", 12, "c"), d = thread(s, "h", 13, "d");
	uint32_t ca = conn(s, a, "pipe", "pipe:9:9", "pipe:9:9");
	uint32_t cb = conn(s, b, "pipe", "pipe:9:9", "pipe:9:9");
	uint32_t cc = conn(s, c, "pipe", "pipe:9:9", "pipe:9:9");
	uint32_t cd = conn(s, d, "pipe", "pipe:9:9", "pipe:9:9");
	uint32_t a1 = ev(s, VGN_SEND, a, T0 + 1, ca, 0, 4);
	uint32_t c1 = ev(s, VGN_RECV, c, T0 + 2, cc, 0, 4);
	uint32_t b1 = ev(s, VGN_SEND, b, T0 + 3, cb, 0, 3);
	uint32_t d1 = ev(s, VGN_RECV, d, T0 + 4, cd, 0, 3);
	uint32_t a2 = ev(s, VGN_SEND, a, T0 + 5, ca, 4, 2);
	uint32_t c2 = ev(s, VGN_RECV, c, T0 + 6, cc, 4, 1);
	uint32_t d2 = ev(s, VGN_RECV, d, T0 + 7, cd, 3, 1);
	/* the same pipe name on another host is another pipe: its own pair */
	uint32_t x = thread(s, "other", 10, "x"), y = thread(s, "other", 11, "y");
	uint32_t cx = conn(s, x, "pipe", "pipe:9:9", "pipe:9:9");
	uint32_t cy = conn(s, y, "pipe", "pipe:9:9", "pipe:9:9");
	uint32_t x1 = ev(s, VGN_SEND, x, T0 + 1, cx, 0, 4);
	uint32_t y1 = ev(s, VGN_RECV, y, T0 + 9, cy, 0, 4);
	struct vgn_match_stats st;
	assert_int_equal(vgn_match(s, &st), 0);
	assert_int_equal(st.pairs, 5);
	assert_int_equal(st.shared_channels, 1);
	assert_int_equal(st.refused, 0);
	const struct vgn_msg *m;
	assert_non_null(m = pair(s, a1, c1));
	assert_int_equal(m->bytes, 4);
	assert_non_null(m = pair(s, b1, d1));
	assert_int_equal(m->bytes, 3);
	assert_non_null(m = pair(s, a2, c2));
	assert_int_equal(m->bytes, 1);
	assert_int_equal(m->send_at, 0);
	assert_non_null(m = pair(s, a2, d2));
	assert_int_equal(m->bytes, 1);
	assert_int_equal(m->send_at, 1);
	assert_int_equal(m->recv_at, 0);
	assert_non_null(pair(s, x1, y1));
	vgn_set_free(s);
}

/* A writer that was not recorded: the reader's bytes would be taken from a later send.
 * On one host such a pair is refused and counted, never made. */
static void shared_pipe_refuses_backwards(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "h", 10, "a"), c = thread(s, "h", 12, "c"),
	         d = thread(s, "h", 13, "d");
	uint32_t ca = conn(s, a, "pipe", "pipe:7:7", "pipe:7:7");
	uint32_t cc = conn(s, c, "pipe", "pipe:7:7", "pipe:7:7");
	uint32_t cd = conn(s, d, "pipe", "pipe:7:7", "pipe:7:7");
	uint32_t c1 = ev(s, VGN_RECV, c, T0 + 2, cc, 0, 1); /* from a writer not recorded */
	uint32_t a1 = ev(s, VGN_SEND, a, T0 + 3, ca, 0, 1);
	uint32_t d1 = ev(s, VGN_RECV, d, T0 + 4, cd, 0, 1);
	struct vgn_match_stats st;
	assert_int_equal(vgn_match(s, &st), 0);
	assert_int_equal(st.refused, 1);
	assert_null(pair(s, a1, c1));
	assert_int_equal(st.pairs, 0); /* (d1 got the byte a1 was taken for: shifted) */
	(void)d1;
	vgn_set_free(s);
}

/* One writer, one reader (matched by offsets): a receive dated before its send on one
 * host is refused; between hosts, the clocks decide later (kept). */
static void single_pipe_refuses_backwards(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "h", 10, "a"), b = thread(s, "h", 11, "b");
	uint32_t ca = conn(s, a, "pipe", "pipe:5:5", "pipe:5:5");
	uint32_t cb = conn(s, b, "pipe", "pipe:5:5", "pipe:5:5");
	ev(s, VGN_SEND, a, T0 + 10, ca, 0, 5);
	ev(s, VGN_RECV, b, T0 + 5, cb, 0, 5);
	uint32_t x = thread(s, "h1", 10, "x"), y = thread(s, "h2", 11, "y");
	uint32_t cx = conn(s, x, "tcp", "10.0.0.1:5", "10.0.0.2:6");
	uint32_t cy = conn(s, y, "tcp", "10.0.0.2:6", "10.0.0.1:5");
	uint32_t x1 = ev(s, VGN_SEND, x, T0 + 10, cx, 0, 5);
	uint32_t y1 = ev(s, VGN_RECV, y, T0 + 5, cy, 0, 5);
	struct vgn_match_stats st;
	assert_int_equal(vgn_match(s, &st), 0);
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.pairs, 1);
	assert_non_null(pair(s, x1, y1));
	vgn_set_free(s);
}

/* What one process writes to a terminal is never what another reads from it. */
static void terminal_never_matched(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "h", 10, "a"), b = thread(s, "h", 11, "b");
	uint32_t ca = conn(s, a, "tty", "tty:/dev/pts/3", "tty:/dev/pts/3");
	uint32_t cb = conn(s, b, "tty", "tty:/dev/pts/3", "tty:/dev/pts/3");
	ev(s, VGN_SEND, a, T0 + 1, ca, 0, 5);
	ev(s, VGN_RECV, b, T0 + 2, cb, 0, 5);
	struct vgn_match_stats st;
	assert_int_equal(vgn_match(s, &st), 0);
	assert_int_equal(st.pairs, 0);
	vgn_set_free(s);
}

/* A shell reading its terminal byte by byte: the reads that end no line are part of the
 * line; the one that ends it is the one input. */
static void terminal_line_is_one_input(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t sh = thread(s, "h", 10, "bash");
	uint32_t t = conn(s, sh, "tty", "tty:/dev/pts/3", "tty:/dev/pts/3");
	uint32_t line_end[2];
	int64_t ts = T0;
	for (int line = 0; line < 2; line++) {
		for (int k = 0; k < 4; k++) {
			uint32_t r = ev(s, VGN_RECV, sh, ts++, t, (uint64_t)(line * 5 + k), 1);
			s->events[r].partial = true;
			ev(s, VGN_SEND, sh, ts++, t, (uint64_t)(line * 9 + k), 1); /* echo */
		}
		line_end[line] = ev(s, VGN_RECV, sh, ts++, t, (uint64_t)(line * 5 + 4), 1);
		ev(s, VGN_SEND, sh, ts++, t, (uint64_t)(line * 9 + 4), 5); /* the answer */
	}
	assert_int_equal(vgn_match(s, NULL), 0);
	struct vgn_clock c;
	assert_int_equal(vgn_clock_estimate(s, VGN_NONE, &c), 0);
	vgn_clock_apply(s, &c);
	struct vgn_split sp;
	assert_int_equal(vgn_split_run(s, VGN_IN_ALL, &sp), 0);
	assert_int_equal(sp.nnets, 2);
	assert_int_equal(sp.inputs[0], line_end[0]);
	assert_int_equal(sp.inputs[1], line_end[1]);
	/* the echoes of the second line's keys are in no network, its answer is */
	assert_int_equal(sp.net_of[line_end[1] + 1], 1);
	assert_int_equal(sp.net_of[line_end[0] + 3], VGN_NONE);
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shared_pipe_in_time_order),
	    cmocka_unit_test(shared_pipe_refuses_backwards),
	    cmocka_unit_test(single_pipe_refuses_backwards),
	    cmocka_unit_test(terminal_never_matched),
	    cmocka_unit_test(terminal_line_is_one_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
