/* USDT probe sites armed as sensors (docs/usdt.md): usdt.c finds and arms the sites,
 * usdt_trap.c is the SIGTRAP handler that records them, src/common/sdt.c the note reader (compiled
 * in). */
#ifndef VIGIL_RUNTIME_USDT_H
#define VIGIL_RUNTIME_USDT_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/sdt.h"
#include "vigil/vigil.h"

/* VG_USDT_LOADER: the loader's r_brk (_dl_debug_state), where dlopen says a library was
 * mapped: not a probe; the handler returns from it and arms the new objects' sites. */
enum { VG_USDT_ALONE, VG_USDT_OPEN, VG_USDT_CLOSE, VG_USDT_LOADER };

#define VG_USDT_NOP 0x90
#define VG_USDT_INT3 0xcc
#define VG_USDT_JMP 0xe9

/* How an armed site reaches libvigil (usdt_jump.c): its int3 (the breakpoint path), or a
 * jump into its trampoline. CONVERTING: the int3 is still there but its handler resumes in
 * the trampoline, while the bytes after the nop are being rewritten. */
enum { VG_USDT_PATH_INT3, VG_USDT_PATH_CONVERTING, VG_USDT_PATH_JUMP };

#define VG_USDT_JUMP_MAX_BYTES 16
#define VG_USDT_JUMP_MAX_INSNS 8

/* A site's patch plan (made by the vigil CLI with a disassembler, docs/usdt.md, "The jump
 * path") and, once written, its trampoline. */
struct vg_usdt_jump {
	uint8_t len;                          /* bytes displaced: the nop and what follows */
	uint8_t orig[VG_USDT_JUMP_MAX_BYTES]; /* the program's bytes there */
	uint8_t ninsns;                       /* instructions displaced, the nop first */
	uint8_t insn_len[VG_USDT_JUMP_MAX_INSNS];
	char insn_kind[VG_USDT_JUMP_MAX_INSNS];   /* c copy, r rip-relative, j jmp, k jcc, l call */
	uint8_t insn_arg[VG_USDT_JUMP_MAX_INSNS]; /* r: the disp32's offset; k: the condition */
	int64_t insn_target[VG_USDT_JUMP_MAX_INSNS]; /* j k l: the target minus the site */
	uint8_t *tramp;                              /* NULL until written */
	uint8_t *resume;                             /* the relocated instructions after the nop */
	uint8_t tramp_off[VG_USDT_JUMP_MAX_INSNS];   /* where each relocated instruction starts */
};

/* One armed (or once armed) site. Entries are never removed: a thread that trapped on
 * a site just before it was disarmed still finds it in the handler. */
struct vg_usdt_site {
	_Atomic uintptr_t addr; /* the nop's address; published last (release) */
	vg_sensor *sensor;
	_Atomic(uint16_t *) semaphore; /* NULL: none */
	uint64_t bias;                 /* the object's load bias, for symbol operands */
	uint32_t payload;              /* bytes of the event's fields */
	/* `*__start`/`*__begin` (OPEN) and `*__done`/`*__end` (CLOSE) of one pair */
	uint8_t pair_role;
	uint16_t pair; /* the pair's number, for the thread's stack of open starts */
	uint8_t nargs;
	_Atomic uint8_t armed;
	_Atomic uint8_t path;       /* VG_USDT_PATH_*: set only under usdt.c's lock */
	_Atomic uint32_t in_flight; /* threads inside the int3 handler for this site */
	struct vg_usdt_jump *jump;  /* its plan; NULL: the int3 path only */
	struct vg_sdt_arg arg[VG_SDT_MAX_ARGS];
};

/* The site at addr, or NULL; async-signal-safe (no lock, no allocation). */
struct vg_usdt_site *vg__usdt_find(uintptr_t addr);

/* usdt.c: arms the sites VIGIL_USDT names (at start, recording). */
void vg__usdt_init(void);
/* The loader's r_brk was hit with the link maps consistent: arms the remembered
 * patterns' sites in the objects not seen before (a dlopen). */
void vg__usdt_loaded(void);
/* `usdt enable|disable PROVIDER:GLOB` of the control channel: count = sites switched. */
int vg__usdt_switch(int enable, const char *pattern, long *count, char *err, size_t errsize);

/* `usdt plan DEV:INO:PC:HEX:INSNS`: a site's plan for the jump path (usdt_jump.c), used
 * when a later `usdt enable` arms it. */
int vg__usdt_plan(const char *text, char *err, size_t errsize);

/* usdt_trap.c: installs the SIGTRAP handler (once; it stays). 0, or -1 with errno. */
int vg__usdt_trap_install(void);
/* Records the event of a site from the registers (a ucontext's gregs) and memory of the
 * thread that reached it. */
void vg__usdt_record(const struct vg_usdt_site *s, const long long *gregs);

/* usdt_jump.c: the jump path. Plans arrive as text (VIGIL_USDT_PLAN at start, the control
 * channel's `usdt plan` later): one site's `DEV:INO:PC:HEX:INSNS` per call; 0, or -1 with
 * err. Caller holds usdt.c's lock. */
int vg__usdt_plan_add(const char *text, char *err, size_t errsize);
/* The plan for the site at pc of the file (dev, ino), or NULL. Caller holds the lock. */
const struct vg_usdt_jump *vg__usdt_plan_find(uint64_t dev, uint64_t ino, uint64_t pc);
/* Sites armed with int3 whose s->jump is set: their trampolines are written and their
 * int3 replaced by jumps, all in one pass. The number converted; the others stay on the
 * int3 path (why in err). Caller holds the lock. */
long vg__usdt_jump_convert(struct vg_usdt_site **sites, size_t n, char *err, size_t errsize);
/* A site on the jump path back to its int3 (its original bytes after the nop), before
 * the int3 is disarmed as usual. 0, or -1 with err (the site stays on the jump path). */
int vg__usdt_jump_revert(struct vg_usdt_site *s, char *err, size_t errsize);
/* usdt_tramp.c: the trampolines' common entry saves the registers (and the vector state,
 * by XSAVE) and calls the recorder. 1 if this processor allows it (XSAVE), else 0. */
int vg__usdt_tramp_init(void);

/* Writes n bytes of code at `at` (a page of protection prot): 0, or -1 with why. */
int vg__usdt_code_write(uint8_t *at, const void *bytes, size_t n, int prot, char *why,
                        size_t whysize);
/* A thread's end: its open starts of start/done pairs, if it had any, are unmapped. */
void vg__usdt_thread_exit(void);

#endif
