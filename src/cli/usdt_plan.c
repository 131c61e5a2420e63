/* Patch plans for the jump path of USDT sites (docs/usdt.md, "The jump path").
 *
 * The runtime depends on libc only, so the instructions around a site are decoded here,
 * with capstone, and the runtime is handed a plan per site: the bytes displaced by the
 * 5-byte jump (the nop and the whole instructions after it), and how to relocate each.
 * A site is refused (it stays on the int3 path, one line says why) when a branch or a
 * jump table could land inside the displaced bytes, when they hold a call before their
 * end (a return would land inside them), a jrcxz/loop, a system call, a trap, an endbr64
 * (where indirect branches land), or when the code ends (ret, jmp) before 5 bytes.
 *
 * Branch targets: every direct branch and call of the file's code (a linear sweep of its
 * executable sections), every rip-relative lea's target in code (computed gotos), and
 * the possible entries of jump tables: the 32-bit offsets at the 4 KiB after each
 * rip-relative lea's data target (gcc's and clang's relative tables) that land within
 * 1 MiB of that lea, the 64-bit words of the data sections and the R_X86_64_RELATIVE
 * addends that land in code (absolute tables). A superset: its false hits only cost a
 * site the jump path. */
#define _GNU_SOURCE
#include <capstone/capstone.h>
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sdt.h"
#include "usdt_plan.h"
#include "usdt_plan_cache.h"

struct u64s {
	uint64_t *v;
	size_t n, cap;
};

