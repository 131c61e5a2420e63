/* `report ...` on the control channel (docs/consistency.md "From outside"): what the
 * environment (VIGIL_REPORT*) and the in-process API (vg_report_*) set, changed in a
 * running process by `vigil report --pid`. The reporting settings are the process's, like
 * probe states: they belong to no monitor and stay when it detaches. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* `report listener N ...`: listener N's filter (VIGIL_LISTENERS); 0 is the main output. */
static int listener_report(char *const *tok, int n, long *count, char *err, size_t errsize)
{
	char *end;
	long i = n >= 3 ? strtol(tok[2], &end, 10) : -1;
	if (n < 3 || *end || i < 0 || i >= vg__listeners) {
		snprintf(err, errsize,
		         "report listener: '%s': no such listener (this process has %d: the main "
		         "output, 0, and %d of VIGIL_LISTENERS)",
		         n >= 3 ? tok[2] : "", vg__listeners, vg__listeners - 1);
		return -1;
	}
	if (i == 0) { /* the main output: as without `listener 0` */
		char *rest[8] = {tok[0]};
		for (int k = 3; k < n && k - 2 < 8; k++)
			rest[k - 2] = tok[k];
		return vg__control_report(rest, n - 2 < 8 ? n - 2 : 8, count, err, errsize);
	}
	const char *what = n >= 4 ? tok[3] : "";
	unsigned mask = 0;
	if (!strcmp(what, "categories") && n == 5 && vg__report_mask_parse(tok[4], &mask) < 0) {
		snprintf(
		    err, errsize,
		    "report listener %ld categories: '%s': expected a list of entity, activity, "
		    "types, objects, execution, synchronization, all, none",
		    i, tok[4]);
		return -1;
	}
	int rc = -2;
	if (!strcmp(what, "categories") && n == 5)
		rc = vg__report_listener_change((int)i, "categories", NULL, mask, count);
	else if ((!strcmp(what, "threads") || !strcmp(what, "sensors")) && (n == 4 || n == 5))
		rc = vg__report_listener_change((int)i, what, n == 5 ? tok[4] : NULL, 0, count);
	else if ((!strcmp(what, "suspend") || !strcmp(what, "resume")) && n == 4)
		rc = vg__report_listener_change((int)i, what, NULL, 0, count);
	if (rc == -1)
		snprintf(err, errsize, "report listener %ld %s: out of memory", i, what);
	else if (rc == -2)
		snprintf(err, errsize,
		         "usage: report listener N categories LIST, report listener N threads "
		         "[GLOBS], report listener N sensors [GLOBS], report listener N suspend, "
		         "report listener N resume (windows are the main output's)");
	return rc < 0 ? -1 : 0;
}

int vg__control_report(char *const *tok, int n, long *count, char *err, size_t errsize)
{
	const char *what = n >= 2 ? tok[1] : "";
	if (!strcmp(what, "listener"))
		return listener_report(tok, n, count, err, errsize);
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
	         "GLOBS, report suspend, report resume, report window on:D,every:P|off, report "
	         "listener N ...");
	return -1;
}
