/* SDT notes and their argument specifications (sdt.h). Every offset and size read from
 * the file is checked against the buffer before use; nothing is allocated. */
#include "common/sdt.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

#define NT_STAPSDT 3

/* ---- ELF headers ---- */

/* Is [off, off + len) inside the buffer? */
static int inside(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

static const Elf64_Shdr *section(const struct vg_sdt_file *f, const Elf64_Ehdr *eh, unsigned i)
{
	return (const Elf64_Shdr *)(f->data + eh->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr));
}

/* The section's name, or "" when its string is not inside the names table. */
static const char *section_name(const struct vg_sdt_file *f, const Elf64_Shdr *names,
                                const Elf64_Shdr *s)
{
	if (!names || s->sh_name >= names->sh_size)
		return "";
	const char *str = (const char *)f->data + names->sh_offset;
	size_t left = names->sh_size - s->sh_name;
	return memchr(str + s->sh_name, 0, left) ? str + s->sh_name : "";
}

static void keep_symtab(struct vg_sdt_file *f, const Elf64_Ehdr *eh, const Elf64_Shdr *s, int k)
{
	if (s->sh_link >= eh->e_shnum || s->sh_entsize != sizeof(Elf64_Sym))
		return;
	const Elf64_Shdr *str = section(f, eh, s->sh_link);
	if (!inside(f->size, s->sh_offset, s->sh_size) ||
	    !inside(f->size, str->sh_offset, str->sh_size) || s->sh_offset % 8)
		return;
	f->sym[k] = f->data + s->sh_offset;
	f->nsym[k] = s->sh_size / sizeof(Elf64_Sym);
	f->str[k] = f->data + str->sh_offset;
	f->strsize[k] = str->sh_size;
}

int vg_sdt_open(struct vg_sdt_file *f, const void *data, size_t size, char *err, size_t errsize)
{
	memset(f, 0, sizeof *f);
	f->data = data;
	f->size = size;
	const Elf64_Ehdr *eh = data;
	if (size < EI_NIDENT || memcmp(f->data, ELFMAG, SELFMAG)) {
		snprintf(err, errsize, "not an ELF file");
		return -1;
	}
	if (size < sizeof *eh || f->data[EI_CLASS] != ELFCLASS64 ||
	    f->data[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64) {
		snprintf(err, errsize,
		         "not an x86-64 ELF64 file (the only kind whose probe "
		         "operands vigil reads)");
		return -1;
	}
	f->is_dyn = eh->e_type == ET_DYN;
	if (eh->e_phentsize == sizeof(Elf64_Phdr) &&
	    inside(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)) &&
	    eh->e_phoff % 8 == 0) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(f->data + eh->e_phoff);
		for (unsigned i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_LOAD) {
				f->first_load_vaddr = ph[i].p_vaddr & ~(uint64_t)0xfff;
				break;
			}
	}
	if (!eh->e_shoff) /* no section headers (sstrip): no notes to find */
		return 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff % 8 ||
	    !inside(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
		snprintf(err, errsize, "section headers past the end of the file (truncated?)");
		return -1;
	}
	const Elf64_Shdr *names = NULL;
	if (eh->e_shstrndx < eh->e_shnum) {
		names = section(f, eh, eh->e_shstrndx);
		if (!inside(size, names->sh_offset, names->sh_size))
			names = NULL;
	}
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = section(f, eh, i);
		const char *name = section_name(f, names, s);
		if (s->sh_type == SHT_NOTE && !strcmp(name, ".note.stapsdt")) {
			if (!inside(size, s->sh_offset, s->sh_size)) {
				snprintf(err, errsize,
				         ".note.stapsdt past the end of the file "
				         "(truncated?)");
				return -1;
			}
			f->notes = f->data + s->sh_offset;
			f->notes_size = s->sh_size;
		} else if (!strcmp(name, ".stapsdt.base")) {
			f->have_base = 1;
			f->base_addr = s->sh_addr;
		} else if (s->sh_type == SHT_SYMTAB) {
			keep_symtab(f, eh, s, 0);
		} else if (s->sh_type == SHT_DYNSYM) {
			keep_symtab(f, eh, s, 1);
		}
	}
	return 0;
}

/* ---- notes ---- */

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The next NUL-terminated string of [*p, end): it, or NULL when unterminated. */
static const char *take_str(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));
	if (!nul)
		return NULL;
	const char *s = (const char *)*p;
	*p = nul + 1;
	return s;
}

