/* The standalone record code generated for C: the exact bytes of docs/encoding.md (written
 * out by hand below), round trips, defaults for fields missing at the end, extra bytes
 * skipped, malformed data refused, and schema evolution between evolve_v1.vgl and
 * evolve_v2.vgl in both directions. Prints each failed check; exits 1 if any. */
#include <stdio.h>
#include <string.h>

#include "allc_sensors.h"
#include "evo1_sensors.h"
#include "evo2_sensors.h"

static int failures;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static bool same_bytes(const uint8_t *a, uint32_t alen, const void *b, uint32_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* A Base with every field set, and its encoding per docs/encoding.md. */
static struct allc_Base sample(void)
{
	struct allc_Base r;
	allc_Base_init(&r);
	r.i8 = -2;
	r.i16 = 0x1234;
	r.i32 = -1;
	r.i64 = 0x0102030405060708;
	r.u8 = 0xAB;
	r.u16 = 0xCDEF;
	r.u32 = 0x89ABCDEF;
	r.u64 = 0xFFFFFFFFFFFFFFFE;
	r.f = 1.0;
	r.yes = true;
	r.name = "abcdefg";                               /* max 5: cut */
	r.blob = (const uint8_t *)"\x01\x02\x03\x04\x05"; /* max 4: cut */
	r.blob_len = 5;
	r.worker = (vg_ref){0x11, 2};
	return r;
}
static const uint8_t sample_bytes[] = {
    77,   0,    0,    0,                                        /* length */
    0xfe,                                                       /* i8 */
    0x34, 0x12,                                                 /* i16 */
    0xff, 0xff, 0xff, 0xff,                                     /* i32 */
    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,             /* i64 */
    0xab,                                                       /* u8 */
    0xef, 0xcd,                                                 /* u16 */
    0xef, 0xcd, 0xab, 0x89,                                     /* u32 */
    0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,             /* u64 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,             /* f = 1.0 */
    0x01,                                                       /* yes */
    'a',  'b',  'c',  'd',  'e',  0,                            /* name */
    4,    0,    0,    0,    1,    2,    3,    4,                /* blob */
    0x11, 0,    0,    0,    0,    0,    0,    0,    2, 0, 0, 0, /* worker */
    0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0, 0, /* queue */
};
/* Offsets (after the length) where each field of Base ends. */
static const uint32_t field_ends[] = {1, 3, 7, 15, 16, 18, 22, 30, 38, 39, 45, 53, 65, 77};

static void check_defaults_from(const struct allc_Base *r, size_t nfields)
{
	struct allc_Base d;
	allc_Base_init(&d);
	struct allc_Base s = sample();
	const struct allc_Base *w[14];
	for (size_t i = 0; i < 14; i++)
		w[i] = i < nfields ? &s : &d;
	CHECK(r->i8 == w[0]->i8);
	CHECK(r->i16 == w[1]->i16);
	CHECK(r->i32 == w[2]->i32);
	CHECK(r->i64 == w[3]->i64);
	CHECK(r->u8 == w[4]->u8);
	CHECK(r->u16 == w[5]->u16);
	CHECK(r->u32 == w[6]->u32);
	CHECK(r->u64 == w[7]->u64);
	CHECK(r->f == w[8]->f);
	CHECK(r->yes == w[9]->yes);
	CHECK(!strcmp(r->name, nfields > 10 ? "abcde" : "dflt"));
	CHECK(nfields > 11 ? same_bytes(r->blob, r->blob_len, "\x01\x02\x03\x04", 4)
	                   : r->blob_len == 0);
	CHECK(r->worker.id == w[12]->worker.id && r->worker.gen == w[12]->worker.gen);
	CHECK(r->queue.id == 0 && r->queue.gen == 0);
}

static void test_defaults(void)
{
	struct allc_Base d;
	allc_Base_init(&d);
	CHECK(d.i8 == -128 && d.i16 == -7 && d.i32 == 0 && d.i64 == -1 && d.u8 == 255);
	CHECK(d.u16 == 0 && d.u32 == 4000000000u && d.u64 == UINT64_MAX && d.f == 0.5);
	CHECK(d.yes && !strcmp(d.name, "dflt") && d.blob_len == 0);
	CHECK(ALLC_MINUS == -7 && !strcmp(ALLC_WORD, "dflt"));
	struct allc_Derived e;
	allc_Derived_init(&e);
	CHECK(e.i16 == -7 && e.tail == 7 && !strcmp(e.conn_peer, "") && e.whole == 0);
}

static void test_exact_bytes(void)
{
	struct allc_Base r = sample();
	uint8_t buf[128];
	memset(buf, 0xEE, sizeof buf);
	CHECK(allc_Base_encode(&r, buf, 80) == sizeof sample_bytes); /* too small: nothing */
	CHECK(buf[0] == 0xEE && buf[79] == 0xEE);
	CHECK(allc_Base_encode(&r, buf, sizeof buf) == sizeof sample_bytes);
	CHECK(!memcmp(buf, sample_bytes, sizeof sample_bytes));
	CHECK(buf[sizeof sample_bytes] == 0xEE);
	CHECK(sizeof sample_bytes <= ALLC_Base_MAX_SIZE);

	struct allc_Base back;
	CHECK(allc_Base_decode(buf, sizeof sample_bytes, &back) == 0);
	check_defaults_from(&back, 14);
}

/* Shorter data: the fields it holds, then defaults; a field cut in the middle: refused. */
static void test_missing_fields(void)
{
	uint8_t buf[sizeof sample_bytes];
	struct allc_Base r;
	for (size_t k = 0; k <= 14; k++) {
		uint32_t len = k ? field_ends[k - 1] : 0;
		memcpy(buf, sample_bytes, sizeof buf);
		memcpy(buf, &len, 4); /* little-endian host */
		CHECK(allc_Base_decode(buf, 4 + len, &r) == 0);
		check_defaults_from(&r, k);
		if (k < 14 && field_ends[k] - len > 1) { /* one byte short of the next field */
			uint32_t cut = field_ends[k] - 1;
			memcpy(buf, &cut, 4);
			CHECK(allc_Base_decode(buf, 4 + cut, &r) == -1);
		}
	}
	/* Bytes whose length runs past the record; a string without its 0 byte. */
	uint32_t len = 45 + 4 + 2;
	memcpy(buf, sample_bytes, sizeof buf);
	memcpy(buf, &len, 4);
	CHECK(allc_Base_decode(buf, 4 + len, &r) == -1);
	len = 42;
	memcpy(buf, &len, 4);
	CHECK(allc_Base_decode(buf, 4 + len, &r) == -1);
	/* The length itself: missing, short, or beyond the data. */
	CHECK(allc_Base_decode(sample_bytes, 3, &r) == -1);
	CHECK(allc_Base_decode(sample_bytes, sizeof sample_bytes - 1, &r) == -1);
	CHECK(allc_Base_decode(NULL, 0, &r) == -1);
}

/* Bytes after the known fields (a newer writer's) are skipped; a Base read as a Derived
 * (which extends it) gets Derived's own fields' defaults. */
static void test_extra_bytes(void)
{
	uint8_t buf[sizeof sample_bytes + 5];
	memcpy(buf, sample_bytes, sizeof sample_bytes);
	memcpy(buf + sizeof sample_bytes, "\x01\x02\x03\x04\x05", 5);
	uint32_t len = 77 + 5;
	memcpy(buf, &len, 4);
	struct allc_Base r;
	CHECK(allc_Base_decode(buf, sizeof buf, &r) == 0);
	check_defaults_from(&r, 14);

	struct allc_Derived d;
	CHECK(allc_Derived_decode(sample_bytes, sizeof sample_bytes, &d) == 0);
	CHECK(d.i8 == -2 && d.u64 == 0xFFFFFFFFFFFFFFFE && !strcmp(d.name, "abcde"));
	CHECK(d.worker.id == 0x11 && d.conn_fd == 0 && d.tail == 7);
}

static void test_derived_round_trip(void)
{
	struct allc_Derived r;
	allc_Derived_init(&r);
	r.i32 = 99;
	r.name = "xy";
	r.queue = (vg_ref){7, 1};
	r.conn_fd = -5;
	r.conn_peer = "123456789"; /* max 8 */
	r.conn_key = (const uint8_t *)"\x00\x00\x01";
	r.conn_key_len = 3;
	r.conn_secure = true;
	r.conn_rtt = -1e-300;
	r.conn_session_id = 4000000000u;
	r.conn_session_user = "userx";
	r.conn_session_account_number = 1ULL << 63;
	r.conn_session_account_owner = "";
	r.conn_backup_id = 1;
	r.conn_backup_user = "bb";
	r.conn_spare = 0xDEADBEEF;
	r.conn_owner = (vg_ref){UINT64_MAX, UINT32_MAX};
	r.whole = 42;
	r.tail = 65535;
	uint8_t buf[ALLC_Derived_MAX_SIZE];
	size_t n = allc_Derived_encode(&r, buf, sizeof buf);
	CHECK(n > 77 && n <= sizeof buf);
	struct allc_Derived b;
	CHECK(allc_Derived_decode(buf, n, &b) == 0);
	CHECK(b.i32 == 99 && !strcmp(b.name, "xy") && b.queue.id == 7 && b.queue.gen == 1);
	CHECK(b.i8 == -128 && b.u64 == UINT64_MAX && b.yes); /* defaults, encoded */
	CHECK(b.conn_fd == -5 && !strcmp(b.conn_peer, "12345678"));
	CHECK(same_bytes(b.conn_key, b.conn_key_len, "\x00\x00\x01", 3));
	CHECK(b.conn_secure && b.conn_rtt == -1e-300 && b.conn_session_id == 4000000000u);
	CHECK(!strcmp(b.conn_session_user, "userx") && b.conn_session_account_number == 1ULL << 63);
	CHECK(!strcmp(b.conn_session_account_owner, "") && b.conn_backup_id == 1);
	CHECK(!strcmp(b.conn_backup_user, "bb") && b.conn_spare == 0xDEADBEEF);
	CHECK(b.conn_owner.id == UINT64_MAX && b.conn_owner.gen == UINT32_MAX);
	CHECK(b.conn_helper.id == 0 && b.whole == 42 && b.tail == 65535);
	/* NULL strings and bytes encode as empty ones. */
	r.conn_peer = NULL;
	r.conn_key = NULL;
	CHECK(allc_Derived_decode(buf, allc_Derived_encode(&r, buf, sizeof buf), &b) == 0);
	CHECK(!strcmp(b.conn_peer, "") && b.conn_key_len == 0);
}

static void test_evolution(void)
{
	uint8_t buf[64];
	/* New writer, old reader: the added fields are skipped. */
	struct evo2_Item n;
	evo2_Item_init(&n);
	n.id = 7;
	n.label = "label";
	n.level = 5;
	n.extra = (const uint8_t *)"\x09";
	n.extra_len = 1;
	n.on = false;
	n.ratio = 2.0;
	size_t len = evo2_Item_encode(&n, buf, sizeof buf);
	CHECK(len == 4 + 4 + 6 + 2 + 5 + 1 + 8);
	struct evo1_Item o;
	CHECK(evo1_Item_decode(buf, len, &o) == 0);
	CHECK(o.id == 7 && !strcmp(o.label, "label"));
	/* Old writer, new reader: the added fields take their defaults. */
	evo1_Item_init(&o);
	o.id = 8;
	o.label = "old";
	len = evo1_Item_encode(&o, buf, sizeof buf);
	CHECK(len == 4 + 4 + 4);
	CHECK(evo2_Item_decode(buf, len, &n) == 0);
	CHECK(n.id == 8 && !strcmp(n.label, "old") && n.level == -3 && n.on && n.ratio == 1.5);
	CHECK(same_bytes(n.extra, n.extra_len, "ab", 2));
}

/* Strings and bytes without a max: never cut, whatever their length. */
static void test_unbounded(void)
{
#ifdef ALLC_Loose_MAX_SIZE
	CHECK(!"a record with an unbounded field has no MAX_SIZE");
#endif
	static char text[70001];
	static uint8_t data[70000], buf[200000];
	memset(text, 't', sizeof text - 1);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 7);
	struct allc_Loose r, b;
	allc_Loose_init(&r);
	CHECK(r.after == 9 && !strcmp(r.text, "") && r.data_len == 0);
	r.text = text;
	r.data = data;
	r.data_len = sizeof data;
	size_t n = allc_Loose_encode(&r, buf, sizeof buf);
	CHECK(n == 4 + sizeof text + 4 + sizeof data + 1);
	CHECK(allc_Loose_decode(buf, n, &b) == 0);
	CHECK(strlen(b.text) == sizeof text - 1 && !memcmp(b.text, text, sizeof text));
	CHECK(same_bytes(b.data, b.data_len, data, sizeof data) && b.after == 9);
}

int main(void)
{
	test_defaults();
	test_exact_bytes();
	test_missing_fields();
	test_extra_bytes();
	test_derived_round_trip();
	test_evolution();
	test_unbounded();
	if (failures)
		fprintf(stderr, "%d checks failed\n", failures);
	return failures ? 1 : 0;
}
