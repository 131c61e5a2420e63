/* Unit tests of src/model: the sketch's error bound against exact quantiles, merging,
 * the earth mover's distance, the file format (round trip, every error), the CDF walks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_rand.h"
#include "common/sketch_index.h"
#include "model/cdf.h"
#include "model/diff.h"
#include "model/model.h"
#include "model/symbolize.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static uint64_t rng = 42;
static uint64_t next(void)
{
	return test_splitmix64(&rng);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Random durations over 1 ns .. 10^12 ns (log-uniform), and narrow ones: every quantile
 * within 1% of the exact nearest-rank quantile. */
static void test_quantile_error(void)
{
	enum { N = 200000 };
	uint64_t *v = malloc(N * sizeof *v);
	for (int dist = 0; dist < 3; dist++) {
		struct vgm_sketch s = {0};
		for (int i = 0; i < N; i++) {
			double u = (double)(next() >> 11) * 0x1p-53;
			if (dist == 0)
				v[i] = (uint64_t)pow(10, u * 12); /* 1 ns .. 1000 s */
			else if (dist == 1)
				v[i] = 100000 + (uint64_t)(u * 1000); /* 100 us +- */
			else
				v[i] = (uint64_t)(-log(1 - u) * 5e6); /* exponential, 5 ms */
			vgm_sketch_add(&s, v[i], 1);
		}
		qsort(v, N, sizeof *v, cmp_u64);
		double worst = 0;
		for (int k = 0; k <= 1000; k++) {
			double q = k / 1000.0;
			double r = ceil(q * N);
			size_t i = r < 1 ? 0 : (size_t)r - 1;
			double exact = (double)v[i], est = vgm_sketch_quantile(&s, q);
			double err = exact ? fabs(est - exact) / exact : fabs(est);
			if (err > worst)
				worst = err;
		}
		CHECK(worst <= 0.0079, "distribution %d: worst relative error %.5f", dist, worst);
		printf("sketch: distribution %d: worst quantile error %.4f%% over 1001 quantiles, "
		       "%zu buckets\n",
		       dist, 100 * worst, s.len);
		vgm_sketch_free(&s);
	}
	free(v);
}

static void test_merge_and_emd(void)
{
	struct vgm_sketch a = {0}, b = {0}, ab = {0}, all = {0};
	for (int i = 0; i < 5000; i++) {
		uint64_t x = 1000 + next() % 100000, y = 50 + next() % 5000000;
		vgm_sketch_add(&a, x, 1);
		vgm_sketch_add(&b, y, 1);
		vgm_sketch_add(&all, x, 1);
		vgm_sketch_add(&all, y, 1);
	}
	vgm_sketch_merge(&ab, &a);
	vgm_sketch_merge(&ab, &b);
	CHECK(ab.total == 10000 && ab.len == all.len, "merged total %llu len %zu vs %zu",
	      (unsigned long long)ab.total, ab.len, all.len);
	int same = ab.len == all.len;
	for (size_t i = 0; same && i < ab.len; i++)
		same = ab.v[i].b == all.v[i].b && ab.v[i].n == all.v[i].n;
	CHECK(same, "merge differs from adding every value to one sketch");
	/* EMD: identical -> 0; a point mass at x vs at y -> |x - y| (bucket values). */
	CHECK(vgm_sketch_emd(&ab, &all) == 0, "emd of identical sketches");
	struct vgm_sketch p = {0}, q = {0}, q2 = {0};
	vgm_sketch_add(&p, 100000, 7);
	vgm_sketch_add(&q, 300000, 3);
	vgm_sketch_add(&q2, 300000, 3000); /* normalised by count: same distribution */
	double want = vg_sketch_bucket_value(vg_sketch_index(300000)) -
	              vg_sketch_bucket_value(vg_sketch_index(100000));
	CHECK(fabs(vgm_sketch_emd(&p, &q) - want) < 1e-6, "emd %g want %g", vgm_sketch_emd(&p, &q),
	      want);
	CHECK(fabs(vgm_sketch_emd(&p, &q2) - want) < 1e-6, "emd normalised");
	CHECK(fabs(vgm_sketch_emd(&q, &p) - want) < 1e-6, "emd symmetric");
	/* Half the mass moved by d: EMD = d / 2. */
	struct vgm_sketch h = {0};
	vgm_sketch_add(&h, 100000, 1);
	vgm_sketch_add(&h, 300000, 1);
	CHECK(fabs(vgm_sketch_emd(&p, &h) - want / 2) < 1e-6, "emd half");
	vgm_sketch_free(&a), vgm_sketch_free(&b), vgm_sketch_free(&ab), vgm_sketch_free(&all);
	vgm_sketch_free(&p), vgm_sketch_free(&q), vgm_sketch_free(&q2), vgm_sketch_free(&h);
}

