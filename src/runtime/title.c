/* The process title: what a process calls itself by rewriting its argv area (PostgreSQL's
 * "postgres: checkpointer", nginx's "nginx: worker process", sshd). No call announces it,
 * so the runtime compares the string at the start of the argv area (where
 * /proc/PID/cmdline and ps read it) with the last one seen, at points it visits anyway:
 * every vg.net.* event, a wait (hooks_wait.c), a thread's start and end, fork, exec and
 * the process's end
 * (docs/net.md, "Process names"). A change is recorded as vg.process.name, dated when it
 * was noticed: the title changed after the previous check point and no later than that.
 *
 * The area's bounds come from /proc/self/stat (arg_start .. env_end: a program that
 * rewrites its title may use the environment's bytes too, as PostgreSQL does); it stays
 * mapped for the life of the image (the initial stack). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TITLE_MAX 128 /* longer titles are cut: a name, not a command line */

/* The fast path (internal.h, vg__title_check) compares vg__title.words with the area's
 * first bytes, the title and its NUL, a word at a time. */
struct vg_title vg__title;
static size_t area_len;
static char seen[TITLE_MAX + 1]; /* the last title seen, NUL-terminated */
static size_t seen_len;
static atomic_flag busy = ATOMIC_FLAG_INIT;

/* Takes the words the fast path compares: the title and its NUL (or the cut), rounded
 * up to words while the area has them; else no fast path (every check is slow). */
static void snapshot(void)
{
	size_t n = (seen_len + 1 + 7) / 8;
	if (n * 8 > area_len || n > sizeof vg__title.words / 8) {
		vg__title.nwords = 0;
		return;
	}
	memcpy(vg__title.words, vg__title.area, n * 8);
	vg__title.nwords = (unsigned)n;
}

/* Fields 48 (arg_start) and 51 (env_end) of /proc/self/stat. */
static int read_bounds(uintptr_t *start, uintptr_t *end)
{
	char buf[1024];
	if (vg__read_small_file("/proc/self/stat", buf, sizeof buf) <= 0)
		return -1;
	const char *p = strrchr(buf, ')'); /* the name may contain anything but ends here */
	if (!p)
		return -1;
	int field = 2;
	uintptr_t v[52] = {0};
	for (p++; *p && field < 51;) { /* fields 3 (the state, a letter), 4, ... */
		while (*p == ' ')
			p++;
		field++;
		char *e;
		unsigned long long x = strtoull(p, &e, 10);
		if (e == p && field != 3)
			return -1;
		v[field] = (uintptr_t)x;
		p = e;
		while (*p && *p != ' ')
			p++;
	}
	if (field < 51 || !v[48] || v[51] <= v[48])
		return -1;
	*start = v[48];
	*end = v[51];
	return 0;
}

/* Copies the title (the string at the area's start, cut at TITLE_MAX) into out. */
static size_t read_title(char out[TITLE_MAX + 1])
{
	const char *area = vg__title.area;
	size_t n = 0, max = area_len < TITLE_MAX ? area_len : TITLE_MAX;
	while (n < max && area[n])
		n++;
	memcpy(out, area, n);
	out[n] = 0;
	return n;
}

void vg__title_init(void)
{
	uintptr_t start, end;
	vg__title.area = NULL;
	if (!vg__rt.recording || read_bounds(&start, &end) < 0)
		return;
	area_len = end - start;
	vg__title.area = (const char *)start;
	seen_len = read_title(seen);
	snapshot();
}

/* A fork child shares the area's addresses and the title seen; it only stops looking
 * when it does not record. */
void vg__title_after_fork(void)
{
	if (!vg__rt.recording)
		vg__title.area = NULL;
}

/* The words differ: the title changed, or bytes after it in the last word did. */
void vg__title_slow(void)
{
	if (atomic_flag_test_and_set(&busy)) /* another thread is recording it */
		return;
	char now[TITLE_MAX + 1];
	size_t n = read_title(now);
	if (n && (n != seen_len || memcmp(now, seen, n))) {
		memcpy(seen, now, n + 1);
		seen_len = n;
		vg__process_renamed(now);
	}
	snapshot();
	atomic_flag_clear(&busy);
}
