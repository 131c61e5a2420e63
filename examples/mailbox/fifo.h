/* A first-in first-out queue of small integers (process or message numbers). Its capacity
 * is fixed up front from the scripts, so the run itself never allocates or fails. */
#ifndef MAILBOX_FIFO_H
#define MAILBOX_FIFO_H

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

struct mb_fifo {
	uint32_t *items;
	uint32_t cap, head, len;
};

/* Returns 0, or -1 when out of memory. */
static inline int mb_fifo_init(struct mb_fifo *q, uint32_t cap)
{
	*q = (struct mb_fifo){.cap = cap};
	q->items = calloc(cap ? cap : 1, sizeof *q->items);
	return q->items ? 0 : -1;
}

static inline int mb_fifo_empty(const struct mb_fifo *q)
{
	return q->len == 0;
}

static inline void mb_fifo_push(struct mb_fifo *q, uint32_t v)
{
	assert(q->len < q->cap);
	q->items[(q->head + q->len) % q->cap] = v;
	q->len++;
}

/* The queue must not be empty. */
static inline uint32_t mb_fifo_pop(struct mb_fifo *q)
{
	assert(q->len > 0);
	uint32_t v = q->items[q->head];
	q->head = (q->head + 1) % q->cap;
	q->len--;
	return v;
}

static inline void mb_fifo_free(struct mb_fifo *q)
{
	free(q->items);
	*q = (struct mb_fifo){0};
}

#endif
