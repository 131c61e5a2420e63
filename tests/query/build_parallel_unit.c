/* The database built from a trace at 1, 2, 3 and 8 threads (relations/build_parallel.c) is
 * the same, byte for byte in a full text dump of every relation: a trace built byte by
 * byte (tests/unit/reader_tracegen.h) of two images with three streams each (and one of
 * one image with two: the stream-by-stream build's two-way merges), intervals
 * begun on one stream and ended on another, states, entities named and renamed, entity
 * references, texts shared between relations built by different threads, marks carrying
 * bytes (the merge's gathers of 16-byte values), equal times
 * across streams, many packets; large enough that the threads share the work, and a
 * small one (less than one batch). Every text value must also be the database's one copy
 * of it (queries compare texts by pointer). And a database of only the relations a
 * query ranges over holds them as the whole database does (the other events' payloads
 * not decoded, their damage found all the same), also when it is built stream by stream
 * and merged (an event relation and entities; the interval relation Job, whose ends close
 * begins of other streams, alone and with an event relation: relations/build_streams.c,
 * paired in merged order after the merge). Built with no memory
 * budget (columns in the spill file), the database is the same at 1 and 2 threads.
 * With VIGIL_SPLIT at 16 KiB, every stream the first whole read summarized is cut into
 * ranges of a few packets (trace/stream_split.c), read by whichever thread is free:
 * Job's intervals begun in one range end in the next (jobs span many packets), and a
 * trace of one stream alone is built in ranges too; the stream-built builds are checked
 * to have read more ranges than streams and to have given every thread a unit (a build
 * that went back to the merged pass, as a wrong order of the units makes it, fails). (States and
 * entity relations go through build_parallel.c, which reads streams whole: no range cuts a state.)
 * The event relation Mark built with Job for the relations cache (defer_merge) is left
 * unmerged at 2 and 3 threads: gathered from any tuple on (stretches of every column,
 * across the noted positions) it is the column gathered whole; settled, and through the
 * cache beside the trace (written by gathering, then mapped; then warm), the database is
 * the whole build's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_rand.h"
#include "job_trace.h"
#include "reader_tracegen.h"
#include "relations/build_phases.h"
#include "relations/cache.h"
#include "relations/columns.h"
#include "relations/relation.h"
#include "relations/spill.h"
#include "relations/unmerged.h"
#include "trace/trace.h"

#define STATE 13
#define MODE 14
#define ENTITY_NAME 15
#define W_BEGIN 16
#define W_END 17
static unsigned STREAMS = 3; /* per image; 2 or 1 with one image: two-way merges */

static int failures;

static void fail(const char *what)
{
	fprintf(stderr, "query.build_parallel: %s\n", what);
	failures++;
}

static uint64_t rng;
static uint64_t next_rand(void)
{
	return test_xorshift64(&rng);
}

static const char *const WORDS[] = {"alpha", "beta", "gamma", "P1", "idle", "busy", ""};
#define NWORDS (sizeof WORDS / sizeof *WORDS)

struct ev {
	uint64_t ts;
	unsigned stream, seq;
	uint16_t id;
	uint32_t a, b;
	const char *word;
};

