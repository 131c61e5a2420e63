/* libFuzzer target: the whole TQuel engine (parse, bind, plan, execute, output) over a
 * small fixed database, built once from a trace written byte by byte
 * (tests/unit/reader_tracegen.h). No query text may crash, hang or leak; results are
 * written in every format to /dev/null, errors too, and each statement is explained.
 * Relations: SendMessage (event), all_types and tick (events), Waiting and Job
 * (intervals), ProcessState and mode (states), Process, Mailbox (entities), Clock. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/engine.h"
#include "query/output.h"
#include "reader_tracegen.h"
#include "relations/relation.h"
#include "tquel/tquel.h"

#define MS 1000000ull /* trace times are ns */

enum { SEND = 10, W_BEGIN, W_END, PSTATE, MODE, JOB_BEGIN, JOB_END };

/* A small bound on intermediate results: products of many variables over 20-tuple
 * relations would otherwise take minutes and gigabytes per input. */
#ifndef FUZZ_MAX_BINDINGS /* -DFUZZ_MAX_BINDINGS=0: the engine's default */
#define FUZZ_MAX_BINDINGS 200000
#endif

static struct vgt_trace *trace;
static struct vgq_database *db;
static FILE *devnull;

static void declare(struct tg_image *img)
{
	static const char *const REFS = "struct vg_ref process; struct vg_ref mailbox;";
	tg_declare(img, "send", SEND,
	           "vigil:kind=event;flag=sensor;traced;relation=SendMessage;initiator=process;"
	           "ref.process=Process;ref.mailbox=Mailbox",
	           "struct vg_ref process; struct vg_ref mailbox; uint32_t size;");
	tg_declare(img, "w.begin", W_BEGIN,
	           "vigil:kind=begin;flag=sensor;traced;relation=Waiting;initiator=process;"
	           "ref.process=Process;ref.mailbox=Mailbox",
	           REFS);
	tg_declare(img, "w.end", W_END,
	           "vigil:kind=end;flag=sensor;traced;relation=Waiting;initiator=process;"
	           "ref.process=Process;ref.mailbox=Mailbox",
	           REFS);
	tg_declare(img, "st", PSTATE,
	           "vigil:kind=state;flag=sensor;traced;relation=ProcessState;target=process;"
	           "ref.process=Process",
	           "struct vg_ref process; string state;");
	tg_declare(img, "mode", MODE, "vigil:kind=state;flag=sensor;traced", "uint32_t level;");
	tg_declare(img, "job.begin", JOB_BEGIN, "vigil:kind=begin;flag=sensor;traced;relation=Job",
	           "uint32_t job;");
	tg_declare(img, "job.end", JOB_END, "vigil:kind=end;flag=sensor;traced;relation=Job",
	           "uint32_t job; int32_t status;");
	tg_write_metadata(img);
}

static void create(struct tg_stream *s, uint64_t ts, const char *kind, uint64_t id,
                   const char *name)
{
	tg_event(s, TG_ENTITY_CREATE, ts);
	tg_str(s, kind);
	tg_u64(s, id);
	tg_u32(s, 1);
	tg_str(s, name);
}

static void refs(struct tg_stream *s, uint16_t id, uint64_t ts, uint64_t proc, uint64_t mbox)
{
	tg_event(s, id, ts);
	tg_ref(s, proc, 1);
	tg_ref(s, mbox, 1);
}

/* The events of step i (one per kind below), written in time order. */
enum ev_kind { EV_BEGIN, EV_SEND, EV_END, EV_STATE, EV_MODE, EV_JOB, EV_TYPES, EV_TICK, EV_N };
struct ev {
	uint64_t ts;
	unsigned i, seq;
	enum ev_kind kind;
};

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void write_types(struct tg_stream *s, uint64_t ts, unsigned i)
{
	tg_event(s, TG_ALL_TYPES, ts);
	tg_u8(s, (uint8_t)(int8_t) - (int)i);
	tg_u16(s, (uint16_t)(i * 1000));
	tg_u32(s, (uint32_t)(int32_t)(i % 3 ? -100000 : 7));
	tg_u64(s, i == 5 ? (uint64_t)INT64_MIN : i * 1000000007ull);
	tg_u8(s, (uint8_t)(250 + i));
	tg_u16(s, (uint16_t)i);
	tg_u32(s, (uint32_t)(i * 3));
	tg_u64(s, i == 9 ? UINT64_MAX : i);
	tg_f64(s, i == 3 ? 0.0 : 1.0 / (double)(i + 1) - 0.25);
	tg_str(s, i == 1 ? "" : "s\"x\\");
	tg_bytes(s, "\x00\xff\x10", i % 4);
	tg_ref(s, 1 + i % 3, 1);
}

