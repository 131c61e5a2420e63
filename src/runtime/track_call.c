/* Each thread's invocation stack (rule 4 of docs/consistency.md). Every enter pushes a
 * frame (sensor, time, payload) whether or not it is reported, so that when reporting
 * resumes inside a call stack the enclosing invocations can be reported first, with
 * their original times. The reported frames are always the bottom `rep_depth` ones: a
 * frame is reported only after all of its ancestors. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

struct frame {
	vg_sensor *sensor;
	uint64_t at;             /* ns */
	uint32_t off;            /* its payload in the arena */
	uint32_t len;            /* bytes of payload */
	uint32_t blocked;        /* names an entity that may not be referred to: never reported */
	uint32_t listen_blocked; /* several listeners: those it is blocked for */
};

#define MAX_FRAMES 65536u
#define ARENA_BYTES (8u << 20)

struct call_stack {
	struct frame *frames; /* MAX_FRAMES, reserved on the first enter, touched as used */
	uint8_t *arena;
	uint32_t depth, rep_depth, nblocked;
	uint32_t untracked; /* enters past the limits: their leaves only count down */
	uint32_t arena_top;
	int failed;
	uint32_t listen_depth[VG_LISTENERS_MAX];    /* several listeners: rep_depth of each */
	uint32_t listen_nblocked[VG_LISTENERS_MAX]; /* and nblocked */
};
static __thread struct call_stack cs __attribute__((tls_model("initial-exec")));

static size_t mapping_size(void)
{
	return (size_t)MAX_FRAMES * sizeof(struct frame) + ARENA_BYTES;
}

static int stack_ready(void)
{
	if (cs.frames)
		return 1;
	if (cs.failed)
		return 0;
	void *m = mmap(NULL, mapping_size(), PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		cs.failed = 1;
		return 0;
	}
	cs.frames = m;
	cs.arena = (uint8_t *)m + (size_t)MAX_FRAMES * sizeof(struct frame);
	return 1;
}

uint8_t *vg_enter_begin(vg_sensor *s, uint32_t payload)
{
	(void)s;
	if (cs.untracked || !stack_ready() || cs.depth >= MAX_FRAMES ||
	    payload > ARENA_BYTES - cs.arena_top) {
		cs.untracked++;
		vg__count_discarded(1);
		return NULL;
	}
	struct frame *f = &cs.frames[cs.depth];
	f->at = vg_now();
	f->off = cs.arena_top;
	return cs.arena + cs.arena_top;
}

/* Writes frame i as an enter event (depth i + 1); synthesized ones are preceded by
 * vg.report.synth in the same reservation, so nothing can come between. */
static int write_frame(uint32_t i, int synthesized, unsigned listeners)
{
	struct frame *f = &cs.frames[i];
	vg__listen_decide(listeners);
	vg_sensor *synth = vg__builtin(VG_B_REPORT_SYNTH);
	uint32_t extra = synthesized ? 8 + VG_EVENT_HEADER_MAX : 0;
	uint8_t *p = vg__decided_start(synthesized ? synth : f->sensor, extra + 4 + f->len);
	if (!p)
		return -1;
	if (synthesized) { /* the enter event at the same time as its mark */
		p = vg_put_u64(p, f->at);
		p = vg__header_put(p, f->sensor->id, vg__tls.last_ts, vg__tls.last_ts);
	}
	p = vg_put_u32(p, i + 1);
	memcpy(p, cs.arena + f->off, f->len);
	vg_event_commit(p + f->len);
	return 0;
}

/* Rule 4 per listener: each listener in `m` first gets the enclosing invocations it has
 * not had, outermost first (a frame synthesized for several at once is written once). */
