/* Log capture internals (docs/logcapture.md): event registry, per-thread tables, model
 * files. Shared by logcap*.c and hooks_log.c only. */
#ifndef VIGIL_RUNTIME_LOGCAP_H
#define VIGIL_RUNTIME_LOGCAP_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/log.h"

/* Event ids are 1 .. LC_MAX_EVENTS-1 (16 bits: a transition's key is prev << 16 | next). */
#define LC_MAX_EVENTS 65536u
#define LC_TRANS_BITS 16 /* transition slots per table: 65536, filled to 3/4 at most */
#define LC_OCTAVES 60    /* sketch buckets / 64, rounded up */

/* ---- settings and state (logcap.c) ---- */
struct lc_state {
	int on;                /* capturing: recording, and VIGIL_LOG is not off */
	int pass;              /* VIGIL_LOG_PASS: levels <= pass are handed on; -1 none */
	int pass_set;          /* VIGIL_LOG_PASS was given (else the program's default) */
	uint32_t tmpl_cap;     /* VIGIL_LOG_TEMPLATES: templates per call site */
	uint32_t timing_every; /* VIGIL_LOG_TIMING: time about one transition in this many */
};
extern struct lc_state vg__lc;

void vg__logcap_init(void);        /* after vg__config_read: settings, tables */
void vg__logcap_thread_exit(void); /* merge the calling thread's tables */
void vg__logcap_process_end(void); /* write the last model file */
void vg__logcap_after_fork(void);  /* the child starts empty */
void vg__logcap_hit(uint32_t id);  /* the hot path: one call of event `id` */
int vg__logcap_write(void);        /* vg_log_model_write */
void vg__logcap_lost(uint64_t n);  /* calls not captured (registry full, too many lines) */

/* A thread-local guard: non-zero while the thread is inside capture or a real logging
 * call made by a hook, so that nothing is captured twice or recursively. */
extern __thread int vg__lc_guard __attribute__((tls_model("initial-exec")));

/* ---- event registry (logcap_sites.c) ---- */
/* The id of a VG_LOG site (registers it on its first call); 0 if the registry is full. */
uint32_t vg__lc_site_id(vg_log_site *site);
/* The id of the event (a, b, c): a return address or file pointer, b a format pointer,
 * c a line or a kind. `describe` fills site and format text on first sight. */
enum lc_kind {
	LC_KEY_RET = 0,      /* a: return address, b: format pointer */
	LC_KEY_ADAPTER = 1u, /* a: file pointer, b: format pointer, c: line << 1 | 1 */
	LC_KEY_TMPL = 2u,    /* a: return address, b: hash of the template text */
};
uint32_t vg__lc_key_id(uintptr_t a, uintptr_t b, uint32_t c, const char *fmt_text, const char *file,
                       int line);
uint32_t vg__lc_event_count(void); /* ids are 1 .. count */
struct lc_event {
	const char *site; /* "path/file.c:LINE" or "/abs/module+0xHEX" */
	const char *fmt;
	const char *tag; /* NULL if none */
};
const struct lc_event *vg__lc_event(uint32_t id);
/* What a call site's key says about its calls: the event (0: see `templated`), whether
 * its format leaves the statement unknown (then each message's template is the event),
 * and the level word of its format (-1: none). */
struct lc_key {
	uint32_t id;
	int8_t level;
	uint8_t templated;
};
struct lc_key vg__lc_key(uintptr_t a, uintptr_t b, uint32_t c, const char *fmt_text,
                         const char *file, int line);
/* The event of message template `tmpl` at call site `site` (a return address), registered
 * on first sight, and the template's level word (-1: none); past the site's cap, the
 * site's overflow event. Id 0: registry full. */
struct lc_key vg__lc_tmpl_key(uintptr_t site, const char *tmpl, size_t len);
void vg__lc_sites_lock(void); /* fork: prepare */
void vg__lc_sites_unlock(void);
void vg__lc_sites_after_fork(void);

