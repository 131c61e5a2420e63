/* Metadata: the TSDL parser and checker, on text written here and on the text the test
 * trace writer produces (which mirrors the runtime's). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reader_tracegen.h"
#include "trace/internal.h"

static const char header[] =
    "/* CTF 1.8 */\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "trace {\n"
    "\tmajor = 1; minor = 8; byte_order = le;\n"
    "\tuuid = \"6ea6f2b4-1d1c-4c6c-9c3d-5a2b8e7f0011\";\n"
    "\tpacket.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; };\n"
    "};\n"
    "stream {\n"
    "\tid = 0;\n"
    "\tevent.header := struct { uint16_t id; uint64_t timestamp; };\n"
    "\tpacket.context := struct { uint64_t content_size; uint64_t packet_size; };\n"
    "};\n"; /* 15 lines */

struct parsed {
	struct metadata *md;
	struct damage_list diag;
};

static void parse_text(struct parsed *p, const char *text)
{
	memset(p, 0, sizeof *p);
	p->md = vgt_metadata_parse(text, strlen(text), "m", &p->diag);
}

/* header + more */
static void parse_with_header(struct parsed *p, const char *more)
{
	char *text;
	assert_true(asprintf(&text, "%s%s", header, more) > 0);
	parse_text(p, text);
	free(text);
}

static void release(struct parsed *p)
{
	vgt_metadata_free(p->md);
	vgt_damage_clear(&p->diag);
}

static char *first_diag(const struct parsed *p)
{
	static char line[512];
	assert_true(p->diag.n > 0);
	vgt_damage_format(&p->diag.items[0], line, sizeof line);
	return line;
}

/* The metadata the test writer makes for an image with options `o`, parsed into p (in a
 * temporary directory that written_done removes). */
struct written {
	char *dir;
	struct tg_image *img;
};

static void parse_written(struct parsed *p, struct written *w, const struct tg_image_opts *o)
{
	w->dir = tg_tempdir();
	w->img = tg_image_new(w->dir, "app-1-0", o);
	char *path, *text = calloc(1, 1 << 16);
	assert_true(asprintf(&path, "%s/metadata", tg_image_dir(w->img)) > 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	memset(p, 0, sizeof *p);
	p->md = vgt_metadata_parse(text, n, path, &p->diag);
	free(text);
	free(path);
	assert_non_null(p->md);
	assert_int_equal(p->diag.total, 0);
}

static void written_done(struct parsed *p, struct written *w)
{
	release(p);
	tg_image_free(w->img);
	tg_rmtree(w->dir);
	free(w->dir);
}

static void test_runtime_style_metadata(void **state)
{
	(void)state;
	struct parsed p;
	struct written w;
	parse_written(
	    &p, &w,
	    &(struct tg_image_opts){
	        .procname = "app", .pid = 1234, .hostname = "box", .offset_s = 5, .offset = 7});
	assert_false(p.md->big_endian);
	assert_true(p.md->has_uuid);
	assert_int_equal(p.md->uuid[0], 0x6e);
	assert_string_equal(vgt_metadata_env(p.md, "hostname"), "box");
	assert_string_equal(vgt_metadata_env(p.md, "vpid"), "1234");
	assert_string_equal(vgt_metadata_env(p.md, "procname"), "app");
	assert_int_equal(p.md->nclocks, 1);
	assert_int_equal(p.md->clocks[0]->offset_s, 5);
	assert_int_equal(p.md->clocks[0]->offset, 7);
	assert_int_equal(p.md->nstreams, 1);
	const struct stream_class *sc = p.md->streams[0];
	assert_ptr_equal(sc->clock, p.md->clocks[0]);
	assert_int_equal(sc->ts_bits, 64);
	assert_true(sc->packet_size >= 0 && sc->content_size >= 0 && sc->tid >= 0 &&
	            sc->thread_gen >= 0 && sc->discarded >= 0 && sc->seq_num >= 0);

	const struct event_class *ec = vgt_stream_class_event(sc, TG_ALL_TYPES);
	assert_non_null(ec);
	assert_true(ec->usable);
	const struct vgt_event_type *t = &ec->pub;
	assert_string_equal(t->name, "all_types");
	/* 10 scalars, the hidden length, the bytes, the reference. */
	assert_int_equal(t->nfields, 13);
	static const enum vgt_vtype types[] = {
	    VGT_INT,  VGT_INT,    VGT_INT,    VGT_INT,  VGT_UINT,  VGT_UINT, VGT_UINT,
	    VGT_UINT, VGT_DOUBLE, VGT_STRING, VGT_UINT, VGT_BYTES, VGT_REF};
	static const unsigned sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 8, 0, 4, 0, 12};
	for (unsigned i = 0; i < 13; i++) {
		assert_int_equal(t->fields[i].type, types[i]);
		assert_int_equal(t->fields[i].size, sizes[i]);
		assert_int_equal(t->fields[i].hidden, i == 10);
	}
	assert_string_equal(t->fields[10].name, "_blob_len");
	assert_string_equal(t->fields[12].name, "who");
	assert_string_equal(t->fields[12].ref_kind, "Mailbox");
	assert_true(t->vigil);
	assert_int_equal(t->kind, VGT_KIND_EVENT);
	assert_int_equal(t->target, 12);
	assert_int_equal(t->performer, -1);
	assert_string_equal(t->relation, "all_types");

	const struct event_class *create = vgt_stream_class_event(sc, TG_ENTITY_CREATE);
	assert_int_equal(create->pub.kind, VGT_KIND_CREATE);
	assert_true(vgt_stream_class_event(sc, TG_EMPTY)->pub.sampled);
	assert_int_equal(vgt_stream_class_event(sc, TG_EMPTY)->pub.nfields, 0);
	assert_null(vgt_stream_class_event(sc, 999));
	written_done(&p, &w);
}

