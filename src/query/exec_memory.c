/* Operator memory with a budget (docs/query.md, "Traces larger than memory"). The state an
 * operator holds while a statement runs (bindings materialised for a join, an aggregate
 * or the result; hash tables; an aggregate's contributions; a parallel sort's merge
 * buffer) is taken from the query's budget before it is allocated and given back when it
 * is freed. Bindings that would pass the budget move to the spill file of
 * relations/spill.c (mapped: they read as before) and leave the budget; other state that
 * would pass it is refused: the statement stops with one line naming the operator, the
 * bytes and the budget (engine.c), never a partial answer. A parallel sort that does not
 * fit sorts in place on one thread instead (the same order).
 * The relations' columns are not counted here: they are the build's (VIGIL_BUILD_MEMORY,
 * relations/spill.c), and a statement's result grows through that column store too. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "relations/spill.h"

static size_t budget;
static pthread_once_t budget_once = PTHREAD_ONCE_INIT;

static void read_budget(void)
{
	const char *e = getenv("VIGIL_QUERY_MEMORY");
	if (e && *e) {
		if (!vgq_parse_size(e, &budget)) {
			fprintf(
			    stderr,
			    "vigil: VIGIL_QUERY_MEMORY=%s is not a size (bytes, or a number with "
			    "K, M, G or T: 512M)\n",
			    e);
			exit(2);
		}
		return;
	}
	/* half the machine: the build's budget is a quarter, the page cache keeps the rest */
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	budget = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 2 : (size_t)1 << 31;
}

size_t vgq_query_memory(void)
{
	pthread_once(&budget_once, read_budget);
	return budget;
}