static char *write_string(const struct vgm_model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	vgm_write(m, f);
	fclose(f);
	return buf;
}

static void test_round_trip(void)
{
	const char *text = "vigil-model 1\n"
	                   "# a comment\n"
	                   "source run 1 \"quoted\" text\n"
	                   "event 7 10 src/b.c:20 \"b: %s\\n\\u00e9\\ud83d\\ude00\"\n"
	                   "event 3 5 /opt/my app/lib.so+0x1a2b \"tab\\there\"\n"
	                   "\n"
	                   "name 7 \"the B\"\n"
	                   "transition 7 3 4 1200 64:1 100:2\n"
	                   "transition 3 7 5 0\n";
	struct vgm_model *m = vgm_model_new();
	char err[512] = "";
	int rc = vgm_read_buffer(m, "t.vgm", text, strlen(text), err, sizeof err);
	CHECK(rc == 0, "read: %s", err);
	char *once = write_string(m);
	const char *want = "vigil-model 1\n"
	                   "source run 1 \"quoted\" text\n"
	                   "event 1 5 /opt/my app/lib.so+0x1a2b \"tab\\there\"\n"
	                   "event 2 10 src/b.c:20 \"b: %s\\né😀\"\n"
	                   "name 2 \"the B\"\n"
	                   "transition 1 2 5 0\n"
	                   "transition 2 1 4 1200 64:1 100:2\n";
	CHECK(!strcmp(once, want), "written:\n%s", once);
	struct vgm_model *m2 = vgm_model_new();
	rc = vgm_read_buffer(m2, "once", once, strlen(once), err, sizeof err);
	CHECK(rc == 0, "reread: %s", err);
	char *twice = write_string(m2);
	CHECK(!strcmp(once, twice), "not stable:\n%s", twice);
	/* Merging a model into itself doubles every count and bucket. */
	vgm_read_buffer(m2, "again", once, strlen(once), err, sizeof err);
	char *doubled = write_string(m2);
	CHECK(strstr(doubled, "event 2 20 src/b.c:20") &&
	          strstr(doubled, "transition 2 1 8 2400 64:2 100:4"),
	      "doubled:\n%s", doubled);
	free(once), free(twice), free(doubled);
	vgm_model_free(m), vgm_model_free(m2);
}