static int by_stream_ts(const void *x, const void *y)
{
	const struct ev *p = x, *q = y;
	if (p->stream != q->stream)
		return p->stream < q->stream ? -1 : 1;
	if (p->ts != q->ts)
		return p->ts < q->ts ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static struct tg_image *declare(const char *root, const char *name)
{
	struct tg_image *img = tg_image_new(root, name, NULL);
	/* an end's text: packed and unpacked for the stream build's pairing */
	/* a mark's bytes: the stream build's gathers move 16-byte values too */
	jt_declare(img, "uint32_t job; string kind;", "uint32_t job; uint32_t status; string note;",
	           "uint32_t n; string label; uint32_t _blob_len; uint8_t blob[_blob_len];");
	tg_declare(img, "st", STATE,
	           "vigil:kind=state;flag=sensor;traced;relation=ProcessState;target=process;"
	           "ref.process=Process",
	           "struct vg_ref process; string state;");
	tg_declare(img, "mode", MODE, "vigil:kind=state;flag=sensor;traced", "uint32_t level;");
	tg_declare_builtin(img, "vg.entity.name", ENTITY_NAME);
	tg_declare(img, "w.begin", W_BEGIN,
	           "vigil:kind=begin;flag=sensor;traced;relation=Waiting;ref.process=Process",
	           "struct vg_ref process; uint32_t slot;");
	tg_declare(img, "w.end", W_END,
	           "vigil:kind=end;flag=sensor;traced;relation=Waiting;ref.process=Process",
	           "struct vg_ref process; uint32_t slot;");
	tg_write_metadata(img);
	return img;
}

static void write_event(struct tg_stream *s, const struct ev *e)
{
	tg_event(s, e->id, e->ts);
	switch (e->id) {
	case JOB_BEGIN:
		tg_u32(s, e->a);
		tg_str(s, e->word);
		break;
	case MARK: {
		uint8_t blob[4] = {(uint8_t)e->a, (uint8_t)(e->a >> 8), (uint8_t)(e->a >> 16),
		                   (uint8_t)(e->a >> 24)};
		tg_u32(s, e->a);
		tg_str(s, e->word);
		tg_bytes(s, blob, e->a % 5);
		break;
	}
	case JOB_END:
		tg_u32(s, e->a);
		tg_u32(s, e->b);
		tg_str(s, e->word);
		break;
	case STATE:
		tg_ref(s, e->a, 1);
		tg_str(s, e->word);
		break;
	case MODE:
		tg_u32(s, e->a);
		break;
	case TG_ENTITY_CREATE:
	case ENTITY_NAME:
		tg_str(s, "Process");
		tg_u64(s, e->a);
		tg_u32(s, 1);
		tg_str(s, e->word);
		break;
	case W_BEGIN:
	case W_END:
		tg_ref(s, e->a, 1);
		tg_u32(s, e->b);
		break;
	}
}

/* One image of `jobs` jobs, their marks, states and waits over three streams; `damaged`:
 * its first stream ends in a packet whose mark's label runs past the packet's end. */
static void make_image(const char *root, const char *name, uint32_t pid, size_t jobs, bool damaged)
{
	struct tg_image *img = declare(root, name);
	size_t cap = 12 * jobs + 64, n = 0;
	struct ev *ev = calloc(cap, sizeof *ev);
	for (uint32_t p = 1; p <= 8; p++) /* processes named at the start, renamed later */
		ev[n++] = (struct ev){1000 + p, p % STREAMS,      0, TG_ENTITY_CREATE, p,
		                      0,        WORDS[p % NWORDS]};
	for (uint32_t j = 0; j < jobs; j++) {
		uint64_t t = 2000 + next_rand() % (jobs * 40);
		if (STREAMS == 2) /* many times equal across the streams */
			t -= t % 64;
		unsigned sb = next_rand() % STREAMS, se = next_rand() % STREAMS;
		const char *w = WORDS[next_rand() % NWORDS];
		ev[n++] = (struct ev){t, sb, 0, JOB_BEGIN, j % 50, 0, w};
		if (j % 13) /* some jobs stay open */
			ev[n++] = (struct ev){t + next_rand() % 300, se, 0, JOB_END, j % 50, j,
			                      WORDS[j % NWORDS]};
		ev[n++] = (struct ev){t + next_rand() % 100,
		                      next_rand() % STREAMS,
		                      0,
		                      MARK,
		                      (uint32_t)next_rand(),
		                      0,
		                      WORDS[next_rand() % NWORDS]};
		ev[n++] =
		    (struct ev){t + next_rand() % 100,      next_rand() % STREAMS, 0, MARK, j, 0,
		                WORDS[next_rand() % NWORDS]};
		uint32_t proc = 1 + next_rand() % 8;
		ev[n++] = (struct ev){t + 5, next_rand() % STREAMS,      0, STATE, proc,
		                      0,     WORDS[next_rand() % NWORDS]};
		ev[n++] = (struct ev){t, next_rand() % STREAMS, 0, MODE, j % 7, 0, NULL};
		if (j % 3 == 0) {
			ev[n++] = (struct ev){t + 1, sb, 0, W_BEGIN, proc, j % 5, NULL};
			ev[n++] =
			    (struct ev){t + 2 + next_rand() % 50, sb, 0, W_END, proc, j % 5, NULL};
		}
		if (j % 1000 == 999)
			ev[n++] = (struct ev){t, 0, 0, ENTITY_NAME, proc, 0, WORDS[j % NWORDS]};
	}
	for (size_t i = 0; i < n; i++)
		ev[i].seq = (unsigned)i;
	qsort(ev, n, sizeof *ev, by_stream_ts);
	size_t i = 0;
	for (unsigned st = 0; st < STREAMS; st++) {
		struct tg_stream *s = tg_stream_new(img, pid + st, 0);
		size_t in_packet = 0;
		for (; i < n && ev[i].stream == st; i++) {
			if (!in_packet)
				tg_packet_begin(s, ev[i].ts);
			write_event(s, &ev[i]);
			if (++in_packet == 500) {
				tg_packet_end(s, 0, 0);
				in_packet = 0;
			}
		}
		if (in_packet)
			tg_packet_end(s, 0, 0);
		if (damaged && st == 0) {
			tg_packet_begin(s, ev[n - 1].ts + 1000000);
			tg_event(s, MARK, ev[n - 1].ts + 1000000);
			tg_u32(s, 1);
			tg_raw(s, "unterminated", 12);
			tg_packet_end(s, 0, 0);
		}
		tg_stream_write(s);
	}
	tg_image_free(img);
	free(ev);
}

/* ---- the dump ---- */

struct text {
	char *p;
	size_t n;
	FILE *f;
};

static void text_value(FILE *f, const struct vgq_database *db, const char *s)
{
	if (!s) {
		fputs(" null", f);
		return;
	}
	fprintf(f, " \"%s\"", s);
	if (vgq_database_string(db, s) != s)
		fprintf(f, "(not the database's copy)");
}

static void dump_relation(FILE *f, const struct vgq_database *db, const struct vgq_relation *r)
{
	fprintf(f,
	        "%s kind %d, %zu attributes, %zu tuples, %" PRIu64 " unmatched, %" PRIu64
	        " open, span %" PRId64 "..%" PRId64 "\n",
	        r->name, (int)r->kind, r->nattrs, r->ntuples, r->unmatched_ends, r->open_at_end,
	        r->first, r->last);
	for (size_t a = 0; a < r->nattrs; a++)
		fprintf(f, "  %s %d %s\n", r->attrs[a].name, (int)r->attrs[a].type,
		        r->attrs[a].ref_kind ? r->attrs[a].ref_kind : "-");
	for (size_t t = 0; t < r->ntuples; t++) {
		fprintf(f, "%" PRId64, r->from[t]);
		if (r->to)
			fprintf(f, " %" PRId64 " %d", r->to[t], r->open ? r->open[t] : -1);
		if (r->begin_unknown)
			fprintf(f, " bu%d", r->begin_unknown[t]);
		for (size_t a = 0; a < r->nattrs; a++) {
			const union vgq_column *c = &r->cols[a];
			switch (r->attrs[a].type) {
			case VGQ_INT:
				fprintf(f, " %" PRId64, c->i[t]);
				break;
			case VGQ_UINT:
				fprintf(f, " %" PRIu64, c->u[t]);
				break;
			case VGQ_DOUBLE:
				fprintf(f, " %.17g", c->d[t]);
				break;
			case VGQ_STRING:
				text_value(f, db, c->s[t]);
				break;
			case VGQ_BYTES:
				fprintf(f, " b%zu:", c->b[t].len);
				for (size_t k = 0; k < c->b[t].len; k++)
					fprintf(f, "%02x", c->b[t].ptr[k]);
				break;
			case VGQ_ENTITY:
				fprintf(f, " %" PRIu64 ".%" PRIu64 "@%u", c->r[t].id,
				        (uint64_t)c->r[t].gen, c->r[t].image);
				text_value(f, db, c->r[t].name);
				break;
			}
		}
		fputc('\n', f);
	}
}

static struct vgq_database *build(struct vgt_trace *t, unsigned threads, const char *const *need,
                                  size_t nneed)
{
	vgt_set_decode_threads(threads);
	struct vgq_build_options o = {.need = need, .nneed = nneed};
	return vgq_database_build_opts(t, need ? &o : NULL);
}

static char *dump(const char *root, unsigned threads, size_t *len)
{
	char err[256];
	const char *paths[] = {root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t) {
		fail(err);
		return NULL;
	}
	struct vgq_database *db = build(t, threads, NULL, 0);
	char *p = NULL;
	FILE *f = open_memstream(&p, len);
	fprintf(f,
	        "%" PRIu64 " events %" PRId64 "..%" PRId64 ", damage %" PRIu64 ", %zu warnings\n",
	        db->events, db->first, db->last, db->damage, db->nwarnings);
	for (size_t i = 0; i < db->nwarnings; i++)
		fprintf(f, "warning %s\n", db->warnings[i]);
	for (size_t i = 0; i < db->nrelations; i++)
		dump_relation(f, db, vgq_database_find(db, db->relations[i]->name));
	fclose(f);
	vgq_database_free(db);
	vgt_close(t);
	return p;
}

static char *dump_named(const struct vgq_database *db, const char *const *names, size_t n)
{
	char *p = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&p, &len);
	for (size_t k = 0; k < n; k++)
		dump_relation(f, db, vgq_database_find(db, names[k]));
	fclose(f);
	return p;
}