/* ---- templates and severities (logcap_tmpl.c) ---- */
#define LC_TMPL_SCAN 1024 /* bytes of a message looked at */
#define LC_TMPL_MAX 240   /* bytes of a template, "..." appended when cut */
/* The template of msg[0..n) into out (cap bytes, NUL-terminated); its length. */
size_t vg__lc_template(const char *msg, size_t n, char *out, size_t cap);
/* The syslog level (0-7) of the first level word of msg ("LOG:", "[warn]"), or -1. */
int vg__lc_level_word(const char *msg, size_t n);
int vg__lc_fmt_templated(const char *fmt); /* the format does not identify the statement */
/* vsnprintf(out, cap, fmt, ap) for formats of plain conversions (%s %c %d %i %u %x with
 * l, ll, z; %%): the length written (cut at cap - 1), or -1 for anything else (flags,
 * widths, %m, ...), which vsnprintf must do. ap is not consumed. */
int vg__lc_format(char *out, size_t cap, const char *fmt, va_list ap);
/* Capture of one message whose event is its template, at call site `ret`; returns the
 * level word of the message's template (-1: none). */
int vg__lc_capture_text(void *ret, const char *msg, size_t n);
/* Capture of the lines written to fd 2 (or a log file) by write(2); returns whether the
 * write is handed on (its most severe line passes the threshold, or it has no level). */
int vg__lc_capture_lines(void *ret, const char *buf, size_t n);

/* Length of the well-formed UTF-8 sequence at s (n bytes readable, a NUL stops it), or 0:
 * no overlong forms, no surrogates, nothing past U+10FFFF (what JSON readers accept). */
static inline size_t vg__lc_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k = c >= 0xc2 && c <= 0xdf   ? 2
	           : c >= 0xe0 && c <= 0xef ? 3
	           : c >= 0xf0 && c <= 0xf4 ? 4
	                                    : 0;
	if (!k || k > n)
		return 0;
	unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return k;
}

/* ---- log files (logcap_files.c) ---- */
extern int vg__lc_files_on;    /* VIGIL_LOG_FILES names globs */
void vg__lc_files_init(void);  /* reads VIGIL_LOG_FILES */
int vg__lc_is_log_fd(int fd);  /* fd is open on a file the globs match */
void vg__lc_fd_forget(int fd); /* fd was closed or replaced */

/* ---- tables (logcap_table.c) ---- */
struct lc_trans {
	uint32_t key;            /* prev << 16 | next; 0: free slot */
	_Atomic uint32_t sketch; /* pool offset of the octave table, 0: no times yet */
	_Atomic uint64_t count;  /* transitions */
	_Atomic uint64_t sum_ns; /* sum of the timed transitions (those in the buckets) */
	_Atomic uint64_t timed;  /* timed transitions */
};

struct lc_table {
	uint8_t *map;
	size_t map_len;
	_Atomic uint64_t *counts; /* per event id */
	struct lc_trans *trans;   /* open addressing, LC_TRANS_BITS */
	uint32_t *used;           /* slots in use, in insertion order */
	_Atomic uint32_t nused;
	uint8_t *pool; /* sketch octave tables and bucket chunks */
	size_t pool_len;
	_Atomic size_t pool_used;
	_Atomic uint64_t lost_trans;  /* transitions not counted: table full */
	_Atomic uint64_t lost_times;  /* times not kept: pool full */
	_Atomic uint64_t lost_events; /* calls not counted (registry full, nesting) */
};

int vg__lc_table_init(struct lc_table *t, size_t pool_len);
void vg__lc_table_free(struct lc_table *t);
void vg__lc_table_clear(struct lc_table *t);
struct lc_trans *vg__lc_trans_get(struct lc_table *t, uint32_t key); /* NULL: full */
/* The 64 bucket counts of octave o (buckets o*64 ..) of a transition, or NULL. */
const _Atomic uint64_t *vg__lc_octave(const struct lc_table *t, const struct lc_trans *e,
                                      uint32_t o);
void vg__lc_time_add(struct lc_table *t, struct lc_trans *e, uint32_t bucket, uint64_t n);
/* dst += src, reading src with relaxed atomic loads (its owner may be writing). */
void vg__lc_table_add(struct lc_table *dst, const struct lc_table *src);

/* Single-writer increment: the owner thread alone writes, others may read. */
static inline void vg__lc_bump(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
	                      memory_order_relaxed);
}

/* ---- model files (logcap_write.c) ---- */
/* Writes `t` (everything counted so far) as model file number n of this image. */
int vg__lc_write_model(const struct lc_table *t, unsigned n);

#endif