/* Every kind of damage: the message, with the line. */
static void test_bad_files(void)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
	    {"", "bad.vgm:1: empty model file"},
	    {"# only a comment\n", "bad.vgm:1: empty model file"},
	    {"vigil-model 2\n", "bad.vgm:1: model format version 2; this vigil reads version 1"},
	    {"hello\n", "bad.vgm:1: not a vigil model"},
	    {"vigil-model 1 x\n", "bad.vgm:1: unexpected text after the format version"},
	    {"vigil-model 1\nvigil-model 1\n", "bad.vgm:2: `vigil-model` header repeated"},
	    {"vigil-model 1\nevents 1 2 a \"b\"\n", "bad.vgm:2: unknown record 'events'"},
	    {"vigil-model 1\nevent x 2 a \"b\"\n", "bad.vgm:2: event id 'x' is not a decimal"},
	    {"vigil-model 1\nevent 0 2 a \"b\"\n", "bad.vgm:2: event id 0: ids start at 1"},
	    {"vigil-model 1\nevent 1 99999999999999999999 a \"b\"\n",
	     "bad.vgm:2: event count '99999999999999999999' is not a decimal number below 2^64"},
	    {"vigil-model 1\nevent 1 2  a \"b\"\n", "bad.vgm:2: event site missing"},
	    {"vigil-model 1\nevent 1 2 a\n", "bad.vgm:2: event format missing"},
	    {"vigil-model 1\nevent 1 2 a \"b\n", "bad.vgm:2: event format: JSON string without "
	                                         "its closing quote"},
	    {"vigil-model 1\nevent 1 2 a \"b\\q\"\n", "bad.vgm:2: event format: unknown escape"},
	    {"vigil-model 1\nevent 1 2 a \"\\ud800\"\n", "bad.vgm:2: event format: lone UTF-16"},
	    {"vigil-model 1\nevent 1 2 a \"\\u0000\"\n", "bad.vgm:2: event format: \\u0000"},
	    {"vigil-model 1\nevent 1 2 a \"\xff\"\n", "bad.vgm:2: event format: invalid UTF-8"},
	    {"vigil-model 1\nevent 1 2 a \"b\" x\n", "bad.vgm:2: unexpected text after the event "
	                                             "format"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\r\n", "bad.vgm:2: carriage return"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\nevent 1 2 c \"d\"\n",
	     "bad.vgm:3: event id 1 is declared twice"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\nevent 2 2 a \"b\"\n",
	     "bad.vgm:3: event 2 has the site and format of an earlier event"},
	    {"vigil-model 1\nname 1 \"x\"\n", "bad.vgm:2: event id 1 is not declared"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\nname 1 \"\"\n", "bad.vgm:3: empty name"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\nname 1 \"x\"\nname 1 \"y\"\n",
	     "bad.vgm:4: event 1 is named twice"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 2 1 0\n",
	     "bad.vgm:3: second event 2 is not declared"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 1\n", "bad.vgm:3: sum_ns missing"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 3 5 10:1 9:1\n",
	     "bad.vgm:3: bucket 9 is not above the previous one"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 3 5 99999:1\n",
	     "bad.vgm:3: bucket 99999 out of range"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 3 5 10:0\n",
	     "bad.vgm:3: bucket 10 has count 0"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 3 5 10:2 11:2\n",
	     "bad.vgm:3: the buckets hold more values than the transition's count 3"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 3 5 10-2\n",
	     "bad.vgm:3: bucket '10-2' is not BUCKET:COUNT"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 3 5\n",
	     "bad.vgm:3: sum_ns 5 without any timed value"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 3 0 \n",
	     "bad.vgm:3: bucket missing"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\ntransition 1 1 3 0\ntransition 1 1 3 0\n",
	     "bad.vgm:4: transition repeats an earlier one"},
	    {"vigil-model 1\nevent 1 2 a \"b\"\0\n", "bad.vgm:2: NUL byte"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct vgm_model *m = vgm_model_new();
		const char *pre = "vigil-model 1\nevent 1 1 keep \"k\"\n";
		vgm_read_buffer(m, "pre", pre, strlen(pre), NULL, 0);
		char err[512] = "";
		size_t len = strlen(cases[i].text);
		if (strstr(cases[i].msg, "NUL"))
			len += 2;
		int rc = vgm_read_buffer(m, "bad.vgm", cases[i].text, len, err, sizeof err);
		CHECK(rc == -1, "case %zu accepted", i);
		CHECK(!strncmp(err, cases[i].msg, strlen(cases[i].msg)),
		      "case %zu: got '%s' want '%s'", i, err, cases[i].msg);
		CHECK(!strchr(err, '\n'), "case %zu: more than one line", i);
		/* a damaged file adds nothing */
		CHECK(m->nevents == 1 && m->events[0].count == 1, "case %zu changed the model", i);
		vgm_model_free(m);
	}
}