static bool take(struct vgq_session *s, size_t bytes)
{
	struct vgq_memory *m = &s->mem;
	size_t held = __atomic_add_fetch(&m->held, bytes, __ATOMIC_RELAXED);
	if (held > vgq_query_memory() || held < bytes) {
		__atomic_sub_fetch(&m->held, bytes, __ATOMIC_RELAXED);
		return false;
	}
	size_t peak = __atomic_load_n(&m->peak, __ATOMIC_RELAXED);
	while (held > peak && !__atomic_compare_exchange_n(&m->peak, &peak, held, true,
	                                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return true;
}

bool vgq_mem_try(struct vgq_session *s, size_t bytes)
{
	return take(s, bytes);
}

/* The statement stops: `what` needed `bytes` more (`rows`: what is the name of the
 * operator whose bindings were being materialised). False. */
static bool refuse(struct vgq_session *s, const char *what, bool rows, size_t bytes)
{
	struct vgq_memory *m = &s->mem;
	int free_claim = 0; /* the first refusal is the one reported (workers may race) */
	if (__atomic_compare_exchange_n(&m->claimed, &free_claim, 1, false, __ATOMIC_ACQ_REL,
	                                __ATOMIC_RELAXED)) {
		m->what = what;
		m->rows = rows;
		m->need = bytes;
		m->held_then = __atomic_load_n(&m->held, __ATOMIC_RELAXED);
		__atomic_store_n(&m->refused, true, __ATOMIC_RELEASE);
	}
	return false;
}

bool vgq_mem_take(struct vgq_session *s, const char *what, size_t bytes)
{
	return take(s, bytes) || refuse(s, what, false, bytes);
}

bool vgq_mem_refuse(struct vgq_session *s, const char *what, size_t bytes)
{
	return refuse(s, what, false, bytes);
}

size_t vgq_mem_room(const struct vgq_session *s)
{
	size_t held = __atomic_load_n(&s->mem.held, __ATOMIC_RELAXED), budget = vgq_query_memory();
	return held < budget ? budget - held : 0;
}

void vgq_mem_give(struct vgq_session *s, size_t bytes)
{
	__atomic_sub_fetch(&s->mem.held, bytes, __ATOMIC_RELAXED);
}

bool vgq_mem_refused(const struct vgq_session *s)
{
	return __atomic_load_n(&s->mem.refused, __ATOMIC_ACQUIRE);
}

void vgq_mem_statement_begin(struct vgq_session *s)
{
	struct vgq_memory *m = &s->mem;
	m->refused = false;
	m->claimed = 0;
	m->what = NULL;
	m->rows = false;
	m->need = m->held_then = 0;
	m->peak = m->held;
	m->spilled = 0;
	m->parts_written = 0;
	m->parts = m->parts_depth = 0;
}

void vgq_mem_note_spill(struct vgq_session *s, size_t parts, unsigned depth)
{
	struct vgq_memory *m = &s->mem;
	__atomic_add_fetch(&m->parts, (uint32_t)parts, __ATOMIC_RELAXED);
	uint32_t cur = __atomic_load_n(&m->parts_depth, __ATOMIC_RELAXED);
	while (depth > cur && !__atomic_compare_exchange_n(&m->parts_depth, &cur, depth, true,
	                                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* "12.5 MiB", "300 KiB", "17 bytes" */
static void print_bytes(FILE *out, size_t n)
{
	if (n >= (size_t)1 << 30)
		fprintf(out, "%.1f GiB", (double)n / (1 << 30));
	else if (n >= (size_t)1 << 20)
		fprintf(out, "%.1f MiB", (double)n / (1 << 20));
	else if (n >= 1024)
		fprintf(out, "%.1f KiB", (double)n / 1024);
	else
		fprintf(out, "%zu bytes", n);
}

void vgq_mem_report(const struct vgq_session *s, FILE *out)
{
	const struct vgq_memory *m = &s->mem;
	if (m->rows)
		fprintf(out, "the bindings of a %s, materialised, need ", m->what);
	else
		fprintf(out, "%s needs ", m->what ? m->what : "an operator's state");
	print_bytes(out, m->need);
	fputs(" more with ", out);
	print_bytes(out, m->held_then);
	fputs(" held, past the query's memory budget (VIGIL_QUERY_MEMORY=", out);
	print_bytes(out, vgq_query_memory());
	fputs(")", out);
}

/* ---- materialised bindings ---- */

bool vgq_rows_reserve(struct xrows *r, struct vgq_session *s, const char *op, size_t more)
{
	if (r->cap - r->n >= more)
		return true;
	size_t cap = r->cap ? 2 * r->cap : 4 * VGQ_BATCH;
	if (cap - r->n < more) /* one large reservation: exactly that */
		cap = r->n + more;
	size_t w = (r->width ? r->width : 1) * sizeof *r->rows;
	size_t old = r->cap * w, bytes = cap * w;
	r->mem = s;
	if (!r->spill && take(s, bytes - old)) {
		r->rows = vgq_xrealloc(r->rows, cap, w);
		r->charged += bytes - old;
		r->cap = cap;
		return true;
	}
	/* past the budget: the bindings move to the spill file, mapped (their resident pages
	 * the spill governor's to drop), and leave the budget */
	void *p = r->rows;
	if (!vgq_colmem_spill(&r->spill, &p, old, bytes))
		return refuse(s, op, true, bytes - old);
	r->rows = p;
	r->cap = cap;
	vgq_mem_give(s, r->charged);
	r->charged = 0;
	__atomic_add_fetch(&s->mem.spilled, bytes - old, __ATOMIC_RELAXED);
	return true;
}

bool vgq_rows_spill(struct xrows *r)
{
	if (r->spill || !r->charged)
		return true;
	size_t bytes = r->cap * (r->width ? r->width : 1) * sizeof *r->rows;
	void *p = r->rows;
	if (!vgq_colmem_spill(&r->spill, &p, bytes, bytes))
		return false;
	r->rows = p;
	vgq_mem_give(r->mem, r->charged);
	r->charged = 0;
	__atomic_add_fetch(&r->mem->mem.spilled, bytes, __ATOMIC_RELAXED);
	return true;
}

void *vgq_state_alloc(struct vgq_session *s, const char *what, size_t bytes, struct vgq_state *st)
{
	memset(st, 0, sizeof *st);
	st->mem = s;
	if (!bytes)
		bytes = 1;
	if (take(s, bytes)) {
		st->charged = bytes;
		return st->p = vgq_xcalloc(bytes, 1);
	}
	/* past the budget: in the spill file, mapped (zeros, as calloc's), read as before */
	if (vgq_colmem_spill(&st->spill, &st->p, 0, bytes)) {
		__atomic_add_fetch(&s->mem.spilled, bytes, __ATOMIC_RELAXED);
		return st->p;
	}
	vgq_colmem_free(st->spill);
	st->spill = NULL;
	refuse(s, what, false, bytes);
	return NULL;
}

void vgq_state_free(struct vgq_state *st)
{
	if (st->spill) {
		vgq_colmem_release(st->spill, st->p);
		vgq_colmem_free(st->spill);
	} else {
		free(st->p);
	}
	if (st->mem)
		vgq_mem_give(st->mem, st->charged);
	memset(st, 0, sizeof *st);
}

void vgq_rows_free(struct xrows *r)
{
	if (r->mem)
		vgq_mem_give(r->mem, r->charged);
	if (r->spill) {
		vgq_colmem_release(r->spill, r->rows);
		vgq_colmem_free(r->spill);
	} else {
		free(r->rows);
	}
	memset(r, 0, sizeof *r);
}
