/* libFuzzer target: the stream decoder. The first input byte picks a metadata (vigil's
 * own layout, or an odd one: big endian, wider alignment, a 16-bit wrapping timestamp,
 * nested structs, sequences, floats); the rest is a stream file, read to its end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/internal.h"

/* As vigil writes it (tests/unit/reader_tracegen.c, uuid of image app-42-0). */
static const char vigil_metadata[] =
    "/* CTF 1.8 */\n"
    "\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "typealias integer { size = 8; align = 8; signed = true; } := int8_t;\n"
    "typealias integer { size = 16; align = 8; signed = true; } := int16_t;\n"
    "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
    "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
    "typealias floating_point { exp_dig = 11; mant_dig = 53; align = 8; } := double;\n"
    "\n"
    "trace {\n"
    "\tmajor = 1;\n"
    "\tminor = 8;\n"
    "\tuuid = \"6ea6f2b4-1d1c-4c6c-9c3d-00000000002a\";\n"
    "\tbyte_order = le;\n"
    "\tpacket.header := struct {\n"
    "\t\tuint32_t magic;\n"
    "\t\tuint8_t uuid[16];\n"
    "\t\tuint32_t stream_id;\n"
    "\t};\n"
    "};\n"
    "\n"
    "env {\n"
    "\thostname = \"host\";\n"
    "\tdomain = \"vigil\";\n"
    "\ttracer_name = \"vigil\";\n"
    "\tvpid = 42;\n"
    "\tprocname = \"app\";\n"
    "\tvigil_version = \"0.1.0\";\n"
    "\tvigil_process_gen = 0;\n"
    "\tvigil_ppid = 1;\n"
    "\tvigil_image = 0;\n"
    "};\n"
    "\n"
    "clock {\n"
    "\tname = \"monotonic\";\n"
    "\tuuid = \"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\";\n"
    "\tdescription = \"test\";\n"
    "\tfreq = 1000000000;\n"
    "\tprecision = 1;\n"
    "\toffset_s = 1700000000;\n"
    "\toffset = 0;\n"
    "\tabsolute = true;\n"
    "};\n"
    "\n"
    "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := "
    "uint64_clock_t;\n"
    "\n"
    "struct vg_ref {\n"
    "\tuint64_t id;\n"
    "\tuint32_t gen;\n"
    "};\n"
    "\n"
    "stream {\n"
    "\tid = 0;\n"
    "\tevent.header := struct {\n"
    "\t\tuint16_t id;\n"
    "\t\tuint64_clock_t timestamp;\n"
    "\t};\n"
    "\tpacket.context := struct {\n"
    "\t\tuint64_clock_t timestamp_begin;\n"
    "\t\tuint64_clock_t timestamp_end;\n"
    "\t\tuint64_t content_size;\n"
    "\t\tuint64_t packet_size;\n"
    "\t\tuint64_t packet_seq_num;\n"
    "\t\tuint64_t events_discarded;\n"
    "\t\tuint32_t tid;\n"
    "\t\tuint32_t thread_gen;\n"
    "\t};\n"
    "};\n"
    "\n"
    "event {\n"
    "\tname = \"all_types\";\n"
    "\tid = 1;\n"
    "\tstream_id = 0;\n"
    "\tmodel.emf.uri = \"vigil:kind=event;flag=sensor;traced;target=who;ref.who=Mailbox\";\n"
    "\tfields := struct {\n"
    "\t\tint8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16; uint32_t u32; "
    "uint64_t u64; double d; string s; uint32_t _blob_len; uint8_t blob[_blob_len]; struct vg_ref "
    "who;\n"
    "\t};\n"
    "};\n"
    "\n"
    "event {\n"
    "\tname = \"tick\";\n"
    "\tid = 2;\n"
    "\tstream_id = 0;\n"
    "\tmodel.emf.uri = \"vigil:kind=event;flag=sensor;traced\";\n"
    "\tfields := struct {\n"
    "\t\tuint32_t n;\n"
    "\t};\n"
    "};\n"
    "\n"
    "event {\n"
    "\tname = \"vg.entity.create\";\n"
    "\tid = 3;\n"
    "\tstream_id = 0;\n"
    "\tmodel.emf.uri = \"vigil:kind=create;flag=sensor;traced\";\n"
    "\tfields := struct {\n"
    "\t\tstring kind; uint64_t id; uint32_t gen; string name;\n"
    "\t};\n"
    "};\n"
    "\n"
    "event {\n"
    "\tname = \"vg.thread.begin\";\n"
    "\tid = 4;\n"
    "\tstream_id = 0;\n"
    "\tmodel.emf.uri = \"vigil:kind=create;flag=sensor;traced\";\n"
    "\tfields := struct {\n"
    "\t\tuint32_t tid; uint32_t gen; string name;\n"
    "\t};\n"
    "};\n"
    "\n"
    "event {\n"
    "\tname = \"empty\";\n"
    "\tid = 5;\n"
    "\tstream_id = 0;\n"
    "\tmodel.emf.uri = \"vigil:kind=event;flag=sensor;sampled\";\n"
    "\tfields := struct {\n"
    "\t\t\n"
    "\t};\n"
    "};\n"
    "\n"
    "\n";