static bool same_dump(size_t jobs, const char *one, size_t n1, const char *other, size_t n,
                      const char *what, const char *one_label, const char *other_label);

/* Every column of an unmerged relation gathered from tuples [t0, t1) is that stretch of
 * the column gathered whole, for stretches starting anywhere; the whole columns are kept
 * (cols[c + 1]) to compare with the relation settled. */
static void check_values(const struct vgq_relation *r, size_t jobs, unsigned th, char **cols)
{
	size_t n = r->ntuples;
	for (long c = -1; c < (long)r->nattrs; c++) {
		size_t size = c < 0 ? sizeof(int64_t) : vgq_value_size(r->attrs[c].type);
		char *all = cols[c + 1] = vgq_xcalloc(n + 1, size);
		vgq_column_values(r, c, 0, n, all);
		char *part = vgq_xcalloc(n + 1, size);
		for (int k = 0; k < 24; k++) {
			size_t t0 = n ? next_rand() % n : 0,
			       t1 = t0 + (n ? next_rand() % (n - t0 + 1) : 0);
			if (k == 0)
				t0 = 0, t1 = n;
			const char *got = vgq_column_values(r, c, t0, t1, part);
			if (t1 > t0 && memcmp(got, all + t0 * size, (t1 - t0) * size)) {
				char msg[200];
				snprintf(msg, sizeof msg,
				         "%zu jobs, %u threads: %s column %ld, tuples [%zu, %zu) "
				         "gathered alone differ from the column gathered whole",
				         jobs, th, r->name, c, t0, t1);
				fail(msg);
				break;
			}
		}
		free(part);
	}
}

