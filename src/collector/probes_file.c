/* vigild --probes-file FILE (docs/protocol.md "Pattern file"): the subjects' pattern
 * file kept by the collector, re-read every --probes-period (default 1 s) and applied
 * as `vigil probes --collector` would apply its lines (relay.c). The file is read as the
 * subject reads VIGIL_PROBES_FILE (wire/probe_file.c): applied when its content
 * changed and reads whole; a missing, empty or half-written file or a bad line is one
 * log line per change of the file, and the patterns in force stay. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "wire/probe_file.h"

static const char *path;
static uint64_t period_ns = 1000000000u, next_ns;
static struct vgw_probe_file seen;

int vgd_probes_file_option(const char *file, const char *period)
{
	long ms = 1000;
	if (period && vgw_probe_period_parse(period, &ms) < 0) {
		fprintf(stderr,
		        "vigild: --probes-period %s: expected a period from 10ms to 3600s (250ms, "
		        "2s)\n",
		        period);
		return -1;
	}
	if (period && !file) {
		fprintf(stderr, "vigild: --probes-period needs --probes-file FILE\n");
		return -1;
	}
	period_ns = (uint64_t)ms * 1000000u;
	path = file;
	return 0;
}

static void look(void)
{
	struct vgw_probe_rule *rules;
	size_t n;
	char err[400];
	switch (vgw_probe_file_look(&seen, path, &rules, &n, err, sizeof err)) {
	case VGW_PROBE_FILE_SAME:
		return;
	case VGW_PROBE_FILE_UNREADABLE:
		vgd_log("--probes-file %s: cannot read it (%s); the %zu pattern%s read before stay "
		        "in force",
		        path, err, seen.in_force, seen.in_force == 1 ? "" : "s");
		return;
	case VGW_PROBE_FILE_BAD:
		vgd_log("--probes-file %s:%s; the %zu pattern%s read before stay in force", path,
		        err, seen.in_force, seen.in_force == 1 ? "" : "s");
		return;
	case VGW_PROBE_FILE_RULES:
		break;
	}
	long switched = vgd_relay_replace(rules, n);
	if (!vgd_opt.quiet)
		vgd_log("--probes-file %s: %zu pattern%s in force, %ld sensor%s switched", path, n,
		        n == 1 ? "" : "s", switched, switched == 1 ? "" : "s");
}

void vgd_probes_file_tick(uint64_t now)
{
	if (!path || now < next_ns)
		return;
	next_ns = now + period_ns;
	look();
}

int vgd_probes_file_wait_ms(uint64_t now, int wait_ms)
{
	if (!path)
		return wait_ms;
	uint64_t left = next_ns > now ? (next_ns - now + 999999) / 1000000 : 0;
	return left < (uint64_t)wait_ms ? (int)left : wait_ms;
}