int vg_sdt_next(const struct vg_sdt_file *f, size_t *cursor, struct vg_sdt_probe *p, char *err,
                size_t errsize)
{
	while (f->notes && *cursor < f->notes_size) {
		size_t at = *cursor, left = f->notes_size - at;
		const uint8_t *n = f->notes + at;
		if (left < 12) {
			snprintf(err, errsize, ".note.stapsdt+%zu: note header cut short", at);
			return -1;
		}
		uint32_t namesz = get32(n), descsz = get32(n + 4), type = get32(n + 8);
		uint64_t name_span = ((uint64_t)namesz + 3) & ~(uint64_t)3;
		uint64_t desc_span = ((uint64_t)descsz + 3) & ~(uint64_t)3;
		if (12 + name_span + desc_span > left) {
			snprintf(err, errsize,
			         ".note.stapsdt+%zu: note of %u+%u bytes past the section's end",
			         at, namesz, descsz);
			return -1;
		}
		*cursor = at + 12 + name_span + desc_span;
		if (namesz != 8 || memcmp(n + 12, "stapsdt", 8) || type != NT_STAPSDT)
			continue; /* another owner or an older note version: not ours to read */
		const uint8_t *d = n + 12 + name_span, *end = d + descsz;
		if (descsz < 24) {
			snprintf(err, errsize,
			         ".note.stapsdt+%zu: descriptor of %u bytes, need 24 + "
			         "strings",
			         at, descsz);
			return -1;
		}
		memset(p, 0, sizeof *p);
		p->pc = get64(d);
		uint64_t base = get64(d + 8);
		p->semaphore = get64(d + 16);
		/* prelink moves sections after the notes were written: the distance between
		 * .stapsdt.base now and as recorded moves every address of the note */
		if (f->have_base && base) {
			p->pc += f->base_addr - base;
			if (p->semaphore)
				p->semaphore += f->base_addr - base;
		}
		const uint8_t *s = d + 24;
		p->provider = take_str(&s, end);
		p->name = p->provider ? take_str(&s, end) : NULL;
		p->args = p->name ? take_str(&s, end) : NULL;
		if (!p->args) {
			snprintf(err, errsize,
			         ".note.stapsdt+%zu: provider, name or arguments not "
			         "terminated inside the note",
			         at);
			return -1;
		}
		if (!p->provider[0] || !p->name[0]) {
			snprintf(err, errsize, ".note.stapsdt+%zu: empty provider or probe name",
			         at);
			return -1;
		}
		vg_sdt_parse_args(f, p, p->args);
		return 1;
	}
	return 0;
}

/* ---- argument specifications ---- */

struct reg_name {
	const char *name;
	int8_t reg;
	uint8_t width, shift;
};

static const struct reg_name regs[] = {
    {"rax", VG_SDT_RAX, 8, 0}, {"eax", VG_SDT_RAX, 4, 0}, {"ax", VG_SDT_RAX, 2, 0},
    {"al", VG_SDT_RAX, 1, 0},  {"ah", VG_SDT_RAX, 1, 8},  {"rbx", VG_SDT_RBX, 8, 0},
    {"ebx", VG_SDT_RBX, 4, 0}, {"bx", VG_SDT_RBX, 2, 0},  {"bl", VG_SDT_RBX, 1, 0},
    {"bh", VG_SDT_RBX, 1, 8},  {"rcx", VG_SDT_RCX, 8, 0}, {"ecx", VG_SDT_RCX, 4, 0},
    {"cx", VG_SDT_RCX, 2, 0},  {"cl", VG_SDT_RCX, 1, 0},  {"ch", VG_SDT_RCX, 1, 8},
    {"rdx", VG_SDT_RDX, 8, 0}, {"edx", VG_SDT_RDX, 4, 0}, {"dx", VG_SDT_RDX, 2, 0},
    {"dl", VG_SDT_RDX, 1, 0},  {"dh", VG_SDT_RDX, 1, 8},  {"rsi", VG_SDT_RSI, 8, 0},
    {"esi", VG_SDT_RSI, 4, 0}, {"si", VG_SDT_RSI, 2, 0},  {"sil", VG_SDT_RSI, 1, 0},
    {"rdi", VG_SDT_RDI, 8, 0}, {"edi", VG_SDT_RDI, 4, 0}, {"di", VG_SDT_RDI, 2, 0},
    {"dil", VG_SDT_RDI, 1, 0}, {"rbp", VG_SDT_RBP, 8, 0}, {"ebp", VG_SDT_RBP, 4, 0},
    {"bp", VG_SDT_RBP, 2, 0},  {"bpl", VG_SDT_RBP, 1, 0}, {"rsp", VG_SDT_RSP, 8, 0},
    {"esp", VG_SDT_RSP, 4, 0}, {"sp", VG_SDT_RSP, 2, 0},  {"spl", VG_SDT_RSP, 1, 0},
    {"rip", VG_SDT_RIP, 8, 0},
};

