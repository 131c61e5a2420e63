/* Ground truth, collected as JSON tuples in the order the facts happen (intervals in the
 * order they begin). The processor whose turn it is appends, so no lock is needed here. */
#include "truth.h"

#include <jansson.h>
#include <stdlib.h>

struct mb_truth {
	json_t *config, *entities, *state, *send, *receive, *waiting, *running;
	uint64_t steps;
	int failed; /* an allocation failed: the truth is incomplete */
};

struct mb_truth *mb_truth_new(const struct mb_options *o)
{
	struct mb_truth *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->config =
	    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "processors", (json_int_t)o->processors,
	              "processes", (json_int_t)o->processes, "mailboxes", (json_int_t)o->mailboxes,
	              "messages", (json_int_t)o->messages, "quantum", (json_int_t)o->quantum,
	              "seed", (json_int_t)o->seed);
	t->entities = json_array();
	t->state = json_array();
	t->send = json_array();
	t->receive = json_array();
	t->waiting = json_array();
	t->running = json_array();
	if (!t->config || !t->entities || !t->state || !t->send || !t->receive || !t->waiting ||
	    !t->running) {
		mb_truth_free(t);
		return NULL;
	}
	return t;
}

void mb_truth_free(struct mb_truth *t)
{
	if (!t)
		return;
	json_decref(t->config);
	json_decref(t->entities);
	json_decref(t->state);
	json_decref(t->send);
	json_decref(t->receive);
	json_decref(t->waiting);
	json_decref(t->running);
	free(t);
}

static json_t *append(struct mb_truth *t, json_t *list, json_t *tuple)
{
	if (!tuple || json_array_append_new(list, tuple)) {
		t->failed = 1;
		return NULL;
	}
	return tuple;
}

void mb_truth_state(struct mb_truth *t, uint64_t step, const char *process, const char *state)
{
	append(t, t->state,
	       json_pack("{s:I, s:s, s:s}", "step", (json_int_t)step, "process", process, "state",
	                 state));
}

void mb_truth_send(struct mb_truth *t, uint64_t step, const char *process, const char *mailbox,
                   uint32_t msg, uint32_t payload)
{
	append(t, t->send,
	       json_pack("{s:I, s:s, s:s, s:I, s:I}", "step", (json_int_t)step, "process", process,
	                 "mailbox", mailbox, "msg", (json_int_t)msg, "payload",
	                 (json_int_t)payload));
}

void mb_truth_receive(struct mb_truth *t, uint64_t step, const char *process, const char *mailbox,
                      uint32_t msg, int waited)
{
	append(t, t->receive,
	       json_pack("{s:I, s:s, s:s, s:I, s:b}", "step", (json_int_t)step, "process", process,
	                 "mailbox", mailbox, "msg", (json_int_t)msg, "waited", waited));
}

void mb_truth_waiting_begin(struct mb_truth *t, uint64_t step, const char *process,
                            const char *mailbox, struct mb_truth_interval *w)
{
	w->tuple = append(t, t->waiting,
	                  json_pack("{s:s, s:s, s:I}", "process", process, "mailbox", mailbox,
	                            "from", (json_int_t)step));
}

void mb_truth_running_begin(struct mb_truth *t, uint64_t step, const char *process,
                            const char *processor, struct mb_truth_interval *r)
{
	r->tuple = append(t, t->running,
	                  json_pack("{s:s, s:s, s:I}", "process", process, "processor", processor,
	                            "from", (json_int_t)step));
}

void mb_truth_interval_end(struct mb_truth *t, struct mb_truth_interval *i, uint64_t step)
{
	if (!i->tuple || json_object_set_new(i->tuple, "to", json_integer((json_int_t)step)))
		t->failed = 1;
	i->tuple = NULL;
}

void mb_truth_entity(struct mb_truth *t, const char *kind, uint64_t id, const char *name,
                     uint64_t created, uint64_t reclaimed)
{
	append(t, t->entities,
	       json_pack("{s:s, s:I, s:s, s:I, s:I}", "kind", kind, "id", (json_int_t)id, "name",
	                 name, "from", (json_int_t)created, "to", (json_int_t)reclaimed));
}

void mb_truth_end(struct mb_truth *t, uint64_t steps)
{
	t->steps = steps;
}

/* Interval tuples that have ended. */
static size_t ended(const json_t *intervals)
{
	size_t i, n = 0;
	json_t *tuple;
	json_array_foreach(intervals, i, tuple) n += json_object_get(tuple, "to") != NULL;
	return n;
}

void mb_truth_counts(const struct mb_truth *t, struct mb_truth_counts *c)
{
	c->state_changes = json_array_size(t->state);
	c->sends = json_array_size(t->send);
	c->receives = json_array_size(t->receive);
	c->waits = json_array_size(t->waiting);
	c->runs = json_array_size(t->running);
}

/* Events each sensor must have recorded in a full recording of the run. */
static json_t *event_counts(const struct mb_truth *t)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "mailbox.ProcessState",
	                 (json_int_t)json_array_size(t->state), "mailbox.SendMessage",
	                 (json_int_t)json_array_size(t->send), "mailbox.Waiting.begin",
	                 (json_int_t)json_array_size(t->waiting), "mailbox.Waiting.end",
	                 (json_int_t)ended(t->waiting), "mailbox.RunningOn.begin",
	                 (json_int_t)json_array_size(t->running), "mailbox.RunningOn.end",
	                 (json_int_t)ended(t->running), "vg.entity.create",
	                 (json_int_t)json_array_size(t->entities), "vg.entity.reclaim",
	                 (json_int_t)ended(t->entities));
}

static int write_value(FILE *f, const char *indent, const char *key, const json_t *v,
                       const char *after)
{
	fprintf(f, "%s\"%s\": ", indent, key);
	if (json_dumpf(v, f, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY))
		return -1;
	fputs(after, f);
	return 0;
}

/* A list, one tuple per line, so that two truths compare well with diff. */
static int write_list(FILE *f, const char *key, const json_t *list, const char *after)
{
	size_t i;
	json_t *tuple;
	fprintf(f, "  \"%s\": [", key);
	json_array_foreach(list, i, tuple)
	{
		fputs(i ? ",\n    " : "\n    ", f);
		if (json_dumpf(tuple, f, JSON_COMPACT | JSON_PRESERVE_ORDER))
			return -1;
	}
	fprintf(f, "%s]%s", json_array_size(list) ? "\n  " : "", after);
	return 0;
}

int mb_truth_write(const struct mb_truth *t, FILE *f)
{
	if (t->failed)
		return -1;
	json_t *counts = event_counts(t);
	json_t *steps = json_integer((json_int_t)t->steps);
	int err = !counts || !steps;
	fputs("{\n", f);
	err = err || write_value(f, "  ", "config", t->config, ",\n");
	err = err || write_value(f, "  ", "steps", steps, ",\n");
	err = err || write_value(f, "  ", "counts", counts, ",\n");
	err = err || write_list(f, "entities", t->entities, ",\n");
	err = err || write_list(f, "ProcessState", t->state, ",\n");
	err = err || write_list(f, "SendMessage", t->send, ",\n");
	err = err || write_list(f, "Receive", t->receive, ",\n");
	err = err || write_list(f, "Waiting", t->waiting, ",\n");
	err = err || write_list(f, "RunningOn", t->running, "\n");
	fputs("}\n", f);
	json_decref(counts);
	json_decref(steps);
	return err || ferror(f) ? -1 : 0;
}