static int push(struct u64s *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 4096;
		uint64_t *m = realloc(a->v, cap * sizeof *m);
		if (!m)
			return -1;
		a->v = m, a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The first target in (lo, hi), or 0. */
static uint64_t target_inside(const struct u64s *t, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = t->n;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (t->v[m] <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a < t->n && t->v[a] < hi ? t->v[a] : 0;
}

struct elf {
	const uint8_t *data;
	size_t size;
	const Elf64_Shdr *sh;
	unsigned nsh;
	int is_dyn;
	uint64_t code_lo, code_hi; /* the span of the executable sections */
};

static int in_code(const struct elf *e, uint64_t a)
{
	if (a < e->code_lo || a >= e->code_hi) /* most words are far from any code */
		return 0;
	for (unsigned i = 0; i < e->nsh; i++)
		if ((e->sh[i].sh_flags & SHF_EXECINSTR) && e->sh[i].sh_type == SHT_PROGBITS &&
		    a >= e->sh[i].sh_addr && a < e->sh[i].sh_addr + e->sh[i].sh_size)
			return 1;
	return 0;
}

/* The file bytes of [a, a + n) of a PROGBITS section, or NULL. */
static const uint8_t *bytes_at(const struct elf *e, uint64_t a, uint64_t n)
{
	for (unsigned i = 0; i < e->nsh; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		if (s->sh_type == SHT_PROGBITS && (s->sh_flags & SHF_ALLOC) && a >= s->sh_addr &&
		    a + n <= s->sh_addr + s->sh_size && s->sh_offset + s->sh_size <= e->size)
			return e->data + s->sh_offset + (a - s->sh_addr);
	}
	return NULL;
}

/* "0x1234" as a whole: its value, or 0. */
static uint64_t hex_operand(const char *s)
{
	char *end;
	if (strncmp(s, "0x", 2))
		return 0;
	uint64_t v = strtoull(s + 2, &end, 16);
	return *end ? 0 : v;
}

/* The target of "[rip + 0x10]" / "[rip - 0x10]" in an operand string, or 0. */
static uint64_t rip_target(const char *op, uint64_t next)
{
	const char *r = strstr(op, "[rip ");
	if (!r || (r[5] != '+' && r[5] != '-') || strncmp(r + 6, " 0x", 3))
		return 0;
	uint64_t d = strtoull(r + 9, NULL, 16);
	return r[5] == '+' ? next + d : next - d;
}

/* Every possible branch target of the file (see the top). 0, or -1. */
static int branch_targets(const struct elf *e, struct u64s *t)
{
	csh h;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -1;
	cs_option(h, CS_OPT_SKIPDATA, CS_OPT_ON);
	cs_insn *insn = cs_malloc(h);
	struct u64s leas = {0}; /* pairs: data target, the lea's address */
	for (unsigned i = 0; i < e->nsh; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		if (!(s->sh_flags & SHF_EXECINSTR) || s->sh_type != SHT_PROGBITS ||
		    s->sh_offset + s->sh_size > e->size)
			continue;
		const uint8_t *code = e->data + s->sh_offset;
		size_t left = s->sh_size;
		uint64_t addr = s->sh_addr;
		while (cs_disasm_iter(h, &code, &left, &addr, insn)) {
			const char *m = insn->mnemonic;
			uint64_t to;
			if ((strchr(m, 'j') || strstr(m, "call") || strstr(m, "loop") ||
			     strstr(m, "xbegin")) &&
			    (to = hex_operand(insn->op_str)))
				push(t, to);
			else if (!strcmp(m, "lea") &&
			         (to = rip_target(insn->op_str, insn->address + insn->size))) {
				if (in_code(e, to))
					push(t, to); /* a label's address: a computed goto */
				else
					push(&leas, to), push(&leas, insn->address);
			}
		}
	}
	cs_free(insn, 1);
	cs_close(&h);
	for (size_t i = 0; i + 1 < leas.n; i += 2) { /* relative jump tables */
		uint64_t base = leas.v[i], from = leas.v[i + 1], avail = 0;
		for (unsigned k = 0; k < e->nsh && !avail; k++) {
			const Elf64_Shdr *d = &e->sh[k];
			if (d->sh_type == SHT_PROGBITS && (d->sh_flags & SHF_ALLOC) &&
			    base >= d->sh_addr && base < d->sh_addr + d->sh_size &&
			    d->sh_offset + d->sh_size <= e->size)
				avail = d->sh_addr + d->sh_size - base;
		}
		const uint8_t *w = avail ? bytes_at(e, base, 1) : NULL;
		for (uint64_t a = 0; w && a + 4 <= avail && a < 4096; a += 4) {
			int32_t off;
			memcpy(&off, w + a, 4);
			uint64_t to = base + (uint64_t)(int64_t)off;
			if (to - from + (1u << 20) < (2u << 20) && in_code(e, to))
				push(t, to);
		}
	}
	free(leas.v);
	for (unsigned i = 0; i < e->nsh; i++) { /* absolute tables and code pointers */
		const Elf64_Shdr *s = &e->sh[i];
		if (s->sh_offset + s->sh_size > e->size)
			continue;
		if (s->sh_type == SHT_RELA && s->sh_entsize == sizeof(Elf64_Rela)) {
			const Elf64_Rela *r = (const Elf64_Rela *)(e->data + s->sh_offset);
			for (size_t k = 0; k < s->sh_size / sizeof *r; k++)
				if (ELF64_R_TYPE(r[k].r_info) == R_X86_64_RELATIVE &&
				    in_code(e, (uint64_t)r[k].r_addend))
					push(t, (uint64_t)r[k].r_addend);
		} else if (s->sh_type == SHT_PROGBITS && (s->sh_flags & SHF_ALLOC) &&
		           !(s->sh_flags & SHF_EXECINSTR)) {
			for (uint64_t k = 0; k + 8 <= s->sh_size; k += 8) {
				uint64_t v;
				memcpy(&v, e->data + s->sh_offset + k, 8);
				if (in_code(e, v))
					push(t, v);
			}
		}
	}
	qsort(t->v, t->n, sizeof *t->v, cmp_u64);
	return 0;
}

/* One site's plan (`PC:HEX:INSNS`, without the file's id) into out, or a refusal in why.
 * 0 planned, -1 refused. */
static int plan_site(csh h, const struct elf *e, const struct u64s *targets, uint64_t pc, char *out,
                     size_t outsize, char *why, size_t whysize)
{
	const uint8_t *code = bytes_at(e, pc, 1);
	if (!code || !in_code(e, pc) || code[0] != 0x90) {
		snprintf(why, whysize, "the site is not a nop in the file's code");
		return -1;
	}
	char insns[256] = "1c";
	size_t len = 1, used = strlen(insns);
	cs_insn *insn = cs_malloc(h);
	int rc = -1;
	while (len < 5) {
		uint64_t addr = pc + len;
		size_t left = 15;
		while (left && !bytes_at(e, addr, left)) /* near the section's end */
			left--;
		const uint8_t *p = left ? bytes_at(e, addr, left) : NULL;
		if (!p || !cs_disasm_iter(h, &p, &left, &addr, insn)) {
			snprintf(why, whysize, "the bytes after the nop do not decode");
			goto out;
		}
		const cs_x86 *x = &insn->detail->x86;
		uint8_t op = x->opcode[0], op2 = x->opcode[1];
		int ends = 0; /* control does not fall through */
		char kind[48];
		uint64_t to = 0;
		if (cs_insn_group(h, insn, CS_GRP_INT) || cs_insn_group(h, insn, CS_GRP_IRET) ||
		    insn->id == X86_INS_SYSCALL || insn->id == X86_INS_SYSENTER ||
		    insn->id == X86_INS_UD2 || insn->id == X86_INS_HLT) {
			snprintf(why, whysize, "a %s follows the nop", insn->mnemonic);
			goto out;
		} else if (insn->id == X86_INS_ENDBR64 || insn->id == X86_INS_ENDBR32) {
			/* it marks a target of indirect branches (IBT), which no sweep finds */
			snprintf(why, whysize,
			         "an %s follows the nop (an indirect branch may land there)",
			         insn->mnemonic);
			goto out;
		} else if (insn->id == X86_INS_JRCXZ || insn->id == X86_INS_JECXZ ||
		           insn->id == X86_INS_LOOP || insn->id == X86_INS_LOOPE ||
		           insn->id == X86_INS_LOOPNE) {
			snprintf(why, whysize, "a %s follows the nop", insn->mnemonic);
			goto out;
		} else if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
		           (insn->id == X86_INS_JMP || insn->id == X86_INS_CALL ||
		            cs_insn_group(h, insn, CS_GRP_JUMP))) {
			to = (uint64_t)x->operands[0].imm;
			if (insn->id == X86_INS_CALL) {
				if (len + insn->size < 5) {
					snprintf(why, whysize,
					         "a call among the displaced bytes (its "
					         "return would land inside them)");
					goto out;
				}
				snprintf(kind, sizeof kind, "l%" PRId64, (int64_t)(to - pc));
			} else if (insn->id == X86_INS_JMP) {
				snprintf(kind, sizeof kind, "j%" PRId64, (int64_t)(to - pc));
				ends = 1;
			} else { /* jcc: its condition is the opcode's low nibble */
				unsigned cc = (op == 0x0f ? op2 : op) & 0xf;
				snprintf(kind, sizeof kind, "k%u/%" PRId64, cc, (int64_t)(to - pc));
			}
		} else if (insn->id == X86_INS_CALL) { /* it would push the trampoline's address */
			snprintf(why, whysize, "an indirect call among the displaced bytes");
			goto out;
		} else {
			int rip = 0;
			for (unsigned k = 0; k < x->op_count; k++)
				rip |= x->operands[k].type == X86_OP_MEM &&
				       x->operands[k].mem.base == X86_REG_RIP;
			if (rip && x->encoding.disp_size != 4) {
				snprintf(why, whysize,
				         "a rip-relative operand without a 32-bit "
				         "displacement");
				goto out;
			}
			if (rip)
				snprintf(kind, sizeof kind, "r%u", x->encoding.disp_offset);
			else
				snprintf(kind, sizeof kind, "c");
			ends = insn->id == X86_INS_RET || insn->id == X86_INS_JMP;
		}
		if (to > pc && to < pc + len + insn->size) { /* back into the displaced bytes */
			snprintf(why, whysize, "a displaced %s jumps near the site",
			         insn->mnemonic);
			goto out;
		}
		int w = snprintf(insns + used, sizeof insns - used, ",%u%s", insn->size, kind);
		if (w < 0 || (size_t)w >= sizeof insns - used) {
			snprintf(why, whysize, "too many instructions to displace");
			goto out;
		}
		used += (size_t)w;
		len += insn->size;
		if (ends && len < 5) {
			snprintf(why, whysize, "the code ends (%s) less than 5 bytes after the nop",
			         insn->mnemonic);
			goto out;
		}
	}
	uint64_t hit = target_inside(targets, pc, pc + len);
	if (hit) {
		snprintf(why, whysize,
		         "a branch or jump table may land at 0x%" PRIx64 ", inside the %zu bytes "
		         "a jump would displace",
		         hit, len);
		goto out;
	}
	const uint8_t *orig = bytes_at(e, pc, len);
	if (!orig || len > 16) {
		snprintf(why, whysize, "the displaced bytes leave the section");
		goto out;
	}
	int w = snprintf(out, outsize, "%" PRIx64 ":", pc);
	for (size_t i = 0; i < len && w > 0 && (size_t)w + 3 < outsize; i++)
		w += snprintf(out + w, outsize - (size_t)w, "%02x", orig[i]);
	if (w < 0 || (size_t)w + strlen(insns) + 2 >= outsize) {
		snprintf(why, whysize, "the plan is too long");
		goto out;
	}
	snprintf(out + w, outsize - (size_t)w, ":%s", insns);
	rc = 0;
out:
	cs_free(insn, 1);
	return rc;
}

static int matches(const char *patterns, const struct vg_sdt_probe *p)
{
	for (const char *s = patterns; *s;) {
		size_t len = strcspn(s, ",");
		char pat[512], *colon;
		if (len < sizeof pat) {
			memcpy(pat, s, len);
			pat[len] = 0;
			if ((colon = strchr(pat, ':'))) {
				*colon = 0;
				if (!fnmatch(pat, p->provider, 0) &&
				    !fnmatch(colon + 1, p->name, 0))
					return 1;
			}
		}
		s += len + (s[len] == ',');
	}
	return 0;
}

/* The GNU build-id of the file in hex into out ("" if it has none). */
static void build_id(const struct elf *e, char *out, size_t size)
{
	out[0] = 0;
	for (unsigned i = 0; i < e->nsh; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		if (s->sh_type != SHT_NOTE || s->sh_offset + s->sh_size > e->size)
			continue;
		for (uint64_t at = 0; at + 12 <= s->sh_size;) {
			const uint8_t *n = e->data + s->sh_offset + at;
			uint32_t namesz, descsz, type;
			memcpy(&namesz, n, 4), memcpy(&descsz, n + 4, 4), memcpy(&type, n + 8, 4);
			uint64_t name_end = 12 + (((uint64_t)namesz + 3) & ~3ull);
			uint64_t next = name_end + (((uint64_t)descsz + 3) & ~3ull);
			if (at + next > s->sh_size)
				break;
			if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(n + 12, "GNU", 4) &&
			    descsz && 2 * (size_t)descsz < size) {
				for (uint32_t k = 0; k < descsz; k++)
					snprintf(out + 2 * k, 3, "%02x", n[name_end + k]);
				return;
			}
			at += next;
		}
	}
}

