/* Settings from the environment. A bad setting is reported in one line on stderr and
 * replaced by its default (or turns recording off): the subject always keeps running. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

void vg__warn(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof line, "vigil[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = strlen(line);
	line[len++] = '\n';
	ssize_t unused = write(STDERR_FILENO, line, len); /* one write: lines don't interleave */
	(void)unused;
}

static uint64_t size_setting(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
	const char *v = getenv(name);
	uint64_t x;
	if (!v || !*v)
		return def;
	if (vg__parse_size(v, &x) < 0 || x < lo || x > hi) {
		vg__warn("%s=%s is not a size between %llu and %llu bytes; using %llu", name, v,
		         (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)def);
		return def;
	}
	return x;
}

/* A number of milliseconds from lo to hi (digits only), else one line and def. */
static int ms_setting(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	long long x = 0;
	const char *p = v;
	while (*p >= '0' && *p <= '9' && x <= hi)
		x = x * 10 + (*p++ - '0');
	if (*p || x < lo || x > hi) {
		vg__warn("%s=%s is not a number of milliseconds from %d to %d; using %d", name, v,
		         lo, hi, def);
		return def;
	}
	return (int)x;
}

/* VIGIL_PROBES_FILE and VIGIL_PROBES_PERIOD ("250ms", "2s", or digits: milliseconds;
 * 10 ms to 1 hour, default 1 s). */
static void probes_file_settings(struct vg_config *cfg)
{
	const char *file = getenv("VIGIL_PROBES_FILE");
	cfg->probes_file = file && *file ? strdup(file) : NULL;
	cfg->probes_period_ms = 1000;
	const char *v = getenv("VIGIL_PROBES_PERIOD");
	if (!v || !*v)
		return;
	long ms;
	if (vgw_probe_period_parse(v, &ms) < 0)
		vg__warn("VIGIL_PROBES_PERIOD=%s is not a period from 10ms to 3600s (250ms, 2s); "
		         "using 1s",
		         v);
	else
		cfg->probes_period_ms = (int)ms;
}

/* The port of VIGIL_TO=HOST:PORT, or 0 when it is not a decimal number from 1 to 65535. */
static unsigned to_port(const char *digits)
{
	unsigned port = 0;
	if (!*digits)
		return 0;
	for (const char *p = digits; *p; p++) {
		if (*p < '0' || *p > '9' || port > 65535)
			return 0;
		port = port * 10 + (unsigned)(*p - '0');
	}
	return port <= 65535 ? port : 0;
}

/* Why `glob` (one pattern, '-' not included) is not a pattern fnmatch reads as the user
 * meant, or NULL: glibc takes an unclosed '[' or a trailing '\\' literally, so the
 * pattern would silently match nothing. */
static const char *glob_problem(const char *glob, size_t len)
{
	if (len == 0)
		return "an empty pattern";
	if (len >= 256)
		return "longer than 255 bytes";
	for (size_t i = 0; i < len; i++) {
		if (glob[i] == '\\') {
			if (++i == len)
				return "it ends with a lone '\\'";
		} else if (glob[i] == '[') {
			size_t j = i + 1;
			if (j < len && (glob[j] == '!' || glob[j] == '^'))
				j++;
			if (j < len && glob[j] == ']')
				j++; /* a ']' first is a member */
			while (j < len && glob[j] != ']')
				j++;
			if (j == len)
				return "a '[' is never closed";
			i = j;
		}
	}
	return NULL;
}

/* A comma-separated list of globs ("-glob" excludes): each bad pattern is named in one
 * line and left out, the others kept; NULL when unset or nothing is left. */
