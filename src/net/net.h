/* vigil_net: interaction networks (docs/net.md, "Analysis"). The structural events of
 * several hosts' traces (vg.net.*, vg.thread.*, vg.process.*) are loaded into one event
 * set, messages are matched (connection endpoints and byte ranges, or explicit ids), each
 * host's clock is corrected against a reference host, and interactions are propagated
 * from inputs (Ashton's insplit) into one network per input.
 *
 * Files: set.c (the event set), load.c (from traces), match.c, shared.c (pipes and
 * sockets with several writers or readers), clock.c, split.c, graph.c (a network in
 * memory, its JSON form), report.c, render_svg.c, render_dot.c. */
#ifndef VIGIL_NET_NET_H
#define VIGIL_NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VGN_NONE UINT32_MAX

enum vgn_kind {
	VGN_INPUT,
	VGN_CONN,
	VGN_SEND,
	VGN_RECV,
	VGN_CLOSE,
	VGN_THREAD_BEGIN,
	VGN_THREAD_END,
	VGN_PROC_BEGIN,
	VGN_PROC_EXEC,
	VGN_PROC_END,
	VGN_KIND_COUNT
};
/* "input", "conn", "send", "recv", ... ; and back (-1 if unknown). */
const char *vgn_kind_name(enum vgn_kind k);
int vgn_kind_parse(const char *name);

struct vgn_host {
	const char *name;
};

/* A process: (host, pid, gen) across traces. */
struct vgn_proc {
	uint32_t host;
	int64_t pid, ppid;
	uint64_t gen;
	const char *program; /* latest image's procname */
	const char *name;    /* what it calls itself now, while loading (NULL: program) */
	uint64_t name_exec;  /* exec index of the image that gave `name` */
};

struct vgn_thread {
	uint32_t proc;
	uint32_t tid, gen;
	const char *name; /* "" if never named; the latest name once loaded */
	/* Its user-defined state changes: set->states[state_first .. + state_n), in time
	 * order (after vgn_clock_apply). */
	uint32_t state_first, state_n;
};

/* A change of a user-defined state of a thread (a `.vgl` state relation keyed on the
 * performing thread): `label` is "Relation=value[,value...]" from then on. */
struct vgn_state {
	uint32_t thread;
	int64_t ts, cts;
	const char *label;
};

/* A connection as vg.net.conn introduced it: per process image, by serial. */
struct vgn_conn {
	uint32_t proc;
	uint64_t exec; /* exec index of the image that introduced it */
	uint64_t serial;
	int32_t fd;
	const char *kind, *role, *local, *remote;
	int64_t ts;
};

struct vgn_event {
	uint8_t kind;    /* enum vgn_kind */
	bool partial;    /* a receive on a terminal that ended no line (vg.net.partial) */
	uint32_t thread; /* index in set->threads */
	uint32_t conn;   /* index in set->conns, or VGN_NONE */
	int64_t ts;      /* as recorded (the host's clock), ns since the epoch */
	int64_t cts;     /* corrected to the reference host's clock */
	uint64_t iid_hi, iid_lo;
	int32_t fd;
	uint64_t serial; /* conn serial as recorded */
	uint64_t off, len, msg;
	uint64_t exec;       /* exec index of the image */
	const char *text;    /* input `what`, thread name, exec path ("" if none) */
	const char *program; /* the process's name at that time (docs/net.md "Process names") */
	const char *name;    /* the thread's name at that time ("" if never named) */
	const char *trace;   /* the TRACE argument it came from */
	uint64_t offset;     /* byte offset in its stream file (0 for synthetic events) */
};

/* One matched (send, receive) pair: `bytes` is the overlap of their byte ranges. */
struct vgn_msg {
	uint32_t send, recv;
	uint64_t bytes;
	bool explicit_id; /* matched by `msg` */
	/* where the overlap begins within the send's bytes and within the receive's */
	uint64_t send_at, recv_at;
};

