/* libvigil internals shared by the runtime's files. Not installed. */
#ifndef VIGIL_RUNTIME_INTERNAL_H
#define VIGIL_RUNTIME_INTERNAL_H

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "vigil/vigil.h"
#include "wire/tsdl_header.h" /* VGW_CTF_MAGIC, VGW_PACKET_HEADER_SIZE */

#define VG_MAX_TYPES 65535

/* Settings read from the environment once, at start. */
struct vg_config {
	char out[PATH_MAX - 128]; /* VIGIL_OUT: root of the trace; empty = not recording */
	char *sensors;            /* VIGIL_SENSORS: comma-separated globs, "-glob" excludes */
	size_t packet_size;       /* VIGIL_PACKET_SIZE: first packet of a stream, bytes */
	size_t packet_size_max;   /* packets double up to this size for busy threads */
	size_t first_packet_size; /* a stream's first packet: small, as most are short */
	int shared;               /* VIGIL_LAYOUT=shared (never with VIGIL_TO) */
	int own_streams;          /* VIGIL_POOL=off: a stream file per thread even when shared */
	uint64_t max_bytes;       /* VIGIL_MAX_SIZE: cap on the bytes of this process image */
	uint32_t max_string;      /* VIGIL_MAX_STRING: longest string recorded, bytes */
	int entity_default;       /* VIGIL_ENTITY_FLAGS: initial entity flag (1 = on) */
	int verbose;        /* VIGIL_VERBOSE: also notes what is no problem (a monitor detaching) */
	char *control;      /* VIGIL_CONTROL: the monitor's socket; NULL = no monitor */
	int control_wait_s; /* VIGIL_CONTROL_WAIT: seconds the handshake waits for go */
	unsigned report_mask; /* VIGIL_REPORT: VG_CAT_* reported */
	char *report_threads; /* VIGIL_REPORT_THREADS: thread name globs; NULL = all */
	int report_suspended; /* VIGIL_REPORT_SUSPENDED: start suspended */
	int consistency;      /* VIGIL_CONSISTENCY: track and keep the rules (default 1) */
	/* VIGIL_TO (docs/protocol.md "Subjects"): the collector; `out` is then the spool. */
	char *to;             /* HOST:PORT or unix:PATH; NULL = not sending */
	char *to_token;       /* VIGIL_TO_TOKEN */
	char *to_origin;      /* VIGIL_TO_ORIGIN: the collector a relay carries VIGIL_TO to */
	uint64_t to_buffer;   /* VIGIL_TO_BUFFER: unacknowledged bytes kept, then drops */
	int to_linger_ms;     /* VIGIL_TO_LINGER: how long exit waits for acknowledgements */
	int spool_private;    /* the spool is the default private one: removed at exit */
	int out_temporary;    /* VIGIL_OUT_TEMPORARY: a monitor's working copy, removed after */
	char *probes_file;    /* VIGIL_PROBES_FILE: the pattern file re-read; NULL = none */
	int probes_period_ms; /* VIGIL_PROBES_PERIOD: how often it is looked at */
};

/* State of this process image. */
struct vg_runtime {
	struct vg_config cfg;
	int recording;
	char dir[PATH_MAX]; /* this image's trace directory */
	/* VIGIL_LAYOUT=shared: the processes of a recording share one trace directory
	 * (`shared`) and its metadata; each packet says which image wrote it. */
	int shared;
	char label[128];      /* <procname>-<pid>-<process_gen>-<image>: names its files */
	size_t packet_header; /* VGW_PACKET_HEADER_SIZE, or _SHARED */
	uint8_t uuid[16];
	char uuid_text[37];
	pid_t pid, ppid;
	uint64_t process_gen, parent_gen;
	uint32_t image;
	char procname[64];
	char hostname[256];
	int64_t realtime_offset_ns; /* wall clock minus CLOCK_MONOTONIC */
	char clock_uuid[37];
	_Atomic uint64_t bytes_used;
	_Atomic uint64_t discarded;
	/* Of those, lost by threads that have no stream to count them in (their first
	 * packet could not be allocated): the exiting thread's stream takes them. */
	_Atomic uint64_t discarded_unstreamed;
	pthread_mutex_t lock; /* registry, metadata, entity table */
};
extern struct vg_runtime vg__rt;