static void test_syntax_error_position(void **state)
{
	(void)state;
	struct parsed p;
	/* The event starts on line 16; the missing ";" is seen at the "}" of line 19. */
	parse_with_header(&p, "event {\n\tname = \"x\";\n\tid = 1\n};\n");
	assert_null(p.md);
	assert_int_equal(p.diag.n, 1);
	assert_int_equal(p.diag.items[0].kind, VGT_DMG_METADATA);
	assert_string_equal(first_diag(&p), "m:19:1: expected ';', got '}'");
	release(&p);

	parse_text(&p, "trace { byte_order = le; };\nfoo bar;\n");
	assert_null(p.md);
	assert_string_equal(first_diag(&p), "m:2:1: expected a declaration (trace, env, clock, "
	                                    "stream, event, typealias or struct), got 'foo'");
	release(&p);

	parse_text(&p,
	           "trace {\n\tbyte_order = le;\n\tpacket.header := struct { bogus_t x; };\n};");
	assert_null(p.md);
	assert_string_equal(first_diag(&p), "m:3:28: unknown type 'bogus_t'");
	release(&p);

	parse_text(&p, "trace { name = \"abc\n\"; };");
	assert_null(p.md);
	assert_string_equal(first_diag(&p), "m:1:16: newline in string");
	release(&p);

	parse_text(&p, "trace { x = 1; } @");
	assert_null(p.md);
	assert_string_equal(first_diag(&p), "m:1:18: unexpected '@'");
	release(&p);

	parse_text(&p, "trace { x = 99999999999999999999999; };");
	assert_string_equal(first_diag(&p), "m:1:13: integer constant too large");
	release(&p);

	parse_text(&p, "typealias floating_point { exp_dig = 8; mant_dig = 24; } := f;\n"
	               "typealias enum : f { A, B } := e;");
	assert_string_equal(first_diag(&p), "m:2:11: an enum's type must be an integer");
	release(&p);

	parse_text(&p, "typealias integer { size = 8; } := u8;\n"
	               "typealias enum : u8 { A = 1 ... } := e;");
	assert_string_equal(first_diag(&p), "m:2:33: expected a number, got '}'");
	release(&p);

	parse_text(&p, "variant v x;");
	assert_string_equal(first_diag(&p), "m:1:1: unknown variant 'v'");
	release(&p);
}

