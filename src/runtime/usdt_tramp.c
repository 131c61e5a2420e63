/* The common entry of the jump path's trampolines (usdt_jump.c, docs/usdt.md).
 *
 * A trampoline moves the stack below the red zone, pushes rax, loads the site's address
 * into rax and calls vg__usdt_tramp_entry, which saves every general register into an
 * array laid out as a ucontext's gregs (the recorder reads operands from it exactly as on
 * the int3 path) and calls vg__usdt_jump_fast (usdt_record.c), which touches no vector or
 * x87 register. Only when that answers that it could not finish the hit alone (a new
 * buffer is needed, ...) is the vector and x87 state saved with XSAVE (the full path and
 * the libc it calls may use any vector register, and the program's are live at the
 * site) around vg__usdt_jump_hit. Then everything is restored, the flags included.
 * The entry begins with endbr64: the trampolines call it indirectly (IBT). */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdint.h>

#include "internal.h"
#include "usdt.h"

/* The XSAVE components saved (x87, SSE, AVX, AVX-512's three; not AMX, MPX or PKRU,
 * which nothing we call touches) as XCR0 allows, and the size of their save area. */
__attribute__((visibility("hidden"))) uint64_t vg__usdt_xsave_mask;
__attribute__((visibility("hidden"))) uint64_t vg__usdt_xsave_size;
/* XSAVEC: the compacted form, which skips components in their initial state. */
__attribute__((visibility("hidden"))) uint8_t vg__usdt_xsavec;

int vg__usdt_tramp_init(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return 0;
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	uint64_t mask = (((uint64_t)hi << 32) | lo) & 0xE7;
	uint64_t size = 576; /* the legacy area and the header */
	for (unsigned i = 2; i < 8; i++)
		if (mask >> i & 1) {
			__cpuid_count(0xD, i, a, b, c, d);
			if (b + a > size) /* offset + size of component i */
				size = b + a;
		}
	vg__usdt_xsave_size = (size + 63) & ~(uint64_t)63;
	__cpuid_count(0xD, 1, a, b, c, d);
	vg__usdt_xsavec = (a >> 1) & 1;
	vg__usdt_xsave_mask = mask;
	return 1;
}

/* On entry: rax = the site; [rsp] = the return into the trampoline; [rsp+8] = the
 * program's rax; then the 128-byte red zone; the program's rsp = entry rsp + 144.
 * gregs offsets: r8..r15 0..56, rdi 64, rsi 72, rbp 80, rbx 88, rdx 96, rax 104,
 * rcx 112, rsp 120, rip 128 (set by vg__usdt_jump_hit). */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl vg__usdt_tramp_entry\n"
        ".hidden vg__usdt_tramp_entry\n"
        ".type vg__usdt_tramp_entry,@function\n"
        "vg__usdt_tramp_entry:\n"
        "	endbr64\n"
        "	pushfq\n"
        "	push %rbp\n"
        "	mov %rsp, %rbp\n" /* rbp+8 flags, +16 return, +24 rax, +160 program's rsp */
        "	sub $192, %rsp\n"
        "	and $-64, %rsp\n"
        "	mov %r8, 0(%rsp)\n"
        "	mov %r9, 8(%rsp)\n"
        "	mov %r10, 16(%rsp)\n"
        "	mov %r11, 24(%rsp)\n"
        "	mov %r12, 32(%rsp)\n"
        "	mov %r13, 40(%rsp)\n"
        "	mov %r14, 48(%rsp)\n"
        "	mov %r15, 56(%rsp)\n"
        "	mov %rdi, 64(%rsp)\n"
        "	mov %rsi, 72(%rsp)\n"
        "	mov (%rbp), %r8\n"
        "	mov %r8, 80(%rsp)\n"
        "	mov %rbx, 88(%rsp)\n"
        "	mov %rdx, 96(%rsp)\n"
        "	mov 24(%rbp), %r8\n"
        "	mov %r8, 104(%rsp)\n"
        "	mov %rcx, 112(%rsp)\n"
        "	lea 160(%rbp), %r8\n"
        "	mov %r8, 120(%rsp)\n"
        "	mov %rax, %r12\n"
        "	mov %rsp, %rbx\n"
        "	cld\n" /* the ABI's direction flag at a call; popfq gives the program's back */
        "	mov %r12, %rdi\n"
        "	mov %rbx, %rsi\n"
        "	call vg__usdt_jump_fast\n"
        "	test %eax, %eax\n"
        "	jz 3f\n"
        "	sub vg__usdt_xsave_size(%rip), %rsp\n"
        "	and $-64, %rsp\n"
        "	xor %eax, %eax\n" /* XRSTOR wants the header's reserved bytes zero */
        "	mov %rax, 512(%rsp)\n"
        "	mov %rax, 520(%rsp)\n"
        "	mov %rax, 528(%rsp)\n"
        "	mov %rax, 536(%rsp)\n"
        "	mov %rax, 544(%rsp)\n"
        "	mov %rax, 552(%rsp)\n"
        "	mov %rax, 560(%rsp)\n"
        "	mov %rax, 568(%rsp)\n"
        "	mov vg__usdt_xsave_mask(%rip), %eax\n"
        "	xor %edx, %edx\n"
        "	cmpb $0, vg__usdt_xsavec(%rip)\n"
        "	je 1f\n"
        "	xsavec64 (%rsp)\n"
        "	jmp 2f\n"
        "1:	xsave64 (%rsp)\n"
        "2:\n"
        "	mov %r12, %rdi\n"
        "	mov %rbx, %rsi\n"
        "	call vg__usdt_jump_hit\n"
        "	mov vg__usdt_xsave_mask(%rip), %eax\n"
        "	xor %edx, %edx\n"
        "	xrstor64 (%rsp)\n"
        "3:\n"
        "	mov 0(%rbx), %r8\n"
        "	mov 8(%rbx), %r9\n"
        "	mov 16(%rbx), %r10\n"
        "	mov 24(%rbx), %r11\n"
        "	mov 32(%rbx), %r12\n"
        "	mov 40(%rbx), %r13\n"
        "	mov 48(%rbx), %r14\n"
        "	mov 56(%rbx), %r15\n"
        "	mov 64(%rbx), %rdi\n"
        "	mov 72(%rbx), %rsi\n"
        "	mov 96(%rbx), %rdx\n"
        "	mov 112(%rbx), %rcx\n"
        "	mov 88(%rbx), %rbx\n"
        "	mov %rbp, %rsp\n"
        "	pop %rbp\n"
        "	popfq\n"
        "	ret\n"
        ".size vg__usdt_tramp_entry, .-vg__usdt_tramp_entry\n"
        ".globl vg__usdt_ret\n"
        ".hidden vg__usdt_ret\n"
        ".type vg__usdt_ret,@function\n"
        "vg__usdt_ret:\n"
        "	ret\n"
        ".size vg__usdt_ret, .-vg__usdt_ret\n");