struct vgn_set {
	struct vgn_host *hosts;
	size_t nhosts, cap_hosts;
	struct vgn_proc *procs;
	size_t nprocs, cap_procs;
	struct vgn_thread *threads;
	size_t nthreads, cap_threads;
	struct vgn_conn *conns;
	size_t nconns, cap_conns;
	struct vgn_event *events;
	size_t nevents, cap_events;
	struct vgn_state *states; /* user-defined states (load.c) */
	size_t nstates, cap_states;
	/* Filled by vgn_match. */
	struct vgn_msg *msgs;
	size_t nmsgs;
	uint32_t *nmatch; /* per event: matched pairs it takes part in */
	/* pairs not made because, on one host, the receive would precede its send */
	uint64_t refused;
	uint64_t shared_channels; /* pipes and sockets matched by the shared rule */
	struct vgb_intern *pool;
	void *index; /* lookup tables (set.c) */
};

struct vgn_set *vgn_set_new(void);
void vgn_set_free(struct vgn_set *s);
/* A copy of `s` that lives as long as the set. */
const char *vgn_intern(struct vgn_set *s, const char *str);
uint32_t vgn_host_get(struct vgn_set *s, const char *name);
uint32_t vgn_proc_get(struct vgn_set *s, uint32_t host, int64_t pid, uint64_t gen);
uint32_t vgn_thread_get(struct vgn_set *s, uint32_t proc, uint32_t tid, uint32_t gen);
uint32_t vgn_conn_add(struct vgn_set *s, const struct vgn_conn *c);
/* Appends an event (strings must be interned); resolves its `conn` from (proc, exec,
 * serial) for send/recv/close. Returns its index. */
uint32_t vgn_event_add(struct vgn_set *s, const struct vgn_event *e);
uint32_t vgn_event_host(const struct vgn_set *s, uint32_t ev);
uint32_t vgn_event_proc(const struct vgn_set *s, uint32_t ev);
/* The connection of a send/recv event (NULL if none: explicit messages). */
const struct vgn_conn *vgn_event_conn(const struct vgn_set *s, uint32_t ev);

/* ---- loading ---------------------------------------------------------------------- */

struct vgn_load_stats {
	uint64_t events, net_events, images, damage, discarded;
	/* vg.net.unfollowed (docs/net.md): scanf refills, io_uring submissions, static execs */
	uint64_t unfollowed_scanf, unfollowed_io_uring, unfollowed_static;
};

/* Loads the structural events of one trace (a `vigil record` directory or an image).
 * Returns 0, or -1 with one line in err (not a trace, unreadable). `progress` (may be
 * NULL) gets a line now and then on long loads. */
int vgn_load_trace(struct vgn_set *s, const char *path, struct vgn_load_stats *st,
                   void (*progress)(const char *line), char *err, size_t errsize);

/* The same for a trace already open (read again from its start; left open), named
 * `path` in messages. 0 (nothing can fail once open). */
struct vgt_trace;
int vgn_load_open(struct vgn_set *s, struct vgt_trace *t, const char *path,
                  struct vgn_load_stats *st, void (*progress)(const char *line));

/* The same event by event: a loader adds each structural event it is given to the set
 * (vigil watch feeds it a trace as it is written; classes may appear as it goes). */
struct vgn_loader;
struct vgn_loader *vgn_loader_new(struct vgn_set *s, const struct vgt_trace *t, const char *path,
                                  struct vgn_load_stats *st);
struct vgt_event;
void vgn_loader_event(struct vgn_loader *l, const struct vgt_event *ev);
void vgn_loader_free(struct vgn_loader *l);

/* ---- matching ----------------------------------------------------------------------- */

struct vgn_match_stats {
	uint64_t sends, recvs, matched_sends, matched_recvs, pairs, cross_host_pairs;
	/* pairs refused (a receive before its send on one host) and the channels with
	 * several writers or readers matched in time order (docs/net.md "Shared") */
	uint64_t refused, shared_channels;
};
/* Matches sends to receives: by explicit `msg` id, else by connection endpoints (a send
 * on local L, remote R against a receive on local R, remote L) and overlapping byte
 * ranges. Fills s->msgs and s->nmatch. 0, or -1 on no memory. */
