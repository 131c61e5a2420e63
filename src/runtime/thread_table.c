/* The recorded threads of this process by pthread_t, so that a thread named by another
 * (pthread_setname_np(t, ...) from its creator: common) is recorded as renamed. Entries
 * live from a thread's begin to its end; the rename is written by the calling thread
 * under the table's lock, so the named thread's entity cannot go away meanwhile. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "internal.h"

struct entry {
	pthread_t th;
	vg_entity *self;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *table;
static size_t n, cap;

void vg__thread_table_add(vg_entity *self)
{
	pthread_mutex_lock(&lock);
	if (n == cap) {
		size_t c = cap ? cap * 2 : 16;
		struct entry *t = realloc(table, c * sizeof *t);
		if (!t) { /* not found later: that rename is not recorded */
			pthread_mutex_unlock(&lock);
			return;
		}
		table = t;
		cap = c;
	}
	table[n++] = (struct entry){pthread_self(), self};
	pthread_mutex_unlock(&lock);
}

void vg__thread_table_remove(void)
{
	pthread_t me = pthread_self();
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n; i++)
		if (pthread_equal(table[i].th, me)) {
			table[i] = table[--n];
			break;
		}
	pthread_mutex_unlock(&lock);
}

/* Only the forking thread goes on in the child; it registers again. */
void vg__thread_table_after_fork(void)
{
	pthread_mutex_init(&lock, NULL);
	n = 0;
}

int vg__thread_table_rename(pthread_t th, const char *name)
{
	int found = 0;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n; i++)
		if (pthread_equal(table[i].th, th)) {
			vg_entity *e = table[i].self;
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
			found = 1;
			break;
		}
	pthread_mutex_unlock(&lock);
	return found;
}
