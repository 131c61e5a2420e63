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

static void test_runtime_style_metadata(void **state)
{
	(void)state;
	char *dir = tg_tempdir();
	struct tg_image *img = tg_image_new(
	    dir, "app-1-0",
	    &(struct tg_image_opts){
	        .procname = "app", .pid = 1234, .hostname = "box", .offset_s = 5, .offset = 7});
	char *path, *text;
	assert_true(asprintf(&path, "%s/metadata", tg_image_dir(img)) > 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	text = calloc(1, 1 << 16);
	size_t n = fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	struct parsed p;
	memset(&p, 0, sizeof p);
	p.md = vgt_metadata_parse(text, n, path, &p.diag);
	assert_non_null(p.md);
	assert_int_equal(p.diag.total, 0);
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
	release(&p);
	free(text);
	free(path);
	tg_image_free(img);
	tg_rmtree(dir);
	free(dir);
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

	parse_text(&p, "typealias enum : uint8_t { A, B } := e;");
	assert_string_equal(first_diag(&p), "m:1:11: enum types are not supported by vigil");
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
	               "trace { byte_order = le; packet.header := struct { u12 x; }; };");
	assert_string_equal(first_diag(&p), "m:1:11: field 'x': integers must be whole bytes");
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
	    cmocka_unit_test(test_sequence_length_must_exist),
	    cmocka_unit_test(test_env_blocks_add_up),
	    cmocka_unit_test(test_packetized_metadata_refused),
	    cmocka_unit_test(test_model_uri),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