int vgn_match(struct vgn_set *s, struct vgn_match_stats *st);

/* ---- clocks ------------------------------------------------------------------------- */

enum vgn_clock_status {
	VGN_CLOCK_REFERENCE,
	VGN_CLOCK_OK,          /* bounded on both sides */
	VGN_CLOCK_ONE_SIDED,   /* messages in one direction only: one bound */
	VGN_CLOCK_UNCONNECTED, /* no message with any host connected to the reference */
	VGN_CLOCK_CROSSED,     /* the bounds cross: clocks that cannot be reconciled */
};
const char *vgn_clock_status_name(enum vgn_clock_status st);

/* A host's clock against the reference: host_time = ref_time + offset + drift*(t - t0),
 * with t the reference time. Bounds hold for the offset at t0 (lo may be -inf, hi +inf
 * when one-sided; for CROSSED, lo > hi). */
struct vgn_clock_host {
	enum vgn_clock_status status;
	double offset, lo, hi; /* ns at t0 */
	double drift, drift_lo, drift_hi;
	bool has_drift;
	uint32_t via;              /* host whose offset this one is chained through, or VGN_NONE */
	uint64_t to_ref, from_ref; /* constraints used: messages to / from that host */
	char why[256];             /* CROSSED: which messages conflict */
};

struct vgn_clock {
	uint32_t reference;
	int64_t t0;
	size_t nhosts;
	struct vgn_clock_host *hosts;
};

/* Estimates every host's clock against `reference` (VGN_NONE: the host with the most
 * matched messages) from the set's matched pairs. Needs vgn_match first. */
int vgn_clock_estimate(const struct vgn_set *s, uint32_t reference, struct vgn_clock *c);
void vgn_clock_free(struct vgn_clock *c);
/* The correction of one host's time to the reference (ns to subtract). */
double vgn_clock_correction(const struct vgn_clock *c, uint32_t host, int64_t ts);
/* Sets every event's cts; returns the number of matched pairs still received before
 * they were sent. */
uint64_t vgn_clock_apply(struct vgn_set *s, const struct vgn_clock *c);
/* JSON (jansson) form: {"reference","t0","hosts":[{"host","status","offset_ns",...}]}. */
struct json_t;
struct json_t *vgn_clock_to_json(const struct vgn_set *s, const struct vgn_clock *c);
/* Reads the JSON form, matching hosts by name; 0, or -1 with one line in err. */
int vgn_clock_from_json(const struct vgn_set *s, const struct json_t *j, struct vgn_clock *c,
                        char *err, size_t errsize);

/* ---- split -------------------------------------------------------------------------- */

enum {
	VGN_IN_INSTRUMENTED = 1, /* vg.net.input */
	VGN_IN_TTY = 2,          /* a receive on a tty connection */
	VGN_IN_STDIN = 4,        /* a receive on a stdin connection */
	VGN_IN_ACCEPT = 8,       /* a receive on an accepted connection from no recorded send */
	VGN_IN_CONNECT = 16,     /* a request on a connection the process opened, by a thread
	                          * serving no interaction (a client's loop; see split.c) */
	VGN_IN_ALL = 31,
};
/* Parses "instrumented,tty,stdin,accept,connect" (any subset, or "all"); -1 with one line in err.
 */
int vgn_inputs_parse(const char *list, unsigned *mask, char *err, size_t errsize);
/* What one input of a client is (docs/net.md "What one input is"), or'ed into the mask
 * of vgn_split_run; none set: per connection for a recorded client (`connect` inputs),
 * per exchange for one not recorded (`accept` inputs). */
enum {
	VGN_PER_EXCHANGE = 1u << 16,   /* each request after a reply */
	VGN_PER_CONNECTION = 1u << 17, /* everything on one connection */
	VGN_PER_PROCESS = 1u << 18,    /* everything a client process run asks */
	VGN_PER_MASK = 7u << 16,
};
/* "exchange", "connection" or "process" into *bits; -1 with one line in err. */
int vgn_per_parse(const char *name, unsigned *bits, char *err, size_t errsize);

