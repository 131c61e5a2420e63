/* The recorder of armed USDT sites, as the jump path's trampolines call it first
 * (docs/usdt.md, "The jump path").
 *
 * This file is compiled with -mgeneral-regs-only, -O2 and no sanitizer (CMakeLists.txt),
 * and calls no function: so the trampoline that calls vg__usdt_jump_fast needs to save
 * only the general registers and the flags, not the program's vector and x87 state
 * (an XSAVE/XRSTOR pair, half of a hit's cost). Test `usdt.general_regs` checks the
 * object: no vector or x87 register, no call out of it. A hit this code cannot finish
 * alone (the thread's buffer is full or not made yet, the clock has no TSC, the thread's
 * first start of a pair, a nested event) is left untouched and answered 1: the
 * trampoline then saves the vector state and calls the full path (usdt_trap.c).
 *
 * The int3 path's handler uses the same operand readers (vg__usdt_write_args). */
#define _GNU_SOURCE
#include <stdint.h>
#include <ucontext.h>

#include "internal.h"
#include "usdt.h"

__attribute__((visibility("hidden"))) __thread int vg__usdt_in_trap
    __attribute__((tls_model("initial-exec")));
__attribute__((visibility("hidden"))) __thread struct vg_usdt_open_starts *vg__usdt_open_starts
    __attribute__((tls_model("initial-exec")));

/* Unaligned loads and stores of the program's memory and the event buffer, without
 * memcpy (which is libc's and may use vector registers when not inlined). */
typedef uint16_t u16_any __attribute__((aligned(1), may_alias));
typedef uint32_t u32_any __attribute__((aligned(1), may_alias));
typedef uint64_t u64_any __attribute__((aligned(1), may_alias));

static const int greg_of[VG_SDT_NREGS] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
                                          REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                          REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};

static uint64_t reg_value(const long long *gregs, struct vg_sdt_regpart r)
{
	uint64_t v = (uint64_t)gregs[greg_of[r.reg]] >> r.shift;
	return r.width == 8 ? v : v & ((1ull << (8 * r.width)) - 1);
}

static uint64_t load(uint64_t at, unsigned size)
{
	const void *p = (const void *)(uintptr_t)at;
	switch (size) {
	case 1:
		return *(const volatile uint8_t *)p;
	case 2:
		return *(const volatile u16_any *)p;
	case 4:
		return *(const volatile u32_any *)p;
	default:
		return *(const volatile u64_any *)p;
	}
}

static uint8_t *store(uint8_t *p, uint64_t v, unsigned size)
{
	switch (size) {
	case 1:
		*p = (uint8_t)v;
		break;
	case 2:
		*(u16_any *)p = (uint16_t)v;
		break;
	case 4:
		*(u32_any *)p = (uint32_t)v;
		break;
	default:
		*(u64_any *)p = v;
	}
	return p + size;
}

/* The value of one argument, truncated to its size and sign- or zero-extended. */
static uint64_t arg_value(const struct vg_sdt_arg *a, const long long *uc, uint64_t bias)
{
	uint64_t v = 0;
	if (a->loc == VG_SDT_LOC_CONST) {
		v = (uint64_t)a->value;
	} else if (a->loc == VG_SDT_LOC_REG) {
		v = reg_value(uc, a->reg);
	} else {
		uint64_t at = (uint64_t)a->value + (a->relocate ? bias : 0);
		if (a->reg.reg >= 0)
			at += reg_value(uc, a->reg);
		if (a->index.reg >= 0)
			at += reg_value(uc, a->index) * a->scale;
		/* The compiler named this operand as the argument's home at the site: it is
		 * mapped there (the note says so), as any load of the program's would be. */
		v = load(at, a->size);
	}
	if (a->size < 8) {
		unsigned bits = 8u * a->size;
		v &= (1ull << bits) - 1;
		if (a->is_signed && (v >> (bits - 1)))
			v |= ~0ull << bits;
	}
	return v;
}

uint8_t *vg__usdt_write_args(uint8_t *p, const struct vg_usdt_site *s, const long long *gregs)
{
	for (unsigned i = 0; i < s->nargs; i++) {
		uint64_t v = arg_value(&s->arg[i], gregs, s->bias);
		p = store(p, v, s->arg[i].size); /* little-endian: the low bytes */
	}
	return p;
}

void vg__usdt_pair_open(struct vg_usdt_open_starts *o, uint16_t pair, uint64_t t)
{
	unsigned k = pair % VG_USDT_SLOTS;
	if (!o || (o->depth[k] && o->pair[k] != pair))
		return;
	o->pair[k] = pair;
	if (o->depth[k] < VG_USDT_DEPTH)
		o->since[k][o->depth[k]] = t;
	if (o->depth[k] < 255)
		o->depth[k]++;
}

uint64_t vg__usdt_pair_close(uint16_t pair)
{
	struct vg_usdt_open_starts *o = vg__usdt_open_starts;
	unsigned k = pair % VG_USDT_SLOTS;
	if (!o || !o->depth[k] || o->pair[k] != pair)
		return 0;
	uint8_t d = --o->depth[k];
	return d < VG_USDT_DEPTH ? o->since[k][d] : 0;
}

/* vg_now() when the clock is the TSC (checked by the caller), without its fallback call. */
static uint64_t now_tsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	uint64_t d = (((uint64_t)hi << 32) | lo) - vg__clock.base_tsc;
	return vg__clock.base_ns + (uint64_t)(((unsigned __int128)d * vg__clock.mult) >> 32);
}

/* The trampoline's first call (usdt_tramp.c): gregs as the int3 path's ucontext has
 * them. 0: done (recorded, or nothing to record); 1: nothing done, the full path must. */
__attribute__((used)) int vg__usdt_jump_fast(const struct vg_usdt_site *s, long long *gregs)
{
	if (vg__usdt_in_trap || !atomic_load_explicit(&s->armed, memory_order_relaxed))
		return 0;
	struct vg_thread *t = &vg__tls;
	vg_sensor *sensor = s->sensor;
	/* several listeners: the full path decides which of them take the event */
	if (!vg__clock.use_tsc || t->busy || vg__listening ||
	    (s->pair_role == VG_USDT_OPEN && !vg__usdt_open_starts))
		return 1;
	/* claimed before the buffer is looked at, as vg__event_start does: a signal handler
	 * recording meanwhile drops its event instead of writing into ours */
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	int on = vg_on(sensor) && !vg__reporting_off(sensor);
	uint64_t ts = now_tsc();
	if (on && (((size_t)(t->end - t->pos) < VG_EVENT_HEADER_MAX + s->payload) |
	           ((int64_t)(ts - t->last_ts) < 0))) {
		atomic_signal_fence(memory_order_seq_cst);
		t->busy = 0;
		return 1;
	}
	vg__usdt_in_trap = 1;
	gregs[REG_RIP] = (long long)(atomic_load_explicit(&s->addr, memory_order_relaxed) + 1);
	uint64_t since = s->pair_role == VG_USDT_CLOSE ? vg__usdt_pair_close(s->pair) : 0;
	if (s->pair_role == VG_USDT_OPEN)
		vg__usdt_pair_open(vg__usdt_open_starts, s->pair, ts);
	if (on) {
		uint8_t *p = vg__event_header(t, sensor, ts);
		if (s->pair_role == VG_USDT_CLOSE)
			p = store(p, since, 8);
		vg__event_commit_main(t, vg__usdt_write_args(p, s, gregs));
	} else {
		atomic_signal_fence(memory_order_seq_cst);
		t->busy = 0;
	}
	vg__usdt_in_trap = 0;
	return 0;
}
