/* The recorded threads of this process by pthread_t, so that a thread named by another
 * (pthread_setname_np(t, ...) from its creator: common) is recorded as renamed.
 *
 * Every successful rename of another thread is one vg.thread.name, whatever the timing,
 * so that a run records as many events each time: if the named thread has joined the
 * table (from its begin to its end), the caller writes the rename at once, under the
 * table's lock (the named thread's entity cannot go away meanwhile); if it has not joined
 * yet (the creator renames it right after pthread_create), the rename waits in an entry
 * of its own, and the thread writes it when it joins, after its begin. A thread without
 * a stream (its file could not be made) joins too: renames of it are counted lost. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PENDING_MAX 4 /* renames kept before the thread joins; more: counted lost */

struct entry {
	pthread_t th;
	vg_entity *self; /* NULL: not joined yet (renames pending), or streamless */
	int joined;
	unsigned npending, lost;
	char pending[PENDING_MAX][16];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *table;
static size_t n, cap;

static struct entry *find_locked(pthread_t th)
{
	for (size_t i = 0; i < n; i++)
		if (pthread_equal(table[i].th, th))
			return &table[i];
	return NULL;
}

static struct entry *add_locked(pthread_t th)
{
	if (n == cap) {
		size_t c = cap ? cap * 2 : 16;
		struct entry *t = realloc(table, c * sizeof *t);
		if (!t)
			return NULL;
		table = t;
		cap = c;
	}
	table[n] = (struct entry){.th = th};
	return &table[n++];
}

static void emit_rename(vg_entity *e, const char *name)
{
	int wanted = vg__wanted(vg__builtin(VG_B_THREAD_NAME), NULL);
	if (vg__track_op(VG_OP_RENAME, e, wanted)) {
		vg_value v[3];
		v[0].u = (uint32_t)e->id;
		v[1].u = e->gen;
		v[2].s = name;
		vg__emit_decided(vg__builtin(VG_B_THREAD_NAME), v);
	}
	if (e->id == (uint64_t)vg__rt.pid)
		vg__process_renamed(name);
}

void vg__thread_table_join(vg_entity *self)
{
	char pending[PENDING_MAX][16];
	unsigned np = 0, lost = 0;
	pthread_mutex_lock(&lock);
	struct entry *e = find_locked(pthread_self());
	if (!e)
		e = add_locked(pthread_self());
	if (e) {
		np = e->npending;
		lost = e->lost;
		memcpy(pending, e->pending, sizeof pending);
		e->self = self;
		e->joined = 1;
		e->npending = e->lost = 0;
	}
	pthread_mutex_unlock(&lock);
	/* Renamed by its creator before it joined: written now, by the thread itself. */
	for (unsigned i = 0; i < np; i++)
		if (self)
			emit_rename(self, pending[i]);
		else
			vg__count_discarded(1);
	if (lost)
		vg__count_discarded(lost);
}

void vg__thread_table_remove(void)
{
	pthread_mutex_lock(&lock);
	struct entry *e = find_locked(pthread_self());
	if (e)
		*e = table[--n];
	pthread_mutex_unlock(&lock);
}

/* Only the forking thread goes on in the child; it joins again. */
void vg__thread_table_after_fork(void)
{
	pthread_mutex_init(&lock, NULL);
	n = 0;
}

void vg__thread_table_rename(pthread_t th, const char *name)
{
	pthread_mutex_lock(&lock);
	struct entry *e = find_locked(th);
	if (!e)
		e = add_locked(th);
	if (!e)
		vg__count_discarded(1);
	else if (e->joined && e->self)
		emit_rename(e->self, name);
	else if (e->joined) /* streamless: its events are counted lost */
		vg__count_discarded(1);
	else if (e->npending < PENDING_MAX)
		snprintf(e->pending[e->npending++], sizeof e->pending[0], "%s", name);
	else
		e->lost++;
	pthread_mutex_unlock(&lock);
}
