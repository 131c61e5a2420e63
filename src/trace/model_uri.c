/* vigil semantics of an event type, carried in its `model.emf.uri` attribute:
 * "vigil:kind=event;flag=sensor;traced;performer=proc;target=mbox;ref.proc=Process". */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

static void problem_add(char *problem, size_t size, const char *what, const char *arg)
{
	size_t used = strlen(problem);
	if (used + 3 >= size)
		return;
	snprintf(problem + used, size - used, "%s%s '%s'", used ? "; " : "", what, arg);
}

const char *const vgt_op_names[VGT_OP_COUNT] = {
    "activity", "create",     "load",     "reclaim", "rename", "enter",     "leave", "acquire",
    "release",  "wait_begin", "wait_end", "suspend", "resume", "reference", "move"};

void vgt_model_uri_apply(struct arena *a, struct vgt_event_type *t, const char *uri, char *problem,
                         size_t problem_size)
{
	static const char *const kinds[] = {"event", "begin", "end", "state", "create", "reclaim"};
	static const char *const flags[] = {"sensor", "performer", "initiator", "target"};
	*problem = 0;
	t->vigil = false;
	t->relation = t->name;
	t->kind = VGT_KIND_EVENT;
	t->flag = VGT_FLAG_SENSOR;
	t->sampled = false;
	t->once = false;
	t->performer = t->initiator = t->target = -1;
	t->op = 0;
	if (!uri || strncmp(uri, "vigil:", 6))
		return;
	t->vigil = true;
	char *items = vgt_arena_strdup(a, uri + 6);
	for (char *save = NULL, *item = strtok_r(items, ";", &save); item;
	     item = strtok_r(NULL, ";", &save)) {
		char *value = strchr(item, '=');
		if (value)
			*value++ = 0;
		if (!value) {
			if (!strcmp(item, "traced"))
				t->sampled = false;
			else if (!strcmp(item, "once"))
				t->once = true;
			else if (!strcmp(item, "sampled"))
				t->sampled = true;
			/* Unknown bare words are left for later versions. */
			continue;
		}
		int i;
		int *role = !strcmp(item, "performer")   ? &t->performer
		            : !strcmp(item, "initiator") ? &t->initiator
		            : !strcmp(item, "target")    ? &t->target
		                                         : NULL;
		if (!strcmp(item, "kind")) {
			if ((i = lookup(kinds, 6, value)) < 0)
				problem_add(problem, problem_size, "unknown kind", value);
			else
				t->kind = (enum vgt_kind)i;
		} else if (!strcmp(item, "flag")) {
			if ((i = lookup(flags, 4, value)) < 0)
				problem_add(problem, problem_size, "unknown flag place", value);
			else
				t->flag = (enum vgt_flag)i;
		} else if (!strcmp(item, "op")) {
			if ((i = lookup(vgt_op_names, VGT_OP_COUNT, value)) < 0)
				problem_add(problem, problem_size, "unknown op", value);
			else
				t->op = i;
		} else if (!strcmp(item, "relation")) {
			if (*value)
				t->relation = value;
		} else if (role) {
			if ((*role = vgt_type_field(t, value)) < 0)
				problem_add(problem, problem_size, "no such field", value);
		} else if (!strncmp(item, "ref.", 4)) {
			i = vgt_type_field(t, item + 4);
			if (i < 0 || t->fields[i].type != VGT_REF)
				problem_add(problem, problem_size, "no reference field", item + 4);
			else
				((struct vgt_field *)t->fields)[i].ref_kind = value;
		}
	}
}