/* Every file of the relations cache beside the trace removed. */
static void remove_cache(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *e;
	char path[4300];
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, ".vigil-cache", 12)) {
			snprintf(path, sizeof path, "%s/%s", root, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
}

/* The event relation Mark built stream by stream with Job is left unmerged for the
 * cache's writer at 2 and 3 threads (relations/unmerged.h): its values gathered from
 * any tuple on are the merge's, and settled it is the whole database's; through the
 * relations cache beside the trace (relations/cache.h) the cold query, whose writer
 * gathers Mark straight into its file and then maps it, and the warm one both have the
 * whole database's Job and Mark. */
static void compare_unmerged(struct vgt_trace *t, const char *root, size_t jobs,
                             const struct vgq_database *whole)
{
	static const char *const need[] = {"Job", "Mark"};
	char *expect = dump_named(whole, need, 2);
	for (unsigned th = 2; th <= 3; th++) {
		vgt_set_decode_threads(th);
		struct vgq_build_options o = {.need = need, .nneed = 2, .defer_merge = true};
		struct vgq_database *db = vgq_database_build_opts(t, &o);
		const struct vgq_relation *mark = NULL;
		for (size_t i = 0; i < db->nrelations; i++)
			if (!strcmp(db->relations[i]->name, "Mark"))
				mark = db->relations[i];
		char **cols = NULL;
		if (!mark || !mark->unmerged) {
			char msg[120];
			snprintf(msg, sizeof msg, "%zu jobs, %u threads: Mark not left unmerged",
			         jobs, th);
			fail(msg);
		} else {
			cols = vgq_xcalloc(mark->nattrs + 2, sizeof *cols);
			check_values(mark, jobs, th, cols);
		}
		vgq_database_settle(db, th);
		for (long c = -1; cols && c < (long)mark->nattrs; c++) {
			size_t size = c < 0 ? sizeof(int64_t) : vgq_value_size(mark->attrs[c].type);
			const void *mine =
			    c < 0 ? (const void *)mark->from : (const void *)mark->cols[c].i;
			if (mark->unmerged || memcmp(mine, cols[c + 1], mark->ntuples * size))
				fail("Mark settled differs from its columns gathered before");
		}
		for (size_t c = 0; cols && c < mark->nattrs + 1; c++)
			free(cols[c]);
		free(cols);
		char *got = dump_named(db, need, 2);
		char what[64];
		snprintf(what, sizeof what, "left unmerged at %u threads, then settled", th);
		same_dump(jobs, expect, strlen(expect), got, strlen(got), what, "whole", "settled");
		free(got);
		vgq_database_free(db);
	}
	setenv("VIGIL_CACHE_MIN_EVENTS", "0", 1);
	struct vgq_cache_request rq = {
	    .trace_path = root, .need = need, .nneed = 2, .all_attrs = true, .who = "test"};
	for (int round = 0; round < 2; round++) {
		vgt_set_decode_threads(2);
		struct vgq_cache_result res;
		struct vgq_database *db = vgq_database_cached(t, &rq, &res);
		enum vgq_cache_outcome want = round ? VGQ_CACHE_WARM : VGQ_CACHE_COLD;
		if (res.outcome != want || (!round && !res.written)) {
			char msg[160];
			snprintf(msg, sizeof msg, "%zu jobs: the cached query %d was %s, %swritten",
			         jobs, round, vgq_cache_outcome_name(res.outcome),
			         res.written ? "" : "not ");
			fail(msg);
		}
		char *got = dump_named(db, need, 2);
		same_dump(jobs, expect, strlen(expect), got, strlen(got),
		          round ? "from the cache, warm" : "cached cold (Mark from its file)",
		          "whole", "cached");
		free(got);
		vgq_database_free(db);
	}
	/* a FIFO in the manifest's place: Mark's file is written (its pieces freed column by
	 * column as they are), the manifest is not, so the relations are built again */
	char manifest[4200], mark_file[4300];
	snprintf(manifest, sizeof manifest, "%s/.vigil-cache", root);
	snprintf(mark_file, sizeof mark_file, "%s.rel-Mark", manifest);
	remove_cache(root);
	if (mkfifo(manifest, 0600) != 0) {
		fail("cannot make a FIFO in the manifest's place");
	} else {
		vgt_set_decode_threads(2);
		struct vgq_cache_result res;
		struct vgq_database *db = vgq_database_cached(t, &rq, &res);
		struct stat st;
		if (res.written || lstat(mark_file, &st) != 0 || lstat(manifest, &st) != 0 ||
		    !S_ISFIFO(st.st_mode))
			fail("a FIFO in the manifest's place: Mark's file not written, the cache "
			     "said written, or the FIFO replaced");
		char *got = dump_named(db, need, 2);
		same_dump(jobs, expect, strlen(expect), got, strlen(got),
		          "built again after the manifest failed", "whole", "rebuilt");
		free(got);
		vgq_database_free(db);
		unlink(manifest);
	}
	unsetenv("VIGIL_CACHE_MIN_EVENTS");
	free(expect);
}

/* Only the relations a query ranges over (vgq_build_options.need): each the same as in
 * the whole database, at 1 to 3 threads; a relation not needed has no tuples. */
static void compare_need(const char *root, size_t jobs)
{
	/* Job alone, Job with Mark, Mark with Process: built stream by stream
	 * (relations/build_streams.c) */
	static const char *const sets[][2] = {
	    {"Job", NULL}, {"Mark", "ProcessState"}, {"Mark", "Process"}, {"Job", "Mark"}};
	static const char *const left_out[] = {"Mark", "Job", "Job", "ProcessState"};
	char err[256];
	const char *paths[] = {root};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t) {
		fail(err);
		return;
	}
	struct vgq_database *whole = build(t, 1, NULL, 0);
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
		size_t nneed = sets[i][1] ? 2 : 1;
		char *expect = dump_named(whole, sets[i], nneed);
		for (unsigned th = 1; th <= 3; th++) {
			struct vgq_database *part = build(t, th, sets[i], nneed);
			char *got = dump_named(part, sets[i], nneed);
			const struct vgq_relation *other = vgq_database_find(part, left_out[i]);
			/* Job alone and Job with Mark: stream by stream, in ranges */
			bool ranged = (i == 0 || i == 3) && jobs >= 1000;
			size_t nst = vgt_stream_count(t);
			if (th >= 2 && ranged &&
			    (vgq_phase_ranges_read() <= nst ||
			     vgq_phase_units_read() < (th < nst ? nst : th))) {
				char msg[200];
				snprintf(
				    msg, sizeof msg,
				    "%zu jobs: %s at %u threads read in %" PRIu64
				    " ranges, %" PRIu64
				    " units, of %zu streams: not cut, or a thread without a unit",
				    jobs, sets[i][0], th, vgq_phase_ranges_read(),
				    vgq_phase_units_read(), nst);
				fail(msg);
			}
			if (strcmp(expect, got) || (other && other->ntuples) ||
			    part->events != whole->events || part->last != whole->last ||
			    part->first != whole->first || part->damage != whole->damage) {
				char msg[200];
				snprintf(msg, sizeof msg,
				         "%zu jobs: %s built alone at %u threads differs", jobs,
				         sets[i][0], th);
				fail(msg);
			}
			free(got);
			vgq_database_free(part);
		}
		free(expect);
	}
	if (jobs >= 1000)
		compare_unmerged(t, root, jobs, whole);
	vgq_database_free(whole);
	vgt_close(t);
}