static void listen_commit(uint32_t i, unsigned m)
{
	for (;;) {
		uint32_t low = i;
		for (int l = 0; l < VG_LISTENERS_MAX; l++)
			if ((m >> l & 1u) && cs.listen_depth[l] < low)
				low = cs.listen_depth[l];
		if (low == i)
			break;
		unsigned to = 0;
		for (int l = 0; l < VG_LISTENERS_MAX; l++)
			if ((m >> l & 1u) && cs.listen_depth[l] == low)
				to |= 1u << l;
		if (write_frame(low, 1, to) < 0)
			return;
		for (int l = 0; l < VG_LISTENERS_MAX; l++)
			if (to >> l & 1u)
				cs.listen_depth[l] = low + 1;
	}
	vg__listen_decide(0);
	if (m && write_frame(i, 0, m) == 0)
		for (int l = 0; l < VG_LISTENERS_MAX; l++)
			if (m >> l & 1u)
				cs.listen_depth[l] = i + 1;
}

void vg_enter_commit(vg_sensor *s, uint8_t *end)
{
	struct frame *f = &cs.frames[cs.depth];
	f->sensor = s;
	f->blocked = end == NULL;
	f->len = end ? (uint32_t)(end - (cs.arena + f->off)) : 0;
	cs.arena_top += f->len;
	cs.nblocked += f->blocked;
	uint32_t i = cs.depth++;
	unsigned wanted = vg__op_wanted(s, NULL);
	if (!vg__tracking) {
		if (wanted)
			write_frame(i, 0, wanted);
		return;
	}
	if (vg__listening) {
		/* Rule 2 per listener: a frame naming an entity a listener may not refer to
		 * blocks what it encloses for that listener. */
		unsigned live = vg__listen_take_live();
		f->listen_blocked = end ? ~live & ((1u << VG_LISTENERS_MAX) - 1u) : 0;
		for (int l = 0; l < VG_LISTENERS_MAX; l++) {
			cs.listen_nblocked[l] += f->listen_blocked >> l & 1u;
			if (cs.listen_nblocked[l])
				wanted &= ~(1u << l);
		}
		listen_commit(i, cs.nblocked ? 0 : wanted);
		return;
	}
	if (!wanted || cs.nblocked)
		return;
	/* Rule 4: the enclosing invocations first, outermost first. */
	while (cs.rep_depth < i) {
		if (write_frame(cs.rep_depth, 1, 1) < 0)
			return;
		cs.rep_depth++;
	}
	if (write_frame(i, 0, 1) == 0)
		cs.rep_depth = i + 1;
}

uint8_t *vg_leave_begin(vg_sensor *s, uint32_t payload)
{
	if (cs.untracked) {
		cs.untracked--;
		return NULL;
	}
	if (!cs.depth) /* a leave with no enter: the program is unbalanced */
		return vg__tracking ? NULL : vg_event_begin(s, payload);
	uint32_t i = --cs.depth;
	struct frame *f = &cs.frames[i];
	cs.arena_top = f->off;
	cs.nblocked -= f->blocked;
	unsigned report = 0;
	if (vg__tracking && vg__listening) {
		for (int l = 0; l < VG_LISTENERS_MAX; l++)
			cs.listen_nblocked[l] -= f->listen_blocked >> l & 1u;
		for (int l = 0; l < VG_LISTENERS_MAX; l++)
			if (i < cs.listen_depth[l]) { /* exactly when its enter was */
				report |= 1u << l;
				cs.listen_depth[l] = i;
			}
		vg__listen_decide(report);
	} else if (vg__tracking) {
		report = i < cs.rep_depth;
		if (report)
			cs.rep_depth = i;
	} else {
		report = vg__op_wanted(s, NULL);
	}
	return report ? vg__decided_start(s, payload) : NULL;
}

void vg__track_call_thread_exit(void)
{
	if (cs.frames)
		munmap(cs.frames, mapping_size());
	memset(&cs, 0, sizeof cs);
}

/* The fork child's trace has reported none of the frames it inherited. */
void vg__track_call_after_fork(void)
{
	cs.rep_depth = 0;
	memset(cs.listen_depth, 0, sizeof cs.listen_depth);
}