static char *glob_list_setting(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return NULL;
	char *kept = malloc(strlen(v) + 1);
	if (!kept)
		return NULL;
	size_t n = 0;
	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ",");
		const char *g = p[0] == '-' ? p + 1 : p;
		size_t glen = p[0] == '-' ? len - 1 : len;
		const char *why = len ? glob_problem(g, glen) : NULL;
		if (why)
			vg__warn("%s: pattern '%.*s' is not a usable glob (%s); left out", name,
			         (int)(len > 200 ? 200 : len), p, why);
		else if (len) {
			if (n)
				kept[n++] = ',';
			memcpy(kept + n, p, len);
			n += len;
		}
		p += len + (p[len] == ',');
	}
	kept[n] = 0;
	if (!n) {
		free(kept);
		return NULL;
	}
	return kept;
}

/* VIGIL_TO: record into a spool (VIGIL_SPOOL, default a private directory in memory)
 * that the sender thread ships to the collector (send.c), instead of VIGIL_OUT. The
 * sender frees acknowledged packets; VIGIL_TO_BUFFER caps what is kept like
 * VIGIL_MAX_SIZE does, except that recording resumes once space is freed. */
static void read_to(struct vg_config *cfg)
{
	const char *to = getenv("VIGIL_TO");
	if (!to || !*to)
		return;
	const char *colon = strrchr(to, ':');
	if (strncmp(to, "unix:", 5) ? !colon || colon == to || !colon[1] : !to[5]) {
		vg__warn("VIGIL_TO=%s: expected HOST:PORT or unix:PATH; not recording", to);
		cfg->out[0] = 0;
		return;
	}
	if (strncmp(to, "unix:", 5) && !to_port(colon + 1)) {
		vg__warn(
		    "VIGIL_TO=%s: the port '%s' is not a number from 1 to 65535; not recording", to,
		    colon + 1);
		cfg->out[0] = 0;
		return;
	}
	/* TLS is spoken by vigil record's relay, never in here (docs/security.md): sending
	 * in clear what was meant to be encrypted would be worse than not sending. */
	const char *ca = getenv("VIGIL_TO_CA");
	if (ca && *ca && strncmp(to, "unix:", 5)) {
		vg__warn("VIGIL_TO_CA is set: the runtime does not speak TLS; use vigil record "
		         "--to %s (its relay does); not recording",
		         to);
		cfg->out[0] = 0;
		return;
	}
	const char *spool = getenv("VIGIL_SPOOL");
	char def[128];
	if (!spool || !*spool) {
		snprintf(def, sizeof def, "/dev/shm/vigil-spool-%u-%d", (unsigned)getuid(),
		         (int)getpid());
		if (access("/dev/shm", W_OK) != 0)
			snprintf(def, sizeof def, "/tmp/vigil-spool-%u-%d", (unsigned)getuid(),
			         (int)getpid());
		/* made by the first image only (process.c): an exec'd image continues in the
		 * spool its process holds, whatever its user and pid say now */
		spool = def;
		cfg->spool_private = 1;
	}
	if (strlen(spool) >= sizeof cfg->out) {
		vg__warn("VIGIL_SPOOL is too long (%zu bytes); not recording", strlen(spool));
		cfg->out[0] = 0;
		return;
	}
	strcpy(cfg->out, spool);
	cfg->to = strdup(to);
	const char *origin = getenv("VIGIL_TO_ORIGIN");
	cfg->to_origin = strdup(origin && *origin ? origin : to);
	const char *token = getenv("VIGIL_TO_TOKEN");
	cfg->to_token = strdup(token ? token : "");
	cfg->to_buffer = size_setting("VIGIL_TO_BUFFER", 64 << 20, 1 << 20, (uint64_t)1 << 40);
	if (!cfg->max_bytes || cfg->max_bytes > cfg->to_buffer)
		cfg->max_bytes = cfg->to_buffer;
	/* Packets small enough that several fit in the buffer: shipped while others fill. */
	size_t quarter = (size_t)(cfg->to_buffer / 4) & ~(size_t)4095;
	if (cfg->packet_size_max > quarter)
		cfg->packet_size_max = quarter > cfg->packet_size ? quarter : cfg->packet_size;
	cfg->to_linger_ms = ms_setting("VIGIL_TO_LINGER", 3000, 0, 600000);
}