/* config.c */
void vg__config_read(struct vg_config *cfg);
int vg__sensor_pattern_enabled(const char *sensors, const char *name);
int vg__report_mask_parse(const char *text, unsigned *mask);
/* Comma-separated globs, "-glob" excludes, the last match decides: 1, 0, or -1 when
 * nothing matches. */
int vg__glob_list_match(const char *globs, const char *name);
int vg__glob_list_has_positive(const char *globs); /* a glob without "-" */
void vg__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* wire/clock.c: the clock and its hand-off (VIGIL_CLOCK), shared with the vigil command */
#include "wire/clock.h"

/* registry.c */
void vg__registry_init(void);
void vg__registry_reset_after_fork(void);
size_t vg__registry_count(void);
/* vg_sensor_register for the runtime's own callers during init (usdt.c): no
 * vg__ensure_init, which would wait for the init running it. */
vg_sensor *vg__sensor_register_inited(const vg_type_desc *desc);
const char *vg__registry_text(size_t *len);
const vg_type_desc *vg__sensor_desc(const vg_sensor *s);
vg_sensor *vg__builtin(int which);
enum {
	VG_B_PROCESS_BEGIN,
	VG_B_PROCESS_EXEC,
	VG_B_PROCESS_END,
	VG_B_THREAD_BEGIN,
	VG_B_THREAD_NAME,
	VG_B_THREAD_END,
	VG_B_ENTITY_CREATE,
	VG_B_ENTITY_NAME,
	VG_B_ENTITY_RECLAIM,
	VG_B_ENTITY_LOAD,
	VG_B_REPORT_SYNTH,
	VG_B_NET_INPUT, /* docs/net.md */
	VG_B_NET_CONN,
	VG_B_NET_SEND,
	VG_B_NET_RECV,
	VG_B_NET_CLOSE,
	VG_B_NET_UNFOLLOWED,
	VG_B_NET_PARTIAL,
	VG_B_PROCESS_NAME, /* what the process calls itself now (title.c, hooks.c) */
	VG_B_COUNT
};

/* What the control channel (control_rules.c) keeps per sensor, under vg__rt.lock. */
struct vg_sensor_ctl {
	int32_t raised; /* net delta the monitor's rules added to `enabled` */
	unsigned nent;  /* entity fields of the schema */
	/* Trigger delta per entity field: allocated zeroed on the first trigger rule, then
	 * published once and never freed, so vg_sensor_fired reads it without a lock. */
	_Atomic(_Atomic int32_t *) trig;
	/* control_probes.c: the probe state `vigil probes` gave it and the configured state
	 * it replaces (`enabled` carries probe - probe_base); set on first use. */
	int8_t probe_set, probe, probe_base;
};
struct vg_sensor_ctl *vg__sensor_ctl(vg_sensor *s); /* NULL for the dead sensor */
vg_sensor *vg__registry_at(size_t i);               /* caller holds vg__rt.lock */

/* metadata.c */
int vg__metadata_write_all(void); /* header + every registered type */
int vg__metadata_append_type(const char *text, size_t len);
int vg__metadata_type_text(const vg_type_desc *d, uint16_t id, char **out, size_t *len);
void vg__metadata_close(void);
/* The header (types, trace, env, clock, stream): malloc'd text, NULL without memory. */
char *vg__metadata_header(size_t *len);

/* metadata_shared.c: one metadata for every image of a VIGIL_LAYOUT=shared recording,
 * event ids shared by identical declarations (docs/trace-format.md "Shared layout"). */
int vg__shared_start(void); /* opens or creates it; takes its uuid */
/* *id: in, the id the registry would give it alone (kept when still free); out, the id
 * every image of the recording gives this declaration. */
