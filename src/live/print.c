/* The α plan as text (vigil explain) and as control commands for a live subject. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/alpha.h"
#include "relations/columns.h"

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
		        a->spec->once      ? "traced once"
		        : a->spec->sampled ? "sampled"
		                           : "traced",
		        place_text[a->spec->place], a->end_only ? ", end only" : "");
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
		if (a->spec->once)
			fprintf(
			    out,
			    "      traced once: each event takes one raise of the %s's flag, so "
			    "the first event of each %s's lifetime is recorded\n",
			    flag_kind(a), flag_kind(a));
		if (a->sample_every)
			fprintf(out, "%sClock[%llu]", a->source == VGA_SRC_SENSOR ? "" : ", ",
			        (unsigned long long)a->sample_every);
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
		if (a->sample_every)
			fprintf(
			    out,
			    "      sampled at the ticks of Clock[%llu]: the begin only remembers "
			    "its time, the end records the intervals that hold at a tick\n",
			    (unsigned long long)a->sample_every);
		else if (a->spec->sampled)
			fputs(
			    "      (sampled, with no clock to sample at: the subject reports every "
			    "change)\n",
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

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The sampling period (ns) of an event type all of whose α sample it (the gcd of their
 * clocks: every tick of each is a tick of it); 0 if one α wants every change. */
static uint64_t sample_period(const struct vga_plan *p, const char *event, int64_t tick_ns)
{
	uint64_t period = 0;
	for (size_t i = 0; i < p->n; i++)
		for (size_t k = 0; k < p->alphas[i].nsensors; k++) {
			if (strcmp(p->alphas[i].sensors[k]->event, event))
				continue;
			if (!p->alphas[i].sample_every || tick_ns < 1)
				return 0;
			period = gcd(period, p->alphas[i].sample_every * (uint64_t)tick_ns);
		}
	return period;
}

size_t vga_commands(const struct vga_plan *p, char ***lines)
{
	return vga_commands_at(p, 0, 0, lines);
}

size_t vga_commands_at(const struct vga_plan *p, int64_t tick_ns, uint64_t origin, char ***lines)
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
		for (size_t k = 0; k < p->alphas[i].nsensors; k++) {
			const char *event = p->alphas[i].sensors[k]->event;
			uint64_t period = sample_period(p, event, tick_ns);
			char *line;
			if (!period)
				line = format("sensor +1 %s%s", event, "");
			else if (asprintf(&line, "sample +1 %s %llu %llu", event,
			                  (unsigned long long)origin,
			                  (unsigned long long)period) < 0)
				abort();
			add_line(lines, &n, line);
		}
	return n;
}

void vga_commands_free(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}