static void write_event(struct tg_stream *s, const struct ev *e)
{
	static const char *const STATES[] = {"ready", "running", "blocked", ""};
	unsigned i = e->i, p = 1 + i % 5, m = 1 + i % 3;
	switch (e->kind) {
	case EV_BEGIN:
		refs(s, W_BEGIN, e->ts, p, m);
		break;
	case EV_SEND: /* step 7: a process the trace never names */
		refs(s, SEND, e->ts, i == 7 ? 9 : 1 + (i + 2) % 5, m);
		tg_u32(s, i * 37 % 100);
		break;
	case EV_END:
		refs(s, W_END, e->ts, p, m);
		break;
	case EV_STATE:
		tg_event(s, PSTATE, e->ts);
		tg_ref(s, p, 1);
		tg_str(s, STATES[i % 4]);
		break;
	case EV_MODE:
		tg_event(s, MODE, e->ts);
		tg_u32(s, i % 3);
		break;
	case EV_JOB:
		tg_event(s, i % 2 ? JOB_END : JOB_BEGIN, e->ts);
		tg_u32(s, i / 2);
		if (i % 2)
			tg_u32(s, (uint32_t)(i % 3 == 0 ? -1 : 0));
		break;
	case EV_TYPES:
		write_types(s, e->ts, i);
		break;
	case EV_TICK:
		tg_tick(s, e->ts, i);
		break;
	case EV_N:
		break;
	}
}

/* Each relation gets 5-20 tuples over one second, with equal times, repeated values,
 * tuples left open, an unnamed entity (Process 9) and an end that closes nothing. */
#define STEPS 12
static void write_events(struct tg_stream *s)
{
	static const char *const PROCS[] = {"P1", "P2", "P3", "P4", "P5"};
	for (uint64_t p = 1; p <= 5; p++)
		create(s, 0, "Process", p, PROCS[p - 1]);
	create(s, 0, "Mailbox", 1, "M1");
	create(s, 0, "Mailbox", 2, "M2");
	create(s, 5 * MS, "Mailbox", 3, "M3");
	struct ev evs[STEPS * EV_N];
	size_t n = 0;
	for (unsigned i = 0; i < STEPS; i++) {
		uint64_t t = (10 + i * 80) * MS;
		const uint64_t at[EV_N] = {
		    [EV_BEGIN] = t,
		    [EV_SEND] = t + 20 * MS,
		    [EV_END] = t + (30 + i * 13 % 150) * MS,
		    [EV_STATE] = t + 5 * MS,
		    [EV_MODE] = t + 7 * MS,
		    [EV_JOB] = i % 2 ? t + 40 * MS : t,
		    [EV_TYPES] = t + 50 * MS,
		    [EV_TICK] = t + 60 * MS,
		};
		for (unsigned k = 0; k < EV_N; k++) {
			if ((k == EV_END && i % 4 == 3) || /* some stay open */
			    (k == EV_MODE && i % 2) || (k == EV_TYPES && i % 2 == 0))
				continue;
			evs[n] = (struct ev){at[k], i, (unsigned)n, (enum ev_kind)k};
			n++;
		}
	}
	qsort(evs, n, sizeof *evs, ev_cmp);
	for (size_t k = 0; k < n; k++)
		write_event(s, &evs[k]);
	refs(s, W_END, 999 * MS, 4, 2); /* closes nothing */
	tg_tick(s, 1000 * MS, 99);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char *root = tg_tempdir();
	struct tg_image *img = tg_image_new(root, "app-42-0", NULL);
	declare(img);
	struct tg_stream *s = tg_stream_new(img, 42, 0);
	tg_packet_begin(s, 0);
	write_events(s);
	tg_packet_end(s, 0, 0);
	tg_stream_write(s);
	tg_image_free(img);

	char err[256];
	const char *paths[] = {root};
	trace = vgt_open(paths, 1, err, sizeof err);
	if (!trace) {
		fprintf(stderr, "fuzz_query: cannot open the generated trace: %s\n", err);
		abort();
	}
	db = vgq_database_build(trace);
	/* FUZZ_QUERY_VERBOSE=1: results and errors on stderr, to check seeds by hand. */
	devnull = getenv("FUZZ_QUERY_VERBOSE") ? stderr : fopen("/dev/null", "w");
	if (!db || db->partial || !devnull || !vgq_database_find(db, "Waiting")) {
		fprintf(stderr,
		        "fuzz_query: the generated database is not as expected (damage %llu)\n",
		        db ? (unsigned long long)db->damage : 0);
		abort();
	}
	/* The reader keeps what it needs in memory: the files can go now. */
	tg_rmtree(root);
	free(root);
	return 0;
}

static int emit(void *ctx, const struct vgq_relation *r)
{
	(void)ctx;
	const struct vgq_output_opts o = {db->first};
	if (vgq_write_relation(devnull, r, VGQ_FORMAT_TABLE, &o) ||
	    vgq_write_relation(devnull, r, VGQ_FORMAT_CSV, &o) ||
	    vgq_write_relation(devnull, r, VGQ_FORMAT_JSON, NULL))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tquel_query *q = tquel_parse("fuzz", (const char *)data, size);
	if (!q->nerrors) {
		/* Clock: 50 ms base tick over a one-second trace, so Clock has 21 tuples. */
		const struct vgq_options o = {.tick_ns = 50 * MS,
		                              .max_bindings = FUZZ_MAX_BINDINGS};
		struct vgq_session *s = vgq_session_new(db, &o);
		vgq_run(s, q, emit, NULL, devnull);
		vgq_session_free(s);
		s = vgq_session_new(db, &o);
		vgq_explain(s, q, devnull, devnull);
		vgq_session_free(s);
		s = vgq_session_new(NULL, &o); /* explain without a trace: names unchecked */
		vgq_explain(s, q, devnull, devnull);
		vgq_session_free(s);
	}
	tquel_free(q);
	return 0;
}