static void test_cdf_chain(void)
{
	/* A -> B always 100 us, B -> C (p 0.75) 200 us or B -> D (0.25) 1 ms: time from A to
	 * C or D: 300 us with probability 0.75, 1.1 ms with 0.25. */
	const char *text = "vigil-model 1\n"
	                   "event 1 1000 a \"A\"\nevent 2 1000 b \"B\"\n"
	                   "event 3 750 c \"C\"\nevent 4 250 d \"D\"\n";
	struct vgm_model *m = vgm_model_new();
	char err[256];
	vgm_read_buffer(m, "c", text, strlen(text), err, sizeof err);
	struct vgm_trans *t = vgm_trans_intern(m, 0, 1);
	t->count = 1000, vgm_sketch_add(&t->sk, 100000, 1000);
	t = vgm_trans_intern(m, 1, 2);
	t->count = 750, vgm_sketch_add(&t->sk, 200000, 750);
	t = vgm_trans_intern(m, 1, 3);
	t->count = 250, vgm_sketch_add(&t->sk, 1000000, 250);
	vgm_model_update_out(m);
	uint32_t terms[] = {2, 3};
	struct vgm_cdf_opts o = {0, terms, 2, 10, 0.001, 20000, 7};
	struct vgm_cdf_result r;
	CHECK(vgm_cdf(m, &o, &r) == 0, "cdf");
	CHECK(r.nsamples == 20000 && fabs(r.mass - 1) < 1e-9 && r.paths == 2, "walks %zu mass %g",
	      r.nsamples, r.mass);
	size_t fast = 0;
	for (size_t i = 0; i < r.nsamples; i++)
		fast += r.samples[i] < 500000;
	double share = (double)fast / (double)r.nsamples;
	CHECK(fabs(share - 0.75) < 0.02, "share of the 300 us path %g", share);
	CHECK(fabs(vgm_cdf_quantile(&r, 0.5) - 300000) / 300000 < 0.01, "p50 %g",
	      vgm_cdf_quantile(&r, 0.5));
	CHECK(fabs(vgm_cdf_quantile(&r, 0.9) - 1100000) / 1100000 < 0.01, "p90 %g",
	      vgm_cdf_quantile(&r, 0.9));
	vgm_cdf_free(&r);
	/* With only C terminal, the search prunes B -> D and renormalises: always 300 us. */
	o.nterms = 1;
	CHECK(vgm_cdf(m, &o, &r) == 0, "cdf C");
	CHECK(fabs(r.mass - 0.75) < 1e-9 && r.samples[r.nsamples - 1] < 310000, "mass %g max %g",
	      r.mass, r.samples[r.nsamples - 1]);
	vgm_cdf_free(&r);
	/* The cut-off prunes the 0.25 path. */
	o.nterms = 2, o.cutoff = 0.3;
	CHECK(vgm_cdf(m, &o, &r) == 0 && fabs(r.mass - 0.75) < 1e-9, "cut-off mass %g", r.mass);
	vgm_cdf_free(&r);
	/* No path from D. */
	o.start = 3;
	CHECK(vgm_cdf(m, &o, &r) == 1, "no path");
	vgm_cdf_free(&r);
	vgm_model_free(m);
}

static void test_sites(void)
{
	char *mod = NULL;
	uint64_t off = 0;
	CHECK(vgm_site_is_raw("/usr/lib/x.so+0x1A2b", &mod, &off) && off == 0x1a2b &&
	          !strcmp(mod, "/usr/lib/x.so"),
	      "raw site");
	free(mod);
	CHECK(!vgm_site_is_raw("src/x.c:12", NULL, &off), "symbolized site is not raw");
	CHECK(!vgm_site_is_raw("/a+0x", NULL, &off), "no digits");
	char *p = vgm_site_path("/work/main/src/x.c", "/work/main/build/src");
	CHECK(!strcmp(p, "src/x.c"), "%s", p);
	free(p);
	p = vgm_site_path("/home/b/build/gen/y.c", "/home/b/build");
	CHECK(!strcmp(p, "gen/y.c"), "%s", p);
	free(p);
	p = vgm_site_path("./src/z.c", "/build");
	CHECK(!strcmp(p, "src/z.c"), "%s", p);
	free(p);
	p = vgm_site_path("/usr/include/stdio.h", "/tmp/b");
	CHECK(!strcmp(p, "/usr/include/stdio.h"), "%s", p);
	free(p);
	/* A module without debug information (or missing) keeps its basename. */
	struct vgm_symbolizer *s = vgm_symbolizer_new();
	const char *r = vgm_symbolize(s, "/nonexistent/dir/libz.so.1+0x40");
	CHECK(r && !strcmp(r, "libz.so.1+0x40"), "%s", r);
	CHECK(!strcmp(vgm_symbolize(s, "src/a.c:3"), "src/a.c:3"), "not raw");
	vgm_symbolizer_free(s);
}

int main(void)
{
	test_quantile_error();
	test_merge_and_emd();
	test_round_trip();
	test_bad_files();
	test_cdf_chain();
	test_sites();
	if (failures)
		fprintf(stderr, "%d checks failed\n", failures);
	else
		printf("all model unit checks passed\n");
	return failures != 0;
}
