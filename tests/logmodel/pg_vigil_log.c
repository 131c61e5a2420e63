/* A logging adapter for stock PostgreSQL (docs/logcapture.md's "adapter layer"): loaded
 * with shared_preload_libraries = '/path/pg_vigil_log.so' into a server running under
 * `vigil record`, it forwards every message of elog/ereport to vigil's log API.
 *
 * Why not the syslog interception alone: PostgreSQL writes every message through one
 * call, syslog(level, "[%lu] %s", seq, line), in elog.c's write_syslog, so the preload
 * sees one event type for the whole server. emit_log_hook sees each message's own call
 * site (ereport's __FILE__ and __LINE__) and its untranslated format (message_id): the
 * event identity vigil's models use.
 *
 * The pass-through threshold: a message whose level (mapped to syslog's, as PostgreSQL's
 * write_syslog does) does not pass vigil's (VIGIL_LOG_PASS) is not written by the server
 * at all (output_to_server = false): neither to syslog nor to stderr. The message is
 * modelled whether or not capture writes it. Messages the server formats before this
 * library is loaded (early startup) are not seen.
 *
 * PostgreSQL backends are single-threaded processes: the site table below needs no lock.
 * It is filled once per site (fork copies it, and the runtime's ids with it). */
#include "postgres.h"

#include "fmgr.h"
#include "utils/elog.h"

#include <stdint.h>
#include <syslog.h>

#include "vigil/log.h"

PG_MODULE_MAGIC;

void _PG_init(void);

#define NSITES 8192 /* PostgreSQL 15 has about 11000 ereport/elog sites; few run */

struct site_key {
	const char *file, *fmt;
	int line;
};

static struct site_key keys[NSITES];
static vg_log_site sites[NSITES];
static emit_log_hook_type prev_hook;

/* PostgreSQL's levels as syslog priorities, the mapping of elog.c's write_syslog. */
static int syslog_level(int elevel)
{
	if (elevel <= DEBUG1)
		return LOG_DEBUG;
	if (elevel == LOG || elevel == LOG_SERVER_ONLY || elevel == INFO)
		return LOG_INFO;
	if (elevel <= WARNING_CLIENT_ONLY)
		return LOG_NOTICE;
	if (elevel == ERROR)
		return LOG_WARNING;
	if (elevel == FATAL)
		return LOG_ERR;
	return LOG_CRIT;
}

/* The site of (file, line, fmt): open addressing on the pointers, which are string
 * literals of the server. NULL when the table is full (the message is then only passed
 * through or not, by its level). */
static vg_log_site *site_of(const char *file, int line, const char *fmt, int level)
{
	uintptr_t h =
	    ((uintptr_t)file * 31 + (uintptr_t)fmt) * 0x9E3779B97F4A7C15ull + (unsigned)line;
	h ^= h >> 29;
	for (unsigned probe = 0; probe < NSITES; probe++) {
		size_t i = (h + probe) & (NSITES - 1);
		struct site_key *k = &keys[i];
		if (k->fmt == fmt && k->file == file && k->line == line)
			return &sites[i];
		if (!k->fmt) {
			k->file = file;
			k->fmt = fmt;
			k->line = line;
			sites[i] = (vg_log_site){0, level, file, line, fmt, NULL};
			return &sites[i];
		}
	}
	return NULL;
}

static void vigil_emit(ErrorData *e)
{
	int level = syslog_level(e->elevel);
	const char *fmt = e->message_id ? e->message_id : "<no message id>";
	const char *file = e->filename ? e->filename : "?";
	vg_log_site *s = site_of(file, e->lineno, fmt, level);
	int pass = s ? vg_log_hit(s) : level <= vg_log_pass();
	if (!pass)
		e->output_to_server = false;
	if (prev_hook)
		prev_hook(e);
}

void _PG_init(void)
{
	prev_hook = emit_log_hook;
	emit_log_hook = vigil_emit;
}