/* The dump `other` (NULL: none) is `one`, else a failure naming the first byte that
 * differs, each side labelled. */
static bool same_dump(size_t jobs, const char *one, size_t n1, const char *other, size_t n,
                      const char *what, const char *one_label, const char *other_label)
{
	if (other && n == n1 && !memcmp(one, other, n))
		return true;
	size_t k = 0;
	while (other && k < n && k < n1 && one[k] == other[k])
		k++;
	char msg[600];
	snprintf(msg, sizeof msg,
	         "%zu jobs: the database %s differs at byte %zu:\n  %s: %.200s\n  %s: %.200s", jobs,
	         what, k, one_label, one + k, other_label, other ? other + k : "(none)");
	fail(msg);
	return false;
}

/* With no memory budget every column of a page or more is built in the spill file
 * (relations/spill.h): the database is the same, at 1 and 2 threads, and columns did
 * spill (a trace of many jobs). */
static void compare_spilled(const char *root, size_t jobs, const char *one, size_t n1)
{
	size_t saved = vgq_spill_budget();
	vgq_spill_set_budget(0);
	for (unsigned th = 1; th <= 2; th++) {
		uint64_t before = vgq_spill_stats().columns;
		size_t n;
		char *other = dump(root, th, &n);
		uint64_t spilled = vgq_spill_stats().columns - before;
		char what[64];
		snprintf(what, sizeof what, "built spilled at %u threads", th);
		bool same = same_dump(jobs, one, n1, other, n, what, "heap", "spilled");
		if (same && jobs >= 1000 && spilled < 4)
			fail("a large trace built without budget spilled fewer than 4 columns");
		else if (same)
			printf(
			    "query.build_parallel: %zu jobs, %u threads, no memory budget: %" PRIu64
			    " columns spilled, the same database\n",
			    jobs, th, spilled);
		free(other);
	}
	vgq_spill_set_budget(saved);
}

