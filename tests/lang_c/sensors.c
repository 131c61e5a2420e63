/* Fires every sensor generated from tests/lang_c/all.vgl with known values, some of them
 * on disabled entities (which must record nothing). check_trace.py holds what the trace
 * must contain; each call's i32 field is its number, so the checker can tell them apart.
 * Prints the addresses recorded as struct ids, as JSON, on stdout. */
#include <inttypes.h>
#include <stdio.h>

#include "allc_sensors.h"

static vg_entity w, q, w_off, q_off;

/* Base's fields but i32, worker and queue: the same in most calls. */
#define PLAIN(n, worker, queue) 1, 2, n, 4, 5, 6, 7, 8, 0.5, true, "nm", "\x01", 1, worker, queue

int main(void)
{
	allc_Tick(PLAIN(0, &w, &q)); /* before registration: the dummy sensor is off */
	allc_sensors_register();
	vg_entity_create(&w, ALLC_KIND_Worker, 1, "w");
	vg_entity_create(&q, ALLC_KIND_Queue, 2, "q");
	vg_entity_create(&w_off, ALLC_KIND_Worker, 3, "w_off");
	vg_entity_create(&q_off, ALLC_KIND_Queue, 4, "q_off");
	vg_entity_disable(&w_off);
	vg_entity_disable(&q_off);

	/* Every type at its extremes; the string and the bytes longer than their max. */
	allc_Tick(INT8_MIN, INT16_MIN, 1, INT64_MIN, UINT8_MAX, UINT16_MAX, UINT32_MAX, UINT64_MAX,
	          -0.25, true, "abcdefgh", "\x00\x01\x02\x03\x04\x05", 6, &w, &q);
	/* NULL string, bytes and references. */
	allc_Tick(-1, -2, 2, -4, 0, 0, 0, 0, 1e300, false, NULL, NULL, 3, NULL, NULL);
	/* Exactly at max; bytes shorter than max. */
	allc_Tick(0, 0, 3, 0, 0, 0, 0, 0, 0, false, "12345", "\xff\xfe", 2, &w, &q);

	/* Flags on entities: the performer, the target, the initiator. */
	allc_Job_begin(PLAIN(4, &w, &q));
	allc_Job_begin(PLAIN(-1, &w_off, &q));
	allc_Job_end(PLAIN(-1, NULL, &q));
	allc_Job_end(PLAIN(5, &w, &q_off));
	allc_Enqueue(PLAIN(-1, &w, &q_off));
	allc_Enqueue(PLAIN(6, &w_off, &q));
	allc_Pick(PLAIN(-1, &w_off, &q));
	allc_Pick(PLAIN(7, &w, &q_off));

	/* Struct payloads. */
	struct Account acct = {123456789012345ULL, "account-owner-name"};
	struct Session sess = {41, "user-too-long", &acct};
	struct Session spare = {0, "", NULL};
	struct Conn on = {.fd = -3,
	                  .peer = "peer-name-long",
	                  .key = (const uint8_t *)"\x10\x20\x30\x40\x50",
	                  .key_len = 5,
	                  .secure = true,
	                  .rtt = 0.125,
	                  .session = &sess,
	                  .backup = {42, "bk", NULL},
	                  .spare = &spare,
	                  .helper = &w};
	struct Conn off = on;
	struct Conn bare = {.fd = 9, .backup = {43, "b2", NULL}};
	vg_entity_create(&on.owner, ALLC_KIND_Worker, 5, "owner");
	vg_entity_create(&off.owner, ALLC_KIND_Worker, 6, "owner_off");
	vg_entity_create(&bare.owner, ALLC_KIND_Worker, 7, "bare");
	vg_entity_disable(&off.owner);

	allc_Link(PLAIN(-1, &w, &q), &off, &on, 1); /* performer conn.owner is off */
	allc_Link(PLAIN(-1, &w, &q), NULL, &on, 1); /* no conn, no performer */
	allc_Link(PLAIN(8, &w, &q), &on, &on, 2);
	allc_Full(PLAIN(9, &w, &q), &on, &off, 3);
	allc_Full(PLAIN(10, &w, &q), &bare, NULL, 4); /* NULL session, spare and helper */
	allc_Full(PLAIN(11, NULL, NULL), NULL, NULL, 5);
	allc_Ping(); /* no field */

	/* No max: nothing is cut. */
	static char text[3001];
	static uint8_t data[2000];
	for (size_t i = 0; i < sizeof text - 1; i++)
		text[i] = (char)('0' + i % 10);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)i;
	allc_Note(text, data, sizeof data, 1);
	allc_Note(NULL, NULL, 5, 2);

	printf("{\"on\": %" PRIuPTR ", \"off\": %" PRIuPTR ", \"spare\": %" PRIuPTR "}\n",
	       (uintptr_t)&on, (uintptr_t)&off, (uintptr_t)&spare);
	vg_entity_reclaim(&on.owner);
	vg_entity_reclaim(&off.owner);
	vg_entity_reclaim(&bare.owner);
	return vg_events_discarded() ? 1 : 0;
}