static const char odd_metadata[] =
    "typealias integer { size = 8; align = 8; signed = false; } := u8;\n"
    "typealias integer { size = 16; align = 16; signed = false; byte_order = be; } := u16;\n"
    "typealias integer { size = 32; align = 32; signed = true; } := s32;\n"
    "typealias integer { size = 64; align = 64; signed = false; } := u64;\n"
    "typealias integer { size = 16; align = 8; map = clock.c.value; } := ts16;\n"
    "typealias floating_point { exp_dig = 8; mant_dig = 24; align = 32; } := f32;\n"
    "trace { major = 1; minor = 8; byte_order = be;\n"
    "  uuid = \"00112233-4455-6677-8899-aabbccddeeff\";\n"
    "  packet.header := struct { u8 pad; integer { size = 32; align = 32; } magic;\n"
    "    u8 uuid[16]; u16 stream_id; }; };\n"
    "clock { name = c; freq = 1000; offset_s = -5; offset = 999; };\n"
    "stream { id = 3; event.header := struct { u8 id; ts16 timestamp; };\n"
    "  packet.context := struct { u16 content_size; u64 packet_size; u8 packet_seq_num; }; };\n"
    "stream { id = 4; event.header := struct { u16 id; u64 timestamp; }; };\n"
    "event { name = a; id = 1; stream_id = 3; fields := struct { s32 x; f32 y; string s; }; };\n"
    "event { name = b; id = 2; stream_id = 3; fields := struct {\n"
    "  struct { u8 n; u8 d[n]; struct { u64 id; integer { size = 32; } gen; } r; } in;\n"
    "  u16 m; u8 e[m]; u8 fixed[3]; }; };\n"
    "event { name = c; id = 0; stream_id = 4; fields := struct { string t; }; };\n";

static struct image *load(const char *text)
{
	struct image *img = calloc(1, sizeof *img);
	img->path = strdup("fuzz");
	img->md = vgt_metadata_parse(text, strlen(text), "fuzz/metadata", &img->damage);
	if (!img->md)
		abort(); /* the embedded metadata must parse */
	img->ns_num = img->ns_den = 1;
	return img;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct image *images[2];
	if (!images[0]) {
		images[0] = load(vigil_metadata);
		images[1] = load(odd_metadata);
	}
	if (size < 1)
		return 0;
	struct image *img = images[data[0] & 1];
	/* A copy of exactly the input: reads past it are caught by the sanitizer. */
	uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
	memcpy(copy, data + 1, size - 1);
	struct stream *s = vgt_stream_open(img, "fuzz/stream", copy, size - 1);
	struct vgt_cursor c;
	vgt_cursor_init(&c, s);
	uint64_t events = 0;
	while (vgt_cursor_advance(&c)) {
		const struct vgt_event *ev = &c.ev;
		for (unsigned i = 0; i < ev->type->nfields; i++) {
			const struct vgt_value *v = &ev->values[i];
			if (v->type == VGT_STRING && strlen(v->str.ptr) != v->str.len)
				abort();
			if (v->type == VGT_BYTES && v->bytes.len &&
			    (v->bytes.ptr < copy || v->bytes.ptr + v->bytes.len > copy + size - 1))
				abort();
		}
		events++;
	}
	if (events != s->pub.stats.events)
		abort();
	vgt_cursor_fini(&c);
	vgt_stream_free(s);
	free(copy);
	return 0;
}
