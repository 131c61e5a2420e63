/* vigil log capture: a logging API whose calls are counted in memory (events, transitions
 * between consecutive events of a thread, times between them) and written as behaviour
 * models (docs/logcapture.md, docs/model.md), instead of being written out as text.
 *
 *   VG_LOG(VG_LOG_DEBUG, "lookup %s in %d buckets", key, n);
 *   VG_LOG_NAMED(VG_LOG_INFO, "cache.miss", "miss on page %u", page);
 *
 * Each call site is one event type, identified by __FILE__:__LINE__ and its format: a
 * static descriptor per site, so recording a call needs no hashing. The message itself is
 * formatted and written (to stderr, or to the sink set with vg_log_set_sink) only when its
 * level passes the pass-through threshold (VIGIL_LOG_PASS; default: warning while
 * recording, all otherwise); its arguments
 * are not evaluated otherwise. Capture is on while recording (VIGIL_OUT set) unless
 * VIGIL_LOG=off.
 *
 * Existing logging libraries forward to vg_logv/vg_log (an adapter: the site is
 * identified by the file, line and format pointers they pass).
 */
#ifndef VIGIL_LOG_H
#define VIGIL_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/vigil.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Levels: syslog's priorities, most severe first. */
enum vg_log_level {
	VG_LOG_EMERG,
	VG_LOG_ALERT,
	VG_LOG_CRIT,
	VG_LOG_ERR,
	VG_LOG_WARNING,
	VG_LOG_NOTICE,
	VG_LOG_INFO,
	VG_LOG_DEBUG,
};

/* A call site: one static descriptor per VG_LOG, filled at compile time. `id` is the
 * event's number in this process, given on the site's first recorded call. */
typedef struct vg_log_site {
	_Atomic uint32_t id;
	int level;
	const char *file;
	int line;
	const char *fmt;
	const char *tag; /* readable name of the event, or NULL */
} vg_log_site;

/* Records one call of `site`. Returns non-zero when the message must also be written
 * (its level passes the pass-through threshold). */
VG_API int vg_log_hit(vg_log_site *site);
/* Formats the message of `site` and hands it to the sink (default: one line on stderr). */
VG_API void vg_log_emit(const vg_log_site *site, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The adapter: records a call from (file, line, fmt) and writes the message when `level`
 * passes the threshold. `file` and `fmt` should be stable pointers (string literals):
 * they are the site's key. Returns 1 if the message was written, 0 if not. */
VG_API int vg_logv(int level, const char *file, int line, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
VG_API int vg_log(int level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Where written messages go. `msg` has no trailing newline. NULL restores the default:
 * "file:line: level: msg\n" in one write(2) to stderr. */
typedef void (*vg_log_sink)(int level, const char *file, int line, const char *msg);
VG_API void vg_log_set_sink(vg_log_sink sink);

/* The program's default pass-through threshold (VIGIL_LOG_PASS overrides it): messages
 * more severe than or as severe as `level` are written; -1 writes none. */
VG_API void vg_log_set_pass(int level);
VG_API int vg_log_pass(void);

/* Writes everything this process image captured so far as the next
 * <trace>/logmodel-<image>-<n>.vgm
 * (nothing if it never logged). Returns 0, or -1 (not capturing, or the file could not
 * be written; errno says why). Any thread, any time; not from a signal handler. */
VG_API int vg_log_model_write(void);

/* Is log capture on in this process? */
VG_API int vg_log_capturing(void);

#define VG_LOG_NAMED(level, tag, fmt, ...)                                                         \
	do {                                                                                       \
		static vg_log_site vg__log_site_ = {0, (level), __FILE__, __LINE__, fmt, tag};     \
		if (vg_log_hit(&vg__log_site_))                                                    \
			vg_log_emit(&vg__log_site_, fmt, ##__VA_ARGS__);                           \
	} while (0)

#define VG_LOG(level, fmt, ...) VG_LOG_NAMED(level, NULL, fmt, ##__VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
