/* The TSDL header vocabulary of vigil's traces (docs/trace-format.md): what every image's
 * metadata declares before its events, and the packet layout that follows from it. Two
 * writers use it, libvigil (src/runtime/metadata.c) and vigild for records subjects
 * (src/collector/records.c), both with the compact event header; the readers (src/trace,
 * vigild's repair, `vigil send`) check packets against the same magic and header size.
 * libc only, header only. */
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

/* The packet context of the one stream (the layout VGW_PKT_* gives), left open for the
 * shared layout's fields (VGW_TSDL_OWNER) and closed by VGW_TSDL_STREAM_END. */
#define VGW_TSDL_PACKET_CONTEXT_OPEN                                                               \
	"\tpacket.context := struct {\n"                                                           \
	"\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"                 \
	"\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"                                  \
	"\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"                           \
	"\t\tuint32_t tid;\n\t\tuint32_t thread_gen;\n"
#define VGW_TSDL_STREAM_END "\t};\n};\n\n"

/* libvigil's stream: CTF 1.8's compact event header (docs/trace-format.md "Events"; its
 * bit widths are VG_COMPACT_* of vigil/vigil.h): a 5-bit id and a 27-bit timestamp in one
 * 32-bit word, or, for id 31, a uint16 id and a uint64 timestamp; its packet context left
 * open (VGW_TSDL_OWNER may follow; VGW_TSDL_STREAM_END closes it). */
#define VGW_TSDL_STREAM_COMPACT_OPEN                                                               \
	"typealias integer { size = 64; align = 8; signed = false; map = "                         \
	"clock.monotonic.value; } := uint64_clock_t;\n"                                            \
	"typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"                 \
	"typealias integer { size = 27; align = 1; signed = false; map = "                         \
	"clock.monotonic.value; } := uint27_clock_t;\n\n"                                          \
	"struct vg_ref {\n\tuint64_t id;\n\tuint32_t gen;\n};\n\n"                                 \
	"stream {\n\tid = 0;\n\tevent.header := struct {\n"                                        \
	"\t\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"                           \
	"\t\tvariant <id> {\n\t\t\tstruct {\n\t\t\t\tuint27_clock_t timestamp;\n"                  \
	"\t\t\t} compact;\n\t\t\tstruct {\n\t\t\t\tuint16_t id;\n"                                 \
	"\t\t\t\tuint64_clock_t timestamp;\n\t\t\t} extended;\n\t\t} "                             \
	"v;\n\t};\n" VGW_TSDL_PACKET_CONTEXT_OPEN
#define VGW_TSDL_STREAM_COMPACT VGW_TSDL_STREAM_COMPACT_OPEN VGW_TSDL_STREAM_END

/* The shared layout (docs/trace-format.md): one trace for every image of a recording, whose
 * packet context goes on with the image that wrote the packet (VGW_PKT_PID...). */
#define VGW_TSDL_OWNER                                                                             \
	"\t\tuint32_t pid;\n\t\tuint32_t ppid;\n\t\tuint64_t process_gen;\n"                       \
	"\t\tuint64_t parent_gen;\n\t\tuint32_t image;\n"                                          \
	"\t\tinteger { size = 8; align = 8; signed = false; encoding = UTF8; } procname[16];\n"
#define VGW_PACKET_HEADER_SIZE_SHARED 124
enum {
	VGW_PKT_PID = 80,
	VGW_PKT_PPID = 84,
	VGW_PKT_PROCESS_GEN = 88,
	VGW_PKT_PARENT_GEN = 96,
	VGW_PKT_IMAGE = 104,
	VGW_PKT_PROCNAME = 108, /* 16 bytes, NUL padded */
};

#endif