/* Builds the trace of `jobs` jobs per image (two images of three streams, or one image
 * of two streams or of one, where the stream-by-stream build's merges are two-way, made
 * in parts on the threads) at 1, 2, 3 and 8 threads and compares. */
static void compare(size_t jobs, uint64_t seed, bool damaged, unsigned streams)
{
	bool two = streams < 3; /* one image */
	rng = seed;
	STREAMS = streams;
	char *root = tg_tempdir();
	make_image(root, "app-42-0", 42, jobs, damaged);
	if (!two)
		make_image(root, "app-77-0", 77, jobs, false);
	size_t n1;
	char *one = dump(root, 1, &n1);
	if (one && damaged == !!strstr(one, "damage 0,"))
		fail(damaged ? "the damaged trace built without damage"
		             : "damage in a clean trace");
	if (one && strstr(one, "not the database's copy"))
		fail("a text value at 1 thread is not the database's copy");
	if (one && (!strstr(one, "\nJob ") || !strstr(one, "\nProcessState ") ||
	            !strstr(one, "\nWaiting ") || !strstr(one, "\nMark ")))
		fail("the trace lacks a relation the test means to build");
	static const unsigned counts[] = {2, 3, 8}; /* 8: more builders than busy relations */
	for (size_t ci = 0; one && ci < sizeof counts / sizeof *counts; ci++) {
		unsigned th = counts[ci];
		size_t n;
		char *other = dump(root, th, &n);
		char what[64], label[16];
		snprintf(what, sizeof what, "at %u threads", th);
		snprintf(label, sizeof label, "%u", th);
		same_dump(jobs, one, n1, other, n, what, "1", label);
		free(other);
	}
	if (!failures)
		printf("query.build_parallel: %zu jobs per image: %zu bytes of relations, the same "
		       "at 1, 2, 3 and 8 threads\n",
		       jobs, n1);
	if (one)
		compare_spilled(root, jobs, one, n1);
	free(one);
	compare_need(root, jobs);
	tg_rmtree(root);
	free(root);
}

int main(void)
{
	setenv("VIGIL_SPLIT", "16384", 1);            /* streams of a few packets cut into ranges */
	compare(200, 0x9e3779b97f4a7c15ull, true, 3); /* less than one batch */
	compare(9000, 0x2545f4914f6cdd1dull, false, 3); /* many batches, relations given out */
	compare(9000, 0x94d049bb133111ebull, false, 2); /* one image of two streams */
	compare(9000, 0xbf58476d1ce4e5b9ull, false, 1); /* one image of one stream */
	vgt_set_decode_threads(1);
	return failures ? 1 : 0;
}