int vg__shared_declare(const vg_type_desc *d, uint16_t *id);
void vg__registry_redeclare(void); /* every registered type gets its shared id */

/* stream.c */
void vg__stream_thread_start(void);      /* open the calling thread's stream now */
void vg__stream_thread_exit(void);       /* record thread end, close the stream */
void vg__stream_thread_end_event(void);  /* record thread end only (process exit) */
void vg__stream_forget_after_fork(void); /* the child must not touch the parent's files */
uint32_t vg__thread_tid(void);
vg_entity *vg__thread_entity(void);
void vg__count_discarded(uint64_t n);
/* The calling thread's stream counts the losses of threads that had none; at exit. */
void vg__stream_adopt_unstreamed_loss(void);

/* entity.c */
uint32_t vg__generation_next(const char *kind, uint64_t raw_id);
/* Gives `e` its time-scoped identity and flag, and makes it live for a monitor. */
void vg__entity_identify(vg_entity *e, const char *kind, uint64_t raw_id, const char *name);
void vg__entity_table_reset(void);

/* control.c: the monitor's connection (docs/control.md) */
void vg__control_start(void);      /* end of init: connect, hello, handshake, thread */
void vg__control_after_fork(void); /* fork child: drop the parent's link, connect anew */
/* A connection's bytes read but not yet consumed; `overlong`: dropping the rest of a
 * too-long line. One per connection (each attached monitor has its own). */
struct vg__ctl_reader {
	char buf[2048]; /* two lines */
	size_t len;
	int overlong;
};
/* The protocol, for control_listen.c: answers every complete line fd has sent (one read),
 * as monitor `owner` (its rules are its own); -1 when the connection is gone. */
int vg__control_serve_available(int owner, int fd, struct vg__ctl_reader *in);
/* One command line (no newline) from another transport (the collector's CONTROL frames,
 * docs/protocol.md): its answer, with newline, in ans (MAX_LINE + 2 bytes hold any). */
void vg__control_command(const char *line, char *ans, size_t anssize);
int vg__control_send_hello(int fd);
/* The control thread: all signals blocked, detached, unseen by the hooks (like the
 * worker); 0 or an errno. */
int vg__control_start_thread(void *(*fn)(void *));
int vg__control_high_fd(int fd); /* fd moved above 512, close-on-exec */
/* control_listen.c: VIGIL_CONTROL=listen, monitors attach later (vigil watch --pid). */
int vg__control_listening(void);
int vg__control_monitors_attached(void); /* 0 unless listening */
void vg__control_listen_start(void);
void vg__control_listen_after_fork(void);

/* control_rules.c: the monitor's rules and the live-entity table. The *_locked hooks
 * are called with vg__rt.lock held; the others take it. */
extern int vg__control_on; /* VIGIL_CONTROL is set and recording: keep the table */
void vg__control_sensor_registered_locked(vg_sensor *s, const vg_type_desc *d);
void vg__control_entity_live_locked(vg_entity *e, const char *name);
void vg__control_entity_renamed_locked(vg_entity *e, const char *name);
void vg__control_entity_dead_locked(vg_entity *e);
/* `owner`: which monitor's plan the rule belongs to (0: the one VIGIL_CONTROL=PATH
 * monitor or the collector; 1.. the monitors attached in listen mode). Rules are keyed
 * by owner, so each monitor's plan is its own and leaves with it. */
#define VG_CONTROL_OWNERS 9 /* owner 0 and up to 8 attached monitors */
int vg__control_sensor_rule(int owner, int32_t delta, const char *glob, long *count, char *err,
                            size_t errsize);
int vg__control_entities_rule(int owner, int32_t delta, const char *kind, const char *name,
                              long *count, char *err, size_t errsize);
int vg__control_entity_one(int owner, int32_t delta, const char *kind, uint64_t id, uint32_t gen,
                           char *err, size_t errsize);
int vg__control_trigger_rule(int owner, int32_t delta, const char *sensor, const char *field,
                             long *count, char *err, size_t errsize);
