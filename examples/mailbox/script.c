/* Script generation.
 *
 * Termination by construction: the processes get a random rank (a permutation), and each
 * mailbox m a cut c(m) in 1..processes-1; only the processes ranked below the cut send to
 * it, only those ranked at or above it receive from it, and it receives exactly as many
 * messages as are sent to it. So a process receives only from processes ranked below it,
 * and by induction on the rank every process finishes: the senders of any mailbox it
 * waits on all finish (the lower ranks do), so all their messages arrive, and since the
 * receivers never take more messages than were sent, one is left for it. This holds
 * whatever the order of operations within a script (random here) and whatever the order
 * in which processes first run (a random permutation too, so receivers often run before
 * their senders and block). Several processes may wait on one mailbox at once.
 */
#include "script.h"

#include <stdlib.h>

#include "rng.h"

static int append(struct mb_script *s, struct mb_op op)
{
	if (s->len == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 8;
		struct mb_op *ops = realloc(s->ops, cap * sizeof *ops);
		if (!ops)
			return -1;
		s->ops = ops;
		s->cap = cap;
	}
	s->ops[s->len++] = op;
	return 0;
}

/* Work between communications makes the processes' running intervals of varied length. */
static int maybe_work(struct mb_script *s, struct mb_rng *rng)
{
	if (mb_rng_below(rng, 4) != 0)
		return 0;
	return append(s, (struct mb_op){.kind = MB_OP_WORK, .units = 1 + mb_rng_below(rng, 4)});
}

/* A random permutation of 0..n-1 (Fisher-Yates). */
static uint32_t *permutation(uint32_t n, struct mb_rng *rng)
{
	uint32_t *perm = malloc((n ? n : 1) * sizeof *perm);
	if (!perm)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = mb_rng_below(rng, i), t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	return perm;
}

int mb_plan_generate(struct mb_plan *plan, const struct mb_options *o)
{
	struct mb_rng rng = {o->seed};
	uint32_t *cut = calloc(o->mailboxes, sizeof *cut);
	uint32_t *by_rank = permutation(o->processes, &rng);
	plan->start_order = permutation(o->processes, &rng);
	plan->scripts = calloc(o->processes, sizeof *plan->scripts);
	plan->sends_to_mailbox = calloc(o->mailboxes, sizeof *plan->sends_to_mailbox);
	if (!cut || !by_rank || !plan->start_order || !plan->scripts || !plan->sends_to_mailbox)
		goto fail;
	if (o->processes >= 2)
		for (uint32_t m = 0; m < o->mailboxes; m++)
			cut[m] = 1 + mb_rng_below(&rng, o->processes - 1);

	for (uint32_t k = 0; k < o->messages; k++) {
		uint32_t m = mb_rng_below(&rng, o->mailboxes);
		uint32_t sender = by_rank[mb_rng_below(&rng, cut[m])];
		uint32_t receiver = by_rank[cut[m] + mb_rng_below(&rng, o->processes - cut[m])];
		struct mb_op send = {.kind = MB_OP_SEND,
		                     .mailbox = m,
		                     .msg = k + 1,
		                     .payload = (uint32_t)mb_rng_next(&rng)};
		struct mb_op receive = {.kind = MB_OP_RECEIVE, .mailbox = m};
		if (maybe_work(&plan->scripts[sender], &rng) ||
		    append(&plan->scripts[sender], send) ||
		    maybe_work(&plan->scripts[receiver], &rng) ||
		    append(&plan->scripts[receiver], receive))
			goto fail;
		plan->sends_to_mailbox[m]++;
	}
	/* A process with no message still runs (and so appears in RunningOn). */
	for (uint32_t p = 0; p < o->processes; p++)
		if (plan->scripts[p].len == 0 &&
		    append(&plan->scripts[p],
		           (struct mb_op){.kind = MB_OP_WORK, .units = 1 + mb_rng_below(&rng, 4)}))
			goto fail;
	free(cut);
	free(by_rank);
	return 0;
fail:
	free(cut);
	free(by_rank);
	mb_plan_free(plan, o);
	return -1;
}

void mb_plan_free(struct mb_plan *plan, const struct mb_options *o)
{
	if (plan->scripts)
		for (uint32_t p = 0; p < o->processes; p++)
			free(plan->scripts[p].ops);
	free(plan->scripts);
	free(plan->start_order);
	free(plan->sends_to_mailbox);
	*plan = (struct mb_plan){0};
}
