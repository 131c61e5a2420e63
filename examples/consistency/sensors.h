/* The example's sensors (docs/consistency.md), written by hand with the inline API the way
 * `vigil gen` writes them: each one says what it does (its op), so that the runtime keeps
 * what it reports consistent while reporting is narrowed or suspended. */
#ifndef EXAMPLE_CONSISTENCY_SENSORS_H
#define EXAMPLE_CONSISTENCY_SENSORS_H

#include <pthread.h>
#include <stdint.h>
#include <vigil/vigil.h>

/* A heap object: its address is its identity, so a freed and reused address is a new
 * generation of the same raw id. */
struct item {
	vg_entity ent;
	uint64_t value;
	struct item *next;
};

/* A pthread mutex with the entity that names it in events. */
struct account {
	pthread_mutex_t mu;
	vg_entity ent;
	uint64_t balance;
};

void ex_sensors_register(void);

void ex_call(const char *fn, const struct item *arg);             /* enter */
void ex_return(void);                                             /* leave */
void ex_item_new(struct item *it);                                /* create (after malloc) */
void ex_item_free(struct item *it);                               /* reclaim (before free) */
void ex_item_use(const struct item *it, const struct account *a); /* activity */

/* pthread_mutex_lock/unlock with WAIT_BEGIN / WAIT_END / ACQUIRE / RELEASE events. */
void ex_lock(struct account *a);
void ex_unlock(struct account *a);

#endif
