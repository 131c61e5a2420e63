/* The TSDL header vocabulary of vigil's traces (docs/trace-format.md): what every image's
 * metadata declares before its events, and the packet layout that follows from it. Two
 * writers use it, libvigil (src/runtime/metadata.c) and vigild for records subjects
 * (src/collector/records.c); the readers (src/trace, vigild's repair, `vigil send`) check
 * packets against the same magic and header size. libc only, header only. */
#ifndef VIGIL_WIRE_TSDL_HEADER_H
#define VIGIL_WIRE_TSDL_HEADER_H

#include <inttypes.h>

#define VGW_CTF_MAGIC 0xC1FC1FC1u
/* A packet's header (24 bytes: magic, uuid, stream_id) and context (56 bytes). */
#define VGW_PACKET_HEADER_SIZE 80

/* Byte offsets of the packet header's and context's fields, little-endian. */
enum {
	VGW_PKT_MAGIC = 0,
	VGW_PKT_UUID = 4,
	VGW_PKT_STREAM_ID = 20,
	VGW_PKT_TIMESTAMP_BEGIN = 24,
	VGW_PKT_TIMESTAMP_END = 32,
	VGW_PKT_CONTENT_SIZE = 40, /* bits */
	VGW_PKT_PACKET_SIZE = 48,  /* bits */
	VGW_PKT_SEQ_NUM = 56,
	VGW_PKT_EVENTS_DISCARDED = 64,
	VGW_PKT_TID = 72,
	VGW_PKT_THREAD_GEN = 76,
};

/* The integer and floating-point type aliases. */
#define VGW_TSDL_TYPES                                                                             \
	"/* CTF 1.8 */\n\n"                                                                        \
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"                 \
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"               \
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"               \
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"               \
	"typealias integer { size = 8; align = 8; signed = true; } := int8_t;\n"                   \
	"typealias integer { size = 16; align = 8; signed = true; } := int16_t;\n"                 \
	"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"                 \
	"typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"                 \
	"typealias floating_point { exp_dig = 11; mant_dig = 53; align = 8; } := double;\n\n"

/* The trace block; printf format taking the image's uuid as text (%s). */
#define VGW_TSDL_TRACE_FMT                                                                         \
	"trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"              \
	"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"                \
	"\t\tuint32_t stream_id;\n\t};\n};\n\n"

/* The clock block; printf format taking its uuid (%s), description (%s), offset_s and
 * offset (int64_t). */
#define VGW_TSDL_CLOCK_FMT                                                                         \
	"clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n"                                     \
	"\tdescription = \"%s\";\n\tfreq = 1000000000;\n"                                          \
	"\tprecision = 1;\n\toffset_s = %" PRId64 ";\n\toffset = %" PRId64                         \
	";\n\tabsolute = true;\n};\n\n"

/* The clock-mapped integers, the entity reference and the one stream: its event header and
 * packet context (the layout VGW_PKT_* gives). */
#define VGW_TSDL_STREAM                                                                            \
	"typealias integer { size = 64; align = 8; signed = false; map = "                         \
	"clock.monotonic.value; } := uint64_clock_t;\n"                                            \
	"typealias integer { size = 32; align = 8; signed = false; map = "                         \
	"clock.monotonic.value; } := uint32_clock_t;\n\n"                                          \
	"struct vg_ref {\n\tuint64_t id;\n\tuint32_t gen;\n};\n\n"                                 \
	"stream {\n\tid = 0;\n\tevent.header := struct {\n\t\tuint16_t id;\n"                      \
	"\t\tuint32_clock_t timestamp;\n\t};\n\tpacket.context := struct {\n"                      \
	"\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"                 \
	"\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"                                  \
	"\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"                           \
	"\t\tuint32_t tid;\n\t\tuint32_t thread_gen;\n\t};\n};\n\n"

#endif
