/* VIGIL_PROBES_FILE (docs/control.md "Pattern file"): Kieker's adaptive probes as a file
 * the subject re-reads every VIGIL_PROBES_PERIOD, each line `enable PATTERN` or `disable
 * PATTERN` (read by wire/probe_file.c, as vigild's --probes-file). A file whose content
 * changed and reads whole replaces the patterns in force, as a sequence of `vigil probes
 * enable|disable` would leave them (control_probes.c). Anything else (a missing or empty
 * file, a last line without its newline: still being written, a bad line) keeps the
 * patterns in force and is said in one line, once per change of the file.
 *
 * The first read happens at start, before main; the others on a thread of their own
 * (all signals blocked, unseen by the hooks) that sleeps between reads. libc and
 * pthreads only. */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "internal.h"

static struct vgw_probe_file seen;

/* One look at the file: applied only if its content changed and reads whole; anything
 * else said once per change (wire/probe_file.c). */
static void look(void)
{
	struct vgw_probe_rule *rules;
	size_t n;
	char err[400];
	const char *path = vg__rt.cfg.probes_file;
	switch (vgw_probe_file_look(&seen, path, &rules, &n, err, sizeof err)) {
	case VGW_PROBE_FILE_SAME:
		return;
	case VGW_PROBE_FILE_UNREADABLE:
		vg__warn("VIGIL_PROBES_FILE=%s: cannot read it (%s); the %zu pattern%s read before "
		         "stay in force",
		         path, err, seen.in_force, seen.in_force == 1 ? "" : "s");
		return;
	case VGW_PROBE_FILE_BAD:
		vg__warn("VIGIL_PROBES_FILE=%s:%s; the %zu pattern%s read before stay in force",
		         path, err, seen.in_force, seen.in_force == 1 ? "" : "s");
		return;
	case VGW_PROBE_FILE_RULES:
		break;
	}
	long changed = vg__control_probes_replace(rules, n);
	if (vg__rt.cfg.verbose)
		vg__warn("VIGIL_PROBES_FILE=%s: %zu pattern%s in force, %ld sensor%s switched",
		         path, n, n == 1 ? "" : "s", changed, changed == 1 ? "" : "s");
}

static void *probes_main(void *arg)
{
	(void)arg;
	long ms = vg__rt.cfg.probes_period_ms;
	struct timespec period = {ms / 1000, (ms % 1000) * 1000000L};
	for (;;) {
		struct timespec left = period;
		while (nanosleep(&left, &left) < 0 && errno == EINTR)
			;
		look();
	}
	return NULL;
}

void vg__probes_file_start(void)
{
	if (!vg__rt.cfg.probes_file)
		return;
	if (!vg__rt.recording) {
		vg__warn("VIGIL_PROBES_FILE=%s: not recording (VIGIL_OUT); not read",
		         vg__rt.cfg.probes_file);
		return;
	}
	vg__control_on = 1; /* sensors registered later get the patterns */
	look();
	if (vg__control_start_thread(probes_main) != 0)
		vg__warn("VIGIL_PROBES_FILE=%s: cannot start the thread that re-reads it; read "
		         "once",
		         vg__rt.cfg.probes_file);
}

/* A fork child has no thread of its parent's: it starts its own, with what it knows. */
void vg__probes_file_after_fork(void)
{
	if (!vg__rt.cfg.probes_file || !vg__rt.recording)
		return;
	vg__control_on = 1;
	if (vg__control_start_thread(probes_main) != 0)
		vg__warn("VIGIL_PROBES_FILE=%s: cannot start the thread that re-reads it",
		         vg__rt.cfg.probes_file);
}