/* control_sample.c: `sample <delta> <glob> <origin> <period>` (docs/control.md). */
int vg__control_sample_rule(int owner, int32_t delta, const char *glob, uint64_t origin,
                            uint64_t period, long *count, char *err, size_t errsize);
void vg__control_sample_registered_locked(vg_sensor *s, const vg_type_desc *d);
void vg__control_sample_undo_locked(void);
void vg__control_sample_undo_owner_locked(int owner);
/* control_probes.c: `list`, `probe`, `pattern` (docs/control.md "Probes"). The probe
 * share is not the monitor's: undo leaves it, only `pattern reset` clears it. */
int vg__control_list(uint64_t from, char *ans, size_t anssize, size_t maxline);
int vg__control_probe(uint64_t id, int on, long *count, char *err, size_t errsize);
int vg__control_pattern(const char *verb, const char *text, long *count, char *err, size_t errsize);
void vg__control_probes_registered_locked(vg_sensor *s); /* the remembered patterns */
int32_t vg__control_probe_share_locked(vg_sensor *s);    /* probe - configured, or 0 */
/* report_window.c: timer-driven windows (VIGIL_REPORT_WINDOW, `report window`). */
uint64_t vg__report_window_resolution(void); /* ns */
int vg__report_window_parse(const char *text, uint64_t *on, uint64_t *every, char *err,
                            size_t errsize); /* "off": both 0 */
int vg__report_window_set(uint64_t on, uint64_t every, char *err, size_t errsize);
void vg__report_window_init(void);       /* VIGIL_REPORT_WINDOW, once recording */
void vg__report_window_after_fork(void); /* the child times the same windows */
/* control_report.c: `report categories|threads|sensors|suspend|resume ...`; tok[0] is
 * "report". 0, or -1 with the reason in err. */
int vg__control_report(char *const *tok, int n, long *count, char *err, size_t errsize);
/* A probe rule (struct vgw_probe_rule): `pattern enable|disable PATTERN`, or a line of
 * the pattern file. */
#include "wire/probe_file.h"
/* The pattern file's rules replace the patterns in force (ownership of their compiled
 * patterns passes here); each registered sensor goes straight to the state its last
 * matching rule gives, or back to its configured state. Returns the sensors switched. */
long vg__control_probes_replace(struct vgw_probe_rule *rules, size_t n);
/* probes_file.c: VIGIL_PROBES_FILE (docs/control.md "Pattern file"). */
void vg__probes_file_start(void);
void vg__probes_file_after_fork(void);
/* Lowers every counter the monitor raised (sensors; live entities' flags back to the
 * configured default) and forgets its rules; built-in sensors are then switched off
 * (`builtins_off`, the monitor is gone) or set back as configured. `settle`: other
 * threads may be recording, give their triggers in flight a moment (1 ms). */
void vg__control_undo(int builtins_off, int settle);
/* Lowers what one monitor's plan raised and forgets its rules, leaving the others' (a
 * monitor that leaves while others stay attached). Flags its triggers raised stay until
 * the last monitor leaves (they are not attributed: docs/control.md). */
void vg__control_undo_owner(int owner);

/* report.c: partial reporting (docs/consistency.md) */
#define VG_MUTE_SUSPENDED 1u /* vg_report_thread_suspend */
#define VG_MUTE_FILTERED 2u  /* the thread's name is not reported (VIGIL_REPORT_THREADS) */
void vg__report_init(void);  /* after the configuration is read */
void vg__report_thread_named(const char *name); /* the calling thread's name, now */
void vg__report_thread_exit(void);
void vg__report_after_fork(void);                       /* only the forking thread is left */
void vg__report_sensor_registered_locked(vg_sensor *s); /* remembered vg_report_sensors */
/* Several listeners (listen.c, docs/consistency.md "Several listeners"): listener 0 is
 * the main output, 1.. the directories of VIGIL_LISTENERS. A decision is then a mask of
 * listeners (bit i: listener i); with one listener it is 0 or 1, as before. */