static void test_semantic_errors(void **state)
{
	(void)state;
	struct parsed p;
	parse_text(&p, "typealias integer { size = 8; } := u8;\n");
	assert_null(p.md);
	assert_string_equal(first_diag(&p), "m:1:1: no trace block");
	release(&p);

	parse_text(&p, "trace { byte_order = le; };");
	assert_string_equal(first_diag(&p), "m:1:1: trace block without packet.header");
	release(&p);

	parse_text(&p, "trace { major = 2; byte_order = le; };");
	assert_string_equal(first_diag(&p), "m:1:9: CTF major version must be 1");
	release(&p);

	parse_text(&p, "trace {\n\tbyte_order = le;\n\tuuid = \"12\";\n};");
	assert_string_equal(first_diag(&p), "m:3:2: malformed uuid");
	release(&p);

	parse_with_header(&p, "stream { id = 0; event.header := struct { uint16_t id; }; };\n");
	assert_null(p.md);
	assert_string_equal(first_diag(&p), "m:16:1: stream 0 declared twice");
	release(&p);

	parse_text(&p, "typealias integer { size = 12; } := u12;\n"
	               "trace { byte_order = le; packet.header := struct {\n"
	               "\tenum : u12 { a } x; variant <x> { u12 a; } v; }; };");
	assert_string_equal(first_diag(&p), "m:2:26: variants are only supported in event.header");
	release(&p);

	parse_text(&p, "typealias integer { size = 8; } := u8;\n"
	               "trace { byte_order = le; packet.header := struct {\n"
	               "\tu8 x; variant <x> { u8 a; } v; }; };");
	assert_null(p.md);
	assert_string_equal(first_diag(&p), "m:3:8: variant tag 'x' is not an earlier enum field");
	release(&p);

	parse_text(&p, "typealias integer { size = 0; } := u0;");
	assert_string_equal(first_diag(&p), "m:1:21: integer size must be 1 to 64");
	release(&p);
}

static void test_bad_event_declaration_spares_others(void **state)
{
	(void)state;
	struct parsed p;
	parse_with_header(
	    &p,
	    "event { name = \"good\"; id = 1; fields := struct { uint32_t a; }; };\n"
	    "event { name = \"bad\"; id = 2;\n"
	    "\tfields := struct { uint16_t a[3]; }; };\n"
	    "event { name = \"dup\"; id = 1; };\n"
	    "event { name = \"uri\"; id = 3; model.emf.uri = \"vigil:kind=sideways;target=nope\";\n"
	    "\tfields := struct { uint32_t a; }; };\n");
	assert_non_null(p.md);
	const struct stream_class *sc = p.md->streams[0];
	assert_true(vgt_stream_class_event(sc, 1)->usable);
	assert_string_equal(vgt_stream_class_event(sc, 1)->pub.name, "good");
	assert_false(vgt_stream_class_event(sc, 2)->usable);
	assert_true(vgt_stream_class_event(sc, 3)->usable);
	assert_int_equal(p.diag.n, 3);
	char line[512];
	vgt_damage_format(&p.diag.items[0], line, sizeof line);
	assert_string_equal(line, "m:18:31: event 'bad': field 'a': only arrays of bytes are "
	                          "supported: its events are skipped");
	vgt_damage_format(&p.diag.items[1], line, sizeof line);
	assert_string_equal(line, "m:19:1: event 'dup': id 1 is already used: ignored");
	vgt_damage_format(&p.diag.items[2], line, sizeof line);
	assert_string_equal(line, "m:20:31: event 'uri': model.emf.uri: unknown kind 'sideways'; "
	                          "no such field 'nope'");
	for (size_t i = 0; i < p.diag.n; i++)
		assert_int_equal(p.diag.items[i].kind, VGT_DMG_METADATA_TYPE);
	release(&p);
}