static const char *const reg64[VG_SDT_NREGS] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi",
                                                "rbp", "rsp", "r8",  "r9",  "r10", "r11",
                                                "r12", "r13", "r14", "r15", "rip"};

const char *vg_sdt_reg_name(int reg)
{
	return reg >= 0 && reg < VG_SDT_NREGS ? reg64[reg] : "?";
}

static int is_ident(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
	       c == '$' || (!first && c >= '0' && c <= '9');
}

/* "%rax", "%r10d", "%ah" at *s: 0 and the part, -1 if no register is named. */
static int parse_reg(const char **s, struct vg_sdt_regpart *out)
{
	const char *p = *s;
	if (*p != '%')
		return -1;
	p++;
	char name[8];
	size_t n = 0;
	while (n < sizeof name - 1 &&
	       ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')))
		name[n] = p[n], n++;
	name[n] = 0;
	if (!n || ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')))
		return -1;
	if (name[0] == 'r' && name[1] >= '0' && name[1] <= '9') { /* r8 .. r15[dwb] */
		int num = name[1] - '0';
		size_t k = 2;
		if (name[2] >= '0' && name[2] <= '9')
			num = num * 10 + (name[2] - '0'), k = 3;
		if (num < 8 || num > 15)
			return -1;
		uint8_t width = !name[k]                 ? 8
		                : !strcmp(name + k, "d") ? 4
		                : !strcmp(name + k, "w") ? 2
		                : !strcmp(name + k, "b") ? 1
		                                         : 0;
		if (!width)
			return -1;
		*out = (struct vg_sdt_regpart){(int8_t)(VG_SDT_R8 + num - 8), width, 0};
	} else {
		size_t i = 0;
		while (i < sizeof regs / sizeof *regs && strcmp(regs[i].name, name))
			i++;
		if (i == sizeof regs / sizeof *regs)
			return -1;
		*out = (struct vg_sdt_regpart){regs[i].reg, regs[i].width, regs[i].shift};
	}
	*s = p + n;
	return 0;
}

/* A decimal or 0x integer with an optional sign: 0, or -1. */
static int parse_int(const char **s, int64_t *out)
{
	const char *p = *s;
	int neg = 0;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	uint64_t v = 0;
	int base = 10, digits = 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16, p += 2;
	for (;; p++, digits++) {
		int d = *p >= '0' && *p <= '9'                 ? *p - '0'
		        : base == 16 && *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
		        : base == 16 && *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
		                                               : -1;
		if (d < 0)
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (!digits)
		return -1;
	*out = (int64_t)(neg ? 0 - v : v);
	*s = p;
	return 0;
}

/* The address of a data symbol named [name, name + len): 0 found, -1 not there, -2
 * ambiguous (two local symbols of that name with different addresses). */
static int find_symbol(const struct vg_sdt_file *f, const char *name, size_t len, uint64_t *addr)
{
	if (!f)
		return -1;
	for (int k = 0; k < 2; k++) {
		int found = 0;
		for (size_t i = 1; i < f->nsym[k]; i++) {
			Elf64_Sym sym;
			memcpy(&sym, f->sym[k] + i * sizeof sym, sizeof sym);
			if (sym.st_shndx == SHN_UNDEF || sym.st_name >= f->strsize[k] ||
			    f->strsize[k] - sym.st_name <= len)
				continue;
			const char *s = (const char *)f->str[k] + sym.st_name;
			if (memcmp(s, name, len) || s[len])
				continue;
			int type = ELF64_ST_TYPE(sym.st_info);
			if (type != STT_OBJECT && type != STT_NOTYPE && type != STT_TLS)
				continue;
			if (type == STT_TLS)
				return -1; /* thread-local: not an address */
			if (found && sym.st_value != *addr)
				return -2;
			found = 1;
			*addr = sym.st_value;
		}
		if (found)
			return 0;
	}
	return -1;
}

/* One "N@operand" spec into a; NULL or the reason it was not understood. */
static const char *parse_one(const struct vg_sdt_file *f, const char *s, const char *end,
                             struct vg_sdt_arg *a)
{
	memset(a, 0, sizeof *a);
	a->reg.reg = a->index.reg = VG_SDT_NOREG;
	a->text = s;
	a->text_len = (uint16_t)(end - s > 0xffff ? 0xffff : end - s);
	const char *at = memchr(s, '@', (size_t)(end - s));
	if (!at)
		return "no size (expected N@operand)";
	const char *p = s;
	int64_t size;
	if (parse_int(&p, &size) < 0 || p != at)
		return "bad size before '@'";
	a->is_signed = size < 0;
	uint64_t mag = size < 0 ? (uint64_t)0 - (uint64_t)size : (uint64_t)size;
	if (mag != 1 && mag != 2 && mag != 4 && mag != 8)
		return "size is not 1, 2, 4 or 8 bytes";
	a->size = (uint8_t)mag;
	p = at + 1;
	if (*p == '%') { /* register */
		if (parse_reg(&p, &a->reg) < 0 || a->reg.reg == VG_SDT_RIP)
			return "unknown register";
		a->loc = VG_SDT_LOC_REG;
	} else if (*p == '$') { /* constant */
		p++;
		if (parse_int(&p, &a->value) < 0)
			return "constant is not an integer (a symbol's address?)";
		a->loc = VG_SDT_LOC_CONST;
	} else { /* memory: [disp|sym[+-disp]](%base[,%index[,scale]]) */
		a->loc = VG_SDT_LOC_MEM;
		if (*p == '%')
			return "segment-relative operand";
		int64_t lead = 0; /* "40+CheckpointStats(%rip)": an offset before the symbol */
		if (*p != '(' && !is_ident(*p, 1)) {
			if (parse_int(&p, &lead) < 0)
				return "bad displacement";
			if (*p == '+' && is_ident(p[1], 1))
				p++;
		}
		if (is_ident(*p, 1)) {
			const char *name = p;
			while (p < end && is_ident(*p, 0))
				p++;
			uint64_t addr = 0;
			int r = find_symbol(f, name, (size_t)(p - name), &addr);
			if (r == -2)
				return "symbol defined more than once (static variables of one "
				       "name)";
			if (r < 0)
				return "symbol not in the file's symbol tables (stripped?)";
			int64_t off = 0;
			if ((*p == '+' || *p == '-') && parse_int(&p, &off) < 0)
				return "bad offset after the symbol";
			a->value = (int64_t)(addr + (uint64_t)lead + (uint64_t)off);
			a->relocate = 1;
		} else {
			a->value = lead;
		}
		if (*p == '(') {
			p++;
			if (*p != ',' && parse_reg(&p, &a->reg) < 0)
				return "unknown base register";
			if (a->reg.reg >= 0 && a->reg.width != 8)
				return "base register is not a 64-bit register";
			if (*p == ',') {
				p++;
				if (parse_reg(&p, &a->index) < 0 || a->index.width != 8 ||
				    a->index.reg == VG_SDT_RIP)
					return "bad index register";
				a->scale = 1;
				if (*p == ',') {
					p++;
					int64_t sc;
					if (parse_int(&p, &sc) < 0 ||
					    (sc != 1 && sc != 2 && sc != 4 && sc != 8))
						return "scale is not 1, 2, 4 or 8";
					a->scale = (uint8_t)sc;
				}
			}
			if (*p++ != ')')
				return "missing ')'";
			if (a->reg.reg == VG_SDT_RIP) {
				/* rip-relative is only meaningful with a symbol: its address is the
				 * symbol's, whatever the instruction's */
				if (!a->relocate || a->index.reg >= 0)
					return "rip-relative operand without a symbol";
				a->reg.reg = VG_SDT_NOREG;
			}
		} else if (!a->relocate) {
			return "absolute address without a symbol";
		}
	}
	if (p != end)
		return "unexpected text after the operand";
	return NULL;
}

void vg_sdt_parse_args(const struct vg_sdt_file *f, struct vg_sdt_probe *p, const char *args)
{
	p->nargs = 0;
	p->arg_error = NULL;
	p->arg_bad = 0;
	const char *s = args;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return;
		const char *e = s;
		while (*e && *e != ' ' && *e != '\t')
			e++;
		if (p->nargs == VG_SDT_MAX_ARGS) {
			p->arg_error = "more than 12 arguments (from this one on)";
			p->arg_bad = p->nargs; /* an argument that exists, for the message */
			return;
		}
		struct vg_sdt_arg *a = &p->arg[p->nargs++];
		const char *why = parse_one(f, s, e, a);
		if (why && !p->arg_error) {
			p->arg_error = why;
			p->arg_bad = p->nargs;
		}
		s = e;
	}
}