#define VG_LISTENERS_MAX 8
#define VG_FAN_PENDING 0x80000000u /* vg__tls.fan: a decision is pending for the next commit */
unsigned vg__listen_wanted(const vg_sensor *s); /* report.c: the listeners' filters */
/* The filters' decision without the flag checks: a mask. */
static inline unsigned vg__filter_mask(const vg_sensor *s)
{
	if (!vg__reporting_off(s))
		return 1;
	return VG_UNLIKELY(vg__listening) ? vg__listen_wanted(s) : 0;
}
/* Would the filters report an event of `s` now? `holder`: the entity whose flag gates
 * it (placement), NULL when the flag is the sensor's. A mask of listeners. */
static inline unsigned vg__wanted(const vg_sensor *s, const vg_entity *holder)
{
	if (!vg_on(s))
		return 0;
	if (s->placement != VG_FLAG_SENSOR && !(holder && vg_entity_up(s, holder)))
		return 0;
	return vg__filter_mask(s);
}
static inline uint32_t vg__rep_bits(uint32_t flags)
{
	return flags | (vg__rep_epoch << VG_REP_EPOCH_SHIFT);
}
/* rep of `e` in this image's epoch (0 when it belongs to another image). */
static inline uint32_t vg__rep_now(const vg_entity *e)
{
	uint32_t r = (uint32_t)atomic_load_explicit(&e->rep, memory_order_relaxed);
	return (r >> VG_REP_EPOCH_SHIFT) == vg__rep_epoch ? r : 0;
}
/* listen.c: VIGIL_LISTENERS and the listeners' outputs */
extern int vg__listeners;          /* how many, the main output included */
void vg__listen_init(void);        /* report.c's init: parse, set the filters */
void vg__listen_image_start(void); /* the image's directories in each listener */
void vg__listen_metadata_append(const char *text, size_t len);
void vg__listen_thread_exit(void); /* flush and forget the thread's buffers */
void vg__listen_flush_all(void);   /* process end, exec: every thread's buffers */
void vg__listen_after_fork(void);
/* report.c: listener i's filter (VIGIL_LISTENERS); the strings become the runtime's. */
void vg__report_listener(int i, unsigned mask, int suspended_at_start, char *threads,
                         char *sensors);
/* `report listener I WHAT [ARG]` (control_report.c): categories (mask), threads or sensors
 * (globs, NULL: all), suspend, resume. 0, or -1 out of memory; *count: sensors matched. */
int vg__report_listener_change(int i, const char *what, const char *arg, unsigned mask,
                               long *count);
/* The decision for the event about to be started: vg__decided_start takes it. */
static inline void vg__listen_decide(unsigned mask)
{
	/* Inside another event of this thread (a signal handler) its event is dropped as
	 * nested: the decision of the event being written stays. */
	if (VG_UNLIKELY(vg__listening) && !vg__tls.busy)
		vg__tls.fan = mask ? (mask | VG_FAN_PENDING) : 0;
}
/* Starts the event just decided. With several listeners the thread's previous event is
 * first copied to its other listeners, and one the main output does not take is written
 * where the commit cannot make it part of the main stream (listen.c). */
uint8_t *vg__listen_start(vg_sensor *s, uint32_t payload);
static inline uint8_t *vg__decided_start(vg_sensor *s, uint32_t payload)
{
	return VG_UNLIKELY(vg__listening) ? vg__listen_start(s, payload)
	                                  : vg__event_start(s, payload);
}
/* The thread's last event copied to its other listeners now (before its packet closes). */
void vg__listen_settle(void);
/* The listeners every entity named by the event so far may be referred to by (vg_live
 * notes them), taken once per event: all when none was named. */