struct vgn_split {
	size_t nnets;
	uint32_t *inputs;       /* per network: its input event */
	uint32_t *net_of;       /* per event: its network, or VGN_NONE */
	uint32_t *creator;      /* per thread: the thread that made it, or VGN_NONE */
	uint32_t *thread_first; /* per thread: its first event, or VGN_NONE */
	uint64_t forced; /* events processed before what they wait for (inconsistent order) */
	/* Events of network n: events[first[n] .. first[n+1]), thread by thread in time order. */
	uint32_t *first, *events;
	uint32_t *segment; /* per event: a run of one thread's events in one network */
	/* Matched pairs of each event: s->msgs[pair[msg_first[e] .. msg_first[e+1])]. */
	uint32_t *msg_first, *pair;
	uint64_t outside; /* structural events in no network */
	/* per event: a vg.net.conn that is a vertex: the accept of a forking server whose
	 * child served the connection (fork.c), the connect a client's connection began
	 * with (its input, per connection or process) */
	bool *conn_vertex;
};
/* Propagates interactions (docs/net.md) from the inputs chosen by `mask`. Needs
 * vgn_match and corrected times. 0, or -1 on no memory. */
int vgn_split_run(const struct vgn_set *s, unsigned mask, struct vgn_split *out);
/* The accepts of forking servers and their children's start-up into the network of the
 * connection each child serves (fork.c; called by vgn_split_run before bucketing). */
void vgn_split_forks(const struct vgn_set *s, struct vgn_split *sp, const uint32_t *order,
                     const uint32_t *first);
void vgn_split_free(struct vgn_split *sp);
/* What kind of input event `ev` is: "instrumented", "connect", "tty", "stdin", "accept". */
const char *vgn_input_kind(const struct vgn_set *s, uint32_t ev);

/* ---- one network in memory (also what report and render read back) ------------------ */

/* A user-defined state of a thread while it was in the network. */
struct vgn_gstate {
	const char *label;
	int64_t from, to; /* corrected ns */
};
struct vgn_gthread {
	const char *host, *program, *name; /* as of its first vertex in the network */
	int64_t pid, tid;
	struct vgn_gstate *states; /* clipped to its first..last vertex, in time order */
	size_t nstates;
};
struct vgn_gvertex {
	uint32_t thread; /* index in graph threads */
	int kind;        /* enum vgn_kind */
	int64_t ts;      /* corrected ns */
	int64_t rts;     /* as recorded (its host's clock): where the trace has it */
	uint64_t off;    /* send/recv: offset of its first byte in its channel's stream, or
	                  * VGN_NO_OFF (read from a file written before offsets were) */
	uint64_t len;    /* bytes of a send/recv */
	bool matched;    /* send/recv: takes part in a matched pair */
	bool input;      /* the network's input */
	const char *text;
	const char *local, *remote; /* connection endpoints, or NULL */
	const char *program, *name; /* the process's and thread's names then */
	/* send/recv of vg_msg_send/vg_msg_recv: the parent-id of the W3C traceparent it
	 * carried (docs/net.md), 0 if none */
	uint64_t msg;
};
enum vgn_edge_kind { VGN_E_THREAD, VGN_E_MESSAGE, VGN_E_SPAWN };
#define VGN_NO_OFF UINT64_MAX
struct vgn_gedge {
	int kind; /* enum vgn_edge_kind */
	uint32_t from, to;
	uint64_t bytes;
	bool cross_host;
	/* messages: where the bytes carried begin in the sender's and the receiver's
	 * streams (the overlap of the send's and the receive's byte ranges) */
	uint64_t send_off, recv_off;
};
struct vgn_graph {
	uint64_t id;
	char iid[33]; /* the input's interaction id (hex), or "" */
	size_t nthreads, nvertices, nedges;
	struct vgn_gthread *threads;
	struct vgn_gvertex *vertices;
	struct vgn_gedge *edges;
	uint32_t input; /* vertex */
	struct vgb_intern *pool;
};

