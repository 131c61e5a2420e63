/* `report ...` on the control channel (docs/consistency.md "From outside"): what the
 * environment (VIGIL_REPORT*) and the in-process API (vg_report_*) set, changed in a
 * running process by `vigil report --pid`. The reporting settings are the process's, like
 * probe states: they belong to no monitor and stay when it detaches. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "internal.h"

int vg__control_report(char *const *tok, int n, long *count, char *err, size_t errsize)
{
	const char *what = n >= 2 ? tok[1] : "";
	if (!strcmp(what, "categories") && n == 3) {
		unsigned mask;
		if (vg__report_mask_parse(tok[2], &mask) < 0) {
			snprintf(
			    err, errsize,
			    "report categories: '%s': expected a list of entity, activity, types, "
			    "objects, execution, synchronization, all, none",
			    tok[2]);
			return -1;
		}
		vg_report_categories(mask);
		return 0;
	}
	if (!strcmp(what, "threads") && (n == 2 || n == 3)) {
		/* No globs: every thread is reported again. */
		if (vg_report_threads(n == 3 ? tok[2] : NULL) < 0) {
			snprintf(err, errsize, "report threads: out of memory");
			return -1;
		}
		return 0;
	}
	if (!strcmp(what, "sensors") && n == 4 &&
	    (!strcmp(tok[2], "on") || !strcmp(tok[2], "off"))) {
		long k = vg_report_sensors(tok[3], !strcmp(tok[2], "on"));
		if (k < 0) {
			snprintf(err, errsize, "report sensors: out of memory");
			return -1;
		}
		*count = k;
		return 0;
	}
	if ((!strcmp(what, "suspend") || !strcmp(what, "resume")) && n == 2) {
		if (what[0] == 's')
			vg_report_suspend();
		else
			vg_report_resume();
		return 0;
	}
	if (!strcmp(what, "window") && n == 3) {
		uint64_t on, every;
		char why[200];
		if (vg__report_window_parse(tok[2], &on, &every, why, sizeof why) < 0 ||
		    vg__report_window_set(on, every, why, sizeof why) < 0) {
			snprintf(err, errsize, "report window: '%s': %s", tok[2], why);
			return -1;
		}
		return 0;
	}
	snprintf(err, errsize,
	         "usage: report categories LIST, report threads [GLOBS], report sensors on|off "
	         "GLOBS, report suspend, report resume, report window on:D,every:P|off");
	return -1;
}
