/* vigil watch: shared between the command (watch.c) and the live loop (watch_live.c). */
#ifndef VIGIL_CLI_WATCH_H
#define VIGIL_CLI_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/watch_print.h"
#include "live/alpha.h"
#include "query/engine.h"
#include "tquel/tquel.h"

struct watch_args {
	const char *text_arg, *file, *sensors_file, *replay, *keep;
	const char *display; /* --display D.vgd: also what that display needs */
	enum watch_format format;
	bool format_given, unoptimized, stats, quiet;
	int64_t tick, every;
	int64_t lateness;       /* --lateness: how late an event may be committed after its time */
	uint64_t update_events; /* --update-events (hidden): a replay's updates, in events */
	int pid;                /* --pid: attach to this process */
	int64_t attach_for;     /* --for: detach after this long (0: until it ends or ^C) */
	char **command;         /* after -- */
};

/* What answering over one trace (a snapshot of the live trace, or a recording) gives. */
struct watch_answer {
	uint64_t since; /* in: raw clock value the watch starts at (--pid: the attach) */
	/* in: raw clock value the clocks tick from (the sampling origin sent to the subject);
	 * 0: the trace's first event, as in vigil query */
	uint64_t clock_origin;
	uint64_t max_events; /* in: read only this many events (0: all): a replay's update */
	struct vga_counts counts;
	uint64_t *per_alpha; /* per α of the plan (malloc'd) */
	uint64_t events;
	int64_t first, last;
	bool partial;
};

/* Builds the relations of the trace at `path` keeping what the plan asks for, answers q
 * and prints its new tuples (all remaining ones when `final`). Returns 0, 1 when the
 * trace has nothing readable yet, -1 after printing an error. */
int watch_answer(const char *path, const struct tquel_query *q, const struct vga_plan *plan,
                 const struct vgq_options *o, struct watch_printer *pr, bool final,
                 struct watch_answer *ans);

/* --replay: the plan against a full recording, by the update network (query/delta.h)
 * when the query's shape allows, else by re-evaluation; the exit code. */
int watch_replay(const struct watch_args *a, const struct tquel_query *q,
                 const struct vga_plan *plan, const struct vgq_options *o);

/* Runs the subject under the plan and prints tuples as they come; the exit code. */
int watch_live(const struct watch_args *a, const struct tquel_query *q, const struct vga_plan *plan,
               const struct vgq_options *o);

/* --pid: the plan installed in an attached process, answered until it ends, --for
 * passes or the user interrupts; 0, or 2 when the output failed. */
struct vgc_subject;
int watch_attach(const struct watch_args *a, struct vgc_subject *c, const struct tquel_query *q,
                 const struct vga_plan *plan, const struct vgq_options *o);

/* How long each update took, for --stats: wall time and this process's CPU time (the
 * steadier figure on a shared machine). */
struct watch_timings {
	int64_t *ns, *cpu_ns;
	uint64_t *taken; /* events each update took (set `taking` before watch_timing_add) */
	size_t n, cap;
	int64_t wall0, cpu0; /* the current update's start */
	uint64_t taking;
};
void watch_timing_start(struct watch_timings *t);
/* Ends the current update and starts the next. */
void watch_timing_add(struct watch_timings *t);
/* The --stats extra of an update network: how it answered, the update sizes (0: not
 * counted in events) and times, the network's state, and a followed trace's reading (fs
 * may be NULL); *out malloc'd. */
struct vgq_delta_stats;
struct vgt_follow_stats;
void watch_stats_extra(char **out, const char *how, uint64_t every, const struct watch_timings *t,
                       const struct vgq_delta_stats *ds, const struct vgt_follow_stats *fs);

/* The live trace followed and answered by the update network (watch_follow.c). NULL,
 * with the reason in `why`, when the query's shape (or VIGIL_WATCH_REEVALUATE=1) needs
 * re-evaluation or the trace cannot be followed: the caller re-evaluates snapshots. */
struct watch_follow;
struct watch_follow *watch_follow_new(const char *path, const struct tquel_query *q,
                                      const struct vga_plan *plan, const struct vgq_options *o,
                                      const struct watch_answer *ans, int64_t lateness,
                                      struct watch_printer *pr, char *why, size_t whysize);
/* Reads what was written, feeds the events up to now − lateness (all of them when
 * `final`: the run is over) and prints the answers that became final; -1 when the output
 * failed. */
int watch_follow_step(struct watch_follow *w, bool final);
/* After the final step: warnings, damage and the counts into ans (and the --stats extra
 * when stats_extra is not NULL); -1 when the output failed or the query could not be
 * answered. */
int watch_follow_end(struct watch_follow *w, struct watch_answer *ans, char **stats_extra);
void watch_follow_free(struct watch_follow *w);

/* The --stats line. */
void watch_print_stats(const char *mode, const struct vga_plan *plan,
                       const struct watch_answer *ans, uint64_t printed, const char *extra);

#endif