unsigned vg__listen_take_live(void);
/* listen_track.c: the rules per listener (track.c's, with masks) */
unsigned vg__listen_track_op(enum vg_op op, vg_entity *e, unsigned wanted);
void vg__listen_track_created(vg_entity *e, unsigned reported);
unsigned vg__listen_live_mask(const vg_entity *e); /* the listeners that may refer to e */
unsigned vg__track_lock_listen(enum vg_op op, const vg_entity *l, unsigned wanted); /* track.c */
void vg__listen_track_thread_exit(void);

/* track.c: what the consistency rules need while reporting is off */
/* Decides whether an op event on `e` is reported and updates what is tracked; `wanted`:
 * what the filters say. CREATE is decided by the caller (identity first). */
unsigned vg__track_op(enum vg_op op, vg_entity *e, unsigned wanted);
void vg__track_created(vg_entity *e, unsigned reported);
void vg__track_thread_exit(void);
void vg__track_after_fork(void);
/* vg_op_begin, with `allowed` = 0 when the event may not be reported whatever the
 * filters say (it names an entity that may not be referred to). */
uint8_t *vg__op_begin(vg_sensor *s, vg_entity *target, int allowed, uint32_t payload);
unsigned vg__op_wanted(const vg_sensor *s, const vg_entity *target); /* the filters, for an op */
void vg__track_call_thread_exit(void); /* track_call.c: the invocation stack */
void vg__track_call_after_fork(void);

/* process.c */
void vg__ensure_init(void);
void vg__process_start_image(int after_fork);
void vg__process_begin_once(void);
void vg__process_end(int status);
const char *vg__proc_env(void); /* "VIGIL_PROC=...", as this image tells an exec'd one */
void vg__process_renamed(const char *name); /* records vg.process.name */

/* thread_table.c: recorded threads by pthread_t, for renames by another thread */
void vg__thread_table_join(vg_entity *self); /* the calling thread after its begin (NULL:
                                                 streamless); writes renames pending */
void vg__thread_table_remove(void);          /* the calling thread, at its end */
void vg__thread_table_after_fork(void);
void vg__thread_table_rename(pthread_t th, const char *name); /* one event, now or pending */

/* title.c: the process title rewritten in argv, noticed at points the runtime visits */
void vg__title_init(void);
void vg__title_after_fork(void);
void vg__title_slow(void);
struct vg_title {
	const char *volatile area; /* the argv area's start; NULL: not looking */
	unsigned nwords;           /* 0: no fast path */
	uint64_t words[17];        /* its first bytes as last seen: the title, its NUL */
};
extern struct vg_title vg__title;
/* Compares the title with the last one seen (a few word loads); records a change. */
static inline void vg__title_check(void)
{
	const char *a = vg__title.area;
	if (!a)
		return;
	for (unsigned i = 0; i < vg__title.nwords; i++) {
		uint64_t w;
		memcpy(&w, a + 8 * i, 8);
		if (w != vg__title.words[i]) {
			vg__title_slow();
			return;
		}
	}
	if (!vg__title.nwords)
		vg__title_slow();
}

/* logcap.c: log capture (docs/logcapture.md); the rest is in logcap.h */
void vg__logcap_init(void), vg__logcap_process_end(void), vg__logcap_after_fork(void);

/* hooks.c: interposed libc functions, resolved with dlsym(RTLD_NEXT) */
void vg__hooks_init(void);

/* emit.c: internal emitters of built-in events */
void vg__emit_thread_begin(uint32_t tid, uint32_t gen, const char *name);
void vg__emit_thread_name(uint32_t tid, uint32_t gen, const char *name);
void vg__emit_thread_continued(uint32_t tid, uint32_t gen, const char *name);
void vg__emit_thread_end(uint32_t tid, uint32_t gen);
size_t vg__payload_size(vg_sensor *s, const vg_value *values);
/* Writes an event whose reporting was decided: no filter is consulted. 0 or -1. */
int vg__emit_decided(vg_sensor *s, const vg_value *values);
uint8_t *vg__encode_values(uint8_t *p, const vg_type_desc *d, const vg_value *values);
/* vg_emit of an activity event, with date(p, arg) called once its payload is begun at p
 * (to date it earlier: vg__net_redate). */
