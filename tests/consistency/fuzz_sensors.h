/* The consistency fuzzer's sensors (tests/consistency/fuzz_main.c): one per op of
 * docs/consistency.md, each recorded either through the inline API as generated code does
 * (vg_tracking, vg_enter_begin/commit, vg_leave_begin, vg_op_begin, vg_event_begin) or
 * through vg_emit, as the caller picks. Every payload ends with `seq`, the operation's
 * index in the run's global sequence, so that each event is unique and the projection
 * checker can match a partial run's events with the full run's. */
#ifndef FUZZ_SENSORS_H
#define FUZZ_SENSORS_H

#include <stdint.h>
#include <vigil/vigil.h>

enum fz_sensor {
	FZ_OBJ_NEW,  /* create {obj, seq} */
	FZ_OBJ_FREE, /* reclaim {obj, seq} */
	FZ_REF,      /* reference {from, to, seq} */
	FZ_TOUCH,    /* activity {obj, type, seq} */
	FZ_CALL,     /* enter {fn, obj, seq} */
	FZ_RET,      /* leave {seq} */
	FZ_ACQ,      /* acquire {lock, seq} */
	FZ_REL,      /* release {lock, seq} */
	FZ_WAIT,     /* wait_begin {lock, seq} */
	FZ_GOT,      /* wait_end {lock, seq} */
	FZ_STOP,     /* suspend {thread, seq} */
	FZ_GO,       /* resume {thread, seq} */
	FZ_NSENSORS
};

extern vg_sensor *fz_sensors[FZ_NSENSORS];

void fz_sensors_register(void);

/* `inl`: through the inline API (1) or vg_emit (0). */
void fz_obj_op(int inl, enum fz_sensor which, vg_entity *obj, uint32_t seq);
void fz_ref(int inl, const vg_entity *from, const vg_entity *to, uint32_t seq);
void fz_touch(int inl, const vg_entity *obj, const vg_entity *type, uint32_t seq);
void fz_call(int inl, uint32_t fn, const vg_entity *obj, uint32_t seq);
void fz_ret(int inl, uint32_t seq);
/* Lock and thread ops: {target, seq}. */
void fz_target_op(int inl, enum fz_sensor which, vg_entity *target, uint32_t seq);

#endif