/* A cached plan still describes the file: `PC:HEX:` with the site's pc and its bytes. */
static int plan_matches(const struct elf *e, const struct vg_plan_entry *p)
{
	char *end;
	if (strtoull(p->text, &end, 16) != p->pc || *end != ':')
		return 0;
	const char *hex = end + 1;
	size_t n = strcspn(hex, ":");
	const uint8_t *b = n % 2 == 0 && hex[n] == ':' ? bytes_at(e, p->pc, n / 2) : NULL;
	for (size_t i = 0; b && i < n / 2; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1 || v != b[i])
			return 0;
	}
	return b != NULL;
}

/* Every site of the file (whose arguments were understood) planned or refused. */
static int plan_all(const struct elf *e, const struct vg_sdt_file *f, struct vg_plan_set *out)
{
	struct u64s targets = {0};
	csh h;
	if (branch_targets(e, &targets) < 0 || cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		free(targets.v);
		return -1;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	size_t cursor = 0;
	struct vg_sdt_probe p;
	char err[256];
	int rc = 0;
	while (rc == 0 && vg_sdt_next(f, &cursor, &p, err, sizeof err) == 1) {
		if (p.arg_error || vg_plan_set_find(out, p.pc))
			continue;
		char one[400], why[200];
		int ok = plan_site(h, e, &targets, p.pc, one, sizeof one, why, sizeof why) == 0;
		rc = vg_plan_set_add(out, p.pc, ok, ok ? one : why);
	}
	cs_close(&h);
	free(targets.v);
	return rc;
}

int vg_usdt_plan_file(const char *path, const char *shown, const char *patterns,
                      vg_usdt_plan_fn emit, void *arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct vg_plan_key key;
	struct stat *st = &key.st;
	if (fd < 0 || fstat(fd, st) < 0 || !S_ISREG(st->st_mode) ||
	    (size_t)st->st_size < sizeof(Elf64_Ehdr)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	void *data = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED)
		return 0;
	struct vg_sdt_file f;
	char err[256];
	int planned = 0, any = 0;
	struct vg_plan_set plans = {0};
	if (vg_sdt_open(&f, data, (size_t)st->st_size, err, sizeof err) < 0 || !f.notes)
		goto done;
	size_t cursor = 0;
	struct vg_sdt_probe p;
	while (!any && vg_sdt_next(&f, &cursor, &p, err, sizeof err) == 1)
		any = matches(patterns, &p) && !p.arg_error;
	if (!any)
		goto done;
	const Elf64_Ehdr *eh = data;
	struct elf e = {.data = data, .size = (size_t)st->st_size, .is_dyn = f.is_dyn};
	if (eh->e_shoff && eh->e_shentsize == sizeof(Elf64_Shdr) &&
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= e.size) {
		e.sh = (const Elf64_Shdr *)((const uint8_t *)data + eh->e_shoff);
		e.nsh = eh->e_shnum;
	}
	e.code_lo = UINT64_MAX;
	for (unsigned i = 0; i < e.nsh; i++)
		if ((e.sh[i].sh_flags & SHF_EXECINSTR) && e.sh[i].sh_type == SHT_PROGBITS) {
			if (e.sh[i].sh_addr < e.code_lo)
				e.code_lo = e.sh[i].sh_addr;
			if (e.sh[i].sh_addr + e.sh[i].sh_size > e.code_hi)
				e.code_hi = e.sh[i].sh_addr + e.sh[i].sh_size;
		}
	if (!e.nsh)
		goto done;
	build_id(&e, key.build_id, sizeof key.build_id);
	/* the cache's plans, if every site has one that still matches the file's bytes */
	int cached = vg_plan_cache_load(&key, shown, &plans);
	cursor = 0;
	while (cached > 0 && vg_sdt_next(&f, &cursor, &p, err, sizeof err) == 1) {
		const struct vg_plan_entry *c = p.arg_error ? NULL : vg_plan_set_find(&plans, p.pc);
		if (!p.arg_error && (!c || (c->ok && !plan_matches(&e, c)))) {
			fprintf(stderr,
			        "vigil: plan cache for %s: site 0x%" PRIx64
			        " does not match the file; planning again\n",
			        shown, p.pc);
			cached = -1;
		}
	}
	if (cached <= 0) {
		vg_plan_set_free(&plans);
		if (plan_all(&e, &f, &plans) < 0)
			goto done;
		vg_plan_cache_store(&key, &plans);
	}
	cursor = 0;
	while (vg_sdt_next(&f, &cursor, &p, err, sizeof err) == 1) {
		const struct vg_plan_entry *c = vg_plan_set_find(&plans, p.pc);
		if (!matches(patterns, &p) || p.arg_error || !c)
			continue;
		if (!c->ok) {
			fprintf(stderr,
			        "vigil: usdt %s:%s at %s+0x%" PRIx64
			        ": %s; it stays on the int3 path\n",
			        p.provider, p.name, shown, p.pc, c->text);
			continue;
		}
		char line[480];
		snprintf(line, sizeof line, "%" PRIx64 ":%" PRIx64 ":%s", (uint64_t)st->st_dev,
		         (uint64_t)st->st_ino, c->text);
		if (emit(line, arg) == 0)
			planned++;
	}
done:
	vg_plan_set_free(&plans);
	munmap(data, (size_t)st->st_size);
	return planned;
}
