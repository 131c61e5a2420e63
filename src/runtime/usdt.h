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

/* usdt_trap.c: installs the SIGTRAP handler (once; it stays). 0, or -1 with errno. */
int vg__usdt_trap_install(void);
/* Records the event of a site from the registers and memory of the trapped thread. */
void vg__usdt_record(const struct vg_usdt_site *s, const void *ucontext);
/* A thread's end: its open starts of start/done pairs, if it had any, are unmapped. */
void vg__usdt_thread_exit(void);

#endif