void vg__config_read(struct vg_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	const char *out = getenv("VIGIL_OUT");
	if (out && *out) {
		if (strlen(out) >= sizeof cfg->out)
			vg__warn("VIGIL_OUT is too long (%zu bytes); not recording", strlen(out));
		else
			strcpy(cfg->out, out);
	}
	const char *temp = getenv("VIGIL_OUT_TEMPORARY"); /* set by vigil watch, not users */
	cfg->out_temporary = temp && !strcmp(temp, "1");
	cfg->sensors = glob_list_setting("VIGIL_SENSORS");
	cfg->packet_size = size_setting("VIGIL_PACKET_SIZE", 64 << 10, 4 << 10, 64 << 20);
	cfg->packet_size = (cfg->packet_size + 4095) & ~(size_t)4095;
	cfg->packet_size_max = cfg->packet_size > (4 << 20) ? cfg->packet_size : (4 << 20);
	/* Most processes of a build or a script write a few hundred bytes: their stream
	 * starts with one page and doubles from there, unless a size was asked for. */
	const char *layout = getenv("VIGIL_LAYOUT");
	const char *listeners = getenv("VIGIL_LISTENERS"); /* their copies: one image each */
	cfg->shared = layout && !strcmp(layout, "shared") && !(listeners && *listeners);
	if (layout && *layout && !cfg->shared && strcmp(layout, "image"))
		vg__warn("VIGIL_LAYOUT=%s is not 'shared' or 'image'; one directory per image",
		         layout);
	const char *pool = getenv("VIGIL_POOL"); /* off: no pool of stream files (stream_pool.c) */
	cfg->own_streams = pool && !strcmp(pool, "off");
	const char *asked = getenv("VIGIL_PACKET_SIZE");
	cfg->first_packet_size = asked && *asked ? cfg->packet_size : 4096;
	/* 0: no cap; a cap holds at least one page of one packet, or nothing is recorded. */
	const char *max = getenv("VIGIL_MAX_SIZE");
	uint64_t cap = 0;
	if (max && *max && strcmp(max, "0") && (vg__parse_size(max, &cap) < 0 || cap < 4096)) {
		vg__warn("VIGIL_MAX_SIZE=%s is not 0 (no cap) or a size of at least 4K; recording "
		         "without a cap",
		         max);
		cap = 0;
	}
	cfg->max_bytes = cap;
	cfg->max_string = (uint32_t)size_setting("VIGIL_MAX_STRING", 1024, 1, 1 << 20);
	const char *ent = getenv("VIGIL_ENTITY_FLAGS");
	cfg->entity_default = 1;
	if (ent && *ent) {
		if (!strcmp(ent, "off") || !strcmp(ent, "0"))
			cfg->entity_default = 0;
		else if (strcmp(ent, "on") && strcmp(ent, "1"))
			vg__warn("VIGIL_ENTITY_FLAGS=%s: expected on or off; using on", ent);
	}
	const char *verbose = getenv("VIGIL_VERBOSE");
	if (verbose && *verbose) {
		if (!strcmp(verbose, "on") || !strcmp(verbose, "1"))
			cfg->verbose = 1;
		else if (strcmp(verbose, "off") && strcmp(verbose, "0"))
			vg__warn("VIGIL_VERBOSE=%s: expected on or off; using off", verbose);
	}
	cfg->report_mask = VG_CAT_ENTITY | VG_CAT_ACTIVITY;
	const char *report = getenv("VIGIL_REPORT");
	if (report && *report && vg__report_mask_parse(report, &cfg->report_mask) < 0)
		vg__warn("VIGIL_REPORT=%s: expected entity, activity, types, objects, execution, "
		         "synchronization, all or none (comma-separated); "
		         "reporting all",
		         report);
	cfg->report_threads = glob_list_setting("VIGIL_REPORT_THREADS");
	const char *susp = getenv("VIGIL_REPORT_SUSPENDED");
	cfg->report_suspended = susp && *susp && strcmp(susp, "0") != 0;
	const char *cons = getenv("VIGIL_CONSISTENCY");
	cfg->consistency = 1;
	if (cons && *cons) {
		if (!strcmp(cons, "off") || !strcmp(cons, "0"))
			cfg->consistency = 0;
		else if (strcmp(cons, "on") && strcmp(cons, "1"))
			vg__warn("VIGIL_CONSISTENCY=%s: expected on or off; using on", cons);
	}
	read_to(cfg);
	probes_file_settings(cfg);
	const char *control = getenv("VIGIL_CONTROL");
	cfg->control = control && *control ? strdup(control) : NULL;
	cfg->control_wait_s = 10;
	const char *wait = getenv("VIGIL_CONTROL_WAIT");
	if (wait && *wait) {
		char *end;
		errno = 0;
		long w = strtol(wait, &end, 10);
		if (errno || end == wait || *end || w < 0 || w > 3600)
			vg__warn(
			    "VIGIL_CONTROL_WAIT=%s is not a number of seconds (0-3600); using 10",
			    wait);
		else
			cfg->control_wait_s = (int)w;
	}
}