int vg__emit_dated(vg_sensor *s, const vg_value *values, void (*date)(uint8_t *, const void *),
                   const void *arg);

/* worker.c: background work off the recording threads */
struct vg_job {
	struct vg_job *next;
	void (*run)(struct vg_job *job);
};
int vg__worker_submit(struct vg_job *job); /* -1: no worker, run it yourself */
void vg__worker_forget_after_fork(void);
int vg__real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                            void *arg);

/* net.c: interaction identity and the vg.net.* events (docs/net.md) */
extern __thread uint64_t vg__net_iid[2] __attribute__((tls_model("initial-exec")));
void vg__net_after_fork(void); /* the child: new random ids, connections announced anew */
/* The time a call was made, with where the thread's stream stood then: a send is dated
 * before its call, so that it precedes its receive. When the event will not fit in the
 * current packet, or comes more than 2^32 ns after the last one (a new packet either
 * way), the packet is opened first (vg__net_make_room), so the date stays valid. */
struct vg_net_stamp {
	uint64_t ts, last;
	uint8_t *pos, *base;
};
#define VG_NET_IO_PAYLOAD 52
void vg__net_make_room(void);
/* io_flight.c: a thread between a send's stamp and its record says so in its word; the
 * process's end waits for those still runnable (docs/net.md "At the end of a process"). */
extern __thread _Atomic uint32_t *vg__io_word __attribute__((tls_model("initial-exec")));
void vg__io_flight_join(void);  /* the calling thread, once it records */
void vg__io_flight_leave(void); /* at its end */
void vg__io_flight_after_fork(void);
void vg__io_flight_wait(void); /* at the process's end */
static inline void vg__io_done(void)
{
	_Atomic uint32_t *w = vg__io_word;
	if (w)
		atomic_store_explicit(w, 0, memory_order_release);
}
static inline void vg__net_stamp(struct vg_net_stamp *st)
{
	_Atomic uint32_t *w = vg__io_word; /* cleared by vg__io_done */
	if (w)
		atomic_store_explicit(w, 1, memory_order_relaxed);
	/* A rename is recorded before the stamp, not between it and its event: the event
	 * carries the current name and can still be dated at the call. */
	vg__title_check();
	struct vg_thread *t = &vg__tls;
	st->pos = t->pos;
	st->base = t->base;
	st->last = t->last_ts;
	__asm__ __volatile__("" ::: "memory"); /* rdtsc must not move before what precedes */
	st->ts = vg_now();
	if (VG_UNLIKELY((size_t)(t->end - t->pos) < VG_EVENT_HEADER_MAX + VG_NET_IO_PAYLOAD)) {
		vg__net_make_room();
		st->pos = t->pos;
		st->base = t->base;
		st->last = t->last_ts;
		__asm__ __volatile__("" ::: "memory");
		st->ts = vg_now();
	}
}
/* Records vg.net.send or vg.net.recv (`which`) for the calling thread, dated `at` (NULL:
 * now) if no other event of the thread was written since. */
void vg__net_emit_io(int which, const struct vg_net_stamp *at, int32_t fd, uint64_t conn,
                     uint64_t off, uint64_t len, uint64_t msg);
/* vg.net.conn, dated `at` (NULL: now; a connect is dated at its call, as a send is, so
 * that it precedes the accept) */
void vg__net_emit_conn(const struct vg_net_stamp *at, int32_t fd, uint64_t conn, const char *kind,
                       const char *role, const char *local, const char *remote);
void vg__net_emit_close(int32_t fd, uint64_t conn);
/* A read on a terminal returned part of a line (no line end): vg.net.partial. */
void vg__net_emit_partial(int32_t fd, uint64_t conn);
/* Calls that moved bytes the runtime cannot count (docs/net.md, "Not followed, and
 * counted"): records vg.net.unfollowed naming the call, `count` of them. errno is kept. */
