/* A sensor compiled against vigil.h of ABI 0 (before compact headers), as far as the
 * library sees it: the types are today's (unchanged), the inline writer is ABI 0's. It
 * references the thread-local writer state by its ABI 0 name, `vg__tls`, and writes the
 * 6-byte event header (uint16 id, low 32 bits of the time) that today's trace declaration
 * would misread. Used by abi_subject.c for runtime.old_abi. */
#ifndef TESTS_RUNTIME_ABI0_VIGIL_H
#define TESTS_RUNTIME_ABI0_VIGIL_H

#include <vigil/vigil.h>

#undef vg__tls
extern __thread struct vg_thread vg__tls __attribute__((tls_model("initial-exec")));

#define ABI0_HEADER 6

static inline uint8_t *abi0_event_begin(vg_sensor *s, uint32_t payload)
{
	struct vg_thread *t = &vg__tls;
	if (t->mute || t->busy)
		return NULL;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t ts = vg_now();
	if ((size_t)(t->end - t->pos) < ABI0_HEADER + payload || ((ts - t->last_ts) >> 32))
		return vg__event_begin_slow(s, payload);
	uint8_t *p = t->pos;
	uint32_t low = (uint32_t)ts;
	t->last_ts = ts;
	memcpy(p, &s->id, 2);
	memcpy(p + 2, &low, 4);
	return p + ABI0_HEADER;
}

static inline void abi0_event_commit(uint8_t *end)
{
	struct vg_thread *t = &vg__tls;
	t->pos = end;
	atomic_signal_fence(memory_order_release);
	t->ctx->timestamp_end = t->last_ts;
	t->ctx->content_size = (uint64_t)(end - t->base) * 8;
	atomic_signal_fence(memory_order_release);
	t->busy = 0;
}

#endif