/* Builds network `n` of a split. */
struct vgn_graph *vgn_graph_build(const struct vgn_set *s, const struct vgn_split *sp, size_t n);
void vgn_graph_free(struct vgn_graph *g);
struct json_t *vgn_graph_to_json(const struct vgn_graph *g);
/* Reads a network file; NULL with one line in err (file name, what). */
struct vgn_graph *vgn_graph_load(const char *path, char *err, size_t errsize);
struct vgn_graph *vgn_graph_from_json(const struct json_t *j, const char *path, char *err,
                                      size_t errsize);

/* ---- report ------------------------------------------------------------------------- */

struct vgn_thread_time {
	int64_t running, waiting; /* ns */
};
/* Time in one user-defined state, summed over the network's threads. */
struct vgn_state_time {
	const char *label;
	int64_t ns;
};
struct vgn_stats {
	int64_t start, end, response; /* ns */
	size_t threads, processes, machines;
	/* messages: matched sends (one read in pieces counts once) */
	uint64_t messages, cross_host_messages, pairs, bytes, unmatched;
	struct vgn_thread_time *per_thread; /* graph->nthreads entries */
	char *servers; /* programs in order of first involvement, "a > b > c" (malloc) */
	struct vgn_state_time *states; /* by label, in order of first appearance */
	size_t nstates;
};
int vgn_stats_compute(const struct vgn_graph *g, struct vgn_stats *st);
void vgn_stats_free(struct vgn_stats *st);

/* ---- render ------------------------------------------------------------------------- */

int vgn_render_svg(const struct vgn_graph *g, FILE *f);
int vgn_render_dot(const struct vgn_graph *g, FILE *f);

/* ---- one analysis: load, match, correct clocks (session.c) ----------------------------- */

struct vgn_session {
	struct vgn_set *set;
	struct vgn_load_stats load;
	struct vgn_match_stats match;
	struct vgn_clock clock;
	uint64_t backwards; /* matched pairs still received before sent after correction */
	size_t traces_read; /* traces that could be opened */
	size_t skipped;     /* traces that could not: warned about, left out */
	bool unrelated;     /* several hosts but no message matched between them */
	size_t crossed;     /* hosts whose clock bounds cross */
	void (*warn)(void *ctx, const char *line); /* one line per problem (may be NULL) */
	void (*progress)(const char *line);        /* now and then on long work (may be NULL) */
	void *ctx;
	/* NULL, or the one trace to analyse, already open (paths[0] names it): the derived
	 * relations of a query read the trace the query opened (docs/tquel.md). */
	struct vgt_trace *open_trace;
};
/* Loads the traces (a trace that cannot be read is warned about and skipped), matches
 * messages, estimates the clocks against `reference` (a host name, or NULL) or takes them
 * from `clock_file` (the output of 'vigil clock --json'), and applies the correction.
 * Returns 0, or -1 with one line in err (nothing usable: no trace readable, no vg.net
 * event anywhere, an unknown reference host, a bad clock file). */
int vgn_session_open(struct vgn_session *ss, const char *const *paths, size_t n,
                     const char *reference, const char *clock_file, char *err, size_t errsize);
void vgn_session_close(struct vgn_session *ss);

/* A map from a key of three 64-bit words to a 32-bit value (the analysis's own index,
 * public for what follows it live: src/derived/net_live.c). */
struct vgn_tmap {
	struct vgn_tkey {
		uint64_t a, b, c;
		uint32_t v;
		uint32_t used;
	} * slots;
	size_t n, used;
};
void vgn_tmap_init(struct vgn_tmap *m);
void vgn_tmap_free(struct vgn_tmap *m);
/* The value of the key, or VGN_NONE. */
uint32_t vgn_tmap_get(const struct vgn_tmap *m, uint64_t a, uint64_t b, uint64_t c);
void vgn_tmap_put(struct vgn_tmap *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v);

#endif
