/* Fires the sensors generated from tests/lang_c/ops.vgl while reporting is suspended and
 * resumed (docs/consistency.md); check_ops.py holds what the trace must contain. Each
 * Touch's n and each name passed tell the calls apart. */
#define _DEFAULT_SOURCE /* strnlen in the generated header, also under -std=c11 */
#include <stdint.h>
#include <stdio.h>

#include "opsc_sensors.h"

struct obj {
	vg_entity e;
	int payload;
};

static struct obj a, b, c;
static vg_entity lock;

int main(void)
{
	opsc_sensors_register();
	vg_entity_create(&lock, OPSC_KIND_Lock, 1, "lock");

	opsc_Touch(&a.e, 1); /* not created yet: skipped (rule 2) */
	opsc_New(&a.e, "a"); /* its identity: the address */
	opsc_Touch(&a.e, 2);
	opsc_Touch(NULL, 3); /* no entity: may always be referred to */

	opsc_Invoke_begin("outer");
	opsc_Invoke_begin("inner");
	opsc_Invoke_end("inner");
	opsc_Invoke_end("outer");

	opsc_Held_begin(&lock);
	opsc_Held_end(&lock);

	/* Rule 4: an enter while suspended is reported, synthesized, before the first enter
	 * reported inside it. */
	vg_report_suspend();
	opsc_Invoke_begin("hidden");
	vg_report_resume();
	opsc_Invoke_begin("shown");
	opsc_Invoke_end("shown");
	opsc_Invoke_end("hidden");

	/* Rule 3: a reported creation is followed by its reclaim, even while suspended. */
	opsc_New(&b.e, "b");
	vg_report_suspend();
	opsc_Free(&b.e, "b");
	vg_report_resume();

	/* Created while suspended: nothing about it is reported. */
	vg_report_suspend();
	opsc_New(&c.e, "c");
	vg_report_resume();
	opsc_Touch(&c.e, 4);
	opsc_Free(&c.e, "c");

	/* Rule 5: no release of an acquire that was not reported. */
	vg_report_suspend();
	opsc_Held_begin(&lock);
	vg_report_resume();
	opsc_Held_end(&lock);

	/* Category filter: entity events off, activities on; the reclaim of a reported
	 * creation is reported anyway. */
	opsc_New(&b.e, "b2");
	vg_report_categories(VG_CAT_ACTIVITY);
	opsc_Invoke_begin("filtered");
	opsc_Held_begin(&lock);
	opsc_Held_end(&lock);
	opsc_Touch(&b.e, 5);
	opsc_Invoke_end("filtered");
	opsc_Free(&b.e, "b2");
	opsc_Touch(&b.e, 6); /* reclaimed: skipped */
	vg_report_categories(VG_CAT_ACTIVITY | VG_CAT_ENTITY);

	opsc_Free(&a.e, "a");
	vg_entity_reclaim(&lock);
	printf("{\"a\": %lu, \"b\": %lu}\n", (unsigned long)(uintptr_t)&a.e,
	       (unsigned long)(uintptr_t)&b.e);
	return vg_events_discarded() ? 1 : 0;
}
