/* The export model as the JSON Trace Event Format (the "JSON Object Format" that
 * chrome://tracing, Perfetto UI and speedscope open; docs/export.md):
 *
 *   M  process_name, thread_name (and process_labels: the host)
 *   i  instants (scope "t"), X  slices on a thread (nested by time),
 *   b/e  async slices (intervals that do not nest on one thread, states, lifetimes),
 *   C  counters of a process: events discarded, sampled sensors' values (one C event
 *      per trace event, a series per field; an interval's open count "vigil.open"),
 *   s/f  flows from a send to its receive (bound to the send and receive, which are
 *        written as zero-length X slices so that a viewer has a slice to bind to).
 *
 * Times are microseconds (three decimals: ns) since the trace's first event, whose
 * absolute time is otherData.origin_ns: a double cannot hold epoch nanoseconds. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "export_model.h"

static void put_json(FILE *f, json_t *j)
{
	json_dumpf(j, f, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void put_str(FILE *f, const char *s)
{
	json_t *j = json_string(s ? s : "");
	if (!j) /* not UTF-8: the viewer still gets a name */
		j = json_string("?");
	put_json(f, j);
	json_decref(j);
}

static void put_us(FILE *f, int64_t ns)
{
	if (ns < 0) {
		putc('-', f);
		ns = -ns;
	}
	fprintf(f, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

/* The fields of an event shared by every phase: name, cat, ph, ts, pid, tid. */
static void head(FILE *f, bool *first, const char *name, const char *cat, char ph, int64_t ts,
                 int64_t pid, int64_t tid)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = false;
	fputs("{\"name\":", f);
	put_str(f, name);
	if (cat) {
		fputs(",\"cat\":", f);
		put_str(f, cat);
	}
	fprintf(f, ",\"ph\":\"%c\",\"ts\":", ph);
	put_us(f, ts);
	fprintf(f, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64, pid, tid);
}

static void metadata(const struct vgx_model *m, FILE *f, bool *first)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct vgx_proc *p = &m->procs[i];
		head(f, first, "process_name", NULL, 'M', 0, p->xpid, 0);
		fputs(",\"args\":{\"name\":", f);
		put_str(f, p->name ? p->name : "?");
		fputs("}}", f);
		head(f, first, "process_labels", NULL, 'M', 0, p->xpid, 0);
		fputs(",\"args\":{\"labels\":", f);
		char label[512];
		snprintf(label, sizeof label, "host %s, pid %" PRId64, p->host ? p->host : "?",
		         p->pid);
		put_str(f, label);
		fputs("}}", f);
	}
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct vgx_thread *t = &m->threads[i];
		head(f, first, "thread_name", NULL, 'M', 0, m->procs[t->proc].xpid, t->tid);
		fputs(",\"args\":{\"name\":", f);
		char name[64];
		if (!t->name)
			snprintf(name, sizeof name, "%" PRId64, t->tid);
		put_str(f, t->name ? t->name : name);
		fputs("}}", f);
	}
}

static json_t *item_args(const struct vgx_item *it)
{
	json_t *a = json_copy(it->args);
	json_object_set_new(a, "vigil.event", json_string(it->event));
	if (it->end_event)
		json_object_set_new(a, "vigil.end_event", json_string(it->end_event));
	if (it->open)
		json_object_set_new(a, "vigil.open", json_true());
	return a;
}

static void item(const struct vgx_model *m, const struct vgx_item *it, FILE *f, bool *first)
{
	int64_t pid = m->procs[it->proc].xpid, tid = m->threads[it->thread].tid;
	int64_t ts = it->ts - m->first, end = it->end - m->first;
	json_t *args = item_args(it);
	bool flows = it->nflows_in || it->nflows_out;
	if (it->kind == VGX_INSTANT && !flows) {
		head(f, first, it->name, it->cat, 'i', ts, pid, tid);
		fputs(",\"s\":\"t\"", f);
	} else if (it->kind == VGX_INSTANT || it->place == VGX_ON_THREAD) {
		head(f, first, it->name, it->cat, 'X', ts, pid, tid);
		fputs(",\"dur\":", f);
		put_us(f, end - ts);
	} else {
		head(f, first, it->name, it->cat, 'b', ts, pid, tid);
		fprintf(f, ",\"id\":\"0x%" PRIx64 "\"", it->id);
	}
	fputs(",\"args\":", f);
	put_json(f, args);
	fputs("}", f);
	json_decref(args);
	if (it->kind == VGX_SLICE && it->place == VGX_ASYNC) {
		head(f, first, it->name, it->cat, 'e', end, pid, tid);
		fprintf(f, ",\"id\":\"0x%" PRIx64 "\"}", it->id);
	}
	for (size_t k = 0; k < it->nflows_out; k++) {
		head(f, first, "message", "net", 's', ts, pid, tid);
		fprintf(f, ",\"id\":\"0x%" PRIx64 "\"}", it->flows_out[k]);
	}
	for (size_t k = 0; k < it->nflows_in; k++) {
		head(f, first, "message", "net", 'f', ts, pid, tid);
		fprintf(f, ",\"bp\":\"e\",\"id\":\"0x%" PRIx64 "\"}", it->flows_in[k]);
	}
}

static void counter_value(FILE *f, const struct vgx_counter_value *v)
{
	if (v->is_double)
		fprintf(f, "%.17g", v->d);
	else
		fprintf(f, "%" PRId64, v->i);
}

/* The samples of one trace event (adjacent: same process, counter and time, each track
 * once) are one C event with a series per key. */
static void counters(const struct vgx_model *m, FILE *f, bool *first)
{
	for (size_t i = 0, j; i < m->ncounters; i = j) {
		const struct vgx_counter *c = &m->counters[i];
		const struct vgx_ctrack *t = &m->ctracks[c->track];
		head(f, first, t->name, "vigil", 'C', c->ts - m->first, m->procs[t->proc].xpid, 0);
		fputs(",\"args\":{", f);
		for (j = i; j < m->ncounters; j++) {
			const struct vgx_counter *d = &m->counters[j];
			const struct vgx_ctrack *u = &m->ctracks[d->track];
			bool again = false;
			for (size_t k = i; k < j && !again; k++)
				again = m->counters[k].track == d->track;
			if (j > i && (again || d->ts != c->ts || u->proc != t->proc ||
			              strcmp(u->name, t->name)))
				break;
			if (j > i)
				putc(',', f);
			put_str(f, u->key);
			putc(':', f);
			counter_value(f, &d->v);
		}
		fputs("}}", f);
	}
}

int vgx_write_chrome(const struct vgx_model *m, FILE *f, char *err, size_t errsize)
{
	bool first = true;
	fputs("{\"traceEvents\":[", f);
	metadata(m, f, &first);
	for (size_t i = 0; i < m->nitems; i++)
		item(m, &m->items[i], f, &first);
	counters(m, f, &first);
	fprintf(f,
	        "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"vigil export\","
	        "\"origin_ns\":%" PRId64 ",\"events\":%" PRIu64 ",\"discarded\":%" PRIu64
	        ",\"damaged_places\":%" PRIu64 ",\"flows\":%" PRIu64 "}}\n",
	        m->first, m->events, m->discarded, m->damage, m->flows);
	if (ferror(f)) {
		snprintf(err, errsize, "write error");
		return -1;
	}
	return 0;
}
