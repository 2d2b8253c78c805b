/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch/x86_64.S - the template of the x86_64 trampolines' shared
 * save-and-call code.  runtime/patcher/x86_64.c copies the bytes between
 * ps_x86_common and ps_x86_common_end into the start of the segment's
 * trampoline room at first use (so it is within rel32 reach of every site
 * and of every slot); it is never run here.  Position independent: no
 * reference leaves the blob.
 *
 * Entered by a slot's `jmp`, after a site's `call` into that slot:
 *   %r11     the slot's cell (the slot's `movabs $cell, %r11`): a
 *            runtime-owned word holding the ops, or NULL once the ops was
 *            detached while a thread blocked SIGTRAP (a dormant slot:
 *            return into the body at once)
 *   (%rsp)   where the traced function's body resumes (site + 5)
 *   8(%rsp)  the traced function's return address (parent_ip)
 * It builds struct ps_regs (arch/x86_64.h) on a 16-byte aligned stack,
 * calls ops->func(ip, parent_ip, ops, regs) with ip the traced function's
 * address (the site, or site - 4 when ENDBR64 precedes it), then restores
 * the argument registers (as ops->func left them in regs), resumes at
 * regs->pc and returns into the body.  Telling the two ip cases apart reads
 * the 4 bytes before the site: a site without ENDBR64 at the very first
 * byte of a mapping with nothing mapped below it would fault there (the
 * first bytes of an executable PT_LOAD are never a traced function's in a
 * program linked by ld or lld: headers or .init come first).
 *
 * No .note.gnu.property (IBT/SHSTK) on purpose: a program that links or
 * preloads the runtime is then never run with user shadow stacks, which
 * the CALL the SIGTRAP handler emulates (a push on the ordinary stack only)
 * would break at common's `ret`.
 */
	.text
	.p2align 4
	.globl	ps_x86_common
	.hidden	ps_x86_common
	.globl	ps_x86_common_end
	.hidden	ps_x86_common_end
	.type	ps_x86_common, @function
ps_x86_common:
	movq	(%r11), %r11		/* the ops, from the slot's cell: the only
					   instruction where %r11 still names a slot */
	testq	%r11, %r11
	jz	2f			/* dormant: the body runs untraced */
	pushq	%rbp
	movq	%rsp, %rbp		/* 8(%rbp): resume, 16(%rbp): parent_ip */
	andq	$-16, %rsp
	subq	$208, %rsp		/* sizeof(struct ps_regs), 16-aligned */
	movq	%rdi, 0(%rsp)
	movq	%rsi, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rcx, 24(%rsp)
	movq	%r8, 32(%rsp)
	movq	%r9, 40(%rsp)
	movq	%rax, 48(%rsp)
	movq	%r10, 56(%rsp)
	leaq	16(%rbp), %rax
	movq	%rax, 64(%rsp)		/* ret: the return-address slot */
	movq	8(%rbp), %rax
	movq	%rax, 72(%rsp)		/* pc: where the body resumes */
	movaps	%xmm0, 80(%rsp)
	movaps	%xmm1, 96(%rsp)
	movaps	%xmm2, 112(%rsp)
	movaps	%xmm3, 128(%rsp)
	movaps	%xmm4, 144(%rsp)
	movaps	%xmm5, 160(%rsp)
	movaps	%xmm6, 176(%rsp)
	movaps	%xmm7, 192(%rsp)
	leaq	-5(%rax), %rdi		/* ip: the site ... */
	cmpl	$0xfa1e0ff3, -4(%rdi)	/* ... or the ENDBR64 before it */
	jne	1f
	subq	$4, %rdi
1:	movq	16(%rbp), %rsi		/* parent_ip */
	movq	%r11, %rdx		/* ops */
	movq	%rsp, %rcx		/* regs */
	call	*(%r11)			/* ops->func, offset 0 */
	movq	72(%rsp), %rax
	movq	%rax, 8(%rbp)		/* resume at regs->pc */
	movq	0(%rsp), %rdi
	movq	8(%rsp), %rsi
	movq	16(%rsp), %rdx
	movq	24(%rsp), %rcx
	movq	32(%rsp), %r8
	movq	40(%rsp), %r9
	movq	48(%rsp), %rax
	movq	56(%rsp), %r10
	movaps	80(%rsp), %xmm0
	movaps	96(%rsp), %xmm1
	movaps	112(%rsp), %xmm2
	movaps	128(%rsp), %xmm3
	movaps	144(%rsp), %xmm4
	movaps	160(%rsp), %xmm5
	movaps	176(%rsp), %xmm6
	movaps	192(%rsp), %xmm7
	movq	%rbp, %rsp
	popq	%rbp
2:	ret
ps_x86_common_end:
	.size	ps_x86_common, ps_x86_common_end - ps_x86_common

	.section .note.GNU-stack,"",@progbits
