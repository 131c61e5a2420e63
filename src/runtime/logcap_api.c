/* The public log API (include/vigil/log.h): VG_LOG's two calls, the adapter for existing
 * logging libraries, the sink and the program's pass-through default. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "logcap.h"

static const char *const level_text[] = {"emerg",   "alert",  "crit", "error",
                                         "warning", "notice", "info", "debug"};

static void default_sink(int level, const char *file, int line, const char *msg)
{
	char buf[4096];
	const char *lv = level >= 0 && level < 8 ? level_text[level] : "log";
	int n = snprintf(buf, sizeof buf - 1, "%s:%d: %s: %s", file ? file : "?", line, lv, msg);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof buf - 1 ? (size_t)n : sizeof buf - 2;
	buf[len++] = '\n';
	ssize_t unused = write(STDERR_FILENO, buf, len); /* one write: lines don't interleave */
	(void)unused;
}

static _Atomic(vg_log_sink) sink = default_sink;

void vg_log_set_sink(vg_log_sink s)
{
	atomic_store(&sink, s ? s : default_sink);
}

void vg_log_set_pass(int level)
{
	if (!vg__lc.pass_set) /* VIGIL_LOG_PASS wins */
		vg__lc.pass = level < -1 ? -1 : level > VG_LOG_DEBUG ? VG_LOG_DEBUG : level;
}

int vg_log_pass(void)
{
	return vg__lc.pass;
}

int vg_log_hit(vg_log_site *site)
{
	if (VG_LIKELY(vg__lc.on)) {
		uint32_t id = atomic_load_explicit(&site->id, memory_order_relaxed);
		if (VG_UNLIKELY(!id))
			id = vg__lc_site_id(site);
		if (VG_LIKELY(id))
			vg__logcap_hit(id);
		else
			vg__logcap_lost(1);
	}
	return site->level <= vg__lc.pass;
}

static void emit(int level, const char *file, int line, const char *fmt, va_list ap)
{
	char msg[4000];
	vsnprintf(msg, sizeof msg, fmt, ap);
	int saved = vg__lc_guard;
	vg__lc_guard = 1; /* a sink that writes to stderr through stdio is not captured */
	atomic_load (&sink)(level, file, line, msg);
	vg__lc_guard = saved;
}

void vg_log_emit(const vg_log_site *site, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(site->level, site->file, site->line, fmt, ap);
	va_end(ap);
}

int vg_logv(int level, const char *file, int line, const char *fmt, va_list ap)
{
	if (!fmt)
		return 0;
	if (vg__lc.on && !vg__lc_guard) {
		uintptr_t a = file ? (uintptr_t)file : 1;
		uint32_t id = vg__lc_key_id(a, (uintptr_t)fmt, (uint32_t)line << 1 | LC_KEY_ADAPTER,
		                            fmt, file, line);
		if (id)
			vg__logcap_hit(id);
		else
			vg__logcap_lost(1);
	}
	if (level > vg__lc.pass)
		return 0;
	emit(level, file, line, fmt, ap);
	return 1;
}

int vg_log(int level, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vg_logv(level, file, line, fmt, ap);
	va_end(ap);
	return rc;
}