static void test_cut_metadata_keeps_complete_declarations(void **state)
{
	(void)state;
	struct parsed p;
	const char *more = "event { name = \"a\"; id = 1; fields := struct { uint32_t x; }; };\n"
	                   "event { name = \"b\"; id = 2; fields := struct { uint3";
	parse_with_header(&p, more);
	assert_non_null(p.md);
	assert_true(p.md->cut);
	assert_int_equal(p.diag.n, 1);
	assert_int_equal(p.diag.items[0].kind, VGT_DMG_METADATA_CUT);
	assert_non_null(vgt_stream_class_event(p.md->streams[0], 1));
	assert_null(vgt_stream_class_event(p.md->streams[0], 2));
	/* Everything up to the ';' that ends event a. */
	size_t expect = strlen(header) + strcspn(more, "\n");
	assert_int_equal(p.md->complete_len, expect);
	release(&p);

	/* Cut inside a comment: the same. */
	parse_with_header(&p, "/* half a comm");
	assert_non_null(p.md);
	assert_true(p.md->cut);
	release(&p);
}

static void test_nested_struct_sequence_and_big_endian(void **state)
{
	(void)state;
	struct parsed p;
	parse_with_header(
	    &p, "typealias integer { size = 32; byte_order = be; base = hex; } := be32;\n"
	        "typealias integer { size = 16; signed = true; } := int16_t;\n"
	        "struct pair { be32 a; int16_t b; };\n"
	        "event { name = \"n\"; id = 1; fields := struct {\n"
	        "\tstruct pair p;\n\tuint8_t n;\n\tstruct { uint8_t len; uint8_t data[len]; } s;\n"
	        "\tuint8_t tail[2];\n\tstring str;\n\tfloating_point { exp_dig = 8; mant_dig = 24; "
	        "} f;\n"
	        "}; };\n");
	assert_non_null(p.md);
	assert_int_equal(p.diag.total, 0);
	const struct event_class *ec = vgt_stream_class_event(p.md->streams[0], 1);
	const struct vgt_event_type *t = &ec->pub;
	static const char *const names[] = {"p.a",    "p.b",  "n",   "s.len",
	                                    "s.data", "tail", "str", "f"};
	assert_int_equal(t->nfields, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_string_equal(t->fields[i].name, names[i]);
	assert_true(t->fields[3].hidden);
	assert_int_equal(t->fields[0].base, 16);

	const uint8_t bytes[] = {0x01, 0x02, 0x03, 0x04, 0xfe, 0xff, 7,    2,    0xaa, 0xbb,
	                         9,    8,    'h',  'i',  0,    0x00, 0x00, 0xc0, 0x3f};
	struct vgt_value v[8];
	size_t pos = 0;
	assert_int_equal(vgt_layout_decode(&ec->payload, bytes, &pos, sizeof bytes, v, NULL),
	                 DEC_OK);
	assert_int_equal(pos, sizeof bytes);
	assert_int_equal(v[0].u, 0x01020304);
	assert_int_equal(v[1].i, -2);
	assert_int_equal(v[2].u, 7);
	assert_int_equal(v[4].bytes.len, 2);
	assert_memory_equal(v[4].bytes.ptr, "\xaa\xbb", 2);
	assert_memory_equal(v[5].bytes.ptr, "\x09\x08", 2);
	assert_string_equal(v[6].str.ptr, "hi");
	assert_true(v[7].d == 1.5);
	/* One byte short: the float runs past the end. */
	pos = 0;
	assert_int_equal(vgt_layout_decode(&ec->payload, bytes, &pos, sizeof bytes - 1, v, NULL),
	                 DEC_OVERRUN);
	assert_int_equal(pos, 15);
	/* Cut inside the string. */
	pos = 0;
	assert_int_equal(vgt_layout_decode(&ec->payload, bytes, &pos, 14, v, NULL),
	                 DEC_UNTERMINATED);
	assert_int_equal(pos, 12);
	release(&p);
}

/* Bit fields (little and big endian), enumerations and a variant selected by one: the
 * compact event header's parts, decoded directly. */
static void test_bit_fields_enums_variants(void **state)
{
	(void)state;
	struct parsed p;
	parse_text(
	    &p,
	    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	    "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
	    "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n"
	    "typealias integer { size = 3; align = 1; signed = true; byte_order = be; } := be3;\n"
	    "typealias integer { size = 13; align = 1; signed = false; byte_order = be; } := "
	    "be13;\n"
	    "enum kind : uint5_t { compact = 0 ... 29, \"gap\" = 31, extended };\n"
	    "trace { byte_order = le; packet.header := struct { uint32_t magic; }; };\n"
	    "stream { event.header := struct {\n"
	    "\tenum kind id;\n"
	    "\tvariant <id> { struct { uint27_t timestamp; } compact;\n"
	    "\t\tstruct { uint16_t id; uint64_t timestamp; } extended; } v;\n};\n};\n"
	    "event { name = \"e\"; id = 1; fields := struct { be3 a; be13 b; uint8_t c; "
	    "uint5_t d; }; };\n");
	assert_non_null(p.md);
	assert_int_equal(p.diag.total, 0);
	const struct stream_class *sc = p.md->streams[0];
	const struct layout *eh = &sc->event_header;
	assert_true(eh->general);
	assert_int_equal(sc->compact_id_bits, 0); /* 31 is not its escape: decoded as declared */
	assert_int_equal(sc->ts_bits, 27);
	assert_int_equal(sc->nroles, 4); /* id, v.compact.timestamp, v.extended.id/timestamp */
	/* compact: id 7, timestamp 0x5abcdef in one little-endian word */
	uint32_t w = 7 | 0x5abcdefu << 5;
	uint8_t b[16];
	memcpy(b, &w, 4);
	struct vgt_value v[8];
	size_t pos = 0;
	assert_int_equal(vgt_layout_decode(eh, b, &pos, 4, v, NULL), DEC_OK);
	assert_int_equal(pos, 4);
	int id = vgt_layout_field(eh, "id"), cts = vgt_layout_field(eh, "v.compact.timestamp");
	int vsel = vgt_layout_field(eh, "v");
	assert_int_equal(v[id].u, 7);
	assert_int_equal(v[vsel].u, 1);
	assert_int_equal(v[cts].u, 0x5abcdef);
	assert_true(eh->fields[vsel].hidden);
	/* "extended" is 32, past 5 bits; 31 is "gap", which no option has; 30 has no label */
	memset(b, 0, sizeof b);
	b[0] = 31;
	pos = 0;
	assert_int_equal(vgt_layout_decode(eh, b, &pos, sizeof b, v, NULL), DEC_BAD_TAG);
	b[0] = 30;
	pos = 0;
	assert_int_equal(vgt_layout_decode(eh, b, &pos, sizeof b, v, NULL), DEC_BAD_TAG);
	/* Big-endian bit fields fill a byte from its top: a = -2 (110), b = 0x1234 in the
	 * next 13 bits; then a whole byte, then 5 bits and the rest of their byte. */
	const struct event_class *ec = vgt_stream_class_event(sc, 1);
	assert_true(ec->usable);
	const uint8_t pl[] = {0xd2, 0x34, 0x55, 0x13};
	pos = 0;
	assert_int_equal(vgt_layout_decode(&ec->payload, pl, &pos, sizeof pl, v, NULL), DEC_OK);
	assert_int_equal(pos, 4);
	assert_int_equal(v[0].i, -2);
	assert_int_equal(v[1].u, 0x1234);
	assert_int_equal(v[2].u, 0x55);
	assert_int_equal(v[3].u, 0x13);
	release(&p);

	/* The runtime's header (as the test writer declares it), the extended form; cut. */
	struct written img;
	parse_written(&p, &img, &(struct tg_image_opts){.compact = 1});
	eh = &p.md->streams[0]->event_header;
	assert_int_equal(p.md->streams[0]->compact_id_bits, 5); /* recognized */
	assert_int_equal(p.md->streams[0]->compact_ext_id_size, 2);
	uint8_t x[11] = {31, 0x34, 0x12};
	uint64_t ts = 0x0102030405060708ull;
	memcpy(x + 3, &ts, 8);
	pos = 0;
	assert_int_equal(vgt_layout_decode(eh, x, &pos, sizeof x, v, NULL), DEC_OK);
	assert_int_equal(pos, 11);
	assert_int_equal(v[vgt_layout_field(eh, "v")].u, 2);
	assert_int_equal(v[vgt_layout_field(eh, "v.extended.id")].u, 0x1234);
	assert_int_equal(v[vgt_layout_field(eh, "v.extended.timestamp")].u, ts);
	pos = 0;
	assert_int_equal(vgt_layout_decode(eh, x, &pos, 10, v, NULL), DEC_OVERRUN);
	written_done(&p, &img);
}

static void test_sequence_length_must_exist(void **state)
{
	(void)state;
	struct parsed p;
	parse_with_header(
	    &p, "event { name = \"s\"; id = 1; fields := struct { uint8_t d[nope]; }; };\n");
	assert_non_null(p.md);
	assert_false(vgt_stream_class_event(p.md->streams[0], 1)->usable);
	assert_string_equal(first_diag(&p), "m:16:57: event 's': sequence length 'nope' is not an "
	                                    "earlier field: its events are skipped");
	release(&p);
}

static void test_env_blocks_add_up(void **state)
{
	(void)state;
	struct parsed p;
	/* Found by fuzzing: a second env block overflowed the first one's table. */
	parse_with_header(&p, "env { a = 1; b = \"x\"; };\nenv { c = -3; d = e.f; a = 2; };\n");
	assert_non_null(p.md);
	assert_string_equal(vgt_metadata_env(p.md, "a"), "2");
	assert_string_equal(vgt_metadata_env(p.md, "b"), "x");
	assert_string_equal(vgt_metadata_env(p.md, "c"), "-3");
	assert_string_equal(vgt_metadata_env(p.md, "d"), "e.f");
	assert_null(vgt_metadata_env(p.md, "z"));
	release(&p);
}

static void test_packetized_metadata_refused(void **state)
{
	(void)state;
	struct parsed p;
	parse_text(&p, "\x57\x1d\xd1\x75 whatever");
	assert_null(p.md);
	assert_int_equal(p.diag.items[0].kind, VGT_DMG_METADATA);
	release(&p);
}

static void test_model_uri(void **state)
{
	(void)state;
	struct arena a = {0};
	struct vgt_field fields[3] = {{.name = "proc", .type = VGT_REF},
	                              {.name = "mbox", .type = VGT_REF},
	                              {.name = "n", .type = VGT_UINT}};
	struct vgt_event_type t = {.name = "send", .fields = fields, .nfields = 3};
	char problem[256];
	vgt_model_uri_apply(&a, &t,
	                    "vigil:kind=begin;flag=target;sampled;performer=proc;target=mbox;"
	                    "ref.proc=Process;ref.mbox=Mailbox;relation=sending;future=thing",
	                    problem, sizeof problem);
	assert_string_equal(problem, "");
	assert_true(t.vigil);
	assert_int_equal(t.kind, VGT_KIND_BEGIN);
	assert_int_equal(t.flag, VGT_FLAG_TARGET);
	assert_true(t.sampled);
	assert_int_equal(t.performer, 0);
	assert_int_equal(t.target, 1);
	assert_int_equal(t.initiator, -1);
	assert_string_equal(t.relation, "sending");
	assert_string_equal(fields[0].ref_kind, "Process");
	assert_string_equal(fields[1].ref_kind, "Mailbox");

	vgt_model_uri_apply(&a, &t, "vigil:ref.n=Thing;flag=nowhere", problem, sizeof problem);
	assert_string_equal(problem, "no reference field 'n'; unknown flag place 'nowhere'");

	vgt_model_uri_apply(&a, &t, "http://example.org/model", problem, sizeof problem);
	assert_false(t.vigil);
	assert_string_equal(t.relation, "send");
	assert_string_equal(problem, "");
	vgt_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runtime_style_metadata),
	    cmocka_unit_test(test_syntax_error_position),
	    cmocka_unit_test(test_semantic_errors),
	    cmocka_unit_test(test_bad_event_declaration_spares_others),
	    cmocka_unit_test(test_cut_metadata_keeps_complete_declarations),
	    cmocka_unit_test(test_nested_struct_sequence_and_big_endian),
	    cmocka_unit_test(test_bit_fields_enums_variants),
	    cmocka_unit_test(test_sequence_length_must_exist),
	    cmocka_unit_test(test_env_blocks_add_up),
	    cmocka_unit_test(test_packetized_metadata_refused),
	    cmocka_unit_test(test_model_uri),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
