/* Decodes a Perfetto trace written by `vigil export --format perfetto` with protobuf-c
 * (Trace.unpack of the whole file) and prints each packet as one JSON line, so that
 * tests/export/export_test.py compares it with the trace and the chrome export. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfetto_trace.pb-c.h"

static json_t *track(const Perfetto__Protos__TrackDescriptor *d)
{
	json_t *o = json_pack("{s:I}", "uuid", (json_int_t)d->uuid);
	if (d->has_parent_uuid)
		json_object_set_new(o, "parent", json_integer((json_int_t)d->parent_uuid));
	if (d->name)
		json_object_set_new(o, "name", json_string(d->name));
	if (d->process)
		json_object_set_new(o, "process",
		                    json_pack("{s:i,s:s?}", "pid", d->process->pid, "name",
		                              d->process->process_name));
	if (d->thread)
		json_object_set_new(o, "thread",
		                    json_pack("{s:i,s:i,s:s?}", "pid", d->thread->pid, "tid",
		                              d->thread->tid, "name", d->thread->thread_name));
	if (d->counter)
		json_object_set_new(o, "counter", json_true());
	return o;
}

static json_t *event(const Perfetto__Protos__TrackEvent *e)
{
	json_t *o = json_pack("{s:i,s:I}", "type", e->type, "track", (json_int_t)e->track_uuid);
	if (e->name)
		json_object_set_new(o, "name", json_string(e->name));
	if (e->n_categories)
		json_object_set_new(o, "cat", json_string(e->categories[0]));
	if (e->has_counter_value)
		json_object_set_new(o, "value", json_integer(e->counter_value));
	if (e->has_double_counter_value)
		json_object_set_new(o, "value", json_real(e->double_counter_value));
	json_t *args = json_object();
	for (size_t i = 0; i < e->n_debug_annotations; i++) {
		const Perfetto__Protos__DebugAnnotation *a = e->debug_annotations[i];
		json_t *v = json_null();
		if (a->has_int_value)
			v = json_integer(a->int_value);
		else if (a->has_uint_value)
			v = json_integer((json_int_t)a->uint_value);
		else if (a->has_double_value)
			v = json_real(a->double_value);
		else if (a->has_bool_value)
			v = json_boolean(a->bool_value);
		else if (a->string_value)
			v = json_string(a->string_value);
		json_object_set_new(args, a->name ? a->name : "?", v);
	}
	json_object_set_new(o, "args", args);
	json_t *fo = json_array(), *fi = json_array();
	for (size_t i = 0; i < e->n_flow_ids; i++)
		json_array_append_new(fo, json_integer((json_int_t)e->flow_ids[i]));
	for (size_t i = 0; i < e->n_terminating_flow_ids; i++)
		json_array_append_new(fi, json_integer((json_int_t)e->terminating_flow_ids[i]));
	json_object_set_new(o, "flow_ids", fo);
	json_object_set_new(o, "terminating_flow_ids", fi);
	return o;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pftrace_decode FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	Perfetto__Protos__Trace *t = buf ? perfetto__protos__trace__unpack(NULL, n, buf) : NULL;
	if (!t) {
		fprintf(stderr, "pftrace_decode: %s: not a Trace message\n", argv[1]);
		return 1;
	}
	for (size_t i = 0; i < t->n_packet; i++) {
		const Perfetto__Protos__TracePacket *p = t->packet[i];
		json_t *o = json_pack("{s:I,s:I}", "seq", (json_int_t)p->trusted_packet_sequence_id,
		                      "flags", (json_int_t)p->sequence_flags);
		if (p->has_timestamp)
			json_object_set_new(o, "ts", json_integer((json_int_t)p->timestamp));
		if (p->track_descriptor)
			json_object_set_new(o, "track", track(p->track_descriptor));
		if (p->track_event)
			json_object_set_new(o, "event", event(p->track_event));
		char *s = json_dumps(o, JSON_COMPACT);
		puts(s);
		free(s);
		json_decref(o);
	}
	perfetto__protos__trace__free_unpacked(t, NULL);
	free(buf);
	return 0;
}
