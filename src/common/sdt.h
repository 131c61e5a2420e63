/* SystemTap SDT probe sites (USDT) of an ELF file: the `.note.stapsdt` notes and their
 * argument specifications (docs/usdt.md). Written once for `vigil usdt list` (src/cli)
 * and the runtime that arms the sites (src/runtime/usdt*.c, which compiles sdt.c in):
 * libc only, no allocation, everything read from a caller's buffer and bounds-checked,
 * so a truncated or malformed file yields an error, never a read out of bounds.
 *
 * x86-64 ELF64 little-endian only (the operand syntax is the AT&T one of that target). */
#ifndef VIGIL_COMMON_SDT_H
#define VIGIL_COMMON_SDT_H

#include <stddef.h>
#include <stdint.h>

#define VG_SDT_MAX_ARGS 12 /* sys/sdt.h goes up to 12 */

/* General registers, in this order (the runtime maps them onto ucontext's gregs). */
enum vg_sdt_reg {
	VG_SDT_RAX,
	VG_SDT_RBX,
	VG_SDT_RCX,
	VG_SDT_RDX,
	VG_SDT_RSI,
	VG_SDT_RDI,
	VG_SDT_RBP,
	VG_SDT_RSP,
	VG_SDT_R8,
	VG_SDT_R9,
	VG_SDT_R10,
	VG_SDT_R11,
	VG_SDT_R12,
	VG_SDT_R13,
	VG_SDT_R14,
	VG_SDT_R15,
	VG_SDT_RIP,
	VG_SDT_NREGS,
	VG_SDT_NOREG = -1
};

enum vg_sdt_loc {
	VG_SDT_LOC_REG,   /* the value is in a register (or part of one: %eax, %ah) */
	VG_SDT_LOC_MEM,   /* at base + index * scale + disp */
	VG_SDT_LOC_CONST, /* $value */
};

/* A register operand: bits [shift, shift + 8 * width) of general register `reg`. */
struct vg_sdt_regpart {
	int8_t reg; /* enum vg_sdt_reg, VG_SDT_NOREG */
	uint8_t width, shift;
};

struct vg_sdt_arg {
	uint8_t size; /* bytes of the value: 1, 2, 4, 8 */
	uint8_t is_signed;
	uint8_t loc; /* enum vg_sdt_loc */
	/* disp is a link-time address (a symbol, possibly rip-relative): add the object's
	 * load bias at run time */
	uint8_t relocate;
	struct vg_sdt_regpart reg; /* LOC_REG: the register; LOC_MEM: the base (or NOREG) */
	struct vg_sdt_regpart index;
	uint8_t scale;
	int64_t value;    /* LOC_CONST: the constant; LOC_MEM: the displacement */
	const char *text; /* the spec as written ("-4@-16(%rbp)"), not NUL-terminated */
	uint16_t text_len;
};

struct vg_sdt_probe {
	const char *provider, *name, *args; /* NUL-terminated, inside the file's buffer */
	uint64_t pc;        /* link-time address of the site (after the .stapsdt.base fix) */
	uint64_t semaphore; /* link-time address of its 2-byte semaphore, or 0 */
	unsigned nargs;
	struct vg_sdt_arg arg[VG_SDT_MAX_ARGS];
	/* NULL when every argument was understood; else why not (arg_bad: which, 1-based) */
	const char *arg_error;
	unsigned arg_bad;
};

/* An ELF file held in memory by the caller. */
struct vg_sdt_file {
	const uint8_t *data;
	size_t size;
	int is_dyn; /* ET_DYN (shared object, PIE): addresses are relative to a load bias */
	const uint8_t *notes; /* .note.stapsdt, or NULL */
	size_t notes_size;
	int have_base; /* .stapsdt.base exists: note addresses are adjusted (prelink) */
	uint64_t base_addr;
	/* symbol tables, for operands that name a variable ("4@counter(%rip)") */
	const uint8_t *sym[2], *str[2];
	size_t nsym[2], strsize[2];
	/* first PT_LOAD's link-time address (for a bias from a mapping's start) */
	uint64_t first_load_vaddr;
};

/* Parses the ELF headers and finds the notes: 0, or -1 with one line in err (not an
 * ELF file, another architecture, truncated headers). A file without notes opens fine
 * (f->notes == NULL). */
int vg_sdt_open(struct vg_sdt_file *f, const void *data, size_t size, char *err, size_t errsize);

/* Walks the notes: set *cursor to 0, then call until it returns 0 (no more) or -1 (a
 * malformed note: err says where and why; the walk stops). 1: *p holds the next probe
 * (p->arg_error set if an argument was not understood; the probe is still listed). */
int vg_sdt_next(const struct vg_sdt_file *f, size_t *cursor, struct vg_sdt_probe *p, char *err,
                size_t errsize);

/* Parses an argument list ("-4@%eax 8@-16(%rbp)") into p->arg / p->nargs, resolving
 * symbols through f (may be NULL: symbols are then not understood). Sets p->arg_error. */
void vg_sdt_parse_args(const struct vg_sdt_file *f, struct vg_sdt_probe *p, const char *args);

/* The register's name as the notes spell it ("rax"), for listings. */
const char *vg_sdt_reg_name(int reg);

#endif