/* "entity,activity", "all", "none": VG_CAT_* bits; -1 if a word is unknown. */
int vg__report_mask_parse(const char *text, unsigned *mask)
{
	unsigned m = 0;
	const char *p = text;
	while (*p) {
		size_t len = strcspn(p, ",");
		if (len == 6 && !strncmp(p, "entity", 6))
			m |= VG_CAT_ENTITY;
		else if (len == 8 && !strncmp(p, "activity", 8))
			m |= VG_CAT_ACTIVITY;
		else if (len == 3 && !strncmp(p, "all", 3))
			m |= VG_CAT_ENTITY | VG_CAT_ACTIVITY | VG_CAT_KINDS;
		else if ((len == 4 && !strncmp(p, "type", 4)) ||
		         (len == 5 && !strncmp(p, "types", 5)))
			m |= VG_CAT_TYPE;
		else if ((len == 6 && !strncmp(p, "object", 6)) ||
		         (len == 7 && !strncmp(p, "objects", 7)))
			m |= VG_CAT_OBJECT;
		else if (len == 9 && !strncmp(p, "execution", 9))
			m |= VG_CAT_EXECUTION;
		else if ((len == 15 && !strncmp(p, "synchronization", 15)) ||
		         (len == 4 && !strncmp(p, "sync", 4)))
			m |= VG_CAT_SYNC;
		else if (!(len == 4 && !strncmp(p, "none", 4)))
			return -1;
		p += len + (p[len] == ',');
	}
	*mask = m;
	return 0;
}

int vg__glob_list_match(const char *globs, const char *name)
{
	int decision = -1;
	const char *p = globs;
	while (p && *p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char pat[256];
		if (len > 0 && len < sizeof pat) {
			memcpy(pat, p, len);
			pat[len] = 0;
			int negative = pat[0] == '-';
			if (fnmatch(negative ? pat + 1 : pat, name, 0) == 0)
				decision = !negative;
		}
		p += len + (comma ? 1 : 0);
	}
	return decision;
}

int vg__glob_list_has_positive(const char *globs)
{
	for (const char *p = globs; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','))
		if (*p != '-' && *p != ',')
			return 1;
	return 0;
}

/* VIGIL_SENSORS: comma-separated globs over sensor names; "-glob" excludes; the last
 * pattern that matches decides. Built-in vg.* sensors are on unless excluded by name;
 * other sensors are on when no positive pattern is given. */
int vg__sensor_pattern_enabled(const char *sensors, const char *name)
{
	if (!sensors)
		return 1;
	int decision = vg__glob_list_match(sensors, name);
	if (decision >= 0)
		return decision;
	return strncmp(name, "vg.", 3) == 0 || !vg__glob_list_has_positive(sensors);
}
