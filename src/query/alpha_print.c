/* The α plan as text (vigil explain) and as control commands for a live subject. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/alpha.h"
#include "query/relation_internal.h"

static const char *const place_text[] = {"the sensor", "the performer", "the initiator",
                                         "the target"};

/* The kind of entity holding the flag ("thread" when the performer is the thread). */
static const char *flag_kind(const struct vga_alpha *a)
{
	return a->spec->flag_kind ? a->spec->flag_kind : "thread";
}

static void print_types(const struct vga_alpha *a, FILE *out)
{
	for (size_t i = 0; i < a->nsensors; i++)
		fprintf(out, "%s%s", i ? ", " : "", a->sensors[i]->event);
}

void vga_print(const struct vga_plan *p, FILE *out)
{
	fprintf(out, "sensors (α operators), %s optimization:\n",
	        p->optimized ? "after" : "before");
	if (!p->n)
		fputs("  none: the query reads only entity relations, Clock or earlier results\n",
		      out);
	for (size_t i = 0; i < p->n; i++) {
		const struct vga_alpha *a = &p->alphas[i];
		fprintf(out, "  α[%s %s: %s, flag on %s%s](", a->var, a->relation,
		        a->spec->sampled ? "sampled" : "traced", place_text[a->spec->place],
		        a->end_only ? ", end only" : "");
		switch (a->source) {
		case VGA_SRC_SENSOR:
			break;
		case VGA_SRC_ALL:
			fprintf(out, "%s", flag_kind(a));
			break;
		case VGA_SRC_NAMED:
			fprintf(out, "σ name = \"%s\" (%s)", a->name, flag_kind(a));
			break;
		case VGA_SRC_TRIGGER:
			fprintf(out, "π %s (α[%s])", a->trigger_by, p->alphas[a->trigger].var);
			break;
		}
		fprintf(out, ")");
		if (a->why)
			fprintf(out, "    %s", a->why);
		fprintf(out, "   [%s, line %u]\n      enables ", a->stmt, a->line);
		print_types(a, out);
		switch (a->source) {
		case VGA_SRC_SENSOR:
			fputs(" everywhere\n", out);
			break;
		case VGA_SRC_ALL:
			fprintf(out, " on every %s\n", flag_kind(a));
			break;
		case VGA_SRC_NAMED:
			fprintf(out,
			        " on the %s named \"%s\" (set by the subject when it is created or "
			        "renamed)\n",
			        flag_kind(a), a->name);
			break;
		case VGA_SRC_TRIGGER:
			fprintf(
			    out,
			    " on each %s that %s.%s names, from that event on (set by the subject "
			    "when %s records)\n",
			    flag_kind(a), p->alphas[a->trigger].var, a->trigger_by,
			    p->alphas[a->trigger].sensors[0]->event);
			break;
		}
		if (a->spec->sampled)
			fputs("      (sampled sensors are enabled like traced ones: the subject "
			      "reports "
			      "every change)\n",
			      out);
	}
}

/* Appends the line unless an equal one is there: counters compose, so duplicates would
 * only raise them twice for nothing. */
static void add_line(char ***lines, size_t *n, char *line)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*lines)[i], line)) {
			free(line);
			return;
		}
	*lines = vgq_xrealloc(*lines, *n + 1, sizeof **lines);
	(*lines)[(*n)++] = line;
}

static char *format(const char *fmt, const char *a, const char *b)
{
	char *s;
	if (asprintf(&s, fmt, a, b) < 0)
		abort();
	return s;
}

size_t vga_commands(const struct vga_plan *p, char ***lines)
{
	size_t n = 0;
	*lines = NULL;
	/* Entity rules and triggers first, sensors last: a sensor is on only once what gates
	 * it is in place (no packet the plan did not ask for in between). */
	for (size_t i = 0; i < p->n; i++) {
		const struct vga_alpha *a = &p->alphas[i];
		switch (a->source) {
		case VGA_SRC_SENSOR:
			break;
		case VGA_SRC_ALL:
			add_line(lines, &n, format("entities +1 %s%s", flag_kind(a), ""));
			break;
		case VGA_SRC_NAMED:
			add_line(lines, &n, format("entities +1 %s %s", flag_kind(a), a->name));
			break;
		case VGA_SRC_TRIGGER:
			add_line(lines, &n,
			         format("trigger +1 %s %s", p->alphas[a->trigger].sensors[0]->event,
			                a->trigger_by));
			break;
		}
	}
	for (size_t i = 0; i < p->n; i++)
		for (size_t k = 0; k < p->alphas[i].nsensors; k++)
			add_line(lines, &n,
			         format("sensor +1 %s%s", p->alphas[i].sensors[k]->event, ""));
	return n;
}

void vga_commands_free(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}
