/* The relations cache's copy decision (src/relations/cache_copy.c): VIGIL_CACHE_COPY=on
 * and off decide whatever the loads cost; otherwise the loads of 8 stretches of 32 mapped
 * pages are timed and the cheapest stretch decides, so that one stretch made dear by a
 * preemption (or perf, or an interrupt) does not make a machine whose loads are cheap copy,
 * and one cheap stretch is enough to map. The timings are injected (vgc_copy_dear) or made
 * by a fake clock (vgc_copy_sample); last, the decision on a real mapping (an anonymous
 * file: nothing written on disk), whatever this machine decides. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "relations/cache_internal.h"

static int failures;

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "query.cache_copy: FAIL: %s\n", what);
		failures++;
	}
}

#define N VGC_COPY_STRETCHES
#define CHEAP 150  /* ns a page: nested paging (KVM), the pages mapped */
#define DEAR 2000  /* shadow paging (PVM) */
#define SLOW 80000 /* a stretch preempted: a scheduler tick's worth over 32 pages */

static void fill(uint64_t *ns, uint64_t v)
{
	for (size_t i = 0; i < N; i++)
		ns[i] = v;
}

static void setting(void)
{
	unsetenv("VIGIL_CACHE_COPY");
	check(vgc_copy_setting() == -1, "no VIGIL_CACHE_COPY: not measured");
	setenv("VIGIL_CACHE_COPY", "on", 1);
	check(vgc_copy_setting() == 1, "VIGIL_CACHE_COPY=on not honoured");
	setenv("VIGIL_CACHE_COPY", "off", 1);
	check(vgc_copy_setting() == 0, "VIGIL_CACHE_COPY=off not honoured");
	setenv("VIGIL_CACHE_COPY", "yes", 1);
	check(vgc_copy_setting() == -1, "VIGIL_CACHE_COPY=yes taken for a setting");
	unsetenv("VIGIL_CACHE_COPY");
}

static void injected(void)
{
	uint64_t ns[N];
	fill(ns, CHEAP);
	check(!vgc_copy_dear(ns, N), "cheap loads: copied");
	fill(ns, DEAR);
	check(vgc_copy_dear(ns, N), "dear loads: not copied");
	for (size_t at = 0; at < N; at++) { /* one preempted stretch, wherever it falls */
		fill(ns, CHEAP);
		ns[at] = SLOW;
		if (!vgc_copy_dear(ns, N))
			continue;
		fprintf(stderr, "query.cache_copy: stretch %zu of %d preempted\n", at, N);
		check(false, "one slow stretch among cheap ones made it copy");
	}
	for (size_t at = 0; at < N; at++) { /* the cheapest decides: one cheap stretch maps */
		fill(ns, DEAR);
		ns[at] = CHEAP;
		if (vgc_copy_dear(ns, N)) {
			fprintf(stderr, "query.cache_copy: stretch %zu of %d cheap\n", at, N);
			check(false, "dear stretches but a cheap one: copied (not the cheapest)");
		}
	}
	fill(ns, DEAR);
	ns[3] = SLOW;
	check(vgc_copy_dear(ns, N), "dear loads, one preempted: not copied");
	/* the threshold: 1 us a page */
	fill(ns, 1000);
	check(!vgc_copy_dear(ns, N), "1000 ns a page: copied");
	fill(ns, 1001);
	check(vgc_copy_dear(ns, N), "1001 ns a page: not copied");
	check(!vgc_copy_dear(ns, 0), "no stretch: copied");
}

/* A fake clock: each stretch's loads take script[k] ns a page (read at its start and end). */
static uint64_t script[N], fake_now;
static unsigned fake_calls;

static uint64_t fake_clock(void)
{
	unsigned k = fake_calls++;
	if (k % 2 == 1 && k / 2 < N)
		fake_now += script[k / 2] * VGC_COPY_STRETCH_PAGES;
	return fake_now;
}

static void sampled(const uint8_t *pages, size_t page)
{
	uint64_t ns[N];
	for (size_t i = 0; i < N; i++)
		script[i] = i == 5 ? SLOW : CHEAP + 10 * i;
	fake_calls = 0;
	fake_now = 1000000;
	vgc_copy_sample(pages, page, fake_clock, ns);
	check(fake_calls == 2 * N, "the sample did not read the clock twice a stretch");
	bool same = true;
	for (size_t i = 0; i < N; i++)
		same = same && ns[i] == script[i];
	check(same, "the sample's costs a page are not the clock's");
	check(!vgc_copy_dear(ns, N), "sampled: a preempted stretch made it copy");
	for (size_t i = 0; i < N; i++)
		script[i] = i == 2 ? SLOW : DEAR;
	fake_calls = 0;
	vgc_copy_sample(pages, page, fake_clock, ns);
	check(vgc_copy_dear(ns, N), "sampled: dear loads not copied");
}

static void real_mapping(const uint8_t *base, size_t page, size_t size)
{
	/* a column past the header, 64-byte aligned as the writer lays them */
	struct vgc_column big = {64, size - 64, 0}, small = {64, 4 * page, 0};
	const struct vgc_column *cols[] = {&small, &big}, *smalls[] = {&small};
	setenv("VIGIL_CACHE_COPY", "on", 1);
	check(vgc_copy_pays(base, cols, 2), "VIGIL_CACHE_COPY=on: not copied");
	setenv("VIGIL_CACHE_COPY", "off", 1);
	check(!vgc_copy_pays(base, cols, 2), "VIGIL_CACHE_COPY=off: copied");
	unsetenv("VIGIL_CACHE_COPY");
	check(vgc_copy_pays(base, smalls, 1), "too few pages to tell: not copied as before");
	bool first = vgc_copy_pays(base, cols, 2);
	check(vgc_copy_pays(base, cols, 2) == first, "measured twice in one process, otherwise");
	/* once measured, the settings still win */
	setenv("VIGIL_CACHE_COPY", first ? "off" : "on", 1);
	check(vgc_copy_pays(base, cols, 2) == !first, "the setting lost to the measure");
	unsetenv("VIGIL_CACHE_COPY");
	printf("query.cache_copy: this machine's mapped pages measured %s\n",
	       first ? "dear (copy)" : "cheap (map)");
}

int main(void)
{
	setting();
	injected();
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (N * VGC_COPY_STRETCH_PAGES + 4) * page;
	int fd = memfd_create("cache_copy_unit", 0);
	check(fd >= 0 && ftruncate(fd, (off_t)size) == 0, "no anonymous file");
	uint8_t *base = fd >= 0 ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	check(base != MAP_FAILED, "the anonymous file not mapped");
	if (base != MAP_FAILED) {
		sampled(base, page);
		real_mapping(base, page, size);
		munmap(base, size);
	}
	if (fd >= 0)
		close(fd);
	if (failures)
		return 1;
	printf("query.cache_copy: settings honoured; the cheapest of %d stretches decides, one "
	       "preempted stretch does not copy\n",
	       N);
	return 0;
}