void vg__net_unfollowed(int fd, uint32_t serial, const char *call, uint64_t count);
/* io_uring.c: the submissions of the io_uring instances still open (at exit). */
void vg__net_count_rings(void);
/* hooks_net.c / net_fd.c (net_fd.h): the followed descriptors of unmodified programs */
void vg__net_fd_after_fork(void);
void vg__net_hooks_init(void); /* where libvigil's own code is: its calls are not followed */

/* send.c: VIGIL_TO, the sender thread shipping the spool to a collector */
void vg__send_start(void);      /* end of init, and in a fork child */
void vg__send_finish(void);     /* process end: ship the rest, bounded by VIGIL_TO_LINGER */
void vg__send_after_fork(void); /* the child: forget the parent's sender, start its own */
void vg__send_before_uid_change(uid_t uid); /* the session secret stays readable */

/* files.c: the runtime's own descriptors, kept through what the subject does to its own
 * (docs/architecture.md "Surviving the subject"). All are high (>= 512), close-on-exec. */
int vg__own_fd(int fd);        /* one of the runtime's: the subject may not close it */
unsigned vg__own_fd_top(void); /* the highest descriptor ever the runtime's, or 0 */
int vg__high_fd(int fd);       /* fd moved to >= 512, close-on-exec (if it can be) */
int vg__own_fd_add(int *slot); /* *slot is the runtime's now; -1 when the table is full */
void vg__own_fd_release(int *slot, int keep); /* forget it (and close, unless keep) */
int vg__own_fd_take(int *slot);   /* forget it, unclosed: the caller closes what it returns */
void vg__own_fd_evict(int fd);    /* the subject dup2s onto fd: ours moves away first */
int vg__files_open_out(void);     /* the trace root (VIGIL_OUT), once */
int vg__files_open_image(void);   /* vg__rt.dir, after it is made */
int vg__files_out_number(void);   /* the root's descriptor, unchecked (VIGIL_PROC) */
void vg__files_adopt_out(int fd); /* an exec'd image: the root its process kept open */
void vg__files_before_exec(void); /* the root's descriptor survives the exec */
void vg__files_exec_failed(void);
void vg__files_after_fork(void);
int vg__image_fd(void); /* checked before use: -1 when lost for good */
int vg__out_fd(void);
const char *vg__image_name(void);                             /* the last component of vg__rt.dir */
int vg__image_open(const char *name, int flags, mode_t mode); /* openat, close-on-exec */
/* The shared layout's pool of stream files (stream_pool.c). A claim is a locked file
 * and how its stream goes on: where the next packet goes, its packet_seq_num, the
 * events_discarded count so far and the time it may not start before. */
struct vg_pool_claim {
	int fd, slot;
	uint64_t end, seq, discarded, last_ts;
};
int vg__pool_claim(struct vg_pool_claim *c, char *name, size_t len); /* -1: none free */
void vg__pool_release(int slot); /* after its descriptor is closed */
void vg__pool_after_fork(void);
int vg__image_open_id(const char *name, int flags, dev_t *dev, ino_t *ino);
int vg__fsize_allows(uint64_t end);
/* Paths inside the trace root (send.c's spool) reached through its descriptor, so that
 * they still work after a chroot. */
int vg__out_open(const char *path, int flags); /* close-on-exec */
DIR *vg__out_opendir(const char *path);
int vg__out_stat(const char *path, struct stat *sb);
int vg__out_unlink(const char *path, int flags);
/* unlinkat flags (AT_REMOVEDIR) */ /* RLIMIT_FSIZE allows a file this long; else EFBIG */

/* small utilities (util.c; those vigil record shares: util.h) */
#include "runtime/util.h"
int vg__write_all(int fd, const void *buf, size_t len);
int vg__read_small_file(const char *path, char *buf, size_t len);
/* /proc paths keep working after a chroot, through this descriptor of /proc (files.c). */
extern int vg__procfs_fd;
ssize_t vg__readlink_proc(const char *path, char *buf, size_t len);
void vg__random_uuid(uint8_t uuid[16], char text[37]);

#endif
