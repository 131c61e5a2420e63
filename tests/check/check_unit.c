/* Unit tests of vigil_check's parts: the hash table (random inserts and removals against a
 * plain array), op names, kinds, path labels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_rand.h"
#include "check/internal.h"

static int failures;
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #c);            \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

struct rec {
	uint64_t key;
	uint64_t value;
};

/* A poor hash on purpose: long probe runs exercise the backward-shift removal. */
static uint64_t poor_hash(const void *k)
{
	uint64_t v;
	memcpy(&v, k, 8);
	return v % 7;
}

static uint64_t good_hash(const void *k)
{
	uint64_t v;
	memcpy(&v, k, 8);
	return vgc_mix(v);
}

static void table_random(uint64_t (*hash)(const void *), unsigned keys, unsigned steps)
{
	struct vgc_table t;
	vgc_table_init(&t, sizeof(struct rec), 8, hash);
	uint64_t *ref = calloc(keys, sizeof *ref); /* 0: absent, else value */
	uint64_t s = 88172645463325252ull;
	size_t count = 0;
	for (unsigned i = 0; i < steps; i++) {
		test_xorshift64(&s);
		uint64_t k = s % keys;
		unsigned op = (unsigned)(s >> 32) % 3;
		struct rec *r = vgc_table_find(&t, &k);
		CHECK(!r == !ref[k]);
		if (r)
			CHECK(r->value == ref[k]);
		if (op < 2) {
			bool fresh;
			r = vgc_table_insert(&t, &k, &fresh);
			CHECK(r && fresh == !ref[k]);
			if (fresh)
				count++;
			r->value = ref[k] = i + 1;
		} else if (r) {
			vgc_table_remove(&t, r);
			ref[k] = 0;
			count--;
		}
		CHECK(t.count == count);
	}
	for (uint64_t k = 0; k < keys; k++) {
		struct rec *r = vgc_table_find(&t, &k);
		CHECK(!r == !ref[k]);
	}
	vgc_table_free(&t);
	free(ref);
}

/* Each op by its enum value against the names docs/trace-format.md lists (`op=NAME`), in
 * the order of enum vgc_op: not against the table vgc_op_name reads. */
static void ops(void)
{
	static const struct {
		enum vgc_op op;
		const char *name;
	} want[] = {
	    {VGC_OP_ACTIVITY, "activity"}, {VGC_OP_CREATE, "create"},
	    {VGC_OP_LOAD, "load"},         {VGC_OP_RECLAIM, "reclaim"},
	    {VGC_OP_RENAME, "rename"},     {VGC_OP_ENTER, "enter"},
	    {VGC_OP_LEAVE, "leave"},       {VGC_OP_ACQUIRE, "acquire"},
	    {VGC_OP_RELEASE, "release"},   {VGC_OP_WAIT_BEGIN, "wait_begin"},
	    {VGC_OP_WAIT_END, "wait_end"}, {VGC_OP_SUSPEND, "suspend"},
	    {VGC_OP_RESUME, "resume"},     {VGC_OP_REFERENCE, "reference"},
	    {VGC_OP_MOVE, "move"},
	};
	CHECK(sizeof want / sizeof want[0] == VGC_OP_COUNT);
	CHECK(VGC_OP_COUNT == VGT_OP_COUNT);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		CHECK(!strcmp(vgc_op_name(want[i].op), want[i].name));
	CHECK(!strcmp(vgc_op_name(VGC_OP_COUNT), "?"));
	CHECK(!strcmp(vgc_op_name((enum vgc_op)(VGC_OP_COUNT + 7)), "?"));
}

static void kinds(void)
{
	struct vgc_kinds k;
	CHECK(vgc_kinds_init(&k) == 0);
	CHECK(vgc_kind_intern(&k, "Thread") == VGC_KIND_THREAD);
	int64_t a = vgc_kind_intern(&k, "Mailbox");
	CHECK(a > VGC_KIND_THREAD && vgc_kind_intern(&k, "MAILBOX") == a);
	CHECK(!strcmp(vgc_kind_display(&k, (uint32_t)a), "Mailbox"));
	/* A user kind "process" is not the OS process. */
	int64_t p = vgc_kind_intern(&k, "Process");
	CHECK(p != VGC_KIND_PROCESS && vgc_kind_intern(&k, "process") == p);
	vgc_kinds_free(&k);
}

static void labels(void)
{
	CHECK(!strcmp(vgc_path_label("/tmp/t/app-1-0/stream-1-0"), "app-1-0/stream-1-0"));
	CHECK(!strcmp(vgc_path_label("app-1-0/stream-1-0"), "app-1-0/stream-1-0"));
	CHECK(!strcmp(vgc_path_label("stream-1-0"), "stream-1-0"));
}

int main(void)
{
	table_random(poor_hash, 50, 20000);
	table_random(good_hash, 5000, 200000);
	ops();
	kinds();
	labels();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("check.unit: ok\n");
	return 0;
}
